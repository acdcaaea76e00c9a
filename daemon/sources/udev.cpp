// SPDX-License-Identifier: MIT
#include "sources/udev.hpp"

#include <stdexcept>

namespace rdmad::udev {

Udev make_context() {
    Udev ctx(udev_new());
    if (!ctx)
        throw std::runtime_error("udev_new failed");
    return ctx;
}

std::vector<std::string> enumerate_syspaths(struct udev* ctx, const char* subsystem) {
    std::vector<std::string> paths;
    Enumerate e(udev_enumerate_new(ctx));
    if (!e)
        return paths;
    udev_enumerate_add_match_subsystem(e.get(), subsystem);
    udev_enumerate_scan_devices(e.get());
    for (udev_list_entry* it = udev_enumerate_get_list_entry(e.get()); it;
         it = udev_list_entry_get_next(it))
        paths.emplace_back(udev_list_entry_get_name(it));
    return paths;
}

} // namespace rdmad::udev
