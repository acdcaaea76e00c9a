// SPDX-License-Identifier: MIT
#include "sources/modules.hpp"

#include "actuators/kmod_loader.hpp"
#include "config/file_read.hpp"
#include "util/log.hpp"
#include "util/sysfs.hpp"

#include <cstdarg>
#include <cstdio>
#include <dlfcn.h>
#include <string_view>

namespace rdmad {

template <typename F> bool KmodLibrary::bind(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(handle, name));
    return f != nullptr;
}

namespace {

/// kmod_set_log_fn(3)'s callback: one debug line a message.
void kmod_log(void*, int, const char*, int, const char*, const char* format, va_list args) {
    char text[512];
    std::vsnprintf(text, sizeof text, format, args);
    std::string_view line(text);
    while (!line.empty() && line.back() == '\n')
        line.remove_suffix(1);
    log::debug("libkmod: {}", line);
}

} // namespace

KmodLibrary::KmodLibrary(const KmodPaths& paths) {
    // The SONAME libkmod has had since kmod 1 (libkmod/Makefile: -version-info 2:...).
    handle = dlopen("libkmod.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        log::debug("module lookups off: {}", dlerror());
        return;
    }
    const bool all =
        bind(new_ctx, "kmod_new") && bind(unref_ctx, "kmod_unref") &&
        bind(get_dirname, "kmod_get_dirname") &&
        bind(load_resources, "kmod_load_resources") &&
        bind(new_from_lookup, "kmod_module_new_from_lookup") &&
        bind(new_from_name, "kmod_module_new_from_name") &&
        bind(get_module, "kmod_module_get_module") && bind(get_name, "kmod_module_get_name") &&
        bind(unref_module, "kmod_module_unref") && bind(unref_list, "kmod_module_unref_list") &&
        bind(probe_insert, "kmod_module_probe_insert_module") &&
        bind(get_blacklists, "kmod_config_get_blacklists") &&
        bind(iter_get_key, "kmod_config_iter_get_key") &&
        bind(iter_next, "kmod_config_iter_next") && bind(iter_free, "kmod_config_iter_free_iter") &&
        bind(set_log_fn, "kmod_set_log_fn");
    if (all) {
        // kmod_new(3): a null dirname is /lib/modules/$(uname -r), null config_paths the
        // default modprobe.d directories; the list is null-terminated.
        std::vector<const char*> configs;
        for (const auto& p : paths.config_paths)
            configs.push_back(p.c_str());
        configs.push_back(nullptr);
        ctx = new_ctx(paths.module_dir.empty() ? nullptr : paths.module_dir.c_str(),
                      paths.config_paths.empty() ? nullptr : configs.data());
    }
    if (ctx) {
        // libkmod's own messages ("could not find module by name='irdma'") go to rdmad's
        // debug log: rdmad reports the failure itself, once, with what to do. Without this
        // libkmod printed them on stderr beside rdmad's (as systemd's module-util.c does).
        set_log_fn(ctx, kmod_log, nullptr);
        load_resources(ctx); // maps the indexes once for every later lookup
    }
    if (!ctx)
        log::debug("module lookups off: libkmod.so.2 {}",
                   all ? "cannot read the module index" : "lacks a function rdmad calls");
}

KmodLibrary::~KmodLibrary() {
    if (ctx)
        unref_ctx(ctx);
    if (handle)
        dlclose(handle);
}

KernelModules::KernelModules(KmodPaths paths) : paths_(std::move(paths)) {}
KernelModules::~KernelModules() = default;

KmodLibrary& KernelModules::library() const {
    if (!lib_)
        lib_ = std::make_unique<KmodLibrary>(paths_);
    return *lib_;
}

std::string KernelModules::resolve(const std::string& modalias) const {
    if (modalias.empty())
        return {};
    KmodLibrary& lib = library();
    if (!lib.ctx)
        return {};
    struct kmod_list* list = nullptr;
    if (lib.new_from_lookup(lib.ctx, modalias.c_str(), &list) < 0 || !list)
        return {};
    std::string name;
    struct kmod_module* mod = lib.get_module(list);
    if (mod) {
        if (const char* n = lib.get_name(mod))
            name = n;
        lib.unref_module(mod);
    }
    lib.unref_list(list);
    return name;
}

std::set<std::string> KernelModules::blacklist() const {
    std::set<std::string> out;
    KmodLibrary& lib = library();
    if (!lib.ctx)
        return out;
    // libkmod-config.c: the iterator starts before the first entry; each next() moves on.
    struct kmod_config_iter* it = lib.get_blacklists(lib.ctx);
    if (!it)
        return out;
    while (lib.iter_next(it))
        if (const char* key = lib.iter_get_key(it))
            out.insert(key);
    lib.iter_free(it);
    return out;
}

bool KernelModules::loaded(const std::string& module) {
    if (module.empty() || module.find('/') != std::string::npos)
        return false;
    return sysfs::exists("/sys/module/" + module);
}

ModuleLookup KernelModules::lookup() const {
    return {[this](const std::string& a) { return resolve(a); },
            [](const std::string& m) { return loaded(m); }};
}

KernelModulesActual read_kernel_modules(const KernelModules& modules,
                                        const std::vector<std::string>& names,
                                        const std::string& modules_load_dir, bool full) {
    KernelModulesActual out;
    out.read = true;
    // rdmad's own file, but in /etc: read it like the admin's files (no FIFO, no huge file).
    const FileRead file = read_config_file(modules_load_path(modules_load_dir), 64 * 1024);
    if (file.status == FileRead::Status::ok)
        out.file = parse_modules_load_text(file.text);
    else if (file.status == FileRead::Status::failed)
        out.file.emplace();
    if (!full)
        return out;
    const bool indexed = modules.library().ctx != nullptr; // else nothing is known absent
    for (const auto& name : names) {
        if (KernelModules::loaded(name))
            out.loaded.insert(name);
        else if (indexed && modules.resolve(name).empty()) // a name looks up as itself
            out.absent.insert(name);
    }
    if (out.file)
        for (const auto& name : *out.file)
            if (KernelModules::loaded(name))
                out.loaded.insert(name);
    out.blacklisted = modules.blacklist();
    return out;
}

} // namespace rdmad
