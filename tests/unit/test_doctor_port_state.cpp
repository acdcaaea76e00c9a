// SPDX-License-Identifier: MIT
//
// Why a port is not ACTIVE (daemon/doctor/port_state.hpp). States and physical states as
// drivers/infiniband/core/sysfs.c prints them (DOMAIN.md §3.2); netdev flags: uapi linux/if.h
// (IFF_UP 0x1); `carrier`: net/core/net-sysfs.c.
#include "doctor/port_state.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace rdmad;
using namespace rdmad::doctor;
using Catch::Matchers::Contains;

namespace {

DeviceState ib_device() {
    DeviceState d;
    d.name = "mlx5_0";
    d.node_type = "CA";
    d.pci_address = "0000:3b:00.0";
    return d;
}

PortState ib_port(const std::string& state, const std::string& phys, uint16_t lid = 0,
                  uint16_t sm_lid = 0) {
    PortState p;
    p.number = 1;
    p.state = state;
    p.phys_state = phys;
    p.link_layer = "InfiniBand";
    p.transport = "InfiniBand";
    p.lid = lid;
    p.sm_lid = sm_lid;
    return p;
}

PortState roce_port(const std::string& state, const std::string& phys) {
    PortState p = ib_port(state, phys);
    p.link_layer = "Ethernet";
    p.transport = "RoCE";
    p.netdev = "ens1f0np0";
    return p;
}

LinkState netdev(const std::string& operstate, const std::string& carrier, int64_t flags) {
    LinkState l;
    l.name = "ens1f0np0";
    l.operstate = operstate;
    l.carrier = carrier;
    l.flags = flags;
    return l;
}

bool has(const std::vector<SharedText>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

Problem only(const std::vector<Problem>& ps) {
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "port-not-active");
    CHECK(ps[0].severity == "warning");
    CHECK(ps[0].port == 1);
    return ps[0];
}

} // namespace

TEST_CASE("ACTIVE and ACTIVE_DEFER ports have no port-state problem", "[doctor]") {
    CHECK(check_port_state(ib_device(), ib_port("ACTIVE", "LinkUp", 5, 1), nullptr).empty());
    CHECK(check_port_state(ib_device(), ib_port("ACTIVE_DEFER", "LinkUp", 5, 1), nullptr).empty());
}

TEST_CASE("DOWN + Polling: no link partner, remedy the cable", "[doctor]") {
    auto p = only(check_port_state(ib_device(), ib_port("DOWN", "Polling"), nullptr));
    CHECK_THAT(p.text, Contains("no link partner"));
    CHECK_THAT(p.remedy, Contains("cable"));
    CHECK(has(p.evidence, "/sys/class/infiniband/mlx5_0/ports/1/state = DOWN"));
    CHECK(has(p.evidence, "/sys/class/infiniband/mlx5_0/ports/1/phys_state = Polling"));
}

TEST_CASE("DOWN + Disabled on a PF: disabled; on an InfiniBand VF: not enabled by the SM",
          "[doctor]") {
    auto pf = only(check_port_state(ib_device(), ib_port("DOWN", "Disabled"), nullptr));
    CHECK_THAT(pf.text, Contains("disabled"));
    CHECK(has(pf.evidence, "/sys/bus/pci/devices/0000:3b:00.0/physfn = absent"));

    auto vf_dev = ib_device();
    vf_dev.pci_address = "0000:3b:00.2";
    vf_dev.physical_function = "0000:3b:00.0";
    auto vf = only(check_port_state(vf_dev, ib_port("DOWN", "Disabled"), nullptr));
    CHECK_THAT(vf.text, Contains("VF"));
    CHECK_THAT(vf.text, Contains("subnet manager"));
    CHECK_THAT(vf.remedy, Contains("virt_enabled"));
    CHECK_THAT(vf.remedy, Contains("0000:3b:00.0"));
    CHECK(has(vf.evidence, "/sys/bus/pci/devices/0000:3b:00.2/physfn = 0000:3b:00.0"));
}

TEST_CASE("INIT + LinkUp with SM LID 0: no subnet manager, remedy opensm", "[doctor]") {
    auto p = only(check_port_state(ib_device(), ib_port("INIT", "LinkUp", 0, 0), nullptr));
    CHECK_THAT(p.text, Contains("no subnet manager"));
    CHECK_THAT(p.remedy, Contains("opensm"));
    CHECK(has(p.evidence, "/sys/class/infiniband/mlx5_0/ports/1/sm_lid = 0x0"));
    CHECK(has(p.evidence, "/sys/class/infiniband/mlx5_0/ports/1/lid = 0x0"));
}

TEST_CASE("INIT with an SM LID and LID 0xffff: the SM knows the port but did not configure it",
          "[doctor]") {
    auto p = only(check_port_state(ib_device(), ib_port("INIT", "LinkUp", 0xffff, 0x1), nullptr));
    CHECK_THAT(p.text, Contains("has not configured it"));
    CHECK(has(p.evidence, "/sys/class/infiniband/mlx5_0/ports/1/lid = 0xffff"));
    CHECK(has(p.evidence, "/sys/class/infiniband/mlx5_0/ports/1/sm_lid = 0x1"));
}

TEST_CASE("ARMED: waiting for the subnet manager", "[doctor]") {
    auto p = only(check_port_state(ib_device(), ib_port("ARMED", "LinkUp", 5, 1), nullptr));
    CHECK_THAT(p.text, Contains("waiting for the subnet manager"));
}

TEST_CASE("an unreadable state or phys_state never guesses a reason", "[doctor]") {
    auto p = only(check_port_state(ib_device(), ib_port("", ""), nullptr));
    CHECK_THAT(p.text, Contains("unknown"));
    CHECK(has(p.evidence, "/sys/class/infiniband/mlx5_0/ports/1/state = unreadable"));
    auto q = only(check_port_state(ib_device(), ib_port("DOWN", ""), nullptr));
    CHECK_THAT(q.text, Contains("reason unknown"));
    CHECK_THAT(q.text, !Contains("link partner"));
}

TEST_CASE("a RoCE port DOWN names its netdev's state", "[doctor]") {
    SECTION("administratively down (IFF_UP clear)") {
        auto l = netdev("down", "", 0x1002);
        auto p = only(check_port_state(ib_device(), roce_port("DOWN", "Disabled"), &l));
        CHECK_THAT(p.text, Contains("administratively down"));
        CHECK(p.remedy.str().find("ip link set dev ens1f0np0 up") == 0);
        CHECK(has(p.evidence, "/sys/class/net/ens1f0np0/flags = 0x1002"));
        CHECK(has(p.evidence, "/sys/class/net/ens1f0np0/carrier = unreadable"));
    }
    SECTION("up without carrier") {
        auto l = netdev("down", "0", 0x1003);
        auto p = only(check_port_state(ib_device(), roce_port("DOWN", "Disabled"), &l));
        CHECK_THAT(p.text, Contains("no carrier"));
        CHECK_THAT(p.remedy, Contains("cable"));
        CHECK(has(p.evidence, "/sys/class/net/ens1f0np0/operstate = down"));
        CHECK(has(p.evidence, "/sys/class/net/ens1f0np0/carrier = 0"));
    }
    SECTION("up with carrier: reason unknown") {
        auto l = netdev("up", "1", 0x1003);
        auto p = only(check_port_state(ib_device(), roce_port("DOWN", "Disabled"), &l));
        CHECK_THAT(p.text, Contains("reason unknown"));
    }
    SECTION("netdev not known: unknown, no IB advice") {
        auto p = only(check_port_state(ib_device(), roce_port("DOWN", "Disabled"), nullptr));
        CHECK_THAT(p.text, Contains("reason unknown"));
        CHECK_THAT(p.remedy, !Contains("subnet manager"));
    }
}

TEST_CASE("an EFA-like port (transport unspecified) gets no InfiniBand or RoCE advice",
          "[doctor]") {
    PortState p = ib_port("DOWN", "Polling");
    p.link_layer = "Unknown";
    p.transport = "unspecified";
    auto pr = only(check_port_state(ib_device(), p, nullptr));
    CHECK_THAT(pr.text, Contains("reason unknown"));
    CHECK_THAT(pr.remedy, !Contains("cable"));
    CHECK_THAT(pr.remedy, !Contains("subnet"));
}
