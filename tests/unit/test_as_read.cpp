// SPDX-License-Identifier: MIT
//
// Unit tests for as_read() (daemon/sources/device_reader.hpp): the scanner keeps no read copy
// of a device once the Inventory holds it, and derives it again from the Inventory's copy.
// That is right only if as_read() of a derived device gives back exactly what the read gave.
// Devices are built by hand the way read_device() fills them (a port's netdev is the netdev
// of its first GID entry that names one, device_reader.cpp read_port()), then derived with
// the daemon's own derivations (classify_links(), diagnose(), refresh_lossless()) and the
// values the Inventory and the reconciler fill.
#include "doctor/facts.hpp"
#include "doctor/lossless.hpp"
#include "inventory/problems.hpp"
#include "inventory/rdma_capability.hpp"
#include "inventory_fixtures.hpp"
#include "sources/device_reader.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace rdmad;

namespace {

GidEntry gid(uint32_t index, const std::string& text, const std::string& type,
             const std::string& netdev) {
    GidEntry g;
    g.index = index;
    g.gid = *Gid::parse(text);
    g.type = type;
    g.netdev = netdev;
    return g;
}

LinkState link(int32_t index, const std::string& name, const std::string& pci, uint32_t dev_port,
               uint32_t type) {
    LinkState l = test::netdev(index, name, "", pci);
    l.mtu = 1500;
    l.dev_port = dev_port;
    l.type = type;
    return l;
}

/// A dual-port ConnectX-3 as read_device() gives it: port 1 Ethernet (RoCE, its GIDs name
/// ens1), port 2 InfiniBand (no GID names a netdev: its netdev comes from the PCI function).
DeviceState read_mlx4() {
    DeviceState d;
    d.name = "mlx4_0";
    d.syspath = "/sys/devices/pci0000:00/0000:04:00.0/infiniband/mlx4_0";
    d.node_type = "CA";
    d.node_guid = "0002:c903:0031:78f0";
    d.firmware_version = "2.42.5000";
    d.pci_address = "0000:04:00.0";
    d.kernel_driver = "mlx4_core";
    d.pcie_path = {{"0000:04:00.0", "8.0 GT/s PCIe", "8", "8.0 GT/s PCIe", "8"}};
    PortState eth = test::port(1, "ens1"); // the first entry that names a netdev
    eth.roce_versions = {"v1", "v2"};
    eth.gids = {gid(0, "fe80:0000:0000:0000:0202:c9ff:fe31:78f1", "IB/RoCE v1", ""),
                gid(1, "fe80:0000:0000:0000:0202:c9ff:fe31:78f1", "RoCE v2", "ens1"),
                gid(2, "0000:0000:0000:0000:0000:ffff:c000:0201", "RoCE v2", "ens1")};
    eth.port_type = "eth";
    PortState ib = test::port(2, "");
    ib.link_layer = "InfiniBand";
    ib.transport = "InfiniBand";
    ib.lid = 7;
    ib.sm_lid = 1;
    ib.gids = {gid(0, "fe80:0000:0000:0000:0002:c903:0031:78f2", "", "")};
    ib.port_type = "ib";
    d.ports = {eth, ib};
    return d;
}

/// Soft-RoCE (rxe) as read: its netdev is in `parent`, its GIDs name it.
DeviceState read_rxe() {
    DeviceState d;
    d.name = "rxe0";
    d.syspath = "/sys/devices/virtual/infiniband/rxe0";
    d.node_type = "CA";
    d.kernel_driver = "rdma_rxe";
    d.parent_netdev = "eth0";
    PortState p = test::port(1, "");
    p.state = "DOWN";
    p.phys_state = "Disabled";
    d.ports = {p};
    return d;
}

} // namespace

TEST_CASE("as_read() of a device derived as the daemon derives it is the device as read") {
    HostState host;
    const DeviceState mlx4 = read_mlx4();
    const DeviceState rxe = read_rxe();
    host.devices[mlx4.syspath] = mlx4;
    host.devices[rxe.syspath] = rxe;
    host.links[4] = link(4, "ens1", "0000:04:00.0", 0, 1);
    host.links[5] = link(5, "ib0", "0000:04:00.0", 1, 32);
    host.links[6] = link(6, "eth0", "", 0, 1);
    // The scanner's derivation: provider, verbs device, netdevs, PFC, problems.
    for (auto& [_, d] : host.devices) {
        d.provider = d.name == "rxe0" ? "rxe" : "mlx4";
        d.provider_installed = d.name != "rxe0";
        d.provider_package = "ibverbs-providers";
        d.verbs_device = "/dev/infiniband/uverbs0";
    }
    classify_links(host, {},
                   {[](const std::string&) { return std::string(); },
                    [](const std::string&) { return false; }});
    const auto links = doctor::index_links(host.links);
    const HostFacts facts;
    for (auto& [_, d] : host.devices) {
        for (auto& port : d.ports)
            if (port.link_layer == "Ethernet") {
                port.pfc.status = PfcActual::Status::ok;
                port.pfc.priorities = {3};
                port.pfc.trust = "dscp";
                port.pfc.dscp_map = {{26, 3}};
                port.pfc_no_drop = {3};
            }
        diagnose(d, {&links, &facts});
        // What the Inventory and the reconciler fill.
        d.link_indexes = {4, 5};
        d.pf_id = "mlx4_0";
        for (auto& port : d.ports) {
            port.link_index = 4;
            port.desired_port_type = "eth";
            port.desired_pfc_no_drop = {3, 4};
            port.in_sync = false;
        }
        doctor::refresh_lossless(d);
    }
    const DeviceState& derived_mlx4 = host.devices.at(mlx4.syspath);
    const DeviceState& derived_rxe = host.devices.at(rxe.syspath);
    // The derivation did fill what as_read() must undo (else this test proves nothing).
    REQUIRE(derived_mlx4.ports[1].netdev == "ib0"); // from the PCI function, dev_port 1
    REQUIRE(derived_rxe.ports[0].netdev == "eth0"); // from `parent`
    REQUIRE_FALSE(derived_mlx4.ports[0].recommended_gid.gid.empty());
    REQUIRE(derived_mlx4.ports[0].netdev_mtu == 1500);
    REQUIRE(!derived_mlx4.problems.empty());
    REQUIRE(derived_mlx4 != mlx4);

    CHECK(as_read(derived_mlx4) == mlx4);
    CHECK(as_read(derived_rxe) == rxe);
    // Idempotent: what was read stays as read.
    CHECK(as_read(mlx4) == mlx4);
}
