// SPDX-License-Identifier: MIT
//
// Unit tests for the dispatcher's events (daemon/dispatch/events.hpp): which change of the
// Inventory is which event, with which $1 and RDMAD_* variables, in which order; and the
// queue's coalescing. Devices as DOMAIN.md §3 shows a dual-port ConnectX-5: node GUID, PCI
// function, a netdev per port; ids are the node GUID's 16 hex digits (inventory.hpp id_of()),
// object paths /org/rdmad1/device/<id>[/port/<n>] and /org/rdmad1/link/<ifindex escaped>
// (sd_bus_path_encode(3): a leading digit becomes _3N).
#include "dispatch/events.hpp"

#include "inventory/object_path.hpp"
#include "inventory_fixtures.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;
using namespace rdmad::test;
using namespace rdmad::dispatch;

namespace {

std::vector<std::string> names(const std::vector<Event>& events) {
    std::vector<std::string> out;
    for (const auto& e : events)
        out.push_back(e.object + " " + e.name);
    return out;
}

const std::string kId0 = "b8599f0300d40a2a"; // node GUID b859:9f03:00d4:0a2a

} // namespace

TEST_CASE("dispatch: the inventory known at start-up gives no events; a port leaving and "
          "entering ACTIVE is port-down and port-up with the port's variables") {
    Inventory inv;
    inv.put_device(cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0"));
    Known known = know_all(inv);
    CHECK(known.devices.size() == 1);
    CHECK(known.devices.at(kId0).ports.at(1).active);

    DeviceState d = *inv.device_named("mlx5_0");
    d.ports[1].state = "DOWN";
    ChangeSet cs = inv.put_device(d);
    auto events = derive_events(cs, inv, known);
    REQUIRE(events.size() == 1);
    CHECK(events[0].name == "port-down");
    CHECK(events[0].object == "mlx5_0");
    CHECK(events[0].env == std::map<std::string, std::string>{
                               {"RDMAD_EVENT", "port-down"},
                               {"RDMAD_DEVICE", "mlx5_0"},
                               {"RDMAD_PORT", "2"},
                               {"RDMAD_PORT_STATE", "DOWN"},
                               {"RDMAD_NETDEV", "mlx5_0p2"},
                               {"RDMAD_PCI_ADDRESS", "0000:3b:00.0"},
                               {"RDMAD_TRANSPORT", "RoCE"},
                               {"RDMAD_OBJECT_PATH", "/org/rdmad1/device/" + kId0 + "/port/2"},
                           });
    // Told once: the same state again is no event.
    CHECK(derive_events(inv.put_device(d), inv, known).empty());

    // Port 1 goes down and port 2 comes up in one pass: downs first, then ups.
    d.ports[0].state = "INIT";
    d.ports[1].state = "ACTIVE";
    events = derive_events(inv.put_device(d), inv, known);
    CHECK(names(events) == std::vector<std::string>{"mlx5_0 port-down", "mlx5_0 port-up"});
    CHECK(events[0].env.at("RDMAD_PORT") == "1");
    CHECK(events[1].env.at("RDMAD_PORT") == "2");
    CHECK(events[1].env.at("RDMAD_PORT_STATE") == "ACTIVE");
    // Another property (the rate) is no event.
    d.ports[1].rate_gbps = 25;
    CHECK(derive_events(inv.put_device(d), inv, known).empty());
}

TEST_CASE("dispatch: devices and netdevs that come and go are device-/link-added and -removed, "
          "removals first") {
    Inventory inv;
    inv.put_device(cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0"));
    Known known = know_all(inv);

    ChangeSet cs = inv.put_link(netdev(7, "ens2f0np0", "mlx5_2", "0000:5e:00.0"));
    cs.merge(inv.put_device(cx5("mlx5_2", "b859:9f03:00d4:0b00", "0000:5e:00.0")));
    auto events = derive_events(cs, inv, known);
    CHECK(names(events) == std::vector<std::string>{"ens2f0np0 link-added", "mlx5_2 device-added"});
    CHECK(events[0].env == std::map<std::string, std::string>{
                               {"RDMAD_EVENT", "link-added"},
                               {"RDMAD_NETDEV", "ens2f0np0"},
                               {"RDMAD_DEVICE", "mlx5_2"},
                               {"RDMAD_PCI_ADDRESS", "0000:5e:00.0"},
                               {"RDMAD_OBJECT_PATH", "/org/rdmad1/link/_37"},
                           });
    // A device event names the device, its first port's netdev and transport, no port.
    CHECK(events[1].env == std::map<std::string, std::string>{
                               {"RDMAD_EVENT", "device-added"},
                               {"RDMAD_DEVICE", "mlx5_2"},
                               {"RDMAD_NETDEV", "mlx5_2p1"},
                               {"RDMAD_PCI_ADDRESS", "0000:5e:00.0"},
                               {"RDMAD_TRANSPORT", "RoCE"},
                               {"RDMAD_OBJECT_PATH", "/org/rdmad1/device/b8599f0300d40b00"},
                           });

    // Gone: named as they were known, though the Inventory no longer has them.
    cs = inv.remove_device(inv.device_named("mlx5_2")->syspath);
    cs.merge(inv.remove_link(7));
    events = derive_events(cs, inv, known);
    CHECK(names(events) ==
          std::vector<std::string>{"mlx5_2 device-removed", "ens2f0np0 link-removed"});
    CHECK(events[0].env.at("RDMAD_PCI_ADDRESS") == "0000:5e:00.0");
    CHECK(events[0].env.at("RDMAD_OBJECT_PATH") == "/org/rdmad1/device/b8599f0300d40b00");
    CHECK(events[1].env.at("RDMAD_DEVICE") == "mlx5_2");
    CHECK(known.devices.size() == 1);
}

TEST_CASE("dispatch: a netdev renamed, then removed, is link-removed under its last name; one "
          "added and removed within a change set is neither") {
    Inventory inv;
    inv.put_link(netdev(7, "ens2f0np0", "", "0000:5e:00.0"));
    Known known = know_all(inv);
    LinkState renamed = *inv.link(7);
    renamed.name = "rdma7";
    ChangeSet cs = inv.put_link(renamed);
    cs.merge(inv.remove_link(7));
    auto events = derive_events(cs, inv, known);
    REQUIRE(names(events) == std::vector<std::string>{"rdma7 link-removed"});
    CHECK(events[0].env.at("RDMAD_NETDEV") == "rdma7");
    CHECK(events[0].env.at("RDMAD_PCI_ADDRESS") == "0000:5e:00.0");

    LinkState brief = renamed;
    brief.index = 70;
    brief.name = "brief0";
    cs = inv.put_link(brief);
    cs.merge(inv.remove_link(70));
    CHECK(cs.links_gone.empty());
    CHECK(derive_events(cs, inv, known).empty());
}

TEST_CASE("dispatch: a new error or warning problem is a problem event, once; info is none; a "
          "port becoming in sync is reconciled") {
    Inventory inv;
    inv.put_device(cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0"));
    Known known = know_all(inv);
    DeviceState d = *inv.device_named("mlx5_0");
    d.problems.push_back(
        {"provider-missing", "error", "no provider", {}, "apt install x", 0, false});
    d.problems.push_back({"rate-unknown", "info", "cannot read", {}, "", 1, true});
    auto events = derive_events(inv.put_device(d), inv, known);
    REQUIRE(events.size() == 1);
    CHECK(events[0].name == "problem");
    CHECK(events[0].env.at("RDMAD_PROBLEM") == "provider-missing");
    CHECK(events[0].env.at("RDMAD_PROBLEM_SEVERITY") == "error");
    CHECK(events[0].env.count("RDMAD_PORT") == 0);
    // Still there: no new event; a warning on port 2 besides it: one.
    d.problems.push_back({"port-down", "warning", "port 2 is DOWN", {}, "", 2, false});
    events = derive_events(inv.put_device(d), inv, known);
    REQUIRE(events.size() == 1);
    CHECK(events[0].env.at("RDMAD_PROBLEM") == "port-down");
    CHECK(events[0].env.at("RDMAD_PORT") == "2");

    d.ports[0].in_sync = false;
    CHECK(derive_events(inv.put_device(d), inv, known).empty());
    d.ports[0].in_sync = true;
    events = derive_events(inv.put_device(d), inv, known);
    CHECK(names(events) == std::vector<std::string>{"mlx5_0 reconciled"});
    CHECK(events[0].env.at("RDMAD_PORT") == std::to_string(d.ports[0].number));
    CHECK(events[0].env.at("RDMAD_OBJECT_PATH") ==
          "/org/rdmad1/device/" + kId0 + "/port/" + std::to_string(d.ports[0].number));
}

TEST_CASE("dispatch: coalescing keeps each object's latest event, in the order of those") {
    auto ev = [](const std::string& key, const std::string& name) {
        return Event{name, key, {}, key};
    };
    const std::vector<Event> queue = {ev("a", "port-down"), ev("b", "port-down"),
                                      ev("a", "port-up"),   ev("c", "device-added"),
                                      ev("b", "port-up"),   ev("a", "port-down")};
    CHECK(names(coalesce(queue)) ==
          std::vector<std::string>{"c device-added", "b port-up", "a port-down"});
    CHECK(coalesce({}).empty());
}

TEST_CASE("dispatch: a port that goes down is port-down, not also its port's new problem") {
    Inventory inv;
    inv.put_device(cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0"));
    Known known = know_all(inv);
    DeviceState d = *inv.device_named("mlx5_0");
    d.ports[0].state = "DOWN";
    d.problems.push_back({"port-not-active", "warning", "port 1 is DOWN", {}, "", 1, false});
    d.problems.push_back({"provider-missing", "error", "no provider", {}, "", 0, false});
    const auto events = derive_events(inv.put_device(d), inv, known);
    CHECK(names(events) == std::vector<std::string>{"mlx5_0 port-down", "mlx5_0 problem"});
    CHECK(events[1].env.at("RDMAD_PROBLEM") == "provider-missing");
}

TEST_CASE("dispatch: a device retracted to be announced again (its ports changed) is "
          "device-removed as it was, then device-added as it is") {
    Inventory inv;
    inv.put_device(cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0"));
    Known known = know_all(inv);
    DeviceState d = *inv.device_named("mlx5_0");
    d.name = "mlx5_9";
    d.ports.pop_back(); // port 2 gone: other port numbers
    const ChangeSet cs = inv.put_device(d);
    REQUIRE(cs.devices_gone.count(kId0));
    CHECK(cs.devices_gone.at(kId0).name == "mlx5_0");
    CHECK(cs.devices_gone.at(kId0).ports.size() == 2);
    const auto events = derive_events(cs, inv, known);
    CHECK(names(events) ==
          std::vector<std::string>{"mlx5_0 device-removed", "mlx5_9 device-added"});
    CHECK(events[0].env.at("RDMAD_OBJECT_PATH") == "/org/rdmad1/device/" + kId0);
    CHECK(!events[0].env.count("RDMAD_NETDEV")); // gone: no netdev named
    CHECK(events[1].env.at("RDMAD_NETDEV") == "mlx5_0p1");
}

TEST_CASE("dispatch: a device whose node GUID reads late while it is renamed moves to the GUID's "
          "path: device-removed under the name the scripts were told, then device-added") {
    Inventory inv;
    DeviceState d = cx5("mlx5_0", "", "0000:3b:00.0"); // GUID unreadable (EIO at hotplug)
    inv.put_device(d);
    REQUIRE(inv.id_of(d.syspath) == "0000:3b:00.0"); // the PCI address until the GUID reads
    Known known = know_all(inv);
    d.node_guid = "b859:9f03:00d4:0a2a";
    d.name = "rocep59s0f0"; // renamed by udev in the same pass
    const ChangeSet cs = inv.put_device(d);
    REQUIRE(inv.id_of(d.syspath) == kId0);
    const auto events = derive_events(cs, inv, known);
    CHECK(names(events) ==
          std::vector<std::string>{"mlx5_0 device-removed", "rocep59s0f0 device-added"});
    REQUIRE(events.size() == 2);
    CHECK(events[0].env.at("RDMAD_DEVICE") == "mlx5_0");
    CHECK(events[0].env.at("RDMAD_OBJECT_PATH") == device_path("0000:3b:00.0"));
    CHECK(events[1].env.at("RDMAD_OBJECT_PATH") == "/org/rdmad1/device/" + kId0);
    CHECK(known.devices.size() == 1);
    CHECK(known.devices.count(kId0));
}

TEST_CASE("dispatch: an overflowing queue keeps the removal of a device or netdev that came back "
          "under another name with the same id or ifindex") {
    Inventory inv;
    inv.put_device(cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0"));
    inv.put_link(netdev(7, "ens2f0np0", "", "0000:5e:00.0"));
    Known known = know_all(inv);
    // The device is retracted and announced again (a port gone) under a new name; the
    // netdev goes and a new one takes its ifindex (moved back from another namespace).
    DeviceState d = *inv.device_named("mlx5_0");
    d.name = "mlx5_9";
    d.ports.pop_back();
    ChangeSet cs = inv.put_device(d);
    cs.merge(inv.remove_link(7));
    cs.merge(inv.put_link(netdev(7, "eth7", "", "0000:5e:00.0")));
    const auto events = derive_events(cs, inv, known);
    REQUIRE(names(events) ==
            std::vector<std::string>{"mlx5_0 device-removed", "ens2f0np0 link-removed",
                                     "eth7 link-added", "mlx5_9 device-added"});
    // What the scripts must still learn once the queue is coalesced: the old names went.
    CHECK(names(coalesce(events)) == names(events));
    // A device that comes and goes under one name is told its latest event once.
    std::vector<Event> flapping = events;
    flapping.insert(flapping.end(), events.begin(), events.end());
    CHECK(names(coalesce(flapping)) == names(events));
}
