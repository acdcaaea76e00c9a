// SPDX-License-Identifier: MIT
//
// Kernel module lookups through libkmod: modalias -> module (as `modprobe -R`), and whether a
// module is loaded (`/sys/module/<name>`, read like the rest of /sys).
//
// libkmod is loaded with dlopen() at the first modalias lookup, not linked: only an RDMA
// auxiliary device with no driver bound needs one, and linking it cost every start of rdmad
// libkmod and libcrypto (which libkmod links for module signatures): about 3.6 ms of CPU in
// the dynamic loader on the bench machine, for a lookup most hosts never make. systemd loads
// its optional libraries, libkmod among them, the same way (src/shared/module-util.c).
#pragma once

#include "inventory/rdma_capability.hpp"

#include <memory>
#include <string>

namespace rdmad {

class KernelModules {
  public:
    /// Loads nothing; the first resolve() opens libkmod and the running kernel's module index.
    KernelModules();
    ~KernelModules();
    KernelModules(const KernelModules&) = delete;
    KernelModules& operator=(const KernelModules&) = delete;

    /// The first module whose alias matches `modalias` (`modules.alias` of the running kernel,
    /// as `modprobe -R`), "" when none. Also "" when libkmod.so.2 cannot be loaded or the
    /// index cannot be read: a debug message says so once, and the caller falls back to its
    /// own table (classify_links(): fallback_aux_module()).
    std::string resolve(const std::string& modalias) const;
    /// True when `/sys/module/<module>` exists.
    static bool loaded(const std::string& module);

    /// Both lookups bound to this object, for classify_links().
    ModuleLookup lookup() const;

  private:
    struct Library;
    /// Null until the first resolve(); then the library, or one that failed to load.
    mutable std::unique_ptr<Library> lib_;
};

} // namespace rdmad
