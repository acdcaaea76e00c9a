// SPDX-License-Identifier: MIT
//
// What the doctor's checks read besides the device itself: the netdevs by name and the host's
// facts. Plain values and pointers into the inventory; nothing here touches the system.
#pragma once

#include "inventory/model.hpp"

#include <map>
#include <string>

namespace rdmad::doctor {

/// Netdevs by name (a port names its netdev by name: `gid_attrs/ndevs/<i>`).
using LinkIndex = std::map<std::string, const LinkState*>;

/// The netdevs of `links` by name. The pointers live as long as `links`.
LinkIndex index_links(const std::map<int32_t, LinkState>& links);

/// The context every check may read. Null members are facts not known (unit tests of one
/// check, or a caller without them): the checks that need them say "unknown".
struct Facts {
    const LinkIndex* links = nullptr;
    const HostFacts* host = nullptr;
};

/// "path = value": one piece of evidence.
std::string evidence(const std::string& path, const std::string& value);

/// Where the kernel shows what a check read (the class paths an admin can `cat`).
std::string device_path(const DeviceState& d);              ///< /sys/class/infiniband/<dev>
std::string port_path(const DeviceState& d, uint32_t port); ///< .../ports/<n>
std::string netdev_path(const std::string& netdev);         ///< /sys/class/net/<if>
std::string pci_path(const std::string& address);           ///< /sys/bus/pci/devices/<bdf>

/// True for the transports whose ports speak InfiniBand management (SM, LIDs, P_Keys,
/// node description on the fabric): "InfiniBand" and "OPA".
bool is_fabric_transport(const std::string& transport);

} // namespace rdmad::doctor
