// SPDX-License-Identifier: MIT
//
// Unit tests for the Inventory (daemon/inventory/inventory.hpp): identity and change sets.
// Property names are those of dbus/org.rdmad1.Device.xml, Port.xml and Link.xml.
#include "inventory/inventory.hpp"

#include "inventory_fixtures.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace rdmad;
using namespace rdmad::test;

namespace {

using Names = std::set<std::string>;

/// Two devices, each with its two netdevs.
Inventory host() {
    Inventory inv;
    inv.put_device(cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0"));
    inv.put_device(cx5("mlx5_1", "b859:9f03:00d4:0a2b", "0000:af:00.0"));
    inv.put_link(netdev(4, "mlx5_0p1", "mlx5_0"));
    inv.put_link(netdev(5, "mlx5_0p2", "mlx5_0"));
    inv.put_link(netdev(6, "mlx5_1p1", "mlx5_1"));
    inv.put_link(netdev(7, "mlx5_1p2", "mlx5_1"));
    return inv;
}

} // namespace

TEST_CASE("a new device is named once as added, by its node GUID, with nothing else") {
    Inventory inv;
    const ChangeSet cs = inv.put_device(cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0"));
    CHECK(cs.devices_added == Names{"b8599f0300d40a2a"});
    CHECK(cs.devices_changed.empty());
    CHECK(cs.ports_changed.empty());
    CHECK(inv.id_of(inv.state().devices.begin()->first) == "b8599f0300d40a2a");
}

TEST_CASE("an update of one port names only that port and its changed properties") {
    Inventory inv = host();
    DeviceState d = *inv.device_named("mlx5_1");
    d.ports[1].state = "DOWN";
    d.ports[1].phys_state = "Polling";
    const ChangeSet cs = inv.put_device(d);
    REQUIRE(cs.ports_changed.size() == 1);
    const auto& [key, props] = *cs.ports_changed.begin();
    CHECK(key == std::make_pair(std::string("b8599f0300d40a2b"), uint32_t(2)));
    CHECK(props == Names{"State", "PhysicalState"});
    CHECK(cs.devices_changed.empty());
    CHECK(cs.devices_added.empty());
    CHECK(cs.links_changed.empty());
    CHECK(inv.device_named("mlx5_1")->ports[1].state == "DOWN");
}

TEST_CASE("putting the same device again changes nothing") {
    Inventory inv = host();
    CHECK(inv.put_device(*inv.device_named("mlx5_0")).empty());
    CHECK(inv.put_link(*inv.link(4)).empty());
}

TEST_CASE("a rename keeps the id; the netdevs that name it are its relatives") {
    Inventory inv = host();
    DeviceState d = *inv.device_named("mlx5_0");
    const std::string old_syspath = d.syspath;
    const std::string id = inv.id_of(old_syspath);
    // DOMAIN.md §6: NAME_FALLBACK renames mlx5_0 to rocep59s0f0 with a "move" uevent.
    d.name = "rocep59s0f0";
    d.syspath = "/sys/devices/pci0000:00/0000:00:02.0/0000:3b:00.0/infiniband/rocep59s0f0";
    inv.rename_device(old_syspath, d.syspath);
    CHECK(inv.id_of(d.syspath) == id);
    CHECK(inv.id_of(old_syspath).empty());
    const ChangeSet cs = inv.put_device(d);
    CHECK(cs.devices_added.empty());
    CHECK(cs.devices_removed.empty());
    REQUIRE(cs.devices_changed.count(id));
    // Alone, the rename leaves the netdevs naming "mlx5_0", which no device is now: the
    // device serves no netdev and they name no device, until they are classified again.
    CHECK(cs.devices_changed.at(id) == Names{"Links", "Name"});
    CHECK(inv.device(d.syspath)->link_indexes.empty());
    CHECK(cs.links_changed.at(4) == Names{"RdmaDevice"});
    CHECK(cs.links_changed.at(5) == Names{"RdmaDevice"});
    CHECK(!cs.links_changed.count(6));
    CHECK(inv.link(4)->rdma_device_id.empty());
    CHECK(inv.device_named("rocep59s0f0") != nullptr);
    CHECK(inv.device_named("mlx5_0") == nullptr);
}

TEST_CASE("a rename and the netdevs classified again in one batch change Name only") {
    Inventory inv = host();
    DeviceState d = *inv.device_named("mlx5_0");
    const std::string id = inv.id_of(d.syspath);
    const std::vector<int32_t> served = d.link_indexes;
    REQUIRE(served == std::vector<int32_t>{4, 5});
    inv.begin_batch();
    d.name = "rocep59s0f0";
    ChangeSet cs = inv.put_device(d);
    for (const int32_t index : served) {
        LinkState l = *inv.link(index);
        l.rdma_device = "rocep59s0f0";
        cs.merge(inv.put_link(l));
    }
    cs.merge(inv.end_batch());
    CHECK(cs.devices_changed.at(id) == Names{"Name"});
    // The netdevs' own field changed, not the object they point at.
    CHECK(cs.links_changed.at(4) == Names{"rdma_device"});
    CHECK(cs.links_changed.at(5) == Names{"rdma_device"});
    CHECK(inv.link(4)->rdma_device_id == id);
    CHECK(inv.device(d.syspath)->link_indexes == served);
}

TEST_CASE("two devices that swap names are both found by their new names, in either order") {
    // A pass that reads two renames (mlx5_0 -> mlx5_tmp -> mlx5_1, mlx5_1 -> mlx5_0) puts
    // one device under its new name while the other still holds it.
    for (const bool first_is_mlx5_0 : {true, false}) {
        INFO("mlx5_0 put first: " << first_is_mlx5_0);
        Inventory inv = host();
        DeviceState a = *inv.device_named("mlx5_0");
        DeviceState b = *inv.device_named("mlx5_1");
        const std::string a_syspath = a.syspath, b_syspath = b.syspath;
        a.name = "mlx5_1";
        b.name = "mlx5_0";
        if (first_is_mlx5_0) {
            inv.put_device(a);
            inv.put_device(b);
        } else {
            inv.put_device(b);
            inv.put_device(a);
        }
        REQUIRE(inv.device_named("mlx5_1") != nullptr);
        CHECK(inv.device_named("mlx5_1")->syspath == a_syspath);
        REQUIRE(inv.device_named("mlx5_0") != nullptr);
        CHECK(inv.device_named("mlx5_0")->syspath == b_syspath);
    }
}

TEST_CASE("two netdevs that swap names are both found by their new names, in either order") {
    for (const bool first_is_4 : {true, false}) {
        INFO("ifindex 4 put first: " << first_is_4);
        Inventory inv = host();
        LinkState a = *inv.link(4);
        LinkState b = *inv.link(5);
        std::swap(a.name, b.name);
        std::swap(a.syspath, b.syspath);
        if (first_is_4) {
            inv.put_link(a);
            inv.put_link(b);
        } else {
            inv.put_link(b);
            inv.put_link(a);
        }
        REQUIRE(inv.link_named(a.name) != nullptr);
        CHECK(inv.link_named(a.name)->index == 4);
        REQUIRE(inv.link_named(b.name) != nullptr);
        CHECK(inv.link_named(b.name)->index == 5);
    }
}

TEST_CASE("removing a device removes its ports and unlinks its netdevs") {
    Inventory inv = host();
    const std::string syspath = inv.device_named("mlx5_0")->syspath;
    const ChangeSet cs = inv.remove_device(syspath);
    CHECK(cs.devices_removed == Names{"b8599f0300d40a2a"});
    CHECK(cs.ports_changed.empty()); // they go with the device
    CHECK(cs.links_changed.at(4) == Names{"RdmaDevice"});
    CHECK(cs.links_changed.at(5) == Names{"RdmaDevice"});
    CHECK(cs.links_changed.size() == 2);
    CHECK(inv.device(syspath) == nullptr);
    CHECK(inv.id_of(syspath).empty());
    CHECK(inv.syspath_of("b8599f0300d40a2a").empty());
}

TEST_CASE("a netdev that appears names the ports on it and the device it serves") {
    Inventory inv;
    inv.put_device(cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0"));
    const ChangeSet cs = inv.put_link(netdev(4, "mlx5_0p1", "mlx5_0"));
    CHECK(cs.links_added == std::set<int32_t>{4});
    CHECK(cs.devices_changed.at("b8599f0300d40a2a") == Names{"Links"});
    REQUIRE(cs.ports_changed.size() == 1);
    CHECK(cs.ports_changed.begin()->first.second == 1);
    CHECK(cs.ports_changed.begin()->second == Names{"Link"});
    CHECK(inv.links_of("mlx5_0") == std::set<int32_t>{4});
}

TEST_CASE("a netdev rename changes the link only, and its ports' Link") {
    Inventory inv = host();
    LinkState l = *inv.link(6);
    l.name = "ens2f0np0";
    l.syspath = "/sys/class/net/ens2f0np0";
    const ChangeSet cs = inv.put_link(l);
    CHECK(cs.links_changed.at(6) == Names{"Name", "syspath"});
    CHECK(cs.ports_changed.size() == 1); // mlx5_1 port 1 named the old name
    CHECK(inv.link_named("ens2f0np0")->index == 6);
    CHECK(inv.link_named("mlx5_1p1") == nullptr);
}

TEST_CASE("ids: shared node GUIDs fall back to PCI addresses, then names, and stay unique") {
    HostState s;
    for (auto d : {cx5("mlx5_0", "0002:c903:00f9:bfa0", "0000:3b:00.0"),
                   cx5("mlx5_1", "0002:c903:00f9:bfa0", "0000:3b:00.1"), cx5("siw0", "", ""),
                   cx5("siw0", "", "")}) {
        if (s.devices.count(d.syspath))
            d.syspath += "-2";
        s.devices[d.syspath] = d;
    }
    Inventory inv;
    const ChangeSet cs = inv.replace(s);
    CHECK(cs.devices_added == Names{"0000:3b:00.0", "0000:3b:00.1", "siw0", "siw0_1"});
}

TEST_CASE("a full replace names only what differs, and untouched objects cost nothing more "
          "than one comparison") {
    Inventory inv = host();
    HostState next = inv.state();
    next.devices.at(inv.device_named("mlx5_1")->syspath).firmware_version = "16.35.2000";
    next.links.at(7).operstate = "down";
    const uint64_t before = inv.objects_compared();
    const ChangeSet cs = inv.replace(next);
    CHECK(cs.devices_changed.size() == 1);
    CHECK(cs.devices_changed.at("b8599f0300d40a2b") == Names{"FirmwareVersion"});
    CHECK(cs.links_changed.size() == 1);
    CHECK(cs.links_changed.at(7) == Names{"OperState"});
    CHECK(cs.ports_changed.empty());
    CHECK(inv.objects_compared() - before == 6); // 2 devices + 4 links, each once
}

TEST_CASE("one port update compares that device only") {
    Inventory inv = host();
    DeviceState d = *inv.device_named("mlx5_0");
    d.ports[0].lid = 7;
    const uint64_t before = inv.objects_compared();
    inv.put_device(d);
    CHECK(inv.objects_compared() - before == 1);
}

TEST_CASE("a change set merges: added then removed is nothing, changes accumulate") {
    ChangeSet a;
    a.devices_added = {"x"};
    a.links_changed[4] = {"OperState"};
    ChangeSet b;
    b.devices_removed = {"x"};
    b.links_changed[4] = {"Name"};
    a.merge(b);
    CHECK(a.devices_added.empty());
    CHECK(a.devices_removed.empty());
    CHECK(a.links_changed.at(4) == Names{"OperState", "Name"});
}

TEST_CASE("a VF's PF appearing names the VF's PhysicalFunction") {
    Inventory inv;
    DeviceState vf = cx5("mlx5_2", "b859:9f03:00d4:0a40", "0000:3b:00.2");
    vf.physical_function = "0000:3b:00.0";
    inv.put_device(vf);
    const ChangeSet cs = inv.put_device(cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0"));
    CHECK(cs.devices_changed.at("b8599f0300d40a40") == Names{"PhysicalFunction"});
}

TEST_CASE("GID netdev names as shared texts: thousands of distinct names, each renamed away, "
          "leave no text held once the device and its change sets are gone") {
    const Gid gid = *Gid::parse("fe80:0000:0000:0000:0e42:a1ff:fe5b:30e0");
    auto round = [&](int names) {
        Inventory inv;
        DeviceState d = cx5("mlx5_0", "b859:9f03:00d4:0a2a", "0000:3b:00.0");
        size_t most = 0;
        for (int i = 0; i < names; ++i) {
            // Every GID of port 1 names the netdev, as the kernel's ndevs do; each pass renames it.
            d.ports[0].gids.clear();
            for (uint32_t k = 0; k < 32; ++k)
                d.ports[0].gids.push_back({k, gid, "RoCE v2", "veth" + std::to_string(i)});
            const ChangeSet cs = inv.put_device(d);
            most = std::max(most, SharedText::held());
        }
        inv.remove_device(d.syspath);
        return most;
    };
    round(2); // whatever a first put makes once (function statics)
    const size_t before = SharedText::held();
    const size_t most = round(5000);
    // One netdev name at a time (the Inventory's, the one being put), never the 5,000.
    CHECK(most <= before + 40);
    CHECK(SharedText::held() == before);
}

TEST_CASE("a pass that puts a device twice names what the pass changed, not each put's change") {
    // A read puts the device with its desired values at their defaults (as_read()), the plan
    // puts them back: the pass changed the port's state only. Seen on the bus by a new user:
    // every uevent re-sent DesiredPFCNoDrop, InSync and DesiredOrigin, unchanged.
    Inventory inv;
    DeviceState planned = cx5("mlx5_0", "0c42:a103:0000:0001", "0000:03:00.0");
    planned.desired_origin = {{"PFCNoDrop", "dbus"}};
    planned.ports[0].desired_pfc_no_drop = {3};
    planned.ports[0].in_sync = false;
    inv.put_device(planned);
    const std::string id = inv.id_of(planned.syspath);

    inv.begin_pass();
    DeviceState read = planned;
    read.desired_origin.clear();
    read.ports[0].desired_pfc_no_drop.clear();
    read.ports[0].in_sync = true;
    read.ports[0].state = "DOWN";
    ChangeSet cs = inv.put_device(read);
    CHECK(cs.ports_changed[{id, 1}] == Names{"DesiredPFCNoDrop", "InSync", "State"});
    DeviceState replanned = planned;
    replanned.ports[0].state = "DOWN";
    cs.merge(inv.put_device(replanned));
    inv.end_pass(cs);
    CHECK(cs.devices_changed.empty());
    REQUIRE(cs.ports_changed.size() == 1);
    CHECK(cs.ports_changed[{id, 1}] == Names{"State"});

    // A desired value that the plan does change stays named; a pass that changes nothing
    // names nothing.
    inv.begin_pass();
    DeviceState asked = replanned;
    asked.ports[0].desired_pfc_no_drop = {3, 4};
    cs = inv.put_device(read);
    cs.merge(inv.put_device(asked));
    inv.end_pass(cs);
    CHECK(cs.devices_changed.empty());
    CHECK(cs.ports_changed[{id, 1}] == Names{"DesiredPFCNoDrop"});

    inv.begin_pass();
    cs = inv.put_device(read);
    cs.merge(inv.put_device(asked));
    inv.end_pass(cs);
    CHECK(cs.empty());

    // Outside a pass every put names its own change.
    cs = inv.put_device(read);
    CHECK(!cs.ports_changed.empty());
}
