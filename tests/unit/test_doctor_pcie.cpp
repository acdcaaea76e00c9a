// SPDX-License-Identifier: MIT
//
// PCIe link checks (daemon/doctor/pcie.hpp). Formats: kernel drivers/pci/pci-sysfs.c
// (current_link_speed, max_link_speed: pci_speed_string() "8.0 GT/s PCIe"; older kernels
// "8 GT/s"; widths "%u").
#include "doctor/pcie.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace rdmad;
using namespace rdmad::doctor;
using Catch::Matchers::Contains;

namespace {

PcieFunction fn(const std::string& addr, const std::string& cur, const std::string& curw,
                const std::string& max, const std::string& maxw) {
    return {addr, cur, curw, max, maxw};
}

DeviceState dev(std::vector<PcieFunction> path) {
    DeviceState d;
    d.name = "mlx5_0";
    d.pci_address = path.empty() ? "" : path[0].address;
    d.pcie_path = std::move(path);
    return d;
}

size_t count(const std::vector<Problem>& ps, const std::string& code) {
    return std::count_if(ps.begin(), ps.end(), [&](const Problem& p) { return p.code == code; });
}

} // namespace

TEST_CASE("PCIe speeds parse in both kernel forms", "[doctor]") {
    CHECK(parse_pcie_speed("8 GT/s") == 8.0);
    CHECK(parse_pcie_speed("8.0 GT/s PCIe\n") == 8.0);
    CHECK(parse_pcie_speed("2.5 GT/s PCIe") == 2.5);
    CHECK(parse_pcie_speed("16.0 GT/s PCIe") == 16.0);
    CHECK(parse_pcie_speed("32.0 GT/s PCIe") == 32.0);
    CHECK_FALSE(parse_pcie_speed("Unknown"));
    CHECK_FALSE(parse_pcie_speed("Unknown speed"));
    CHECK_FALSE(parse_pcie_speed(""));
    CHECK_FALSE(parse_pcie_speed("fast GT/s"));
    CHECK(parse_pcie_width("16\n") == 16u);
    CHECK_FALSE(parse_pcie_width("0"));
    CHECK_FALSE(parse_pcie_width(""));
}

TEST_CASE("a link at its achievable speed and width is no problem", "[doctor]") {
    auto d = dev({fn("0000:3b:00.0", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16"),
                  fn("0000:3a:00.0", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16")});
    CHECK(check_pcie(d).empty());
}

TEST_CASE("a link below the lower of both ends' maximum is pcie-degraded naming the hop",
          "[doctor]") {
    auto d = dev({fn("0000:3b:00.0", "8.0 GT/s PCIe", "8", "16.0 GT/s PCIe", "16"),
                  fn("0000:3a:00.0", "8.0 GT/s PCIe", "8", "16.0 GT/s PCIe", "16")});
    auto ps = check_pcie(d);
    REQUIRE(count(ps, "pcie-degraded") == 1);
    CHECK(ps[0].severity == "warning");
    CHECK_THAT(ps[0].text, Contains("0000:3b:00.0 - 0000:3a:00.0"));
    CHECK_THAT(ps[0].text, Contains("8 GT/s x8"));
    CHECK_THAT(ps[0].text, Contains("16 GT/s x16"));
    CHECK(std::find(ps[0].evidence.begin(), ps[0].evidence.end(),
                    "/sys/bus/pci/devices/0000:3b:00.0/current_link_width = 8") !=
          ps[0].evidence.end());
}

TEST_CASE("a Gen4 card in a Gen3 slot running Gen3 is info, not degraded", "[doctor]") {
    auto d = dev({fn("0000:3b:00.0", "8.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16"),
                  fn("0000:3a:00.0", "8.0 GT/s PCIe", "16", "8.0 GT/s PCIe", "16")});
    auto ps = check_pcie(d);
    CHECK(count(ps, "pcie-degraded") == 0);
    REQUIRE(count(ps, "pcie-slot-limited") == 1);
    CHECK(ps[0].severity == "info");
}

TEST_CASE("behind a switch the second link (switch up port - root port) is checked", "[doctor]") {
    // endpoint, switch downstream port, switch upstream port, root port
    auto d = dev({fn("0000:3d:00.0", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16"),
                  fn("0000:3c:08.0", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16"),
                  fn("0000:3b:00.0", "16.0 GT/s PCIe", "4", "16.0 GT/s PCIe", "16"),
                  fn("0000:3a:00.0", "16.0 GT/s PCIe", "4", "16.0 GT/s PCIe", "16")});
    auto ps = check_pcie(d);
    REQUIRE(count(ps, "pcie-degraded") == 1);
    CHECK_THAT(ps[0].text, Contains("0000:3b:00.0 - 0000:3a:00.0"));
}

TEST_CASE("absent link files are pcie-unknown, never degraded", "[doctor]") {
    auto d = dev({fn("0000:3b:00.0", "", "", "", ""), fn("0000:3a:00.0", "", "", "", "")});
    auto ps = check_pcie(d);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "pcie-unknown");
    CHECK(ps[0].severity == "info");
    CHECK(ps[0].evidence[0] == "/sys/bus/pci/devices/0000:3b:00.0/current_link_speed = absent");
    CHECK_THAT(ps[0].text, Contains("the link attributes of both ends are absent"));
    // Only the bridge's missing: the text names the bridge, not the device.
    auto bridge = dev({fn("0000:3b:00.0", "8.0 GT/s PCIe", "8", "8.0 GT/s PCIe", "8"),
                       fn("0000:3a:00.0", "", "", "", "")});
    CHECK_THAT(check_pcie(bridge)[0].text,
               Contains("the link attributes of 0000:3a:00.0 (the bridge) are absent"));
    auto lone = dev({fn("0000:00:06.0", "", "", "", "")});
    CHECK(check_pcie(lone)[0].code == "pcie-unknown");
    DeviceState rxe;
    rxe.name = "rxe0";
    CHECK(check_pcie(rxe).empty());
}

TEST_CASE("a VF's finding names its physical function's link", "[doctor]") {
    // sources/device_reader.cpp gives a VF its PF's path: the link its traffic takes.
    auto d = dev({fn("0000:3b:00.0", "8.0 GT/s PCIe", "8", "16.0 GT/s PCIe", "16"),
                  fn("0000:3a:00.0", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16")});
    d.pci_address = "0000:3b:00.2";
    d.physical_function = "0000:3b:00.0";
    auto ps = check_pcie(d);
    REQUIRE(count(ps, "pcie-degraded") == 1);
    CHECK_THAT(ps[0].text, Contains("PCIe link of physical function 0000:3b:00.0 - 0000:3a:00.0 "
                                    "runs at 8 GT/s x8"));
    // One slot, one warning: the PF's device has it; each VF's is info (ProblemDetails).
    CHECK(ps[0].severity == "info");
    d.physical_function.clear();
    d.pci_address = "0000:3b:00.0";
    CHECK(check_pcie(d)[0].severity == "warning");
}
