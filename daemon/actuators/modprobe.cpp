// SPDX-License-Identifier: MIT
#include "actuators/modprobe.hpp"

#include "config/file_read.hpp"
#include "inventory/attributes.hpp"
#include "util/atomic_file.hpp"
#include "util/sysfs.hpp"

#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <system_error>
#include <unistd.h>
#include <fmt/format.h>

namespace rdmad {
namespace {

std::optional<uint8_t> parse_mask(std::string_view v) {
    v = trim_attribute(v);
    int base = 10;
    if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
        v.remove_prefix(2);
        base = 16;
    }
    unsigned value = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), value, base);
    if (ec != std::errc() || p != v.data() + v.size() || value > 0xff)
        return std::nullopt;
    return static_cast<uint8_t>(value);
}

} // namespace

std::string mlx4_modprobe_path(const std::string& modprobe_dir) {
    return modprobe_dir + "/rdmad-mlx4.conf";
}

std::string mlx4_modprobe_text(uint8_t mask) {
    return fmt::format("# Written by rdmad from its desired state (rdmad.conf(5)); do not edit.\n"
                       "# PFC no-drop priorities for mlx4_en, applied when the module loads.\n"
                       "options mlx4_en pfctx={:#04x} pfcrx={:#04x}\n",
                       mask, mask);
}

std::optional<uint8_t> read_mlx4_modprobe(const std::string& modprobe_dir) {
    // rdmad's own file, but in /etc: read it like the admin's files (no FIFO, no huge file).
    const FileRead file = read_config_file(mlx4_modprobe_path(modprobe_dir), 4096);
    if (file.status != FileRead::Status::ok)
        return std::nullopt;
    const std::string* text = &file.text;
    auto at = text->find("pfctx=");
    if (at == std::string::npos)
        return std::nullopt;
    auto end = text->find_first_of(" \n", at);
    return parse_mask(std::string_view(*text).substr(
        at + 6, end == std::string::npos ? std::string::npos : end - at - 6));
}

std::optional<uint8_t> loaded_mlx4_pfctx() {
    auto text = sysfs::read_text("/sys/module/mlx4_en/parameters", "pfctx");
    if (!text)
        return std::nullopt;
    return parse_mask(*text);
}

void write_mlx4_modprobe(const std::string& modprobe_dir, uint8_t mask) {
    write_file_atomically(mlx4_modprobe_path(modprobe_dir), mlx4_modprobe_text(mask), 0644);
}

void remove_mlx4_modprobe(const std::string& modprobe_dir) {
    const std::string path = mlx4_modprobe_path(modprobe_dir);
    if (::unlink(path.c_str()) < 0) {
        if (errno == ENOENT)
            return;
        throw std::system_error(errno, std::generic_category(), "cannot remove " + path);
    }
    const int dfd = ::open(modprobe_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

} // namespace rdmad
