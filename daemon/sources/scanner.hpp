// SPDX-License-Identifier: MIT
//
// One full read of the hardware: every RDMA device, uverbs char device, netdev and auxiliary
// device, through libudev enumeration and sysfs, put together into an Inventory.
#pragma once

#include "inventory/model.hpp"
#include "inventory/provider.hpp"
#include "sources/modules.hpp"
#include "sources/provider_probe.hpp"
#include "sources/udev.hpp"

#include <string>

namespace rdmad {

struct ScanOptions {
    ProviderPaths providers;
    std::string os_release_path = "/etc/os-release"; ///< os-release(5); /usr/lib/os-release
                                                      ///< is tried when it is absent
};

class Scanner {
  public:
    /// Reads os-release once; throws std::runtime_error when libudev is unusable.
    explicit Scanner(ScanOptions options);

    /// Enumerate and read everything. Never throws for odd sysfs contents.
    Inventory scan();

    struct udev* udev_context() const { return udev_.get(); }

  private:
    ScanOptions options_;
    udev::Udev udev_;
    KernelModules modules_;
    DistroFamily family_ = DistroFamily::unknown;
};

} // namespace rdmad
