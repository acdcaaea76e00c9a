// SPDX-License-Identifier: MIT
//
// Kernel module lookups through libkmod: modalias -> module (as `modprobe -R`), the modules
// modprobe.d blacklists, and whether a module is loaded (`/sys/module/<name>`, read like the
// rest of /sys).
//
// libkmod is loaded with dlopen() at the first lookup, not linked: only an RDMA auxiliary
// device with no driver bound needs one (or `[daemon] load_modules`), and linking it cost
// every start of rdmad libkmod and libcrypto (which libkmod links for module signatures):
// about 3.6 ms of CPU in the dynamic loader on the bench machine, for a lookup most hosts
// never make. systemd loads its optional libraries, libkmod among them, the same way
// (src/shared/module-util.c).
#pragma once

#include "inventory/rdma_capability.hpp"
#include "sources/kmod_library.hpp"

#include <memory>
#include <set>
#include <string>

namespace rdmad {

class KernelModules {
  public:
    /// Loads nothing; the first lookup opens libkmod and the module index `paths` names.
    explicit KernelModules(KmodPaths paths = {});
    ~KernelModules();
    KernelModules(const KernelModules&) = delete;
    KernelModules& operator=(const KernelModules&) = delete;

    /// The first module whose alias matches `modalias` (`modules.alias` of the running kernel,
    /// as `modprobe -R`), "" when none. Also "" when libkmod.so.2 cannot be loaded or the
    /// index cannot be read: a debug message says so once, and the caller falls back to its
    /// own table (classify_links(): fallback_aux_module()).
    std::string resolve(const std::string& modalias) const;
    /// The modules that a `blacklist <name>` line of the modprobe.d configuration names
    /// (modprobe.d(5)), as libkmod read them when it opened its context (kmod_config_get_
    /// blacklists); empty when libkmod cannot be loaded.
    std::set<std::string> blacklist() const;
    /// True when `/sys/module/<module>` exists.
    static bool loaded(const std::string& module);

    /// Both lookups bound to this object, for classify_links().
    ModuleLookup lookup() const;
    /// libkmod with its context, opened on first use (its `ctx` null when it cannot be).
    KmodLibrary& library() const;

  private:
    KmodPaths paths_;
    /// Null until the first lookup; then the library, or one that failed to load.
    mutable std::unique_ptr<KmodLibrary> lib_;
};

/// The kernel modules a module plan needs (reconcile/settings/kernel_modules.cpp): rdmad's
/// modules-load.d file in `modules_load_dir` (actuators/kmod_loader.hpp; an unreadable file
/// reads as an empty list, so that the plan writes it again), and with `full` also which of
/// `names` are loaded and the modprobe.d blacklist from `modules`.
KernelModulesActual read_kernel_modules(const KernelModules& modules,
                                        const std::vector<std::string>& names,
                                        const std::string& modules_load_dir, bool full);

} // namespace rdmad
