// SPDX-License-Identifier: MIT
#include "actuators/kmod_loader.hpp"

#include "util/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace rdmad {

ModuleLoad load_kernel_module(const KmodLibrary& lib, const std::string& module) {
    ModuleLoad out;
    const auto failed = [&](int error) {
        out.status = ModuleLoad::Status::failed;
        out.error = error;
        out.message = fmt::format("loading {} failed: {}", module, std::strerror(error));
        return out;
    };
    if (!lib.ctx)
        return failed(ENOPKG); // libkmod.so.2 or its module index is missing
    struct kmod_module* mod = nullptr;
    if (int r = lib.new_from_name(lib.ctx, module.c_str(), &mod); r < 0 || !mod)
        return failed(r < 0 ? -r : ENOENT);
    // kmod 30 libkmod/libkmod-module.c: a negative errno on failure; with
    // KMOD_PROBE_APPLY_BLACKLIST, the flag itself when a blacklist line names the module;
    // 0 once inserted or already in the kernel.
    const int r =
        lib.probe_insert(mod, KMOD_PROBE_APPLY_BLACKLIST, nullptr, nullptr, nullptr, nullptr);
    lib.unref_module(mod);
    if (r == KMOD_PROBE_APPLY_BLACKLIST) {
        out.status = ModuleLoad::Status::blacklisted;
        out.message = fmt::format("{} is blacklisted in modprobe.d: not loaded", module);
        return out;
    }
    if (r < 0)
        return failed(-r);
    out.status = ModuleLoad::Status::loaded;
    return out;
}

std::string modules_load_path(const std::string& modules_load_dir) {
    return modules_load_dir + "/rdmad.conf";
}

std::string modules_load_text(const std::vector<std::string>& modules) {
    std::string text = "# Written by rdmad ([daemon] persist_modules, rdmad.conf(5)); do not "
                       "edit.\n# RDMA kernel modules systemd-modules-load loads at boot.\n";
    for (const auto& m : modules)
        text += m + "\n";
    return text;
}

std::vector<std::string> parse_modules_load_text(std::string_view text) {
    // modules-load.d(5): "Empty lines and lines whose first non-whitespace character is # or
    // ; are ignored"; one kernel module name a line.
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t end = std::min(text.find('\n', pos), text.size());
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string_view::npos || line[first] == '#' || line[first] == ';')
            continue;
        line.remove_prefix(first);
        line = line.substr(0, line.find_last_not_of(" \t\r") + 1);
        out.emplace_back(line);
    }
    return out;
}

void write_modules_load(const std::string& modules_load_dir,
                        const std::vector<std::string>& modules) {
    write_file_atomically(modules_load_path(modules_load_dir), modules_load_text(modules), 0644);
}

void remove_modules_load(const std::string& modules_load_dir) {
    remove_file_durably(modules_load_path(modules_load_dir));
}

} // namespace rdmad
