// SPDX-License-Identifier: MIT
#include "sources/rdma_netns_reader.hpp"

#include "actuators/modprobe.hpp"
#include "config/file_read.hpp"
#include "util/sysfs.hpp"

namespace rdmad {

std::string netns_mode_name(bool shared) {
    return shared ? "shared" : "exclusive";
}

namespace {

/// A netns_mode value (module parameter or option) as a mode name.
std::optional<std::string> mode_of(const std::optional<std::string>& value) {
    const auto shared = value ? parse_module_bool(*value) : std::nullopt;
    if (!shared)
        return std::nullopt;
    return netns_mode_name(*shared);
}

} // namespace

std::optional<std::string> read_ib_core_modprobe(const std::string& modprobe_dir) {
    // rdmad's own file, but in /etc: read it like the admin's files (no FIFO, no huge file).
    const FileRead file = read_config_file(ib_core_modprobe_path(modprobe_dir), 4096);
    if (file.status != FileRead::Status::ok)
        return std::nullopt;
    return mode_of(modprobe_option(file.text, "ib_core", "netns_mode"));
}

std::optional<std::string> loaded_netns_mode() {
    return mode_of(sysfs::read_text("/sys/module/ib_core/parameters", "netns_mode"));
}

RdmaNetnsState read_rdma_netns(const std::string& modprobe_dir, const std::string& desired) {
    RdmaNetnsState out;
    out.now = loaded_netns_mode().value_or("");
    out.next_load = read_ib_core_modprobe(modprobe_dir).value_or("");
    out.desired = desired;
    return out;
}

} // namespace rdmad
