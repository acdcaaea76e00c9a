// SPDX-License-Identifier: MIT
//
// The recommended RoCE GID and no-routable-gid (daemon/doctor/gid_choice.hpp). GIDs are in the
// kernel's form ("%pI6": drivers/infiniband/core/sysfs.c show_port_gid()); an IPv4 address a.b.c.d
// becomes ::ffff:a.b.c.d (drivers/infiniband/core/roce_gid_mgmt.c, ipv6_addr_set_v4mapped()).
#include "doctor/gid_choice.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;
using namespace rdmad::doctor;
using Catch::Matchers::Contains;

namespace {

const Gid kLinkLocal = *Gid::parse("fe80:0000:0000:0000:0202:c9ff:fe00:0001");
const Gid kIpv4 = *Gid::parse("0000:0000:0000:0000:0000:ffff:c0a8:0101");  // 192.168.1.1
const Gid kIpv4b = *Gid::parse("0000:0000:0000:0000:0000:ffff:0a00:0005"); // 10.0.0.5
const Gid kIpv6 = *Gid::parse("2001:0db8:0000:0000:0000:0000:0000:0001");  // 2001:db8::1
const char* const kV1 = "IB/RoCE v1";
const char* const kV2 = "RoCE v2";

PortState roce(std::vector<GidEntry> gids) {
    PortState p;
    p.number = 1;
    p.link_layer = "Ethernet";
    p.transport = "RoCE";
    p.netdev = "ens1f0np0";
    p.gids = std::move(gids);
    return p;
}

LinkState netdev_named(const std::string& name, const std::string& kind,
                       const std::string& master = {}) {
    LinkState l;
    l.name = name;
    l.kind = kind;
    l.master = master;
    return l;
}

} // namespace

TEST_CASE("GID classes: routable excludes zero and fe80::/10; IPv4-mapped; the IP as text",
          "[doctor]") {
    CHECK_FALSE(routable_gid("0000:0000:0000:0000:0000:0000:0000:0000"));
    CHECK_FALSE(routable_gid(kLinkLocal));
    CHECK_FALSE(routable_gid("febf:0000:0000:0000:0000:0000:0000:0001")); // still fe80::/10
    CHECK(routable_gid("fec0:0000:0000:0000:0000:0000:0000:0001"));
    CHECK(routable_gid(kIpv6));
    CHECK(routable_gid(kIpv4));
    CHECK_FALSE(routable_gid("fe80::1")); // not the kernel's form
    CHECK(ipv4_mapped_gid(kIpv4));
    CHECK_FALSE(ipv4_mapped_gid(kIpv6));
    CHECK_FALSE(ipv4_mapped_gid("0000:0000:0000:0000:0000:ffff:0000:0000"));
    CHECK(gid_ip(kIpv4) == "192.168.1.1");
    CHECK(gid_ip(kIpv4b) == "10.0.0.5");
    CHECK(gid_ip(kIpv6) == "2001:db8::1"); // RFC 5952
    CHECK(gid_ip("not a gid") == "");
}

TEST_CASE("Recommended GID: RoCE v2 IPv4 first, the lowest index, with its IP", "[doctor]") {
    // The table a ConnectX port with one IPv4 and one IPv6 address shows: v1 and v2 per address.
    PortState p = roce({{0, kLinkLocal, kV1, "ens1f0np0"},
                        {1, kLinkLocal, kV2, "ens1f0np0"},
                        {2, kIpv6, kV1, "ens1f0np0"},
                        {3, kIpv6, kV2, "ens1f0np0"},
                        {4, kIpv4, kV1, "ens1f0np0"},
                        {5, kIpv4, kV2, "ens1f0np0"},
                        {7, kIpv4b, kV2, "ens1f0np0"}});
    const RecommendedGid g = recommend_gid(p, nullptr);
    CHECK(g.index == 5);
    CHECK(g.gid == kIpv4);
    CHECK(g.type == kV2);
    CHECK(g.netdev == "ens1f0np0");
    CHECK(g.ip == "192.168.1.1");
    // Without IPv4: the routable IPv6 v2 GID.
    p.gids.erase(p.gids.begin() + 4, p.gids.end());
    CHECK(recommend_gid(p, nullptr).index == 3);
    CHECK(recommend_gid(p, nullptr).ip == "2001:db8::1");
}

TEST_CASE("Recommended GID: a sparse table is taken as it is; RoCE v1 only without v2",
          "[doctor]") {
    // Slots 0-1 and 3-9 empty (the reader drops them): index 2 and 10 remain.
    PortState p = roce({{2, kLinkLocal, kV1, "ens1f0np0"}, {10, kIpv4, kV1, "ens1f0np0"}});
    CHECK(recommend_gid(p, nullptr).index == 10); // v1 IPv4 before v1 link-local
    p.gids = {{2, kLinkLocal, kV1, "ens1f0np0"}};
    CHECK(recommend_gid(p, nullptr).index == 2);
    CHECK(recommend_gid(p, nullptr).ip == ""); // a link-local GID carries no usable address
    // A port with v2 GIDs, all link-local, gets no v1 fallback: the warning says why.
    p.gids = {{0, kLinkLocal, kV1, "ens1f0np0"}, {1, kLinkLocal, kV2, "ens1f0np0"}};
    CHECK(recommend_gid(p, nullptr).gid.empty());
    // Types unknown (no gid_attrs): nothing is guessed.
    p.gids = {{0, kIpv4, "", "ens1f0np0"}};
    CHECK(recommend_gid(p, nullptr).gid.empty());
}

TEST_CASE("Recommended GID: own netdev, then its VLAN or bond; never an overlay", "[doctor]") {
    const LinkState own = netdev_named("ens1f0np0", "", "bond0");
    const LinkState vlan = netdev_named("ens1f0np0.100", "vlan");
    const LinkState bond = netdev_named("bond0", "bond");
    const LinkState vxlan = netdev_named("vxlan0", "vxlan");
    const LinkIndex links{
        {own.name, &own}, {vlan.name, &vlan}, {bond.name, &bond}, {vxlan.name, &vxlan}};
    // The same address on the overlay at a lower index, and on the port's VLAN.
    PortState p = roce({{1, kLinkLocal, kV2, "ens1f0np0"},
                        {2, kIpv4, kV2, "vxlan0"},
                        {4, kIpv4, kV2, "ens1f0np0.100"}});
    CHECK(recommend_gid(p, &links).index == 4);
    CHECK(recommend_gid(p, &links).netdev == "ens1f0np0.100");
    // Without the netdev facts only the port's own netdev is trusted.
    CHECK(recommend_gid(p, nullptr).gid.empty());
    // The port's own netdev before a VLAN at a lower index.
    p.gids.push_back({6, kIpv4b, kV2, "ens1f0np0"});
    CHECK(recommend_gid(p, &links).index == 6);
    // An enslaved port: the address lives on the bond (its master).
    p.gids = {{1, kLinkLocal, kV2, "ens1f0np0"}, {3, kIpv4, kV2, "bond0"}};
    CHECK(recommend_gid(p, &links).index == 3);
    CHECK(recommend_gid(p, &links).netdev == "bond0");
}

TEST_CASE("Recommended GID: only RoCE ports", "[doctor]") {
    PortState ib = roce({{0, *Gid::parse("fe80:0000:0000:0000:0002:c903:0031:78f1"), "", ""}});
    ib.transport = "InfiniBand";
    ib.link_layer = "InfiniBand";
    ib.netdev.clear();
    CHECK(recommend_gid(ib, nullptr).gid.empty());
    CHECK(check_gid(DeviceState{}, ib).empty());
}

TEST_CASE("no-routable-gid: RoCE v2 GIDs that are all link-local, with the GIDs read", "[doctor]") {
    DeviceState d;
    d.name = "mlx5_0";
    PortState p = roce({{0, kLinkLocal, kV1, "ens1f0np0"}, {1, kLinkLocal, kV2, "ens1f0np0"}});
    p.recommended_gid = recommend_gid(p, nullptr);
    const auto problems = check_gid(d, p);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].code == "no-routable-gid");
    CHECK(problems[0].severity == "warning");
    CHECK(problems[0].port == 1);
    CHECK(problems[0].evidence ==
          std::vector<SharedText>{
              std::string("/sys/class/infiniband/mlx5_0/ports/1/gids/1 = ") + kLinkLocal.text(),
              "/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/1 = ens1f0np0"});
    CHECK_THAT(problems[0].remedy, Contains("ip address add ADDRESS/PREFIX dev ens1f0np0"));
    // With an IPv4 address: fine.
    p.gids.push_back({3, kIpv4, kV2, "ens1f0np0"});
    p.recommended_gid = recommend_gid(p, nullptr);
    CHECK(check_gid(d, p).empty());
    // A v1-only port is not judged by RoCE v2 routability.
    p.gids = {{0, kLinkLocal, kV1, "ens1f0np0"}};
    p.recommended_gid = recommend_gid(p, nullptr);
    CHECK(check_gid(d, p).empty());
}
