// SPDX-License-Identifier: MIT
//
// Unit tests for the per-netdev RDMA capability classification
// (daemon/inventory/rdma_capability.hpp). Facts: DOMAIN.md §3.4 (RDMA device to netdev mapping,
// per port preferred over per PCI function), §5 (NIC -> RDMA companion drivers, auxiliary bus
// MODALIAS, the "capable but not loaded" recipe). Inventories are built by hand the way the
// readers fill them (the port's netdev is the first GID netdev, as device_reader does).
#include "inventory/rdma_capability.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace rdmad;
using Catch::Matchers::Contains;

namespace {

LinkState make_link(int32_t index, const std::string& name, const std::string& pci,
                    const std::string& driver, const std::string& master = "") {
    LinkState l;
    l.index = index;
    l.name = name;
    l.syspath = "/sys/devices/virtual/net/" + name;
    l.pci_address = pci;
    l.driver = driver;
    l.operstate = "up";
    l.master = master;
    return l;
}

DeviceState make_device(const std::string& name, const std::string& pci, const std::string& driver,
                        const std::string& provider) {
    DeviceState d;
    d.name = name;
    d.syspath = "/sys/class/infiniband/" + name;
    d.node_type = "CA";
    d.pci_address = pci;
    d.kernel_driver = driver;
    d.provider = provider;
    d.provider_installed = true;
    d.provider_package = "ibverbs-providers";
    d.verbs_device = "/dev/infiniband/uverbs0";
    return d;
}

PortState make_port(uint32_t number, const std::vector<std::string>& gid_netdevs = {}) {
    PortState p;
    p.number = number;
    p.state = "ACTIVE";
    uint32_t i = 0;
    for (const auto& n : gid_netdevs) {
        GidEntry g;
        g.index = i++;
        g.gid = *Gid::parse("fe80:0000:0000:0000:0202:c9ff:fe00:0001");
        g.type = "RoCE v2";
        g.netdev = n;
        p.gids.push_back(g);
    }
    if (!gid_netdevs.empty())
        p.netdev = gid_netdevs.front(); // as device_reader fills it
    return p;
}

void add(HostState& inv, const DeviceState& d) {
    inv.devices[d.syspath] = d;
}

void add(HostState& inv, const LinkState& l) {
    inv.links[l.index] = l;
}

ModuleLookup nothing_loaded() {
    return {[](const std::string&) { return std::string(); },
            [](const std::string&) { return false; }};
}

AuxDevice unbound_aux(const std::string& name, const std::string& pci) {
    AuxDevice a;
    a.name = name;
    a.pci_address = pci;
    a.driver = "";
    a.modalias = "auxiliary:" + name.substr(0, name.rfind('.'));
    return a;
}

const LinkState& link(const HostState& inv, int32_t index) {
    return inv.links.at(index);
}

} // namespace

// ---- served links -----------------------------------------------------------------------

TEST_CASE("a netdev whose PCI function has an RDMA device is RDMA-capable through that device") {
    HostState inv;
    auto d = make_device("mlx5_0", "0000:3b:00.0", "mlx5_core", "mlx5");
    d.ports.push_back(make_port(1)); // e.g. an iWARP or IB port with no GID netdev
    add(inv, d);
    add(inv, make_link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_core"));
    add(inv, make_link(5, "ens1f1np1", "0000:3b:00.1", "mlx5_core"));
    classify_links(inv, {unbound_aux("mlx5_core.rdma.1", "0000:3b:00.1")}, nothing_loaded());
    CHECK(link(inv, 4).rdma_capable == "yes");
    CHECK(link(inv, 4).rdma_device == "mlx5_0");
    CHECK(link(inv, 4).hint == "");
    // the other function has no RDMA device of its own
    CHECK(link(inv, 5).rdma_capable != "yes");
    CHECK(link(inv, 5).rdma_device == "");
}

TEST_CASE("a netdev named by a GID's netdev is served by that device") {
    HostState inv;
    auto d = make_device("rocep59s0f0", "0000:3b:00.0", "mlx5_core", "mlx5");
    d.ports.push_back(make_port(1, {"vlan100", "vlan100"}));
    add(inv, d);
    add(inv, make_link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_core"));
    add(inv, make_link(9, "vlan100", "", ""));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 9).rdma_capable == "yes");
    CHECK(link(inv, 9).rdma_device == "rocep59s0f0");
    CHECK(link(inv, 4).rdma_capable == "yes");
}

TEST_CASE("a GID naming a netdev deeper in the table than the first entry still counts") {
    HostState inv;
    auto d = make_device("mlx5_0", "0000:3b:00.0", "mlx5_core", "mlx5");
    d.ports.push_back(make_port(1, {"ens1f0np0", "ens1f0np0", "macvlan0"}));
    add(inv, d);
    add(inv, make_link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_core"));
    add(inv, make_link(12, "macvlan0", "", ""));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 12).rdma_capable == "yes");
    CHECK(link(inv, 12).rdma_device == "mlx5_0");
}

TEST_CASE("RoCE LAG: both bonded PFs are served by mlx5_bond_0, which names bond0 in its GIDs") {
    HostState inv;
    // The LAG device sits on PF0; its GIDs name the bond, not the PFs.
    auto d = make_device("mlx5_bond_0", "0000:08:00.0", "mlx5_core", "mlx5");
    d.ports.push_back(make_port(1, {"bond0", "bond0"}));
    add(inv, d);
    add(inv, make_link(2, "ens1f0np0", "0000:08:00.0", "mlx5_core", "bond0"));
    add(inv, make_link(3, "ens1f1np1", "0000:08:00.1", "mlx5_core", "bond0"));
    add(inv, make_link(7, "bond0", "", ""));
    // PF1's RDMA aux device is unbound while in LAG: that must not turn it "module-not-loaded".
    std::vector<AuxDevice> aux{unbound_aux("mlx5_core.rdma.1", "0000:08:00.1")};
    classify_links(inv, aux, nothing_loaded());
    for (int32_t i : {2, 3, 7}) {
        INFO("ifindex " << i);
        CHECK(link(inv, i).rdma_capable == "yes");
        CHECK(link(inv, i).rdma_device == "mlx5_bond_0");
    }
    // The port keeps the bond as its netdev.
    CHECK(inv.devices.begin()->second.ports.at(0).netdev == "bond0");
}

TEST_CASE("a bond over a bond: a slave of the lower bond is served through both uppers") {
    // bonding(4) allows a bond as a slave of another; the upper names the RDMA device's GIDs.
    HostState inv;
    auto d = make_device("mlx5_bond_0", "0000:08:00.0", "mlx5_core", "mlx5");
    d.ports.push_back(make_port(1, {"bond1"}));
    add(inv, d);
    add(inv, make_link(6, "bond0", "", "", "bond1"));
    add(inv, make_link(8, "bond1", "", ""));
    add(inv, make_link(9, "ens2f0np0", "0000:09:00.0", "mlx5_core",
                       "bond0")); // no device on its function
    classify_links(inv, {}, nothing_loaded());
    for (int32_t i : {6, 8, 9}) {
        INFO("ifindex " << i);
        CHECK(link(inv, i).rdma_capable == "yes");
        CHECK(link(inv, i).rdma_device == "mlx5_bond_0");
    }
}

TEST_CASE("a port whose GID table names a netdev is not given the PCI function's netdev") {
    // classify_links fills the netdev only of ports whose GID table names none.
    // Regression: the fill looks at port.netdev, not at the GID table; device_reader
    // always copies the first GID netdev into port.netdev, so only hand-built inputs hit it.
    HostState inv;
    auto d = make_device("mlx5_bond_0", "0000:08:00.0", "mlx5_core", "mlx5");
    auto p = make_port(1, {"bond0"});
    p.netdev = ""; // not filled in by a reader
    d.ports.push_back(p);
    add(inv, d);
    add(inv, make_link(2, "ens1f0np0", "0000:08:00.0", "mlx5_core", "bond0"));
    add(inv, make_link(7, "bond0", "", ""));
    classify_links(inv, {}, nothing_loaded());
    CHECK(inv.devices.begin()->second.ports.at(0).netdev != "ens1f0np0");
    CHECK(link(inv, 7).rdma_device == "mlx5_bond_0");
}

TEST_CASE("an rxe device's parent netdev is RDMA-capable through rxe") {
    HostState inv;
    auto d = make_device("rxe0", "", "rdma_rxe", "rxe");
    d.parent_netdev = "eth0";
    d.ports.push_back(make_port(1));
    add(inv, d);
    add(inv, make_link(2, "eth0", "0000:00:03.0", "virtio_net"));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 2).rdma_capable == "yes");
    CHECK(link(inv, 2).rdma_device == "rxe0");
    // and the rxe port's netdev is its parent
    CHECK(inv.devices.begin()->second.ports.at(0).netdev == "eth0");
}

// ---- capable, but the RDMA driver is not bound ------------------------------------------

TEST_CASE("an mlx5 netdev whose mlx5_core.rdma aux device has no driver needs mlx5_ib loaded") {
    // DOMAIN.md §5: mlx5_core -> mlx5_ib via aux device mlx5_core.rdma.N, MODALIAS
    // auxiliary:mlx5_core.rdma.
    HostState inv;
    add(inv, make_link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_core"));
    std::vector<AuxDevice> aux{
        {"mlx5_core.eth.0", "0000:3b:00.0", "mlx5_core.eth", "auxiliary:mlx5_core.eth"},
        unbound_aux("mlx5_core.rdma.0", "0000:3b:00.0")};

    SECTION("libkmod cannot resolve the modalias: the fallback table names mlx5_ib") {
        classify_links(inv, aux, nothing_loaded());
    }
    SECTION("libkmod resolves the modalias to mlx5_ib") {
        std::vector<std::string> asked;
        ModuleLookup modules{[&](const std::string& alias) {
                                 asked.push_back(alias);
                                 return std::string(alias == "auxiliary:mlx5_core.rdma" ? "mlx5_ib"
                                                                                        : "");
                             },
                             [](const std::string&) { return false; }};
        classify_links(inv, aux, modules);
        CHECK(asked == std::vector<std::string>{"auxiliary:mlx5_core.rdma"});
    }
    CHECK(link(inv, 4).rdma_capable == "module-not-loaded");
    CHECK(link(inv, 4).rdma_device == "");
    CHECK(link(inv, 4).hint == "load mlx5_ib");
}

TEST_CASE("an mlx5 netdev whose mlx5_ib is loaded but not bound says so, not 'load mlx5_ib'") {
    HostState inv;
    add(inv, make_link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_core"));
    std::vector<AuxDevice> aux{unbound_aux("mlx5_core.rdma.0", "0000:3b:00.0")};
    std::vector<std::string> checked;
    ModuleLookup modules{[](const std::string&) { return std::string("mlx5_ib"); },
                         [&](const std::string& m) {
                             checked.push_back(m);
                             return m == "mlx5_ib";
                         }};
    classify_links(inv, aux, modules);
    CHECK(link(inv, 4).rdma_capable == "module-not-loaded");
    CHECK_THAT(link(inv, 4).hint, Contains("mlx5_ib") && Contains("loaded") &&
                                      Contains("not bound") && Contains("mlx5_core.rdma.0"));
    CHECK(link(inv, 4).hint.rfind("load ", 0) != 0);
    CHECK(checked == std::vector<std::string>{"mlx5_ib"});
}

TEST_CASE("an E810 netdev with an unbound ice.roce aux device needs irdma") {
    HostState inv;
    add(inv, make_link(6, "ens2f0", "0000:5e:00.0", "ice"));
    classify_links(inv, {unbound_aux("ice.roce.0", "0000:5e:00.0")}, nothing_loaded());
    CHECK(link(inv, 6).rdma_capable == "module-not-loaded");
    CHECK(link(inv, 6).hint == "load irdma");
}

TEST_CASE("a cxgb4 netdev without an RDMA device needs iw_cxgb4 (no aux device exists)") {
    // DOMAIN.md §5: cxgb4 -> iw_cxgb4 via ULD registration, no auxiliary device.
    HostState inv;
    add(inv, make_link(3, "enp4s0f4", "0000:04:00.4", "cxgb4"));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 3).rdma_capable == "module-not-loaded");
    CHECK(link(inv, 3).hint == "load iw_cxgb4");
}

TEST_CASE("qede, be2net and hns3 netdevs name their companion RDMA modules") {
    // DOMAIN.md §5, with the stale udev name hns_roce corrected to hns_roce_hw_v2.
    HostState inv;
    add(inv, make_link(2, "eth0", "0000:01:00.0", "qede"));
    add(inv, make_link(3, "eth1", "0000:02:00.0", "be2net"));
    add(inv, make_link(4, "eth2", "0000:7d:00.0", "hns3"));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 2).hint == "load qedr");
    CHECK(link(inv, 3).hint == "load ocrdma");
    CHECK(link(inv, 4).hint == "load hns_roce_hw_v2");
    for (int32_t i : {2, 3, 4})
        CHECK(link(inv, i).rdma_capable == "module-not-loaded");
}

TEST_CASE("virtio_net and bnx2 netdevs cannot do RDMA") {
    HostState inv;
    add(inv, make_link(2, "eth0", "0000:00:03.0", "virtio_net"));
    add(inv, make_link(3, "eno1", "0000:01:00.0", "bnx2"));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 2).rdma_capable == "no");
    CHECK(link(inv, 2).hint == "");
    CHECK(link(inv, 3).rdma_capable == "no");
    CHECK(link(inv, 3).hint == "");
}

TEST_CASE("lo and a bridge (no PCI function) cannot do RDMA") {
    HostState inv;
    add(inv, make_link(1, "lo", "", ""));
    add(inv, make_link(8, "br0", "", "", ""));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 1).rdma_capable == "no");
    CHECK(link(inv, 8).rdma_capable == "no");
    CHECK(link(inv, 1).rdma_device == "");
}

TEST_CASE("a netdev on a PCI function whose driver link is missing is unknown, not no") {
    HostState inv;
    add(inv, make_link(5, "eth3", "0000:af:00.0", ""));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 5).rdma_capable == "unknown");
}

TEST_CASE("a device whose provider is missing gives its links a hint naming the package") {
    HostState inv;
    auto d = make_device("mlx5_0", "0000:3b:00.0", "mlx5_core", "mlx5");
    d.provider_installed = false;
    d.provider_package = "ibverbs-providers";
    d.ports.push_back(make_port(1, {"ens1f0np0"}));
    add(inv, d);
    add(inv, make_link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_core", "bond0"));
    add(inv, make_link(5, "ens1f1np1", "0000:3b:00.1", "mlx5_core", "bond0"));
    add(inv, make_link(7, "bond0", "", ""));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 4).rdma_capable == "yes");
    CHECK_THAT(link(inv, 4).hint, Contains("ibverbs-providers"));
}

TEST_CASE("stale results of an earlier classification are cleared") {
    HostState inv;
    auto l = make_link(2, "eth0", "0000:00:03.0", "virtio_net");
    l.rdma_capable = "yes";
    l.rdma_device = "rxe0";
    l.hint = "load rdma_rxe";
    add(inv, l);
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 2).rdma_capable == "no");
    CHECK(link(inv, 2).rdma_device == "");
    CHECK(link(inv, 2).hint == "");
}

// ---- aux device names -------------------------------------------------------------------

TEST_CASE("only <drv>.{rdma,roce,iwarp,ib}.<n> auxiliary devices carry an RDMA function") {
    CHECK(is_rdma_aux_device("mlx5_core.rdma.0"));
    CHECK(is_rdma_aux_device("ice.roce.1"));
    CHECK(is_rdma_aux_device("ice.iwarp.0"));
    CHECK(is_rdma_aux_device("i40e.iwarp.3"));
    CHECK(is_rdma_aux_device("mlx4_core.ib.0"));
    CHECK(is_rdma_aux_device("bnxt_en.rdma.0"));
    CHECK_FALSE(is_rdma_aux_device("mlx5_core.eth.0"));
    CHECK_FALSE(is_rdma_aux_device("mlx5_core.sf.2"));
    CHECK_FALSE(is_rdma_aux_device("mlx4_core.eth.0"));
    CHECK_FALSE(is_rdma_aux_device(""));
    CHECK_FALSE(is_rdma_aux_device("rdma"));
    CHECK_FALSE(is_rdma_aux_device("mlx5_core.rdma"));
}

TEST_CASE("the fallback module table follows the DOMAIN.md §5 aux devices") {
    CHECK(fallback_aux_module("mlx5_core.rdma.0") == "mlx5_ib");
    CHECK(fallback_aux_module("mlx5_core.multiport.1") == "mlx5_ib");
    CHECK(fallback_aux_module("ice.iwarp.0") == "irdma");
    CHECK(fallback_aux_module("ice.roce.2") == "irdma");
    CHECK(fallback_aux_module("i40e.iwarp.0") == "irdma"); // not the stale i40iw
    CHECK(fallback_aux_module("bnxt_en.rdma.0") == "bnxt_re");
    CHECK(fallback_aux_module("mana.rdma.0") == "mana_ib");
    CHECK(fallback_aux_module("mlx5_core.eth.0") == "");
    CHECK(fallback_aux_module("") == "");
}

TEST_CASE("companion RDMA modules of NIC drivers without aux devices") {
    CHECK(companion_rdma_module("cxgb4") == "iw_cxgb4");
    CHECK(companion_rdma_module("qede") == "qedr");
    CHECK(companion_rdma_module("be2net") == "ocrdma");
    CHECK(companion_rdma_module("hns3") == "hns_roce_hw_v2");
    CHECK(companion_rdma_module("enic") == "usnic_verbs");
    CHECK(companion_rdma_module("virtio_net") == "");
    CHECK(companion_rdma_module("bnx2") == "");
    CHECK(companion_rdma_module("") == "");
}

// ---- devices sharing or serving a PCI function ------------------------------------------

TEST_CASE("of two RDMA devices on one PCI function, the one whose GIDs name the netdev serves it") {
    // Regression: the port netdev fill turns the PCI-function mapping into a port
    // mapping, so serving_device picks the first device by syspath.
    // DOMAIN.md §3.4: the per-port mapping (gid_attrs/ndevs) is preferred over the per-PCI-
    // function one. "a_dev" sorts first and has no GID netdevs.
    HostState inv;
    auto a = make_device("a_dev", "0000:3b:00.0", "mlx5_core", "mlx5");
    a.ports.push_back(make_port(1));
    auto b = make_device("b_dev", "0000:3b:00.0", "mlx5_core", "mlx5");
    b.ports.push_back(make_port(1, {"ens1f0np0"}));
    add(inv, a);
    add(inv, b);
    add(inv, make_link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_core"));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 4).rdma_capable == "yes");
    CHECK(link(inv, 4).rdma_device == "b_dev");
}

TEST_CASE("of two RDMA devices on one PCI function naming nothing, the netdev is still served") {
    HostState inv;
    auto a = make_device("a_dev", "0000:3b:00.0", "mlx5_core", "mlx5");
    a.ports.push_back(make_port(1));
    auto b = make_device("b_dev", "0000:3b:00.0", "mlx5_core", "mlx5");
    b.ports.push_back(make_port(1));
    add(inv, a);
    add(inv, b);
    add(inv, make_link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_core"));
    classify_links(inv, {}, nothing_loaded());
    CHECK(link(inv, 4).rdma_capable == "yes");
    CHECK((link(inv, 4).rdma_device == "a_dev" || link(inv, 4).rdma_device == "b_dev"));
}

TEST_CASE("a port without GID netdevs gets the only netdev on its PCI function") {
    // An iWARP or IPoIB port has no gid_attrs/ndevs; the function's single netdev serves it.
    HostState inv;
    auto d = make_device("iwp4s0f4", "0000:04:00.4", "cxgb4", "cxgb4");
    d.node_type = "RNIC";
    d.ports.push_back(make_port(1));
    d.ports[0].link_layer = "Ethernet";
    d.ports[0].transport = "iWARP";
    add(inv, d);
    add(inv, make_link(3, "enp4s0f4", "0000:04:00.4", "cxgb4"));
    classify_links(inv, {}, nothing_loaded());
    CHECK(inv.devices.begin()->second.ports.at(0).netdev == "enp4s0f4");
    CHECK(link(inv, 3).rdma_capable == "yes");
    CHECK(link(inv, 3).rdma_device == "iwp4s0f4");
}

TEST_CASE("mlx4's two netdevs on one PCI function are both served by the one mlx4 device") {
    // DOMAIN.md §3.4: one mlx4 ibdev serves both ports; the function has two netdevs.
    HostState inv;
    auto d = make_device("mlx4_0", "0000:0b:00.0", "mlx4_core", "mlx4");
    d.ports.push_back(make_port(1));
    d.ports.push_back(make_port(2));
    add(inv, d);
    add(inv, make_link(2, "ens3", "0000:0b:00.0", "mlx4_en"));
    add(inv, make_link(3, "ens3d1", "0000:0b:00.0", "mlx4_en"));
    classify_links(inv, {}, nothing_loaded());
    // Which port each netdev belongs to needs `dev_port` (port - 1), not asserted here.
    CHECK(inv.devices.begin()->second.ports.at(0).netdev != "ens3d1");
    CHECK(link(inv, 2).rdma_capable == "yes");
    CHECK(link(inv, 3).rdma_capable == "yes");
    CHECK(link(inv, 2).rdma_device == "mlx4_0");
    CHECK(link(inv, 3).rdma_device == "mlx4_0");
}
