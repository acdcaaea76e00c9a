// SPDX-License-Identifier: MIT
//
// RoCE active MTU (daemon/doctor/roce_mtu.hpp). Source: kernel include/rdma/ib_addr.h
// iboe_get_mtu(): the netdev MTU minus 96 bytes of headers, rounded down to an IB MTU.
#include "doctor/roce_mtu.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;
using namespace rdmad::doctor;
using Catch::Matchers::Contains;

namespace {

DeviceState dev() {
    DeviceState d;
    d.name = "mlx5_0";
    return d;
}

PortState roce() {
    PortState p;
    p.number = 1;
    p.link_layer = "Ethernet";
    p.transport = "RoCE";
    p.netdev = "ens1f0np0";
    p.state = "ACTIVE";
    return p;
}

LinkState link(uint32_t mtu) {
    LinkState l;
    l.name = "ens1f0np0";
    l.mtu = mtu;
    return l;
}

} // namespace

TEST_CASE("iboe_get_mtu: 1500 -> 1024, 4096 -> 2048, 4200 -> 4096, 9000 -> 4096", "[doctor]") {
    CHECK(roce_active_mtu(1500) == 1024);
    CHECK(roce_active_mtu(4096) == 2048);
    CHECK(roce_active_mtu(4191) == 2048);
    CHECK(roce_active_mtu(4192) == 4096);
    CHECK(roce_active_mtu(4200) == 4096);
    CHECK(roce_active_mtu(9000) == 4096);
    CHECK(roce_active_mtu(1120) == 1024); // 1024 + 96
    CHECK(roce_active_mtu(1119) == 512);
    CHECK(roce_active_mtu(352) == 256);
    CHECK(roce_active_mtu(351) == 0);
    CHECK(roce_active_mtu(0) == 0);
}

TEST_CASE("a RoCE netdev at MTU 4096-4191 is roce-mtu-2048 naming 4192", "[doctor]") {
    for (uint32_t mtu : {4096u, 4150u, 4191u}) {
        auto l = link(mtu);
        auto ps = check_roce_mtu(dev(), roce(), &l);
        REQUIRE(ps.size() == 1);
        CHECK(ps[0].code == "roce-mtu-2048");
        CHECK(ps[0].severity == "warning");
        CHECK(ps[0].port == 1);
        CHECK_THAT(ps[0].text, Contains("RoCE MTU of 2048"));
        CHECK_THAT(ps[0].remedy, Contains("4192"));
        CHECK(ps[0].evidence[0] == "/sys/class/net/ens1f0np0/mtu = " + std::to_string(mtu));
    }
}

TEST_CASE("MTU 1500, 4192 and 9000 are no RoCE MTU problem", "[doctor]") {
    for (uint32_t mtu : {1500u, 4192u, 9000u}) {
        auto l = link(mtu);
        CHECK(check_roce_mtu(dev(), roce(), &l).empty());
    }
}

TEST_CASE("an unknown netdev or MTU is roce-mtu-unknown; other transports are left alone",
          "[doctor]") {
    auto ps = check_roce_mtu(dev(), roce(), nullptr);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "roce-mtu-unknown");
    CHECK(ps[0].severity == "info");
    auto l = link(0);
    CHECK(check_roce_mtu(dev(), roce(), &l)[0].code == "roce-mtu-unknown");
    auto ib = roce();
    ib.transport = "InfiniBand";
    CHECK(check_roce_mtu(dev(), ib, nullptr).empty());
    auto efa = roce();
    efa.transport = "unspecified";
    CHECK(check_roce_mtu(dev(), efa, nullptr).empty());
}

TEST_CASE("derive_mtus fills the netdev MTU and, on RoCE only, the active MTU", "[doctor]") {
    auto d = dev();
    d.ports.push_back(roce());
    PortState ib = roce();
    ib.number = 2;
    ib.transport = "InfiniBand";
    ib.netdev = "ib0";
    d.ports.push_back(ib);
    std::map<int32_t, LinkState> links{{1002, link(4200)}};
    LinkState ipoib;
    ipoib.name = "ib0";
    ipoib.mtu = 2044;
    links.emplace(1003, ipoib);
    const auto index = index_links(links);
    derive_mtus(d, {&index, nullptr});
    CHECK(d.ports[0].netdev_mtu == 4200);
    CHECK(d.ports[0].active_mtu == 4096);
    CHECK(d.ports[1].netdev_mtu == 2044);
    CHECK(d.ports[1].active_mtu == 0);
    derive_mtus(d, {});
    CHECK(d.ports[0].netdev_mtu == 0);
    CHECK(d.ports[0].active_mtu == 0);
}
