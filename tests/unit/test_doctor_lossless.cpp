// SPDX-License-Identifier: MIT
//
// Lossless RoCE (daemon/doctor/lossless.hpp) on plain values. PFC: uapi linux/dcbnl.h struct
// ieee_pfc pfc_en, bit i = 802.1p priority i; the APP table's DSCP entries (selector
// IEEE_8021QAZ_APP_SEL_DSCP) map a DSCP (0-63) to a priority (0-7). Evidence is what iproute2
// 6.1 `dcb pfc show dev X prio-pfc` / `dcb -N app show dev X dscp-prio` print for the same
// netlink state (seen with tests/integration/fake_dcbnl.c answering them: pfc_en 0x08 prints
// "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off", DSCP 26->3 and 46->5 print
// "dscp-prio 26:3 46:5", an empty table nothing).
#include "doctor/lossless.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace rdmad;
using namespace rdmad::doctor;
using Catch::Matchers::Contains;

namespace {

DeviceState dev() {
    DeviceState d;
    d.name = "mlx5_0";
    return d;
}

PortState roce(std::vector<uint8_t> no_drop, std::string trust = "pcp",
               std::vector<std::pair<uint8_t, uint8_t>> dscp = {}) {
    PortState p;
    p.number = 1;
    p.link_layer = "Ethernet";
    p.transport = "RoCE";
    p.netdev = "ens1f0np0";
    p.state = "ACTIVE";
    p.pfc.status = PfcActual::Status::ok;
    p.pfc.priorities = no_drop;
    p.pfc.pfc_cap = 8;
    p.pfc.trust = std::move(trust);
    p.pfc.dscp_map = std::move(dscp);
    p.pfc_no_drop = std::move(no_drop);
    return p;
}

const Problem* find(const std::vector<Problem>& ps, const std::string& code) {
    for (const auto& p : ps)
        if (p.code == code)
            return &p;
    return nullptr;
}

} // namespace

TEST_CASE("prio-pfc and dscp-prio texts as iproute2 dcb prints them", "[doctor][lossless]") {
    CHECK(prio_pfc_text({}) == "prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off");
    CHECK(prio_pfc_text({3, 4}) == "prio-pfc 0:off 1:off 2:off 3:on 4:on 5:off 6:off 7:off");
    CHECK(dscp_prio_text({}) == "none");
    CHECK(dscp_prio_text({{26, 3}, {46, 5}}) == "dscp-prio 26:3 46:5");
}

TEST_CASE("the DSCP map in a sentence: runs of consecutive DSCPs on one priority",
          "[doctor][lossless]") {
    CHECK(dscp_map_summary({}).empty());
    CHECK(dscp_map_summary({{26, 3}, {46, 5}}) == "26 -> 3, 46 -> 5");
    // Every DSCP to DSCP / 8 (the map mlx5 keeps in DSCP trust when nothing else was set).
    std::vector<std::pair<uint8_t, uint8_t>> all;
    for (uint8_t d = 0; d < 64; ++d)
        all.emplace_back(d, static_cast<uint8_t>(d / 8));
    CHECK(dscp_map_summary(all) == "0-7 -> 0, 8-15 -> 1, 16-23 -> 2, 24-31 -> 3, 32-39 -> 4, "
                                   "40-47 -> 5, 48-55 -> 6, 56-63 -> 7");
    // A DSCP on two priorities, and a gap, break runs.
    CHECK(dscp_map_summary({{24, 3}, {25, 3}, {25, 4}, {26, 3}, {28, 3}}) ==
          "24-25 -> 3, 25 -> 4, 26 -> 3, 28 -> 3");
}

TEST_CASE("PFC on 3 with DSCP 26 -> 3: no warning, the info names trust and map",
          "[doctor][lossless]") {
    auto ps = check_lossless(dev(), roce({3}, "dscp", {{26, 3}}));
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "lossless-config");
    CHECK(ps[0].severity == "info");
    CHECK(ps[0].port == 1);
    CHECK(ps[0].text == "port 1: netdev ens1f0np0: PFC on priorities 3, DSCP trust: DSCP 26 -> 3");
    CHECK(ps[0].evidence ==
          std::vector<SharedText>{
              "dcb pfc show dev ens1f0np0 prio-pfc = prio-pfc 0:off 1:off 2:off 3:on "
              "4:off 5:off 6:off 7:off",
              "dcb -N app show dev ens1f0np0 dscp-prio = dscp-prio 26:3"});
}

TEST_CASE("PFC off everywhere, nothing asked: pfc-off warning", "[doctor][lossless]") {
    auto ps = check_lossless(dev(), roce({}));
    REQUIRE(ps.size() == 2);
    CHECK(ps[0].code == "pfc-off");
    CHECK(ps[0].severity == "warning");
    CHECK(ps[0].port == 1);
    CHECK_THAT(ps[0].text, Contains("ens1f0np0") && Contains("PFC off on every priority"));
    CHECK(ps[0].evidence ==
          std::vector<SharedText>{"dcb pfc show dev ens1f0np0 prio-pfc = prio-pfc "
                                  "0:off 1:off 2:off 3:off 4:off 5:off 6:off "
                                  "7:off"});
    CHECK_THAT(ps[0].remedy, Contains("dcb pfc set dev ens1f0np0 prio-pfc 3:on") &&
                                 Contains("pfc_no_drop = [3]"));
    CHECK(ps[1].code == "lossless-config");
    CHECK_THAT(ps[1].text, Contains("PFC off") && Contains("PCP trust"));
}

TEST_CASE("PFC off everywhere while a rule asks 3: pfc-off-desired error", "[doctor][lossless]") {
    auto port = roce({});
    port.desired_pfc_no_drop = {3};
    port.in_sync = false;
    auto ps = check_lossless(dev(), port);
    REQUIRE(ps.size() == 2);
    CHECK(ps[0].code == "pfc-off-desired");
    CHECK(ps[0].severity == "error");
    CHECK_THAT(ps[0].text, Contains("asks no-drop priorities 3"));
    CHECK_THAT(ps[0].remedy,
               Contains("apply = true") && Contains("dcb pfc set dev ens1f0np0 prio-pfc 3:on"));
    CHECK(find(ps, "pfc-off") == nullptr);
}

TEST_CASE("DSCP trust with no DSCP on a no-drop priority: pfc-dscp-unmapped",
          "[doctor][lossless]") {
    // PFC on 3, but DSCP 26 -> 0 and 46 -> 5: nothing reaches priority 3.
    auto ps = check_lossless(dev(), roce({3}, "dscp", {{26, 0}, {46, 5}}));
    REQUIRE(ps.size() == 2);
    CHECK(ps[0].code == "pfc-dscp-unmapped");
    CHECK(ps[0].severity == "warning");
    CHECK(ps[0].evidence.back() == "dcb -N app show dev ens1f0np0 dscp-prio = dscp-prio 26:0 46:5");
    CHECK(ps[0].remedy == "map the DSCP your RoCE traffic carries to a no-drop priority, e.g. "
                          "dcb app add dev ens1f0np0 dscp-prio 26:3, or dscp_priority = { 26 = "
                          "3 } in a [[rule]] of /etc/rdmad/rdmad.conf");
    CHECK(ps[1].code == "lossless-config");
    CHECK_THAT(ps[1].text, Contains("DSCP 26 -> 0, 46 -> 5"));
}

TEST_CASE("one DSCP on any of several no-drop priorities is enough", "[doctor][lossless]") {
    auto ps = check_lossless(dev(), roce({3, 4}, "dscp", {{10, 1}, {34, 4}}));
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "lossless-config");
}

TEST_CASE("PFC on under PCP trust: information, not a warning", "[doctor][lossless]") {
    auto ps = check_lossless(dev(), roce({3}, "pcp"));
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "lossless-config");
    CHECK(ps[0].severity == "info");
    CHECK_THAT(ps[0].text, Contains("PCP trust") && Contains("VLAN tag"));
    CHECK(ps[0].evidence.back() == "dcb -N app show dev ens1f0np0 dscp-prio = none");
}

TEST_CASE("no APP table read: trust unknown, no DSCP finding", "[doctor][lossless]") {
    auto ps = check_lossless(dev(), roce({3}, ""));
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "lossless-config");
    CHECK_THAT(ps[0].text, Contains("trust mode unknown"));
}

TEST_CASE("PFC not read: lossless-unknown with the reason, never a guess", "[doctor][lossless]") {
    auto port = roce({});
    port.pfc = PfcActual{};
    port.pfc.status = PfcActual::Status::not_supported;
    port.pfc.message = "DCB IEEE_GET on ens1f0np0: Operation not supported";
    auto ps = check_lossless(dev(), port);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "lossless-unknown");
    CHECK(ps[0].severity == "info");
    CHECK_THAT(ps[0].text, Contains("no IEEE DCB PFC") && Contains("Operation not supported"));
    CHECK(ps[0].evidence.front() == "dcb pfc show dev ens1f0np0 prio-pfc = not supported");

    port.pfc.status = PfcActual::Status::failed;
    ps = check_lossless(dev(), port);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "lossless-unknown");
    CHECK(ps[0].evidence.front() == "dcb pfc show dev ens1f0np0 prio-pfc = unreadable");

    port.netdev.clear();
    port.pfc = PfcActual{};
    ps = check_lossless(dev(), port);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "lossless-unknown");
    CHECK_THAT(ps[0].text, Contains("no netdev known"));
}

TEST_CASE("InfiniBand and iWARP ports are left alone", "[doctor][lossless]") {
    auto port = roce({});
    port.transport = "InfiniBand";
    port.link_layer = "InfiniBand";
    CHECK(check_lossless(dev(), port).empty());
    port.transport = "iWARP";
    port.link_layer = "Ethernet";
    CHECK(check_lossless(dev(), port).empty());
}

TEST_CASE("refresh_lossless: the desired PFC merged later turns pfc-off into pfc-off-desired in "
          "place",
          "[doctor][lossless]") {
    DeviceState d = dev();
    d.ports = {roce({})};
    Problem before{"no-verbs-device", "warning", "no /dev/infiniband/uverbs device"};
    Problem after{"pcie-unknown", "info", "PCIe link unknown"};
    after.details_only = true;
    d.problems = {before};
    for (auto p : check_lossless(d, d.ports[0])) {
        p.details_only = p.severity == "info";
        d.problems.push_back(p);
    }
    d.problems.push_back(after);
    REQUIRE(d.problems.size() == 4);
    CHECK(d.problems[1].code == "pfc-off");

    d.ports[0].desired_pfc_no_drop = {3};
    refresh_lossless(d);
    REQUIRE(d.problems.size() == 4);
    CHECK(d.problems[0] == before);
    CHECK(d.problems[1].code == "pfc-off-desired");
    CHECK(d.problems[1].severity == "error");
    CHECK_FALSE(d.problems[1].details_only);
    CHECK(d.problems[2].code == "lossless-config");
    CHECK(d.problems[2].details_only);
    CHECK(d.problems[3] == after);

    refresh_lossless(d); // the same facts: the same problems
    CHECK(d.problems.size() == 4);
    CHECK(d.problems[1].code == "pfc-off-desired");

    d.problems = {before}; // none yet: appended
    refresh_lossless(d);
    REQUIRE(d.problems.size() == 3);
    CHECK(d.problems[1].code == "pfc-off-desired");
}

TEST_CASE("lossless: one DSCP with two priorities is ambiguous, whatever else is mapped",
          "[lossless]") {
    DeviceState d;
    d.name = "mlx5_0";
    PortState p;
    p.number = 1;
    p.transport = "RoCE";
    p.link_layer = "Ethernet";
    p.netdev = "ens1f0np0";
    p.pfc.status = PfcActual::Status::ok;
    p.pfc.priorities = {3};
    p.pfc.trust = "dscp";
    p.pfc.dscp_map = {{26, 0}, {26, 3}}; // dcb app add dev X dscp-prio 26:0 26:3
    std::vector<std::string> codes;
    std::string remedy;
    for (const auto& pr : doctor::check_lossless(d, p)) {
        codes.push_back(pr.code);
        if (pr.code == "pfc-dscp-ambiguous")
            remedy = pr.remedy;
    }
    CHECK(std::count(codes.begin(), codes.end(), "pfc-dscp-ambiguous") == 1);
    CHECK(std::count(codes.begin(), codes.end(), "pfc-dscp-unmapped") == 0); // 26 -> 3 exists
    CHECK(remedy == "keep one entry: dcb app del dev ens1f0np0 dscp-prio 26:0");
}
