// SPDX-License-Identifier: MIT
//
// Inventory values for unit tests: a dual-port ConnectX-5 as DOMAIN.md §3 shows it (node GUID,
// PCI function, a netdev per port, both ports ACTIVE RoCE) and a netdev.
#pragma once

#include "inventory/model.hpp"

#include <cstdint>
#include <string>

namespace rdmad::test {

inline PortState port(uint32_t n, const std::string& netdev) {
    PortState p;
    p.number = n;
    p.state = "ACTIVE";
    p.phys_state = "LinkUp";
    p.link_layer = "Ethernet";
    p.transport = "RoCE";
    p.netdev = netdev;
    return p;
}

/// `name` at PCI `pci`, ports 1 and 2 on netdevs <name>p1 and <name>p2.
inline DeviceState cx5(const std::string& name, const std::string& guid, const std::string& pci) {
    DeviceState d;
    d.name = name;
    d.syspath = "/sys/devices/pci0000:00/0000:00:02.0/" + pci + "/infiniband/" + name;
    d.node_type = "CA";
    d.node_guid = guid;
    d.pci_address = pci;
    d.kernel_driver = "mlx5_core";
    d.ports = {port(1, name + "p1"), port(2, name + "p2")};
    return d;
}

/// An up netdev, RDMA-capable when `rdma_device` is set.
inline LinkState netdev(int32_t index, const std::string& name, const std::string& rdma_device,
                        const std::string& pci = "") {
    LinkState l;
    l.index = index;
    l.name = name;
    l.syspath = "/sys/class/net/" + name;
    l.pci_address = pci;
    l.operstate = "up";
    l.rdma_capable = rdma_device.empty() ? "no" : "yes";
    l.rdma_device = rdma_device;
    return l;
}

} // namespace rdmad::test
