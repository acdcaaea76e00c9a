// SPDX-License-Identifier: MIT
#include "sources/modules.hpp"

#include "util/log.hpp"
#include "util/sysfs.hpp"

#include <dlfcn.h>
#include <libkmod.h>

namespace rdmad {

// The libkmod functions rdmad calls, typed from <libkmod.h> so a mismatch fails to compile.
struct KernelModules::Library {
    void* handle = nullptr;
    kmod_ctx* ctx = nullptr;
    decltype(&kmod_new) new_ctx = nullptr;
    decltype(&kmod_unref) unref_ctx = nullptr;
    decltype(&kmod_load_resources) load_resources = nullptr;
    decltype(&kmod_module_new_from_lookup) new_from_lookup = nullptr;
    decltype(&kmod_module_get_module) get_module = nullptr;
    decltype(&kmod_module_get_name) get_name = nullptr;
    decltype(&kmod_module_unref) unref_module = nullptr;
    decltype(&kmod_module_unref_list) unref_list = nullptr;

    Library() {
        // The SONAME libkmod has had since kmod 1 (libkmod/Makefile: -version-info 2:...).
        handle = dlopen("libkmod.so.2", RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            log::debug("modalias lookups off: {}", dlerror());
            return;
        }
        const bool all =
            bind(new_ctx, "kmod_new") && bind(unref_ctx, "kmod_unref") &&
            bind(load_resources, "kmod_load_resources") &&
            bind(new_from_lookup, "kmod_module_new_from_lookup") &&
            bind(get_module, "kmod_module_get_module") && bind(get_name, "kmod_module_get_name") &&
            bind(unref_module, "kmod_module_unref") && bind(unref_list, "kmod_module_unref_list");
        if (all)
            ctx = new_ctx(nullptr, nullptr); // the running kernel's /lib/modules/$(uname -r)
        if (ctx)
            load_resources(ctx); // maps the indexes once for every later lookup
        if (!ctx)
            log::debug("modalias lookups off: libkmod.so.2 {}",
                       all ? "cannot read the module index" : "lacks a function rdmad calls");
    }
    ~Library() {
        if (ctx)
            unref_ctx(ctx);
        if (handle)
            dlclose(handle);
    }
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;

    template <typename F> bool bind(F& f, const char* name) {
        f = reinterpret_cast<F>(dlsym(handle, name));
        return f != nullptr;
    }
};

KernelModules::KernelModules() = default;
KernelModules::~KernelModules() = default;

std::string KernelModules::resolve(const std::string& modalias) const {
    if (modalias.empty())
        return {};
    if (!lib_)
        lib_ = std::make_unique<Library>();
    if (!lib_->ctx)
        return {};
    struct kmod_list* list = nullptr;
    if (lib_->new_from_lookup(lib_->ctx, modalias.c_str(), &list) < 0 || !list)
        return {};
    std::string name;
    struct kmod_module* mod = lib_->get_module(list);
    if (mod) {
        if (const char* n = lib_->get_name(mod))
            name = n;
        lib_->unref_module(mod);
    }
    lib_->unref_list(list);
    return name;
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

} // namespace rdmad
