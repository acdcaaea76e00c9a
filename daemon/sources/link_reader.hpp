// SPDX-License-Identifier: MIT
//
// Reads one netdev and one auxiliary device from sysfs.
#pragma once

#include "inventory/model.hpp"
#include "inventory/rdma_capability.hpp"

#include <libudev.h>
#include <optional>

namespace rdmad {

/// Read the netdev at `dev` (subsystem "net"): ifindex (from `ifindex`, else the IFINDEX
/// property), name, PCI address, driver (`device/driver` basename), operstate, `master`, `carrier`,
/// `flags` and `mtu`. std::nullopt when it has no usable ifindex.
std::optional<LinkState> read_link(udev_device* dev);

/// Read the auxiliary device at `dev`: name, PCI parent, bound driver and modalias.
AuxDevice read_aux_device(udev_device* dev);

} // namespace rdmad
