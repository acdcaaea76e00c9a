// SPDX-License-Identifier: MIT
#include "sources/rdma_netns_reader.hpp"

#include "actuators/modprobe.hpp"
#include "config/file_read.hpp"
#include "util/sysfs.hpp"

#include <utility>

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

namespace {

/// rdmad's file as read: the mode it asks, and whether rdmad wrote it.
std::pair<std::optional<std::string>, bool> read_file_of(const std::string& modprobe_dir) {
    // rdmad's own file, but in /etc: read it like the admin's files (no FIFO, no huge file).
    const FileRead file = read_config_file(ib_core_modprobe_path(modprobe_dir), 4096);
    if (file.status != FileRead::Status::ok)
        return {std::nullopt, false};
    return {mode_of(modprobe_option(file.text, "ib_core", "netns_mode")),
            written_by_rdmad(file.text)};
}

} // namespace

std::optional<std::string> read_ib_core_modprobe(const std::string& modprobe_dir) {
    return read_file_of(modprobe_dir).first;
}

std::optional<std::string> loaded_netns_mode() {
    return mode_of(sysfs::read_text("/sys/module/ib_core/parameters", "netns_mode"));
}

RdmaNetnsState read_rdma_netns(const std::string& modprobe_dir, const std::string& desired) {
    RdmaNetnsState out;
    out.now = loaded_netns_mode().value_or("");
    const auto [next_load, own_file] = read_file_of(modprobe_dir);
    out.next_load = next_load.value_or("");
    out.own_file = own_file;
    out.desired = desired;
    return out;
}

} // namespace rdmad
