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
        {"ProviderInstalled", sdbus::Variant(false)},
        {"ProviderPackage", sdbus::Variant(std::string("ibverbs-providers"))},
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
        {"InstallProvidersMode", sdbus::Variant(std::string("ask"))},
    };
    objects[sdbus::ObjectPath("/org/rdmad1/link/_31001")]["org.rdmad1.Link"] = {
        {"Name", sdbus::Variant(std::string("eth0"))},
    };
    const Snapshot s = snapshot_from(objects);
    REQUIRE(s.devices.size() == 1);
    const auto& d = s.devices.at(kDev);
    CHECK(d.name == "mlx5_0");
    CHECK(d.pci_address == "0000:04:00.0");
    CHECK_FALSE(d.provider_installed);
    CHECK(d.provider_package == "ibverbs-providers");
    // ProblemDetails wins: it has the remedy.
    REQUIRE(d.problems.size() == 1);
    CHECK(d.problems[0] ==
          Problem{"provider-missing", "error", "no mlx5", "apt install ibverbs-providers", 0});
    REQUIRE(s.ports.size() == 1);
    CHECK(s.ports.at(kDev + "/port/1") == PortState{kDev, 1, "ACTIVE"});
    REQUIRE(s.manager_problems.size() == 1);
    CHECK(s.manager_problems[0].code == "config-error");
    CHECK(s.install_providers_mode == "ask");
}

TEST_CASE("ProviderInstalled and ProviderPackage come from a PropertiesChanged; the other is "
          "left as it is",
          "[notify]") {
    bool installed = false;
    std::string package = "ibverbs-providers";
    CHECK(update_provider({{"ProviderInstalled", sdbus::Variant(true)}}, installed, package));
    CHECK(installed);
    CHECK(package == "ibverbs-providers");
    CHECK_FALSE(
        update_provider({{"Name", sdbus::Variant(std::string("mlx5_1"))}}, installed, package));
    CHECK_FALSE(install_mode_from({{"InstallProvidersMode", sdbus::Variant(uint32_t{1})}}));
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

TEST_CASE("a port's settings come from its properties; a PropertiesChanged leaves the others",
          "[notify]") {
    using DscpValue = std::vector<sdbus::Struct<uint8_t, uint8_t>>;
    using OriginValue = std::vector<sdbus::Struct<std::string, std::string>>;
    // As rdmad sends a port profile lossless-roce asks (org.rdmad1.Port.xml types).
    Properties props{
        {"Number", sdbus::Variant(uint32_t{1})},
        {"LinkLayer", sdbus::Variant(std::string("Ethernet"))},
        {"InSync", sdbus::Variant(true)},
        {"PFCNoDrop", sdbus::Variant(std::vector<uint8_t>{3})},
        {"DesiredPFCNoDrop", sdbus::Variant(std::vector<uint8_t>{3})},
        {"Trust", sdbus::Variant(std::string("dscp"))},
        {"DesiredTrust", sdbus::Variant(std::string("dscp"))},
        {"DSCPPriority", sdbus::Variant(DscpValue{{26, 3}, {48, 6}})},
        {"DesiredDSCPPriority", sdbus::Variant(DscpValue{{26, 3}, {48, 6}})},
        {"RDMACMRoCEMode", sdbus::Variant(std::string("RoCE v2"))},
        {"DesiredRDMACMRoCEMode", sdbus::Variant(std::string("RoCE v2"))},
        {"RDMACMToS", sdbus::Variant(int32_t{106})},
        {"DesiredRDMACMToS", sdbus::Variant(int32_t{106})},
    };
    PortState p = port_from(kDev + "/port/1", props);
    CHECK(p.settings.in_sync);
    CHECK(p.settings.link_layer == "Ethernet");
    CHECK(p.settings.desired_pfc_no_drop == std::vector<uint8_t>{3});
    CHECK(p.settings.dscp_priority == DscpMap{{26, 3}, {48, 6}});
    CHECK(p.settings.desired_rdma_cm_roce_mode == "RoCE v2");
    CHECK(p.settings.rdma_cm_tos == 106);
    CHECK(p.settings.desired_rdma_cm_tos == 106);

    PortSettings changed = p.settings;
    CHECK(update_port_settings(Properties{{"Trust", sdbus::Variant(std::string("pcp"))},
                                          {"DSCPPriority", sdbus::Variant(DscpValue{})},
                                          {"InSync", sdbus::Variant(false)}},
                               changed));
    CHECK(changed.trust == "pcp");
    CHECK(changed.dscp_priority.empty());
    CHECK_FALSE(changed.in_sync);
    CHECK(changed.desired_trust == "dscp");
    CHECK(changed.rdma_cm_tos == 106);
    CHECK_FALSE(
        update_port_settings(Properties{{"State", sdbus::Variant(std::string("DOWN"))}}, changed));
    // Of another type than declared: skipped.
    CHECK_FALSE(
        update_port_settings(Properties{{"RDMACMToS", sdbus::Variant(uint32_t{7})}}, changed));
    CHECK(changed.rdma_cm_tos == 106);

    const DeviceState d = device_from(Properties{
        {"Name", sdbus::Variant(std::string("mlx5_0"))},
        {"DesiredOrigin", sdbus::Variant(OriginValue{
                              {"rdma_cm_tos", "/etc/rdmad/rdmad.conf:5"},
                              {"trust", "profile lossless-roce (/etc/rdmad/rdmad.conf:2)"}})}});
    CHECK(d.origin == std::map<std::string, std::string>{
                          {"rdma_cm_tos", "/etc/rdmad/rdmad.conf:5"},
                          {"trust", "profile lossless-roce (/etc/rdmad/rdmad.conf:2)"}});
    CHECK_FALSE(origin_from(Properties{}));
}
