// SPDX-License-Identifier: MIT
#include "sources/mlx4_module_reader.hpp"

#include "actuators/modprobe.hpp"
#include "config/file_read.hpp"
#include "util/sysfs.hpp"

namespace rdmad {

std::optional<uint8_t> read_mlx4_modprobe(const std::string& modprobe_dir) {
    // rdmad's own file, but in /etc: read it like the admin's files (no FIFO, no huge file).
    const FileRead file = read_config_file(mlx4_modprobe_path(modprobe_dir), 4096);
    // A file of that name without rdmad's header is an admin's: not rdmad's to compare,
    // nor to remove when nothing asks for PFC (debian/rdmad.postrm keeps it too).
    if (file.status != FileRead::Status::ok || !written_by_rdmad(file.text))
        return std::nullopt;
    return parse_mlx4_modprobe_text(file.text);
}

std::optional<uint8_t> loaded_mlx4_pfctx() {
    auto text = sysfs::read_text("/sys/module/mlx4_en/parameters", "pfctx");
    if (!text)
        return std::nullopt;
    return parse_pfc_mask(*text);
}

Mlx4ModuleActual read_mlx4_module(const std::string& modprobe_dir, Mlx4ModuleReads reads) {
    Mlx4ModuleActual out;
    if (reads.file)
        out.file_pfctx = read_mlx4_modprobe(modprobe_dir);
    if (reads.loaded)
        out.loaded_pfctx = loaded_mlx4_pfctx();
    return out;
}

} // namespace rdmad
