// SPDX-License-Identifier: MIT
//
// P_Key entry 0 (daemon/doctor/partition.hpp). Format: drivers/infiniband/core/sysfs.c
// show_port_pkey "0x%04x"; the membership bit is 0x8000 (IBTA vol. 1 §10.9.1).
#include "doctor/partition.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;
using namespace rdmad::doctor;

namespace {

PortState ib(const std::string& pkey0) {
    PortState p;
    p.number = 1;
    p.transport = "InfiniBand";
    p.link_layer = "InfiniBand";
    p.pkey0 = pkey0;
    return p;
}

DeviceState dev() {
    DeviceState d;
    d.name = "mlx5_0";
    return d;
}

} // namespace

TEST_CASE("P_Key parsing", "[doctor]") {
    CHECK(parse_pkey("0xffff\n") == 0xffff);
    CHECK(parse_pkey("0x7fff") == 0x7fff);
    CHECK_FALSE(parse_pkey("ffff"));
    CHECK_FALSE(parse_pkey("0x1ffff"));
    CHECK_FALSE(parse_pkey(""));
}

TEST_CASE("entry 0 = 0x7fff is pkey-limited-member; 0xffff is a full member", "[doctor]") {
    CHECK(check_partition(dev(), ib("0xffff")).empty());
    auto ps = check_partition(dev(), ib("0x7fff"));
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "pkey-limited-member");
    CHECK(ps[0].severity == "warning");
    CHECK(ps[0].evidence[0] == "/sys/class/infiniband/mlx5_0/ports/1/pkeys/0 = 0x7fff");
    CHECK(ps[0].remedy.str().find("partitions.conf") != std::string::npos);
}

TEST_CASE("an absent entry 0 is pkey-unknown; RoCE and OPA ports are left alone", "[doctor]") {
    auto ps = check_partition(dev(), ib(""));
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "pkey-unknown");
    CHECK(ps[0].severity == "info");
    auto roce = ib("0x7fff");
    roce.transport = "RoCE";
    CHECK(check_partition(dev(), roce).empty());
    auto opa = ib("0x7fff");
    opa.transport = "OPA";
    CHECK(check_partition(dev(), opa).empty());
}
