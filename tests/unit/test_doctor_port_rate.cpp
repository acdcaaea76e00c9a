// SPDX-License-Identifier: MIT
//
// Port `rate` parsing (daemon/doctor/port_rate.hpp). Format: drivers/infiniband/core/sysfs.c
// rate_show() "%d%s Gb/sec (%dX%s)" (DOMAIN.md §3.2).
#include "doctor/port_rate.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;
using namespace rdmad::doctor;

TEST_CASE("rate parses into Gb/s, width and speed name", "[doctor]") {
    CHECK(parse_port_rate("100 Gb/sec (2X HDR)\n") == PortRate{100, 2, "HDR"}); // HDR100
    CHECK(parse_port_rate("200 Gb/sec (4X HDR)") == PortRate{200, 4, "HDR"});
    CHECK(parse_port_rate("2.5 Gb/sec (1X SDR)") == PortRate{2.5, 1, "SDR"});
    CHECK(parse_port_rate("56 Gb/sec (4X FDR)") == PortRate{56, 4, "FDR"});
    CHECK(parse_port_rate("40 Gb/sec (4X FDR10)") == PortRate{40, 4, "FDR10"});
    CHECK(parse_port_rate("400 Gb/sec (4X NDR)") == PortRate{400, 4, "NDR"});
    CHECK(parse_port_rate("120 Gb/sec (12X QDR)") == PortRate{120, 12, "QDR"});
    CHECK(parse_port_rate("10 Gb/sec (4X)") == PortRate{10, 4, ""});
}

TEST_CASE("rate text not in the kernel's form does not parse", "[doctor]") {
    CHECK_FALSE(parse_port_rate(""));
    CHECK_FALSE(parse_port_rate("fast"));
    CHECK_FALSE(parse_port_rate("100 Gb/sec"));
    CHECK_FALSE(parse_port_rate("100 Gb/sec (3X HDR)"));
    CHECK_FALSE(parse_port_rate("100 Gb/sec (4X WARP)"));
    CHECK_FALSE(parse_port_rate("100 Gb/sec (4X HDR"));
}

TEST_CASE("an ACTIVE port whose rate does not parse is port-rate-unknown", "[doctor]") {
    DeviceState d;
    d.name = "mlx5_0";
    PortState p;
    p.number = 1;
    p.state = "ACTIVE";
    p.rate = "100 Gb/sec (4X EDR)";
    CHECK(check_port_rate(d, p).empty());
    p.rate = "";
    auto ps = check_port_rate(d, p);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "port-rate-unknown");
    CHECK(ps[0].severity == "info");
    CHECK(ps[0].evidence[0] == "/sys/class/infiniband/mlx5_0/ports/1/rate = unreadable");
    p.state = "DOWN";
    CHECK(check_port_rate(d, p).empty());
}
