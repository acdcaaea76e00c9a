// SPDX-License-Identifier: MIT
//
// libkmod, loaded with dlopen() when first needed (sources/modules.hpp says why), and one
// context on a module directory and modprobe.d configuration: the lookups of sources/ and the
// module loads of actuators/kmod_loader.hpp share it.
#pragma once

#include <libkmod.h>

#include <string>
#include <vector>

namespace rdmad {

/// Where libkmod reads from: kmod_new(3)'s `dirname` and `config_paths`.
struct KmodPaths {
    /// The module directory (modules.dep.bin, modules.alias.bin, the .ko files below it);
    /// "" for libkmod's default, /lib/modules/$(uname -r).
    std::string module_dir;
    /// modprobe.d(5) directories or files read for blacklists, aliases and install commands;
    /// empty for libkmod's defaults (/etc/modprobe.d, /run/modprobe.d,
    /// /usr/local/lib/modprobe.d, /lib/modprobe.d).
    std::vector<std::string> config_paths;
    bool operator==(const KmodPaths&) const = default;
};

/// The libkmod functions rdmad calls, typed from <libkmod.h> so a mismatch fails to compile,
/// and a context. `ctx` is null when the library or the module index cannot be loaded.
struct KmodLibrary {
    void* handle = nullptr;
    kmod_ctx* ctx = nullptr;
    decltype(&kmod_new) new_ctx = nullptr;
    decltype(&kmod_unref) unref_ctx = nullptr;
    decltype(&kmod_get_dirname) get_dirname = nullptr;
    decltype(&kmod_load_resources) load_resources = nullptr;
    decltype(&kmod_module_new_from_lookup) new_from_lookup = nullptr;
    decltype(&kmod_module_new_from_name) new_from_name = nullptr;
    decltype(&kmod_module_get_module) get_module = nullptr;
    decltype(&kmod_module_get_name) get_name = nullptr;
    decltype(&kmod_module_unref) unref_module = nullptr;
    decltype(&kmod_module_unref_list) unref_list = nullptr;
    decltype(&kmod_module_probe_insert_module) probe_insert = nullptr;
    decltype(&kmod_config_get_blacklists) get_blacklists = nullptr;
    decltype(&kmod_config_iter_get_key) iter_get_key = nullptr;
    decltype(&kmod_config_iter_next) iter_next = nullptr;
    decltype(&kmod_config_iter_free_iter) iter_free = nullptr;
    decltype(&kmod_set_log_fn) set_log_fn = nullptr;

    /// Opens libkmod.so.2 and a context on `paths`; failures are logged (debug) and leave
    /// `ctx` null.
    explicit KmodLibrary(const KmodPaths& paths);
    ~KmodLibrary();
    KmodLibrary(const KmodLibrary&) = delete;
    KmodLibrary& operator=(const KmodLibrary&) = delete;

  private:
    template <typename F> bool bind(F& f, const char* name);
};

} // namespace rdmad
