// SPDX-License-Identifier: MIT
#include "sources/device_paths.hpp"

#include "inventory/attributes.hpp"
#include "util/sysfs.hpp"

#include <algorithm>

namespace rdmad::device_paths {
namespace {

/// Append the devices that the links in `dir` point to.
void add_links(const std::string& dir, std::vector<std::string>& out) {
    for (const auto& name : sysfs::list_dir(dir, "")) {
        std::string syspath = sysfs::resolve_link(dir, name);
        if (!syspath.empty())
            out.push_back(std::move(syspath));
    }
}

} // namespace

std::vector<std::string> subsystem_devices(std::string_view subsystem) {
    std::vector<std::string> paths;
    const std::string name(subsystem);
    add_links("/sys/class/" + name, paths);
    add_links("/sys/bus/" + name + "/devices", paths);
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    return paths;
}

std::string sysname(std::string_view syspath) {
    const auto slash = syspath.rfind('/');
    return std::string(slash == std::string_view::npos ? syspath : syspath.substr(slash + 1));
}

std::optional<std::string> uevent_property(const std::string& syspath, std::string_view key) {
    const auto text = sysfs::read_text(syspath, "uevent");
    if (!text)
        return std::nullopt;
    std::string_view rest(*text);
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        if (line.size() > key.size() && line.substr(0, key.size()) == key &&
            line[key.size()] == '=')
            return std::string(line.substr(key.size() + 1));
    }
    return std::nullopt;
}

} // namespace rdmad::device_paths
