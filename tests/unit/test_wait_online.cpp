// SPDX-License-Identifier: MIT
//
// rdmad-wait-online's decisions (wait-online/readiness.hpp) and its reading of rdmad's D-Bus
// values (wait-online/bus_objects.hpp). Property names and types from dbus/org.rdmad1.Device.xml
// and Port.xml; the doctor texts as daemon/doctor/port_state.cpp and gid_choice.cpp write them.
#include "bus_objects.hpp"
#include "readiness.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace rdmad::wait_online;

namespace {

const std::string kDev0 = "/org/rdmad1/device/_30c42a1030012a4f0";
const std::string kDev1 = "/org/rdmad1/device/_30c42a1030012a4f1";

// An InfiniBand port as hwloc-cx3-ib's mlx4_0 port 1: ACTIVE, LinkUp, LID 932, SM LID 1.
Port ib_port(const std::string& dev, uint32_t n) {
    return Port{dev, n, "ACTIVE", "LinkUp", "InfiniBand", 932, 1, ""};
}

// A RoCE port as constructed-mlx5-roce's mlx5_0 port 1, with its RoCE v2 GID of 192.168.10.11.
Port roce_port(const std::string& dev, uint32_t n) {
    return Port{dev,    n, "ACTIVE", "LinkUp",
                "RoCE", 0, 0,        "0000:0000:0000:0000:0000:ffff:c0a8:0a0b"};
}

const std::string kNoSm = "port 1 is INIT (LinkUp): no subnet manager is reachable (SM LID 0)";

// mlx5_0 with port 1 INIT without a subnet manager (and the doctor's text for it); mlx4_0 with
// ports 1 and 2 usable.
Objects two_devices() {
    Objects o;
    o.devices[kDev0] = Device{"mlx5_0", {{"port-not-active", kNoSm, 1}}};
    o.devices[kDev1] = Device{"mlx4_0", {}};
    o.ports[kDev0 + "/port/1"] = ib_port(kDev0, 1);
    o.ports[kDev0 + "/port/1"].state = "INIT";
    o.ports[kDev0 + "/port/1"].sm_lid = 0;
    o.ports[kDev1 + "/port/2"] = ib_port(kDev1, 2);
    o.ports[kDev1 + "/port/1"] = ib_port(kDev1, 1);
    return o;
}

} // namespace

TEST_CASE("-d takes DEVICE or DEVICE:PORT, a port from 1", "[wait-online]") {
    std::string error;
    CHECK(parse_target("mlx5_0", error) == Target{"mlx5_0", 0});
    CHECK(parse_target("mlx5_0:2", error) == Target{"mlx5_0", 2});
    for (const char* bad :
         {"mlx5_0:0", "mlx5_0:", "mlx5_0:x", "mlx5_0:1x", ":1", "", "mlx5_0:-1"}) {
        INFO(bad);
        error.clear();
        CHECK_FALSE(parse_target(bad, error));
        CHECK_FALSE(error.empty());
    }
}

TEST_CASE("--transport names ib, roce and iwarp as rdmad's Transport values", "[wait-online]") {
    CHECK(parse_transport("ib") == "InfiniBand");
    CHECK(parse_transport("roce") == "RoCE");
    CHECK(parse_transport("iwarp") == "iWARP");
    CHECK_FALSE(parse_transport("opa"));
    CHECK_FALSE(parse_transport("IB"));
}

TEST_CASE("an ACTIVE LinkUp InfiniBand port with an SM LID and a LID is usable", "[wait-online]") {
    CHECK(why_not_usable(nullptr, ib_port(kDev0, 1)).empty());
}

TEST_CASE("a port that is not ACTIVE gets the doctor's port-not-active text", "[wait-online]") {
    Port p = ib_port(kDev0, 1);
    p.state = "INIT";
    p.lid = 0;
    p.sm_lid = 0;
    Device d{"mlx5_0",
             {{"port-not-active", "port 2 is DOWN (Polling): no link partner", 2},
              {"port-not-active", kNoSm, 1}}};
    CHECK(why_not_usable(&d, p) == kNoSm);
    // Before the doctor's problem is known: the state and physical state.
    CHECK(why_not_usable(nullptr, p) == "port 1 is INIT (LinkUp)");
    p.state = "";
    p.phys_state = "";
    CHECK(why_not_usable(nullptr, p) == "port 1 is unreadable (unreadable)");
}

TEST_CASE("ACTIVE_DEFER is not ACTIVE", "[wait-online]") {
    Port p = ib_port(kDev0, 1);
    p.state = "ACTIVE_DEFER";
    CHECK(why_not_usable(nullptr, p) == "port 1 is ACTIVE_DEFER (LinkUp)");
}

TEST_CASE("an ACTIVE port whose physical state is not LinkUp is not usable", "[wait-online]") {
    Port p = ib_port(kDev0, 1);
    p.phys_state = "LinkErrorRecovery";
    CHECK(why_not_usable(nullptr, p) ==
          "port 1 is ACTIVE but its physical state is LinkErrorRecovery, not LinkUp");
}

TEST_CASE("InfiniBand needs an SM LID and a LID that is neither 0 nor 0xffff", "[wait-online]") {
    Port p = ib_port(kDev0, 1);
    p.sm_lid = 0;
    CHECK(why_not_usable(nullptr, p) == "port 1 is ACTIVE but knows no subnet manager (SM LID 0)");
    p.sm_lid = 1;
    p.lid = 0;
    CHECK(why_not_usable(nullptr, p) == "port 1 is ACTIVE but has no valid LID (LID 0x0)");
    p.lid = 0xffff;
    CHECK(why_not_usable(nullptr, p) == "port 1 is ACTIVE but has no valid LID (LID 0xffff)");
    // LIDs mean nothing on Ethernet (0 there): RoCE and iWARP ports are not held by them.
    Port iwarp{kDev0, 1, "ACTIVE", "LinkUp", "iWARP", 0, 0, ""};
    CHECK(why_not_usable(nullptr, iwarp).empty());
}

TEST_CASE("RoCE needs a recommended GID; the doctor's no-routable-gid says why", "[wait-online]") {
    Port p = roce_port(kDev0, 1);
    CHECK(why_not_usable(nullptr, p).empty());
    p.recommended_gid = "";
    CHECK(why_not_usable(nullptr, p) ==
          "port 1 is ACTIVE but has no GID to use (RecommendedGID is empty)");
    const std::string text = "port 1: no routable RoCE v2 GID: the RoCE v2 GIDs are link-local";
    Device d{"mlx5_0", {{"no-routable-gid", text, 1}}};
    CHECK(why_not_usable(&d, p) == text);
}

TEST_CASE("by default every port must be usable, and there must be one", "[wait-online]") {
    Objects o;
    Verdict v = judge(o, {});
    CHECK_FALSE(v.ready);
    CHECK(v.waiting == std::vector<std::string>{"rdmad knows no RDMA port"});

    o = two_devices();
    v = judge(o, {});
    CHECK_FALSE(v.ready);
    // Sorted by device name and port number, not by path.
    CHECK(v.usable == std::vector<std::string>{"mlx4_0 port 1", "mlx4_0 port 2"});
    CHECK(v.waiting == std::vector<std::string>{"mlx5_0 " + kNoSm});

    Selection any;
    any.any = true;
    CHECK(judge(o, any).ready);

    o.ports[kDev0 + "/port/1"].state = "ACTIVE";
    o.ports[kDev0 + "/port/1"].sm_lid = 1;
    v = judge(o, {});
    CHECK(v.ready);
    CHECK(v.waiting.empty());
    CHECK(v.usable.size() == 3);
}

TEST_CASE("-d selects a device or one port; a device rdmad does not know is waited for",
          "[wait-online]") {
    Objects o = two_devices();
    o.ports[kDev1 + "/port/2"].state = "DOWN";
    o.ports[kDev1 + "/port/2"].phys_state = "Polling";

    Selection s;
    s.targets = {{"mlx4_0", 1}};
    Verdict v = judge(o, s);
    CHECK(v.ready);
    CHECK(v.usable == std::vector<std::string>{"mlx4_0 port 1"});

    s.targets = {{"mlx4_0", 0}};
    v = judge(o, s);
    CHECK_FALSE(v.ready);
    CHECK(v.waiting == std::vector<std::string>{"mlx4_0 port 2 is DOWN (Polling)"});

    s.targets = {{"mlx4_0", 1}, {"mlx9_0", 0}, {"mlx4_0", 3}};
    v = judge(o, s);
    CHECK_FALSE(v.ready);
    CHECK(v.waiting == std::vector<std::string>{"mlx9_0: rdmad knows no RDMA device of this name",
                                                "mlx4_0 has no port 3"});
    // --any: one usable port of the selection is enough, whatever else is missing.
    s.any = true;
    CHECK(judge(o, s).ready);
}

TEST_CASE("--transport selects ports of one transport", "[wait-online]") {
    Objects o;
    o.devices[kDev0] = Device{"mlx5_0", {}};
    o.devices[kDev1] = Device{"mlx5_1", {}};
    o.ports[kDev0 + "/port/1"] = ib_port(kDev0, 1);
    o.ports[kDev1 + "/port/1"] = roce_port(kDev1, 1);
    o.ports[kDev1 + "/port/1"].recommended_gid = "";

    Selection ib;
    ib.transport = "InfiniBand";
    Verdict v = judge(o, ib);
    CHECK(v.ready);
    CHECK(v.usable == std::vector<std::string>{"mlx5_0 port 1"});

    Selection roce;
    roce.transport = "RoCE";
    CHECK_FALSE(judge(o, roce).ready);

    Selection iwarp;
    iwarp.transport = "iWARP";
    CHECK(judge(o, iwarp).waiting == std::vector<std::string>{"rdmad knows no iWARP port"});
    iwarp.targets = {{"mlx5_0", 0}};
    CHECK(judge(o, iwarp).waiting == std::vector<std::string>{"mlx5_0 has no iWARP port"});
    iwarp.targets = {{"mlx5_0", 1}};
    CHECK(judge(o, iwarp).waiting == std::vector<std::string>{"mlx5_0 has no iWARP port 1"});
}

namespace {

using DetailsValue = std::vector<sdbus::Struct<std::string, std::string, std::string,
                                               std::vector<std::string>, std::string, uint32_t>>;
using GidValue = sdbus::Struct<uint32_t, std::string, std::string, std::string, std::string>;

Properties port_properties() {
    return {
        {"Number", sdbus::Variant(uint32_t{1})},
        {"State", sdbus::Variant(std::string("INIT"))},
        {"PhysicalState", sdbus::Variant(std::string("LinkUp"))},
        {"Transport", sdbus::Variant(std::string("InfiniBand"))},
        {"LID", sdbus::Variant(uint16_t{0})},
        {"SMLID", sdbus::Variant(uint16_t{0})},
        {"RecommendedGID", sdbus::Variant(GidValue{0u, "", "", "", ""})},
    };
}

} // namespace

TEST_CASE("GetManagedObjects, then the signals, keep the values readiness needs", "[wait-online]") {
    ManagedObjects managed;
    managed[sdbus::ObjectPath(kDev0)]["org.rdmad1.Device"] = {
        {"Name", sdbus::Variant(std::string("mlx5_0"))},
        {"ProblemDetails", sdbus::Variant(DetailsValue{{"port-not-active", "warning", kNoSm,
                                                        std::vector<std::string>{"sm_lid = 0x0"},
                                                        "start a subnet manager", 1u}})},
    };
    managed[sdbus::ObjectPath(kDev0 + "/port/1")]["org.rdmad1.Port"] = port_properties();
    managed[sdbus::ObjectPath("/org/rdmad1/link/_31001")]["org.rdmad1.Link"] = {
        {"Name", sdbus::Variant(std::string("eth0"))},
    };
    Objects o = objects_from(managed);
    REQUIRE(o.devices.size() == 1);
    CHECK(o.devices.at(kDev0) == Device{"mlx5_0", {{"port-not-active", kNoSm, 1}}});
    REQUIRE(o.ports.size() == 1);
    CHECK(o.ports.at(kDev0 + "/port/1") ==
          Port{kDev0, 1, "INIT", "LinkUp", "InfiniBand", 0, 0, ""});

    // The subnet manager comes: the port and the device change.
    change_properties(o, kDev0 + "/port/1", "org.rdmad1.Port",
                      {{"State", sdbus::Variant(std::string("ACTIVE"))},
                       {"LID", sdbus::Variant(uint16_t{7})},
                       {"SMLID", sdbus::Variant(uint16_t{1})}});
    change_properties(o, kDev0, "org.rdmad1.Device",
                      {{"ProblemDetails", sdbus::Variant(DetailsValue{})}});
    CHECK(o.ports.at(kDev0 + "/port/1") ==
          Port{kDev0, 1, "ACTIVE", "LinkUp", "InfiniBand", 7, 1, ""});
    CHECK(o.devices.at(kDev0).problems.empty());
    // A value of another type than declared leaves the old one.
    change_properties(o, kDev0 + "/port/1", "org.rdmad1.Port",
                      {{"State", sdbus::Variant(uint32_t{4})}});
    CHECK(o.ports.at(kDev0 + "/port/1").state == "ACTIVE");
    // An object not known is not made up from a PropertiesChanged.
    change_properties(o, kDev1 + "/port/1", "org.rdmad1.Port", port_properties());
    CHECK(o.ports.size() == 1);

    // A device comes (InterfacesAdded), with a RoCE port and its GID; then goes.
    add_interfaces(o, kDev1,
                   {{"org.rdmad1.Device", {{"Name", sdbus::Variant(std::string("mlx5_1"))}}}});
    Properties roce = port_properties();
    roce["Transport"] = sdbus::Variant(std::string("RoCE"));
    roce["RecommendedGID"] = sdbus::Variant(GidValue{3u, "0000:0000:0000:0000:0000:ffff:c0a8:0b0b",
                                                     "RoCE v2", "ens1f1np1", "192.168.11.11"});
    add_interfaces(o, kDev1 + "/port/1", {{"org.rdmad1.Port", roce}});
    CHECK(o.devices.at(kDev1).name == "mlx5_1");
    CHECK(o.ports.at(kDev1 + "/port/1").device_path == kDev1);
    CHECK(o.ports.at(kDev1 + "/port/1").recommended_gid ==
          "0000:0000:0000:0000:0000:ffff:c0a8:0b0b");
    remove_interfaces(o, kDev1 + "/port/1", {"org.rdmad1.Port"});
    remove_interfaces(o, kDev1, {"org.rdmad1.Device"});
    CHECK(o.ports.size() == 1);
    CHECK(o.devices.size() == 1);
}
