// SPDX-License-Identifier: MIT
//
// The property tables (daemon/inventory/properties.hpp): changing one member of a port, a
// device or a netdev names exactly that property in the Inventory's change set (which the bus
// sends as PropertiesChanged as it is), changes exactly that key of that object in Describe()
// and, in rdmad.prom, only the samples of that object. Every exported row of each table has
// a mutation here: a row added without one fails "every property has a case".
#include "bus/describe.hpp"
#include "export/prometheus.hpp"
#include "inventory/inventory.hpp"
#include "inventory/properties.hpp"

#include "inventory_fixtures.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

using namespace rdmad;
using namespace rdmad::test;
using nlohmann::json;

namespace {

using Names = std::set<std::string>;

/// mlx5_0 (ports on netdevs 4 and 5) and mlx5_1 (6 and 7), and a netdev 8 of nobody.
Inventory host() {
    Inventory inv;
    HostState h;
    auto a = cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0");
    auto b = cx5("mlx5_1", "b859:9f03:00d4:0a2b", "0000:af:00.0");
    h.devices[a.syspath] = a;
    h.devices[b.syspath] = b;
    for (auto l : {netdev(4, "mlx5_0p1", "mlx5_0", "0000:3b:00.0"),
                   netdev(5, "mlx5_0p2", "mlx5_0", "0000:3b:00.0"),
                   netdev(6, "mlx5_1p1", "mlx5_1", "0000:af:00.0"),
                   netdev(7, "mlx5_1p2", "mlx5_1", "0000:af:00.0"), netdev(8, "eth9", "")})
        h.links[l.index] = l;
    inv.replace(h);
    return inv;
}

/// The exported property names among `names`.
template <typename State> Names exported(PropertyTable<State> table, const Names& names) {
    Names out;
    for (const auto& n : names)
        if (const auto* row = find_property(table, n); row && row->exported())
            out.insert(n);
    return out;
}

/// Describe()'s objects as path -> {key -> value} (ports out of their devices).
std::map<std::string, std::map<std::string, json>> objects(const Inventory& inv) {
    const json doc = json::parse(describe_json(inv, ManagerState{"0.1.0", "running", {}, {}, {}}));
    std::map<std::string, std::map<std::string, json>> out;
    auto take = [&](const json& o) {
        for (const auto& [k, v] : o.items())
            if (k != "Ports" || !v.is_array() || v.empty() || !v[0].is_object())
                out[o["Path"]][k] = v;
            else
                out[o["Path"]][k] = json::array(); // the port objects are taken on their own
    };
    for (const auto& d : doc["Devices"]) {
        take(d);
        for (const auto& p : d["Ports"])
            take(p);
    }
    for (const auto& l : doc["Links"])
        take(l);
    return out;
}

/// (path, key) of every Describe() value that differs between `a` and `b`.
std::set<std::pair<std::string, std::string>> describe_diff(const Inventory& a, const Inventory& b) {
    auto x = objects(a), y = objects(b);
    std::set<std::pair<std::string, std::string>> out;
    for (const auto& [path, keys] : x)
        for (const auto& [k, v] : keys)
            if (!y.count(path) || !y[path].count(k) || y[path][k] != v)
                out.insert({path, k});
    return out;
}

/// The sample lines of rdmad.prom that one of `a`, `b` has and the other has not.
std::set<std::string> prom_diff(const Inventory& a, const Inventory& b) {
    auto lines = [](const Inventory& inv) {
        std::set<std::string> out;
        std::istringstream in(exports::render_prometheus(inv.state(), exports::ManagerFacts{}));
        for (std::string line; std::getline(in, line);)
            if (!line.empty() && line[0] != '#')
                out.insert(line);
        return out;
    };
    auto x = lines(a), y = lines(b);
    std::set<std::string> out;
    for (const auto& l : x)
        if (!y.count(l))
            out.insert(l);
    for (const auto& l : y)
        if (!x.count(l))
            out.insert(l);
    return out;
}

/// Whether rdmad.prom's writer takes `changes` for a new text (PrometheusRenderer::changed():
/// a new generation, so the file is written again).
bool prom_moves(const Inventory& inv, const ChangeSet& changes) {
    exports::PrometheusRenderer renderer;
    renderer.update(inv, exports::ManagerFacts{});
    const uint64_t generation = renderer.generation();
    renderer.changed(changes);
    renderer.update(inv, exports::ManagerFacts{});
    return renderer.generation() != generation;
}

const std::string kDev0 = "/org/rdmad1/device/b8599f0300d40a2a";
const std::string kPort1 = kDev0 + "/port/1";

} // namespace

TEST_CASE("a change of each Port member names that property alone, in the change set, in "
          "Describe() and in rdmad.prom") {
    // Each exported, changing row of org.rdmad1.Port and what makes it change.
    const std::map<std::string, std::function<void(PortState&)>> mutate = {
        {"State", [](PortState& p) { p.state = "DOWN"; }},
        {"PhysicalState", [](PortState& p) { p.phys_state = "Polling"; }},
        {"LinkLayer", [](PortState& p) { p.link_layer = "InfiniBand"; }},
        {"Transport", [](PortState& p) { p.transport = "InfiniBand"; }},
        {"RoCEVersions", [](PortState& p) { p.roce_versions = {"v2"}; }},
        {"RateGbps", [](PortState& p) { p.rate_gbps = 100; }},
        {"Rate", [](PortState& p) { p.rate = "100 Gb/sec (4X EDR)"; }},
        {"LID", [](PortState& p) { p.lid = 7; }},
        {"SMLID", [](PortState& p) { p.sm_lid = 1; }},
        {"GIDs", [](PortState& p) { p.gids = {{1, *Gid::parse("fe80:0000:0000:0000:0000:0000:0000:0001"), "RoCE v2", "mlx5_0p1"}}; }},
        {"Link", [](PortState& p) { p.netdev = "eth9"; }},
        {"PortType", [](PortState& p) { p.port_type = "eth"; }},
        {"DesiredPortType", [](PortState& p) { p.desired_port_type = "eth"; }},
        {"NextBootPortType", [](PortState& p) { p.next_boot_port_type = "eth"; }},
        {"PendingPortType", [](PortState& p) { p.pending_port_type = "eth"; }},
        {"PFCNoDrop", [](PortState& p) { p.pfc_no_drop = {3}; }},
        {"DesiredPFCNoDrop", [](PortState& p) { p.desired_pfc_no_drop = {3}; }},
        {"Trust", [](PortState& p) { p.pfc.status = PfcActual::Status::ok; p.pfc.trust = "dscp"; }},
        {"DesiredTrust", [](PortState& p) { p.desired_trust = "dscp"; }},
        {"DSCPPriority", [](PortState& p) { p.pfc.status = PfcActual::Status::ok; p.pfc.dscp_map = {{26, 3}}; }},
        {"DesiredDSCPPriority", [](PortState& p) { p.desired_dscp_priority = {{26, 3}}; }},
        {"RDMACMRoCEMode", [](PortState& p) { p.rdma_cm.roce_mode = "RoCE v2"; }},
        {"DesiredRDMACMRoCEMode", [](PortState& p) { p.desired_rdma_cm_roce_mode = "RoCE v2"; }},
        {"RDMACMToS", [](PortState& p) { p.rdma_cm.tos = 106; }},
        {"DesiredRDMACMToS", [](PortState& p) { p.desired_rdma_cm_tos = 106; }},
        {"InSync", [](PortState& p) { p.in_sync = false; }},
        {"NetdevMTU", [](PortState& p) { p.netdev_mtu = 9000; }},
        {"ActiveMTU", [](PortState& p) { p.active_mtu = 4096; }},
        {"RecommendedGID", [](PortState& p) { p.recommended_gid = {1, *Gid::parse("0000:0000:0000:0000:0000:0000:0000:0001"), "RoCE v2", "mlx5_0p1", ""}; }},
    };
    SECTION("every property has a case") {
        for (const auto& row : port_properties())
            if (row.exported() && !row.constant) {
                INFO(row.name);
                CHECK(mutate.count(row.name));
            }
    }
    for (const auto& [name, change] : mutate) {
        DYNAMIC_SECTION(name) {
            Inventory before = host();
            Inventory after = before;
            DeviceState d = *after.device_named("mlx5_0");
            change(d.ports[0]);
            const ChangeSet cs = after.put_device(d);
            const std::string id = after.id_of(d.syspath);
            CHECK(cs.devices_changed.empty());
            CHECK(cs.links_changed.empty());
            REQUIRE(cs.ports_changed.size() == 1);
            CHECK(cs.ports_changed.begin()->first == std::make_pair(id, uint32_t(1)));
            CHECK(exported(port_properties(), cs.ports_changed.begin()->second) == Names{name});
            CHECK(describe_diff(before, after) ==
                  std::set<std::pair<std::string, std::string>>{{kPort1, name}});
            for (const auto& line : prom_diff(before, after)) {
                INFO(line);
                CHECK(line.find("device=\"mlx5_0\",port=\"1\"") != std::string::npos);
            }
            // GIDs show through the routable flag alone (has_routable_roce_v2_gid()): one
            // that leaves it (this link-local GID, on a port that had a routable one) counts
            // as a new text all the same, and the writer writes the same bytes again.
            if (name == "GIDs")
                CHECK(prom_moves(after, cs));
            else
                CHECK(prom_moves(after, cs) == !prom_diff(before, after).empty());
        }
    }
}

TEST_CASE("a change of each Device member names that property alone, in the change set, in "
          "Describe() and in rdmad.prom") {
    const std::map<std::string, std::function<void(DeviceState&)>> mutate = {
        {"NodeType", [](DeviceState& d) { d.node_type = "RNIC"; }},
        {"NodeGUID", [](DeviceState& d) { d.node_guid = "0000:0000:0000:0000"; }},
        {"SysImageGUID", [](DeviceState& d) { d.sys_image_guid = "b859:9f03:00d4:0a2a"; }},
        {"FirmwareVersion", [](DeviceState& d) { d.firmware_version = "16.35.2000"; }},
        {"HCAType", [](DeviceState& d) { d.hca_type = "MT4119"; }},
        {"BoardID", [](DeviceState& d) { d.board_id = "MT_0000000080"; }},
        {"NodeDescription", [](DeviceState& d) { d.node_description = "host1 mlx5_0"; }},
        {"PCIAddress", [](DeviceState& d) { d.pci_address = "0000:3b:00.1"; }},
        {"KernelDriver", [](DeviceState& d) { d.kernel_driver = "mlx4_core"; }},
        {"Provider", [](DeviceState& d) { d.provider = "mlx5"; }},
        {"ProviderInstalled", [](DeviceState& d) { d.provider_installed = true; }},
        {"ProviderPackage", [](DeviceState& d) { d.provider_package = "ibverbs-providers"; }},
        {"VerbsDevice", [](DeviceState& d) { d.verbs_device = "/dev/infiniband/uverbs0"; }},
        {"PhysicalFunction", [](DeviceState& d) { d.physical_function = "0000:af:00.0"; }},
        {"DesiredOrigin",
         [](DeviceState& d) { d.desired_origin = {{"trust", "/etc/rdmad/rdmad.conf:3"}}; }},
        {"SRIOVNumVFs", [](DeviceState& d) { d.sriov.numvfs = 4; }},
        {"SRIOVTotalVFs", [](DeviceState& d) { d.sriov.totalvfs = 16; }},
        {"DesiredSRIOVNumVFs", [](DeviceState& d) { d.desired_sriov_numvfs = 8; }},
        {"VFIndex", [](DeviceState& d) { d.vf_index = 3; }},
        {"DesiredVFGUIDs",
         [](DeviceState& d) { d.desired_vf_guids = {{0, 0x0011223344556600u, 0x0011223344556700u}}; }},
        {"ProblemDetails",
         [](DeviceState& d) {
             Problem p{"pcie-unknown", "info", "unknown"};
             p.details_only = true; // a doctor's info finding: ProblemDetails only
             d.problems.push_back(p);
         }},
    };
    SECTION("every property has a case") {
        // Name has its own case (its netdevs follow it); Ports is retract-and-announce; Links
        // is the netdevs' (the next test case); Problems is ProblemDetails' filtered view.
        const Names elsewhere{"Name", "Ports", "Links", "Problems"};
        for (const auto& row : device_properties())
            if (row.exported() && !row.constant && !elsewhere.count(row.name)) {
                INFO(row.name);
                CHECK(mutate.count(row.name));
            }
    }
    for (const auto& [name, change] : mutate) {
        DYNAMIC_SECTION(name) {
            Inventory before = host();
            Inventory after = before;
            DeviceState d = *after.device_named("mlx5_0");
            change(d);
            const ChangeSet cs = after.put_device(d);
            const std::string id = after.id_of(d.syspath);
            CHECK(cs.devices_added.empty());
            CHECK(cs.ports_changed.empty());
            CHECK(cs.links_changed.empty());
            REQUIRE(cs.devices_changed.size() == 1);
            CHECK(exported(device_properties(), cs.devices_changed.at(id)) == Names{name});
            CHECK(describe_diff(before, after) ==
                  std::set<std::pair<std::string, std::string>>{{kDev0, name}});
            for (const auto& line : prom_diff(before, after)) {
                INFO(line);
                CHECK(line.find("device=\"mlx5_0\"") != std::string::npos);
            }
            CHECK(prom_moves(after, cs) == !prom_diff(before, after).empty());
        }
    }
    SECTION("a warning is in Problems and ProblemDetails") {
        Inventory before = host();
        Inventory after = before;
        DeviceState d = *after.device_named("mlx5_0");
        d.problems.push_back({"no-verbs-device", "warning", "load ib_uverbs"});
        const ChangeSet cs = after.put_device(d);
        CHECK(exported(device_properties(), cs.devices_changed.at(after.id_of(d.syspath))) ==
              Names{"Problems", "ProblemDetails"});
        CHECK(describe_diff(before, after) == std::set<std::pair<std::string, std::string>>{
                                                  {kDev0, "Problems"}, {kDev0, "ProblemDetails"}});
    }
    SECTION("a rename, with its netdevs following it in the same batch, is Name alone") {
        Inventory before = host();
        Inventory after = before;
        after.begin_batch();
        DeviceState d = *after.device_named("mlx5_0");
        d.name = "rocep59s0f0";
        ChangeSet cs = after.put_device(d);
        for (const int32_t index : {4, 5}) {
            LinkState l = *after.link(index);
            l.rdma_device = "rocep59s0f0";
            cs.merge(after.put_link(l));
        }
        cs.merge(after.end_batch());
        CHECK(exported(device_properties(), cs.devices_changed.at(after.id_of(d.syspath))) ==
              Names{"Name"});
        CHECK(exported(link_properties(), cs.links_changed.at(4)).empty());
        CHECK(describe_diff(before, after) ==
              std::set<std::pair<std::string, std::string>>{{kDev0, "Name"}});
    }
}

TEST_CASE("a change of each Link member names that property alone; its devices' Links follow "
          "its RdmaDevice") {
    const std::map<std::string, std::function<void(LinkState&)>> mutate = {
        {"PCIAddress", [](LinkState& l) { l.pci_address = "0000:3b:00.1"; }},
        {"Driver", [](LinkState& l) { l.driver = "mlx5_core"; }},
        {"OperState", [](LinkState& l) { l.operstate = "down"; }},
        {"RdmaCapable", [](LinkState& l) { l.rdma_capable = "module-not-loaded"; }},
        {"Hint", [](LinkState& l) { l.hint = "load mlx5_ib"; }},
    };
    SECTION("every property has a case") {
        const Names elsewhere{"Name", "RdmaDevice"}; // below
        for (const auto& row : link_properties())
            if (row.exported() && !row.constant && !elsewhere.count(row.name)) {
                INFO(row.name);
                CHECK(mutate.count(row.name));
            }
    }
    const std::string link4 = "/org/rdmad1/link/_34";
    for (const auto& [name, change] : mutate) {
        DYNAMIC_SECTION(name) {
            Inventory before = host();
            Inventory after = before;
            LinkState l = *after.link(4);
            change(l);
            const ChangeSet cs = after.put_link(l);
            CHECK(cs.devices_changed.empty());
            CHECK(cs.ports_changed.empty());
            REQUIRE(cs.links_changed.size() == 1);
            CHECK(exported(link_properties(), cs.links_changed.at(4)) == Names{name});
            CHECK(describe_diff(before, after) ==
                  std::set<std::pair<std::string, std::string>>{{link4, name}});
            for (const auto& line : prom_diff(before, after)) {
                INFO(line);
                CHECK(line.find("device=\"mlx5_0p1\"") != std::string::npos);
            }
            CHECK(prom_moves(after, cs) == !prom_diff(before, after).empty());
        }
    }
    SECTION("Name, with the port on it following in the same batch") {
        Inventory before = host();
        Inventory after = before;
        after.begin_batch();
        LinkState l = *after.link(4);
        l.name = "ens1f0np0";
        ChangeSet cs = after.put_link(l);
        DeviceState d = *after.device_named("mlx5_0");
        d.ports[0].netdev = "ens1f0np0";
        cs.merge(after.put_device(d));
        cs.merge(after.end_batch());
        CHECK(exported(link_properties(), cs.links_changed.at(4)) == Names{"Name"});
        CHECK((cs.ports_changed.empty() ||
               exported(port_properties(), cs.ports_changed.begin()->second).empty()));
        CHECK(describe_diff(before, after) ==
              std::set<std::pair<std::string, std::string>>{{link4, "Name"}});
    }
    SECTION("RdmaDevice: the netdev moves to another device, whose Links and the old one's "
            "change with it") {
        Inventory before = host();
        Inventory after = before;
        LinkState l = *after.link(8);
        l.rdma_device = "mlx5_1";
        const ChangeSet cs = after.put_link(l);
        CHECK(exported(link_properties(), cs.links_changed.at(8)) == Names{"RdmaDevice"});
        const std::string id1 = after.id_of(after.device_named("mlx5_1")->syspath);
        CHECK(exported(device_properties(), cs.devices_changed.at(id1)) == Names{"Links"});
        CHECK(cs.devices_changed.size() == 1);
        CHECK(describe_diff(before, after) ==
              std::set<std::pair<std::string, std::string>>{
                  {"/org/rdmad1/link/_38", "RdmaDevice"},
                  {"/org/rdmad1/device/b8599f0300d40a2b", "Links"}});
    }
}
