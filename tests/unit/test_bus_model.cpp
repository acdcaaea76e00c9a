// SPDX-License-Identifier: MIT
//
// Unit tests for the object paths and Describe() (daemon/inventory/object_path.hpp,
// daemon/bus/describe.hpp), both written from the Inventory through the property tables. Paths: sd_bus_path_encode (systemd bus-label escaping: every byte
// that is not [A-Za-z0-9], and a leading digit, becomes _xx) under the prefixes documented in
// dbus/org.rdmad1.*.xml. The JSON keys below are copied by hand from the <property> names of
// those XML files, so a property added to one side only fails here.
#include "bus/describe.hpp"
#include "inventory/object_path.hpp"
#include "rdmad_api.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <random>
#include <set>
#include <string>

using namespace rdmad;
using nlohmann::json;

namespace {

DeviceState device(const std::string& name, const std::string& guid, const std::string& pci) {
    DeviceState d;
    d.name = name;
    d.syspath = "/sys/devices/pci0000:00/" + pci + "/infiniband/" + name;
    d.node_type = "CA";
    d.node_guid = guid;
    d.pci_address = pci;
    d.kernel_driver = "mlx5_core";
    d.provider = "mlx5";
    d.provider_installed = true;
    d.provider_package = "ibverbs-providers";
    d.verbs_device = "/dev/infiniband/uverbs0";
    return d;
}

PortState port(uint32_t n, const std::string& netdev) {
    PortState p;
    p.number = n;
    p.state = "ACTIVE";
    p.phys_state = "LinkUp";
    p.link_layer = "Ethernet";
    p.transport = "RoCE";
    p.roce_versions = {"v1", "v2"};
    p.rate_gbps = 100;
    p.rate = "100 Gb/sec (4X EDR)";
    p.gids.push_back({0, *Gid::parse("fe80:0000:0000:0000:0202:c9ff:fe00:0001"), "RoCE v2", netdev});
    p.netdev = netdev;
    return p;
}

LinkState link(int32_t index, const std::string& name, const std::string& pci,
               const std::string& rdma_device) {
    LinkState l;
    l.index = index;
    l.name = name;
    l.syspath = "/sys/class/net/" + name;
    l.pci_address = pci;
    l.driver = "mlx5_core";
    l.operstate = "up";
    l.rdma_capable = rdma_device.empty() ? "no" : "yes";
    l.rdma_device = rdma_device;
    return l;
}

void add(HostState& inv, const DeviceState& d) {
    inv.devices[d.syspath] = d;
}

void add(HostState& inv, const LinkState& l) {
    inv.links[l.index] = l;
}

Inventory inventory_of(const HostState& h) {
    Inventory inv;
    inv.replace(h);
    return inv;
}

ManagerState manager(const std::string& state = "running", std::vector<std::string> sources = {},
                     std::vector<Problem> problems = {}) {
    return {"0.1.0", state, std::move(sources), std::move(problems), {}, {}};
}

/// Describe() of `inv`, parsed.
json describe(const Inventory& inv) { return json::parse(describe_json(inv, manager())); }
json describe(const HostState& h) { return describe(inventory_of(h)); }

/// The device named `name` in a Describe() document.
json view(const json& doc, const std::string& name) {
    for (const auto& d : doc["Devices"])
        if (d["Name"] == name)
            return d;
    FAIL("no device " << name);
    throw 0;
}

/// The link with ifindex `index` in a Describe() document.
json link_view(const json& doc, int index) {
    for (const auto& l : doc["Links"])
        if (l["Index"] == index)
            return l;
    FAIL("no link " << index);
    throw 0;
}

std::string device_path(const HostState& inv, const std::string& name) {
    return view(describe(inv), name)["Path"];
}

std::set<std::string> keys(const json& object) {
    std::set<std::string> k;
    for (const auto& [key, _] : object.items())
        k.insert(key);
    return k;
}

// <property name="..."> of dbus/org.rdmad1.Device.xml, Port.xml and Link.xml, plus "Path"
// (Manager.xml, Describe: every object carries its "Path").
const std::set<std::string> kDeviceKeys{"Path",
                                        "Name",
                                        "NodeType",
                                        "NodeGUID",
                                        "SysImageGUID",
                                        "FirmwareVersion",
                                        "HCAType",
                                        "BoardID",
                                        "NodeDescription",
                                        "PCIAddress",
                                        "KernelDriver",
                                        "SRIOVNumVFs",
                                        "SRIOVTotalVFs",
                                        "DesiredSRIOVNumVFs",
                                        "VFIndex",
                                        "DesiredVFGUIDs",
                                        "Provider",
                                        "ProviderInstalled",
                                        "ProviderPackage",
                                        "VerbsDevice",
                                        "PhysicalFunction",
                                        "Ports",
                                        "Links",
                                        "Problems",
                                        "ProblemDetails",
                                        "DesiredOrigin"};
const std::set<std::string> kPortKeys{"Path",
                                      "Trust",
                                      "DesiredTrust",
                                      "DSCPPriority",
                                      "DesiredDSCPPriority",
                                      "RDMACMRoCEMode",
                                      "DesiredRDMACMRoCEMode",
                                      "RDMACMToS",
                                      "DesiredRDMACMToS",
                                      "Number",
                                      "State",
                                      "PhysicalState",
                                      "LinkLayer",
                                      "Transport",
                                      "RoCEVersions",
                                      "RateGbps",
                                      "Rate",
                                      "LID",
                                      "SMLID",
                                      "GIDs",
                                      "Link",
                                      "PortType",
                                      "DesiredPortType",
                                      "NextBootPortType",
                                      "PendingPortType",
                                      "PFCNoDrop",
                                      "DesiredPFCNoDrop",
                                      "InSync",
                                      "NetdevMTU",
                                      "ActiveMTU",
                                      "RecommendedGID"};
const std::set<std::string> kLinkKeys{"Path",        "Name",       "Index",
                                      "PCIAddress",  "Driver",     "OperState",
                                      "RdmaCapable", "RdmaDevice", "Hint"};
const std::set<std::string> kManagerKeys{"Version",
                                         "State",
                                         "DesiredStateSource",
                                         "Problems",
                                         "LoadedModules",
                                         "RdmaNetnsMode",
                                         "DesiredRdmaNetnsMode",
                                         "PendingRdmaNetnsMode",
                                         "InstallProvidersMode",
                                         "Devices",
                                         "Links"};

} // namespace

// ---- paths ------------------------------------------------------------------------------

TEST_CASE("a link's path is the sd-bus encoded decimal ifindex") {
    CHECK(encode_path(api::kLinkPrefix, "1001") == "/org/rdmad1/link/_31001");
    CHECK(link_path(1001) == "/org/rdmad1/link/_31001");
    CHECK(ifindex_of_path("/org/rdmad1/link/_31001") == 1001);
    CHECK(!ifindex_of_path("/org/rdmad1/link/_31001/x"));
    CHECK(!ifindex_of_path("/org/rdmad1/link/_301")); // a leading zero
    CHECK(!ifindex_of_path("/org/rdmad1/link"));
    HostState inv;
    add(inv, link(1001, "ens1f0np0", "0000:3b:00.0", ""));
    auto doc = describe(inv);
    REQUIRE(doc["Links"].size() == 1);
    CHECK(doc["Links"][0]["Path"] == "/org/rdmad1/link/_31001");
}

TEST_CASE("a device's path is the node GUID's hex digits, sd-bus encoded") {
    HostState inv;
    add(inv, device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0"));
    CHECK(device_path(inv, "mlx5_0") == "/org/rdmad1/device/_30002c90300f9bfa0");
    Inventory ids;
    ids.replace(inv);
    CHECK(ids.id_of(inv.devices.begin()->first) == "0002c90300f9bfa0");
}

TEST_CASE("devices sharing a node GUID fall back to their PCI addresses") {
    HostState inv;
    add(inv, device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0"));
    add(inv, device("mlx5_1", "0002:c903:00f9:bfa0", "0000:3b:00.1"));
    CHECK(device_path(inv, "mlx5_0") == "/org/rdmad1/device/_30000_3a3b_3a00_2e0");
    CHECK(device_path(inv, "mlx5_1") == "/org/rdmad1/device/_30000_3a3b_3a00_2e1");
}

TEST_CASE("devices sharing GUID and PCI address (or with neither) fall back to their names") {
    HostState inv;
    add(inv, device("siw0", "0002:c903:00f9:bfa0", ""));
    add(inv, device("siw1", "0002:c903:00f9:bfa0", ""));
    auto z = device("rxe0", "0000:0000:0000:0000", ""); // a zero GUID is no identity
    add(inv, z);
    CHECK(device_path(inv, "siw0") == "/org/rdmad1/device/siw0");
    CHECK(device_path(inv, "siw1") == "/org/rdmad1/device/siw1");
    CHECK(device_path(inv, "rxe0") == "/org/rdmad1/device/rxe0");

    HostState same_pci;
    add(same_pci, device("a_0", "0002:c903:00f9:bfa0", "0000:3b:00.0"));
    auto b = device("b_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    b.syspath += "-other";
    add(same_pci, b);
    CHECK(device_path(same_pci, "a_0") == "/org/rdmad1/device/a_5f0");
    CHECK(device_path(same_pci, "b_0") == "/org/rdmad1/device/b_5f0");
}

TEST_CASE("a device with a zero or unreadable GUID uses its PCI address") {
    HostState inv;
    add(inv, device("efa_0", "0000:0000:0000:0000", "0000:00:1d.0"));
    add(inv, device("hfi1_0", "", "0000:81:00.0"));
    CHECK(device_path(inv, "efa_0") == "/org/rdmad1/device/_30000_3a00_3a1d_2e0");
    CHECK(device_path(inv, "hfi1_0") == "/org/rdmad1/device/_30000_3a81_3a00_2e0");
}

TEST_CASE("a renamed device (same GUID, new name) keeps its object path") {
    // DOMAIN.md §6: NAME_FALLBACK renames mlx5_0 to rocep59s0f0 with a udev "move" event.
    HostState before;
    add(before, device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0"));
    HostState after;
    add(after, device("rocep59s0f0", "0002:c903:00f9:bfa0", "0000:3b:00.0"));
    CHECK(device_path(before, "mlx5_0") == device_path(after, "rocep59s0f0"));
}

TEST_CASE("device object paths are unique even when every identity collides") {
    HostState inv;
    auto a = device("x", "", "");
    auto b = device("x", "", "");
    b.syspath += "-2";
    add(inv, a);
    add(inv, b);
    auto doc = describe(inv);
    REQUIRE(doc["Devices"].size() == 2);
    CHECK(doc["Devices"][0]["Path"] != doc["Devices"][1]["Path"]);
}

TEST_CASE("a port's path is its device's path + /port/<n>") {
    HostState inv;
    auto d = device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    d.ports = {port(1, ""), port(2, "")};
    add(inv, d);
    auto v = view(describe(inv), "mlx5_0");
    REQUIRE(v["Ports"].size() == 2);
    CHECK(v["Ports"][0]["Path"] == "/org/rdmad1/device/_30002c90300f9bfa0/port/1");
    CHECK(v["Ports"][1]["Path"] == "/org/rdmad1/device/_30002c90300f9bfa0/port/2");
    const auto key = port_of_path("/org/rdmad1/device/_30002c90300f9bfa0/port/2");
    REQUIRE(key);
    CHECK(key->first == "0002c90300f9bfa0");
    CHECK(key->second == 2);
    CHECK(port_of_path("/org/rdmad1/device/x/port/0")->second == 0); // a switch's port 0
    CHECK(!port_of_path("/org/rdmad1/device/x/port/01"));
    CHECK(!port_of_path("/org/rdmad1/device/x/port/"));
    CHECK(port_of_path("/org/rdmad1/device/x/port/70000")->second == 70000);
    CHECK(!port_of_path("/org/rdmad1/device/x/port/4294967296"));
    // Other spellings of the same id name no object: an escape where none is needed, a NUL
    // that would cut the id, a leading digit left unescaped.
    CHECK(!device_id_of_path("/org/rdmad1/device/_30002c90300f9bfa0_00x"));
    CHECK(!device_id_of_path("/org/rdmad1/device/_30_302c90300f9bfa0"));
    CHECK(!device_id_of_path("/org/rdmad1/device/0002c90300f9bfa0"));
    CHECK(!ifindex_of_path("/org/rdmad1/link/1001"));
    CHECK(!port_of_path("/org/rdmad1/device/_30002c90300f9bfa0_00x/port/1"));
    CHECK(!port_of_path("/org/rdmad1/device/x"));
    CHECK(device_id_of_path("/org/rdmad1/device/_30002c90300f9bfa0") == "0002c90300f9bfa0");
    CHECK(!device_id_of_path("/org/rdmad1/device/_30002c90300f9bfa0/port/2"));
}

// ---- references -------------------------------------------------------------------------

TEST_CASE("a port's Link and a link's RdmaDevice resolve to each other's objects") {
    HostState inv;
    auto d = device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    d.ports = {port(1, "ens1f0np0")};
    add(inv, d);
    add(inv, link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_0"));
    add(inv, link(1, "lo", "", ""));
    auto doc = describe(inv);
    const auto v = view(doc, "mlx5_0");
    CHECK(v["Ports"][0]["Link"] == "/org/rdmad1/link/_34");
    CHECK(v["Links"] == json::array({"/org/rdmad1/link/_34"}));
    REQUIRE(doc["Links"].size() == 2);
    CHECK(doc["Links"][0]["Name"] == "lo"); // sorted by ifindex
    CHECK(link_view(doc, 1)["RdmaDevice"] == "/");
    CHECK(link_view(doc, 4)["RdmaDevice"] == "/org/rdmad1/device/_30002c90300f9bfa0");
}

TEST_CASE("a port without a known netdev links to \"/\"") {
    HostState inv;
    auto d = device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    d.ports = {port(1, "")};
    add(inv, d);
    CHECK(view(describe(inv), "mlx5_0")["Ports"][0]["Link"] == "/");
}

TEST_CASE("a VF's device refers to its PF's device object; a PF refers to \"/\"") {
    HostState inv;
    add(inv, device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0"));
    auto vf = device("mlx5_2", "0002:c903:00f9:bfb0", "0000:3b:00.2");
    vf.physical_function = "0000:3b:00.0";
    add(inv, vf);
    auto doc = describe(inv);
    CHECK(view(doc, "mlx5_2")["PhysicalFunction"] == "/org/rdmad1/device/_30002c90300f9bfa0");
    CHECK(view(doc, "mlx5_0")["PhysicalFunction"] == "/");
}

TEST_CASE("devices are listed by name") {
    HostState inv;
    add(inv, device("mlx5_1", "0002:c903:00f9:0002", "0000:3b:00.1"));
    add(inv, device("mlx5_0", "0002:c903:00f9:0001", "0000:af:00.0"));
    auto doc = describe(inv);
    REQUIRE(doc["Devices"].size() == 2);
    CHECK(doc["Devices"][0]["Name"] == "mlx5_0");
    CHECK(doc["Devices"][1]["Name"] == "mlx5_1");
    const Inventory ids = inventory_of(inv);
    const auto listed = devices_by_name(ids);
    REQUIRE(listed.size() == 2);
    CHECK(listed[0].first->name == "mlx5_0");
    CHECK(*listed[0].second == "0002c90300f90001");
}

// ---- Describe() -------------------------------------------------------------------------

TEST_CASE("Describe() has exactly the keys of the org.rdmad1 D-Bus properties") {
    HostState inv;
    auto d = device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    d.ports = {port(1, "ens1f0np0")};
    d.problems.push_back({"no-verbs-device", "warning", "load ib_uverbs"});
    add(inv, d);
    add(inv, link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_0"));
    auto doc = describe(inv);

    CHECK(keys(doc) == kManagerKeys);
    CHECK(doc["Version"] == "0.1.0");
    CHECK(doc["State"] == "running");
    REQUIRE(doc["Devices"].size() == 1);
    const json& dev = doc["Devices"][0];
    CHECK(keys(dev) == kDeviceKeys);
    REQUIRE(dev["Ports"].size() == 1);
    CHECK(keys(dev["Ports"][0]) == kPortKeys);
    REQUIRE(doc["Links"].size() == 1);
    CHECK(keys(doc["Links"][0]) == kLinkKeys);

    // GIDs and Problems are objects with the keys Manager.xml documents.
    REQUIRE(dev["Ports"][0]["GIDs"].size() == 1);
    CHECK(keys(dev["Ports"][0]["GIDs"][0]) ==
          std::set<std::string>{"Index", "GID", "Type", "Netdev"});
    REQUIRE(dev["Problems"].size() == 1);
    CHECK(keys(dev["Problems"][0]) == std::set<std::string>{"Code", "Severity", "Text"});
    REQUIRE(dev["ProblemDetails"].size() == 1);
    CHECK(keys(dev["ProblemDetails"][0]) ==
          std::set<std::string>{"Code", "Severity", "Text", "Evidence", "Remedy", "Port"});
}

TEST_CASE("Describe(): Problems leaves out the doctor's info findings, ProblemDetails has every "
          "problem") {
    HostState inv;
    auto d = device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    d.ports = {port(1, "ens1f0np0")};
    d.problems.push_back({"roce-mtu-2048",
                          "warning",
                          "MTU 4096",
                          {"/sys/class/net/x/mtu = 4096"},
                          "ip link set dev x mtu 9000",
                          1});
    Problem unknown{"pcie-unknown", "info", "unknown"};
    unknown.details_only = true; // as device_problems() marks the doctor's info findings
    d.problems.push_back(unknown);
    add(inv, d);
    auto doc = describe(inv);
    const json& dev = doc["Devices"][0];
    REQUIRE(dev["Problems"].size() == 1);
    CHECK(dev["Problems"][0]["Code"] == "roce-mtu-2048");
    REQUIRE(dev["ProblemDetails"].size() == 2);
    CHECK(dev["ProblemDetails"][0]["Evidence"] == json::array({"/sys/class/net/x/mtu = 4096"}));
    CHECK(dev["ProblemDetails"][0]["Remedy"] == "ip link set dev x mtu 9000");
    CHECK(dev["ProblemDetails"][0]["Port"] == 1);
    CHECK(dev["ProblemDetails"][1]["Severity"] == "info");
    CHECK(dev["ProblemDetails"][1]["Port"] == 0);
}

TEST_CASE("Describe() gives object paths as strings, \"/\" for none") {
    HostState inv;
    auto d = device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    d.ports = {port(1, "ens1f0np0")};
    add(inv, d);
    add(inv, link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_0"));
    add(inv, link(1, "lo", "", ""));
    auto doc = describe(inv);
    const json& dev = doc["Devices"][0];
    CHECK(dev["Path"] == "/org/rdmad1/device/_30002c90300f9bfa0");
    CHECK(dev["PhysicalFunction"] == "/");
    CHECK(dev["Links"] == json::array({"/org/rdmad1/link/_34"}));
    CHECK(dev["Ports"][0]["Path"] == "/org/rdmad1/device/_30002c90300f9bfa0/port/1");
    CHECK(dev["Ports"][0]["Link"] == "/org/rdmad1/link/_34");
    CHECK(dev["Ports"][0]["Number"] == 1);
    CHECK(dev["Ports"][0]["RoCEVersions"] == json::array({"v1", "v2"}));
    CHECK(dev["ProviderInstalled"] == true);
    CHECK(doc["Links"][0]["Name"] == "lo");
    CHECK(doc["Links"][0]["RdmaDevice"] == "/");
    CHECK(doc["Links"][1]["RdmaDevice"] == "/org/rdmad1/device/_30002c90300f9bfa0");
    CHECK(doc["Links"][1]["Index"] == 4);
}

TEST_CASE("Describe() of an empty inventory has empty Devices and Links arrays") {
    auto doc = json::parse(describe_json(Inventory{}, manager("starting")));
    CHECK(doc["Devices"].is_array());
    CHECK(doc["Devices"].empty());
    CHECK(doc["Links"].is_array());
    CHECK(doc["Links"].empty());
}

TEST_CASE("invalid UTF-8 in a node description does not make Describe() throw") {
    HostState inv;
    auto d = device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    d.node_description = "host1 \xff\xfe mlx5_0 \xc3";
    d.board_id = "MT_\x80";
    add(inv, d);
    std::string text;
    REQUIRE_NOTHROW(text = describe_json(inventory_of(inv), manager()));
    json doc;
    REQUIRE_NOTHROW(doc = json::parse(text));
    std::string desc = doc["Devices"][0]["NodeDescription"];
    CHECK(desc.rfind("host1 ", 0) == 0);
    CHECK(desc.find("mlx5_0") != std::string::npos);
}

TEST_CASE("a device first seen without its node GUID (a read error) gets the GUID's path once "
          "it reads, as a fresh start would give it") {
    Inventory inv;
    DeviceState d = device("mlx5_9", "", "0000:09:00.0");
    inv.put_device(d);
    CHECK(view(describe(inv), "mlx5_9")["Path"] == "/org/rdmad1/device/_30000_3a09_3a00_2e0");
    d.node_guid = "0c42:a103:0099:0001";
    const ChangeSet cs = inv.put_device(d);
    const std::string by_guid = "/org/rdmad1/device/_30c42a10300990001";
    CHECK(view(describe(inv), "mlx5_9")["Path"] == by_guid);
    // The bus retracts the object at the old path and announces it at the new one.
    CHECK(cs.devices_removed == std::set<std::string>{"0000:09:00.0"});
    CHECK(cs.devices_added == std::set<std::string>{"0c42a10300990001"});
    HostState fresh;
    add(fresh, d);
    CHECK(view(describe(fresh), "mlx5_9")["Path"] == by_guid); // a fresh start's path
    // A rename keeps it (the GUID is the id now).
    d.name = "rocep9s0f0";
    inv.put_device(d);
    CHECK(view(describe(inv), "rocep9s0f0")["Path"] == by_guid);
}

TEST_CASE("Describe() escapes quotes, backslashes and control characters, replaces invalid "
          "UTF-8 and prints rates as numbers") {
    HostState inv;
    auto d = device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    d.ports = {port(1, "ens1f0np0")};
    d.ports[0].rate_gbps = 2.5;
    add(inv, d);
    // The Manager's own problems reach describe_json() as they are (ManagerObject makes them
    // valid before; the JSON writer keeps Describe() valid whatever reaches it).
    const std::vector<Problem> problems = {
        {"a", "warning", "say \"hi\"\\ now\n\t\x01 \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"b", "error", "\xff\xc3(\xed\xa0\x80"}};
    const std::string text =
        describe_json(inventory_of(inv), manager("running", {"/etc/rdmad/rdmad.conf"}, problems));
    CHECK(text.find("say \\\"hi\\\"\\\\ now\\n\\t\\u0001 ") != std::string::npos);
    const auto doc = json::parse(text);
    CHECK(doc["Problems"][0]["Text"] ==
          "say \"hi\"\\ now\n\t\x01 \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    // Each byte that starts no valid sequence (0xff; 0xc3 before '('; a UTF-16 surrogate
    // 0xed 0xa0 0x80, RFC 3629 section 3) becomes U+FFFD.
    CHECK(doc["Problems"][1]["Text"] ==
          "\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    CHECK(doc["DesiredStateSource"] == json::array({"/etc/rdmad/rdmad.conf"}));
    CHECK(doc["Devices"][0]["Ports"][0]["RateGbps"] == 2.5);
    CHECK(text.find("\"RateGbps\":2.5,") != std::string::npos);
    CHECK(doc["Devices"][0]["Ports"][0]["LID"] == 0);
    // The whole document is the one nlohmann::json prints for the same values.
    CHECK(nlohmann::ordered_json::parse(text).dump() == text);
}

// ---- Describe() kept rendered per object ------------------------------------------------

TEST_CASE("Describe() written object by object equals a whole render, and its size is known "
          "without rendering") {
    HostState h;
    auto a = device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    a.ports = {port(1, "ens1f0np0")};
    a.problems.push_back({"no-verbs-device", "warning", "load ib_uverbs"});
    add(h, a);
    auto b = device("mlx4_0", "0002:c903:00f9:bfa1", "0000:5e:00.0");
    b.ports = {port(1, "ens2"), port(2, "ib0")};
    add(h, b);
    add(h, link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_0"));
    add(h, link(1, "lo", "", ""));
    Inventory inv;
    DescribeRenderer r;
    r.changed(inv, inv.replace(h));
    CHECK(r.objects_rendered() == 0); // a change set renders nothing: measure() does, once
    CHECK(r.measure(inv) == 4);
    CHECK(r.measure(inv) == 0);
    CHECK(r.objects_rendered() == 4);
    const auto m = manager("degraded", {"/etc/rdmad/rdmad.conf"},
                           {{"config-error", "error", "rdmad.conf:3: bad"}});
    // The size comes from the kept sizes: nothing is rendered for it.
    const std::string whole = describe_json(inv, m);
    CHECK(r.size(inv, m) == whole.size());
    CHECK(r.objects_rendered() == 4);
    const std::string text = r.render(inv, m);
    CHECK(text == whole);
    // Devices by name (mlx4_0 before mlx5_0), links by ifindex (lo first).
    const auto doc = json::parse(text);
    CHECK(doc["Devices"][0]["Name"] == "mlx4_0");
    CHECK(doc["Links"][0]["Name"] == "lo");
    // Writing renders each object once more, into one scratch text; the pieces are the
    // document in order.
    CHECK(r.objects_rendered() == 8);
    std::string joined;
    size_t pieces = 0;
    CHECK(r.write(inv, manager(), [&](std::string_view piece) {
        joined += piece;
        ++pieces;
    }) == describe_json(inv, manager()).size());
    CHECK(joined == describe_json(inv, manager()));
    CHECK(pieces == 9); // head, 2 devices and a comma, "Links" opened, 2 links and a comma, end
    CHECK(r.objects_rendered() == 12);
}

TEST_CASE("Describe() measures in place an object no change set named, and "
          "forgets a removed one") {
    HostState h;
    auto a = device("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0");
    a.ports = {port(1, "ens1f0np0")};
    add(h, a);
    add(h, link(4, "ens1f0np0", "0000:3b:00.0", "mlx5_0"));
    Inventory inv;
    inv.replace(h);
    DescribeRenderer r;
    CHECK(r.size(inv, manager()) == describe_json(inv, manager()).size());
    CHECK(r.objects_rendered() == 2); // measured in place
    CHECK(r.render(inv, manager()) == describe_json(inv, manager()));
    r.changed(inv, inv.replace(HostState{}));
    const auto doc = json::parse(r.render(inv, manager()));
    CHECK(doc["Devices"].empty());
    CHECK(doc["Links"].empty());
}

TEST_CASE("Describe()'s kept sizes and its pieces equal a whole render after every step of 300 random "
          "changes, renames, additions and removals") {
    std::mt19937 rng(20261202); // fixed: a failure replays
    Inventory inv;
    DescribeRenderer r;
    for (int step = 0; step < 300; ++step) {
        CAPTURE(step);
        const int what = static_cast<int>(rng() % 5);
        if (what <= 1) {
            // A device put: new, or changed at its syspath (a rename reorders the devices).
            const int slot = static_cast<int>(rng() % 10);
            DeviceState d =
                device("dev" + std::to_string(rng() % 6), "", "0000:00:00." + std::to_string(slot));
            d.syspath = "/sys/devices/d" + std::to_string(slot);
            PortState p = port(1, "eth" + std::to_string(rng() % 4));
            p.in_sync = rng() % 2;
            p.pfc_no_drop = {static_cast<uint8_t>(rng() % 8)};
            d.ports = {p};
            if (rng() % 3 == 0)
                d.problems.push_back({"port-not-active", "warning", "port 1 is \"DOWN\""});
            r.changed(inv, inv.put_device(d));
        } else if (what == 2) {
            r.changed(inv, inv.remove_device("/sys/devices/d" + std::to_string(rng() % 10)));
        } else if (what == 3) {
            LinkState l = link(static_cast<int32_t>(1 + rng() % 8), "eth" + std::to_string(rng() % 5),
                               "", rng() % 2 ? "dev1" : "");
            r.changed(inv, inv.put_link(l));
        } else {
            r.changed(inv, inv.remove_link(static_cast<int32_t>(1 + rng() % 8)));
        }
        // Measured at every other step: an odd step's change set is still unmeasured when
        // the next one comes, and size() renders what it forgot in place.
        if (step % 2 == 0)
            r.measure(inv);
        const uint64_t before = r.objects_rendered();
        const std::string whole = describe_json(inv, manager());
        REQUIRE(r.size(inv, manager()) == whole.size());
        if (step % 2 == 0)
            CHECK(r.objects_rendered() == before); // every object's size was kept
        REQUIRE(r.render(inv, manager()) == whole);
    }
}
