// SPDX-License-Identifier: MIT
#include "sources/modules.hpp"

#include "util/sysfs.hpp"

#include <libkmod.h>

namespace rdmad {

KernelModules::KernelModules() {
    ctx_ = kmod_new(nullptr, nullptr);
    if (ctx_)
        kmod_load_resources(ctx_);
}

KernelModules::~KernelModules() {
    if (ctx_)
        kmod_unref(ctx_);
}

std::string KernelModules::resolve(const std::string& modalias) const {
    if (!ctx_ || modalias.empty())
        return {};
    struct kmod_list* list = nullptr;
    if (kmod_module_new_from_lookup(ctx_, modalias.c_str(), &list) < 0 || !list)
        return {};
    std::string name;
    struct kmod_module* mod = kmod_module_get_module(list);
    if (mod) {
        if (const char* n = kmod_module_get_name(mod))
            name = n;
        kmod_module_unref(mod);
    }
    kmod_module_unref_list(list);
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
