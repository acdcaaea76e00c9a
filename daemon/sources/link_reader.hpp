// SPDX-License-Identifier: MIT
//
// Reads one netdev and one auxiliary device from sysfs.
#pragma once

#include "inventory/model.hpp"
#include "inventory/rdma_capability.hpp"
#include "sources/pci_reads.hpp"

#include <optional>
#include <string>

namespace rdmad {

/// Read the netdev at `syspath` (`/sys/devices/.../net/<name>`): ifindex (from `ifindex`,
/// else IFINDEX in `uevent`), name, PCI address, driver (`device/driver` basename), operstate,
/// `master`, `carrier`, `flags` and `mtu`. std::nullopt when it has no usable ifindex. `pci`
/// holds what this pass has read of the PCI functions.
std::optional<LinkState> read_link(const std::string& syspath, PciReads& pci);

/// Read the auxiliary device at `syspath`: name, PCI parent, bound driver and modalias (from
/// `modalias`, else MODALIAS in `uevent`).
AuxDevice read_aux_device(const std::string& syspath, PciReads& pci);

} // namespace rdmad
