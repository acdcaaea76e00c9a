// SPDX-License-Identifier: MIT
//
// Unit tests for the port transport and RoCE version classification
// (daemon/inventory/transport.hpp). Facts: DOMAIN.md §3.2 (link_layer), §3.5 (transport from
// node_type, rdma-core libibverbs/init.c), §3.6 (RoCE v1/v2 GID types, libibverbs
// cmd_device.c).
#include "inventory/transport.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace rdmad;

namespace {

GidEntry gid(uint32_t index, const std::string& type, const std::string& netdev = "eth0") {
    GidEntry g;
    g.index = index;
    g.gid = *Gid::parse("fe80:0000:0000:0000:0202:c9ff:fe00:0001");
    g.type = type;
    g.netdev = netdev;
    return g;
}

using Versions = std::vector<std::string>;

} // namespace

TEST_CASE("a CA port on Ethernet is RoCE, not InfiniBand as ibv_devinfo calls it") {
    // DOMAIN.md §3.5: RoCE = node_type 1 (CA) + link_layer Ethernet.
    CHECK(classify_transport("CA", "Ethernet", "mlx5_core") == "RoCE");
    CHECK(classify_transport("CA", "Ethernet", "bnxt_en") == "RoCE");
}

TEST_CASE("a RoCE port listing each address as v1 and v2 speaks both versions") {
    // DOMAIN.md §3.6: a RoCE device usually lists each address twice, once per GID type.
    std::vector<GidEntry> gids{gid(0, "IB/RoCE v1"), gid(1, "RoCE v2"), gid(2, "IB/RoCE v1"),
                               gid(3, "RoCE v2")};
    CHECK(roce_versions("RoCE", gids, true) == Versions{"v1", "v2"});
}

TEST_CASE("RoCE versions are sorted whatever the order of the GID table") {
    std::vector<GidEntry> gids{gid(0, "RoCE v2"), gid(1, "IB/RoCE v1")};
    CHECK(roce_versions("RoCE", gids, true) == Versions{"v1", "v2"});
}

TEST_CASE("an iWARP RNIC is iWARP even when its link_layer file says InfiniBand") {
    // node_exporter's recorded i40iw0 port 1 has link_layer "InfiniBand"; transport comes from
    // node_type 4 (RNIC) alone (DOMAIN.md §3.5, libibverbs init.c).
    CHECK(classify_transport("RNIC", "InfiniBand", "i40e") == "iWARP");
    CHECK(classify_transport("RNIC", "Ethernet", "cxgb4") == "iWARP");
}

TEST_CASE("siw, a software RNIC without a PCI parent, is iWARP") {
    CHECK(classify_transport("RNIC", "Ethernet", "siw") == "iWARP");
}

TEST_CASE("an hfi1 port is OPA although hfi1 reports a CA on InfiniBand") {
    CHECK(classify_transport("CA", "InfiniBand", "hfi1") == "OPA");
}

TEST_CASE("an OPA port has no RoCE versions") {
    CHECK(roce_versions("OPA", {gid(0, "IB/RoCE v1", "")}, true).empty());
}

TEST_CASE(
    "EFA (node type unspecified, link layer Unknown) is unspecified, not RoCE or InfiniBand") {
    // DOMAIN.md §3.2/§3.5: EFA is node_type 7 with IB_LINK_LAYER_UNSPECIFIED, shown as "Unknown";
    // libibverbs maps node type UNSPECIFIED to transport "unspecified".
    CHECK(classify_transport("unspecified", "Unknown", "efa") == "unspecified");
    CHECK(classify_transport("unspecified", "", "") == "unspecified");
}

TEST_CASE("an InfiniBand CA is InfiniBand and has no RoCE versions despite IB/RoCE v1 GID types") {
    // DOMAIN.md §3.2: both IB and RoCE v1 entries print "IB/RoCE v1".
    CHECK(classify_transport("CA", "InfiniBand", "mlx5_core") == "InfiniBand");
    std::vector<GidEntry> gids{gid(0, "IB/RoCE v1", ""), gid(1, "IB/RoCE v1", "")};
    CHECK(roce_versions("InfiniBand", gids, true).empty());
    CHECK(roce_versions("InfiniBand", gids, false).empty());
}

TEST_CASE("IB switches and routers on InfiniBand are InfiniBand") {
    CHECK(classify_transport("switch", "InfiniBand", "") == "InfiniBand");
    CHECK(classify_transport("router", "InfiniBand", "") == "InfiniBand");
}

TEST_CASE("a CA whose link layer is Unknown or unreadable is unknown") {
    CHECK(classify_transport("CA", "Unknown", "mlx5_core") == "unknown");
    CHECK(classify_transport("CA", "", "mlx5_core") == "unknown");
    CHECK(classify_transport("", "", "") == "unknown");
}

TEST_CASE("a RoCE port without gid_attrs (kernel < 4.5) speaks RoCE v1 only") {
    // DOMAIN.md §3.6: a missing gid_attrs directory means an old kernel, treated as v1.
    std::vector<GidEntry> gids{gid(0, ""), gid(1, "")};
    CHECK(roce_versions("RoCE", gids, false) == Versions{"v1"});
    CHECK(roce_versions("RoCE", {}, false) == Versions{"v1"});
}

TEST_CASE("a RoCE port whose GIDs are all RoCE v2 speaks v2 only") {
    std::vector<GidEntry> gids{gid(1, "RoCE v2"), gid(3, "RoCE v2")};
    CHECK(roce_versions("RoCE", gids, true) == Versions{"v2"});
}

TEST_CASE("a RoCE port whose GIDs are all IB/RoCE v1 speaks v1 only") {
    std::vector<GidEntry> gids{gid(0, "IB/RoCE v1")};
    CHECK(roce_versions("RoCE", gids, true) == Versions{"v1"});
}

TEST_CASE("GID type strings are matched exactly, as libibverbs does") {
    // libibverbs cmd_device.c query_sysfs_gid_type: V1_TYPE "IB/RoCE v1", V2_TYPE "RoCE v2".
    std::vector<GidEntry> gids{gid(0, "roce v2"), gid(1, "RoCE v3"), gid(2, "v1")};
    CHECK(roce_versions("RoCE", gids, true).empty());
}

TEST_CASE("usNIC and usNIC UDP devices are usNIC") {
    CHECK(classify_transport("usNIC", "Ethernet", "enic") == "usNIC");
    CHECK(classify_transport("usNIC UDP", "Ethernet", "enic") == "usNIC");
    CHECK(roce_versions("usNIC", {gid(0, "RoCE v2")}, true).empty());
}

TEST_CASE("an iWARP port has no RoCE versions even with RoCE-typed GIDs") {
    CHECK(roce_versions("iWARP", {gid(0, "IB/RoCE v1"), gid(1, "RoCE v2")}, true).empty());
    CHECK(roce_versions("iWARP", {}, false).empty());
}
