// SPDX-License-Identifier: MIT
//
// Which RDMA transport a port speaks. Transport is a property of a port, not a device.
#pragma once

#include "inventory/model.hpp"

#include <string>
#include <vector>

namespace rdmad {

/// The transport of one port, from the device's node type (parse_node_type), the port's link
/// layer and the device's kernel driver:
///   RNIC -> "iWARP" whatever the link layer says (a recorded i40iw port claims InfiniBand);
///   kernel driver "hfi1" -> "OPA" (hfi1 reports node type CA and link layer InfiniBand);
///   usNIC / usNIC UDP -> "usNIC";
///   unspecified (node type 7, e.g. EFA, whose link layer reads "Unknown") -> "unspecified",
///   as ibv_devinfo prints its transport;
///   CA, switch, router: link layer "InfiniBand" -> "InfiniBand", "Ethernet" -> "RoCE";
///   anything else -> "unknown".
/// Source: rdma-core libibverbs/init.c and DOMAIN.md §3.5. ibv_devinfo reports RoCE as
/// transport InfiniBand with link layer Ethernet; we name it RoCE.
std::string classify_transport(const std::string& node_type, const std::string& link_layer,
                               const std::string& kernel_driver);

/// The RoCE versions of a RoCE port from its GID types: "v1" for "IB/RoCE v1", "v2" for
/// "RoCE v2", sorted. A port without `gid_attrs` (kernel < 4.5) speaks v1 only
/// (libibverbs cmd_device.c treats a missing gid_attrs as v1). Empty for other transports.
std::vector<std::string> roce_versions(const std::string& transport,
                                       const std::vector<GidEntry>& gids, bool has_gid_attrs);

} // namespace rdmad
