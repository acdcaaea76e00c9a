// SPDX-License-Identifier: MIT
//
// rdmad-notify reading rdmad's D-Bus values (notify/objects.hpp): property types from
// dbus/org.rdmad1.Device.xml and Port.xml, paths as org.rdmad1(5) OBJECT PATHS gives them.
#include "objects.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace rdmad::notify;

namespace {

using ProblemsValue = std::vector<sdbus::Struct<std::string, std::string, std::string>>;
using DetailsValue = std::vector<sdbus::Struct<std::string, std::string, std::string,
                                               std::vector<std::string>, std::string, uint32_t>>;

const std::string kDev = "/org/rdmad1/device/_30c42a1030012a4f0";

} // namespace

TEST_CASE("GetManagedObjects of a device, its port and the manager becomes a snapshot",
          "[notify]") {
    ManagedObjects objects;
    objects[sdbus::ObjectPath(kDev)]["org.rdmad1.Device"] = {
        {"Name", sdbus::Variant(std::string("mlx5_0"))},
        {"PCIAddress", sdbus::Variant(std::string("0000:04:00.0"))},
        {"Problems", sdbus::Variant(ProblemsValue{{"provider-missing", "error", "no mlx5"}})},
        {"ProblemDetails",
         sdbus::Variant(DetailsValue{{"provider-missing", "error", "no mlx5",
                                      std::vector<std::string>{"/etc/libibverbs.d = absent"},
                                      "apt install ibverbs-providers", 0u}})},
    };
    objects[sdbus::ObjectPath(kDev + "/port/1")]["org.rdmad1.Port"] = {
        {"Number", sdbus::Variant(uint32_t{1})},
        {"State", sdbus::Variant(std::string("ACTIVE"))},
    };
    objects[sdbus::ObjectPath("/org/rdmad1")]["org.rdmad1.Manager"] = {
        {"Problems", sdbus::Variant(ProblemsValue{{"config-error", "error", "x.conf:1:1: bad"}})},
    };
    objects[sdbus::ObjectPath("/org/rdmad1/link/_31001")]["org.rdmad1.Link"] = {
        {"Name", sdbus::Variant(std::string("eth0"))},
    };
    const Snapshot s = snapshot_from(objects);
    REQUIRE(s.devices.size() == 1);
    const auto& d = s.devices.at(kDev);
    CHECK(d.name == "mlx5_0");
    CHECK(d.pci_address == "0000:04:00.0");
    // ProblemDetails wins: it has the remedy.
    REQUIRE(d.problems.size() == 1);
    CHECK(d.problems[0] ==
          Problem{"provider-missing", "error", "no mlx5", "apt install ibverbs-providers", 0});
    REQUIRE(s.ports.size() == 1);
    CHECK(s.ports.at(kDev + "/port/1") == PortState{kDev, 1, "ACTIVE"});
    REQUIRE(s.manager_problems.size() == 1);
    CHECK(s.manager_problems[0].code == "config-error");
}

TEST_CASE("properties of another type than declared are skipped", "[notify]") {
    Properties props{{"Name", sdbus::Variant(uint32_t{5})},
                     {"Problems", sdbus::Variant(std::string("provider-missing"))}};
    const DeviceState d = device_from(props);
    CHECK(d.name.empty());
    CHECK(d.problems.empty());
    CHECK_FALSE(problems_from(props));
    CHECK(problems_from(Properties{{"Problems", sdbus::Variant(ProblemsValue{})}}) ==
          std::vector<Problem>{});
}
