// SPDX-License-Identifier: MIT
//
// Kernel module lookups through libkmod: modalias -> module (as `modprobe -R`), and whether a
// module is loaded (`/sys/module/<name>`, read like the rest of /sys).
#pragma once

#include "inventory/rdma_capability.hpp"

#include <memory>
#include <string>

struct kmod_ctx;

namespace rdmad {

class KernelModules {
  public:
    /// Opens the module index of the running kernel; lookups return "" when it cannot.
    KernelModules();
    ~KernelModules();
    KernelModules(const KernelModules&) = delete;
    KernelModules& operator=(const KernelModules&) = delete;

    /// The first module whose alias matches `modalias`, "" when none (or no index).
    std::string resolve(const std::string& modalias) const;
    /// True when `/sys/module/<module>` exists.
    static bool loaded(const std::string& module);

    /// Both lookups bound to this object, for classify_links().
    ModuleLookup lookup() const;

  private:
    kmod_ctx* ctx_ = nullptr;
};

} // namespace rdmad
