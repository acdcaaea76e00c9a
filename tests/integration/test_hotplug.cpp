// SPDX-License-Identifier: MIT
//
// Hotplug: uevents into a running rdmad, checked by the exact signals it sends.
//
// Contract under test (man/rdmad.8.scd, man/org.rdmad1.5.scd, dbus/*.xml, DESIGN.md): a 50 ms
// coalescing window, then only dirty devices are re-read; one PropertiesChanged per object with
// only the properties that changed (never empty); new objects with InterfacesAdded once fully
// built, gone ones with InterfacesRemoved; a rename (`move`, DEVPATH_OLD) keeps the object
// path; netdevs keyed by ifindex; an incomplete device is re-read every 100 ms up to 5 times;
// SIGHUP (and a monitor overflow) reads everything again.
//
// umockdev_testbed_add_from_string() itself sends "add" for every device it creates (so a
// device's add may reach rdmad twice here: harmless, it only marks the device dirty again).
// Events: umockdev_testbed_uevent() where umockdev can send them; send_uevent() (harness) for
// `move` (umockdev 0.17.16 cannot carry DEVPATH_OLD) and for bursts (umockdev aborts on EAGAIN).
#include "harness.hpp"

#include <catch2/catch.hpp>
#include <gio/gio.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

using namespace it;
using namespace std::chrono_literals;

namespace {

// sd_bus_path_encode(): every byte but [A-Za-z0-9] (and a leading digit) as _xx.
std::string encode_path(const std::string& prefix, const std::string& id) {
    if (id.empty())
        return prefix + "/_";
    std::string out = prefix + "/";
    for (size_t i = 0; i < id.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(id[i]);
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')) {
            out += char(c);
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "_%02x", c);
            out += buf;
        }
    }
    return out;
}
std::string link_path(int ifindex) { return encode_path("/org/rdmad1/link", std::to_string(ifindex)); }
// Object id of a device with a unique, non-zero node GUID: its hex digits.
std::string device_path_for_guid(const std::string& guid) {
    std::string digits;
    for (char c : guid)
        if (c != ':')
            digits += c;
    return encode_path("/org/rdmad1/device", digits);
}

// ---- umockdev text for the objects a hotplug brings (kernel formats as in the fixtures) ----

struct Ib {
    std::string pci_devpath; // "/devices/.../0000:3b:00.0"
    std::string name;        // mlx5_2
    std::string guid;        // "0c42:a103:005b:30f0"
    std::string netdev;      // name the GID table's ndevs show
    std::string hca = "MT4119";
    std::string state = "4: ACTIVE";
    bool with_node_type = true;
    bool with_ports = true;
    std::string devpath() const { return pci_devpath + "/infiniband/" + name; }
    std::string syspath() const { return "/sys" + devpath(); }
};

std::string slot_of(const std::string& devpath) { return devpath.substr(devpath.rfind('/') + 1); }

std::string guid_lladdr(const std::string& guid) {
    // fe80::<guid with the U/L bit flipped>, as mlx5 RoCE link-local GIDs look; only needs to
    // be well-formed and unique here.
    return "fe80:0000:0000:0000:" + guid;
}

std::string ib_port_attrs(const Ib& d) {
    std::string s;
    for (int i = 0; i < 4; ++i)
        s += "A: ports/1/gid_attrs/ndevs/" + std::to_string(i) + "=" + d.netdev + "\\n\n";
    for (int i = 0; i < 4; ++i)
        s += "A: ports/1/gid_attrs/types/" + std::to_string(i) + "=" +
             (i % 2 ? "RoCE v2" : "IB/RoCE v1") + "\\n\n";
    for (int i = 0; i < 2; ++i)
        s += "A: ports/1/gids/" + std::to_string(i) + "=" + guid_lladdr(d.guid) + "\\n\n";
    for (int i = 4; i < 8; ++i)
        s += "A: ports/1/gids/" + std::to_string(i) +
             "=0000:0000:0000:0000:0000:0000:0000:0000\\n\n";
    s += "A: ports/1/lid=0x0\\n\n"
         "A: ports/1/link_layer=Ethernet\\n\n"
         "A: ports/1/phys_state=5: LinkUp\\n\n"
         "A: ports/1/rate=25 Gb/sec (1X EDR)\\n\n"
         "A: ports/1/sm_lid=0x0\\n\n"
         "A: ports/1/state=" + d.state + "\\n\n";
    return s;
}

std::string ib_text(const Ib& d) {
    std::string s = "P: " + d.devpath() + "\nE: SUBSYSTEM=infiniband\nE: NAME=" + d.name + "\n" +
                    "A: board_id=MT_0000000080\\n\n" + "L: device=../../../" +
                    slot_of(d.pci_devpath) + "\n" + "A: fw_ver=16.35.2000\\n\n" +
                    "A: hca_type=" + d.hca + "\\n\n" + "A: hw_rev=0\\n\n" +
                    "A: node_desc=host1 " + d.name + "\\n\n" + "A: node_guid=" + d.guid + "\\n\n";
    if (d.with_node_type)
        s += "A: node_type=1: CA\\n\n";
    if (d.with_ports)
        s += ib_port_attrs(d);
    s += "A: sys_image_guid=" + d.guid + "\\n\n\n";
    return s;
}

std::string pci_text(const std::string& devpath, const std::string& device_id,
                     const std::string& physfn = "") {
    std::string s = "P: " + devpath + "\nE: SUBSYSTEM=pci\nE: DRIVER=mlx5_core\nE: PCI_CLASS=20000\n" +
                    "E: PCI_ID=15B3:" + device_id + "\nE: PCI_SUBSYS_ID=15B3:0007\n" +
                    "E: PCI_SLOT_NAME=" + slot_of(devpath) + "\n" + "A: class=0x020000\\n\n" +
                    "A: device=0x" + device_id + "\\n\n" +
                    "L: driver=../../../../bus/pci/drivers/mlx5_core\n";
    if (!physfn.empty())
        s += "L: physfn=../" + physfn + "\n";
    s += "A: subsystem_device=0x0007\\n\nA: subsystem_vendor=0x15b3\\n\nA: vendor=0x15b3\\n\n\n";
    return s;
}

std::string uverbs_devpath(const std::string& pci_devpath, int n) {
    return pci_devpath + "/infiniband_verbs/uverbs" + std::to_string(n);
}
std::string uverbs_text(const std::string& pci_devpath, int n, const std::string& ibdev) {
    const std::string num = std::to_string(n);
    return "P: " + uverbs_devpath(pci_devpath, n) + "\nN: infiniband/uverbs" + num +
           "\nE: SUBSYSTEM=infiniband_verbs\nE: MAJOR=231\nE: MINOR=" + std::to_string(192 + n) +
           "\nE: DEVNAME=/dev/infiniband/uverbs" + num + "\nA: abi_version=1\\n\nA: dev=231:" +
           std::to_string(192 + n) + "\\n\nL: device=../../../" + slot_of(pci_devpath) +
           "\nA: ibdev=" + ibdev + "\\n\n\n";
}

std::string aux_devpath(const std::string& pci_devpath, int n) {
    return pci_devpath + "/mlx5_core.rdma." + std::to_string(n);
}
std::string aux_text(const std::string& pci_devpath, int n, bool bound) {
    std::string s = "P: " + aux_devpath(pci_devpath, n) + "\nE: SUBSYSTEM=auxiliary\n";
    if (bound)
        s += "E: DRIVER=mlx5_ib.rdma\n";
    s += "E: MODALIAS=auxiliary:mlx5_core.rdma\n";
    if (bound)
        s += "L: driver=../../../../../bus/auxiliary/drivers/mlx5_ib.rdma\n";
    s += "A: modalias=auxiliary:mlx5_core.rdma\\n\n\n";
    return s;
}

// parent_devpath "" puts the netdev under /devices/virtual/net.
std::string net_devpath(const std::string& parent_devpath, const std::string& name) {
    return (parent_devpath.empty() ? std::string("/devices/virtual") : parent_devpath) + "/net/" +
           name;
}
std::string net_text(const std::string& parent_devpath, const std::string& name, int ifindex) {
    char mac[32];
    std::snprintf(mac, sizeof mac, "0c:42:a1:%02x:%02x:%02x", (ifindex >> 16) & 0xff,
                  (ifindex >> 8) & 0xff, ifindex & 0xff);
    const std::string idx = std::to_string(ifindex);
    std::string s = "P: " + net_devpath(parent_devpath, name) + "\nE: SUBSYSTEM=net\nE: INTERFACE=" +
                    name + "\nE: IFINDEX=" + idx + "\nA: addr_len=6\\n\nA: address=" + mac +
                    "\\n\nA: carrier=1\\n\nA: dev_port=0\\n\n";
    if (!parent_devpath.empty())
        s += "L: device=../../../" + slot_of(parent_devpath) + "\n";
    s += "A: ifindex=" + idx + "\\n\nA: iflink=" + idx +
         "\\n\nA: mtu=1500\\n\nA: operstate=up\\n\nA: type=1\\n\n\n";
    return s;
}

// The kernel's rename: the device directory moves (no add, no remove), the class link follows
// and the uevent file names the new name. umockdev has no rename, and add_from_string() would
// send an "add" of its own for the new name, so this is done on the testbed's files.
void rename_device(const std::string& root, const std::string& old_syspath,
                   const std::string& new_syspath, const std::string& cls) {
    const std::string old_name = slot_of(old_syspath), new_name = slot_of(new_syspath);
    REQUIRE(fs::exists(root + old_syspath));
    REQUIRE(!fs::exists(root + new_syspath));
    fs::rename(root + old_syspath, root + new_syspath);
    const fs::path cls_dir = root + "/sys/class/" + cls;
    if (fs::is_symlink(cls_dir / old_name)) {
        std::string target = fs::read_symlink(cls_dir / old_name).string();
        fs::remove(cls_dir / old_name);
        target = target.substr(0, target.rfind('/') + 1) + new_name;
        fs::create_symlink(target, cls_dir / new_name);
    }
    std::string ue = read_file(root + new_syspath + "/uevent");
    for (auto key : {"NAME=", "INTERFACE="}) {
        auto pos = ue.find(std::string(key) + old_name + "\n");
        if (pos != std::string::npos)
            ue.replace(pos + std::string(key).size(), old_name.size(), new_name);
    }
    write_file(root + new_syspath + "/uevent", ue);
}

// The kernel's rename of RDMA device `from` of the PCI function `pci` ("/sys/devices/...") to
// `to`: rename_device(), its uverbs<uverbs> device's ibdev following (the kernel computes it,
// no event of its own), then the `move`.
void rename_ib(Rig& rig, const std::string& pci, int uverbs, const std::string& from,
               const std::string& to) {
    const std::string root = rig.testbed.root();
    const std::string old_sp = pci + "/infiniband/" + from, new_sp = pci + "/infiniband/" + to;
    rename_device(root, old_sp, new_sp, "infiniband");
    rig.testbed.set_attr(pci + "/infiniband_verbs/uverbs" + std::to_string(uverbs), "ibdev",
                         to + "\n");
    send_uevent(root, new_sp, "infiniband", "move",
                {{"DEVPATH_OLD", old_sp.substr(4)}, {"NAME", to}});
}

// A netdev under /devices/virtual/net written on the testbed's files like the fixture's lo
// (directory, uevent file, subsystem link, class link), without the "add" that
// umockdev_testbed_add_from_string() sends.
void write_virtual_netdev(const std::string& root, const std::string& name, int ifindex) {
    const fs::path lo = root + "/sys/devices/virtual/net/lo";
    const fs::path subsystem_target = fs::read_symlink(lo / "subsystem");
    const std::string lo_class = fs::read_symlink(root + "/sys/class/net/lo").string();
    const std::string idx = std::to_string(ifindex);
    const fs::path dir = root + "/sys/devices/virtual/net/" + name;
    fs::create_directories(dir);
    write_file(dir / "uevent", "INTERFACE=" + name + "\nIFINDEX=" + idx + "\n");
    for (auto [attr, value] : std::vector<std::pair<std::string, std::string>>{
             {"ifindex", idx}, {"iflink", idx}, {"operstate", "up"}, {"type", "1"},
             {"dev_port", "0"}, {"carrier", "1"}, {"mtu", "1500"}})
        write_file(dir / attr, value + "\n");
    fs::create_symlink(subsystem_target, dir / "subsystem");
    fs::create_symlink(lo_class.substr(0, lo_class.rfind('/') + 1) + name,
                       root + "/sys/class/net/" + name);
}

// ---- checks --------------------------------------------------------------------------------

void check_signals(const SignalRecorder& rec, size_t from, const std::vector<std::string>& want) {
    INFO(rec.dump(from));
    CHECK(rec.summaries(from) == want);
}

// "add" uevents for `syspaths`, in order, that reach rdmad as one burst however slowly this
// process sends them (a loaded machine): rdmad is stopped meanwhile, so the uevents wait in
// its socket and the coalescing window its first one opens gathers them all, as it gathers a
// driver's add events that come back to back.
void add_as_one_burst(Rig& rig, const std::vector<std::string>& syspaths) {
    rig.daemon->signal(SIGSTOP);
    for (const auto& sp : syspaths)
        rig.testbed.uevent(sp, "add");
    rig.daemon->signal(SIGCONT);
}

// Signals grouped by object path, in order (for passes whose order across objects the
// contract does not fix).
std::map<std::string, std::vector<std::string>> per_object(const SignalRecorder& rec, size_t from) {
    std::map<std::string, std::vector<std::string>> out;
    for (size_t i = from; i < rec.signals().size(); ++i)
        out[rec.signals()[i].path].push_back(rec.signals()[i].summary());
    return out;
}

void check_per_object(const SignalRecorder& rec, size_t from,
                      const std::vector<std::string>& want) {
    std::map<std::string, std::vector<std::string>> w;
    for (auto& s : want) {
        auto a = s.find(' ') + 1;
        w[s.substr(a, s.find(' ', a) - a)].push_back(s);
    }
    INFO(rec.dump(from));
    CHECK(per_object(rec, from) == w);
}

void collect_paths(const json& v, std::vector<std::string>& out) {
    if (v.is_string()) {
        auto s = v.get<std::string>();
        if (s.rfind("/org/rdmad1/", 0) == 0)
            out.push_back(s);
    } else if (v.is_array()) {
        for (auto& e : v)
            collect_paths(e, out);
    }
}

std::set<std::string> object_paths(const json& described) {
    std::set<std::string> s;
    for (auto& d : described["Devices"]) {
        s.insert(d["Path"].get<std::string>());
        for (auto& p : d["Ports"])
            s.insert(p["Path"].get<std::string>());
    }
    for (auto& l : described["Links"])
        s.insert(l["Path"].get<std::string>());
    return s;
}

// ObjectManager semantics: a signal names (in an object-path value) only objects that exist
// at that point: announced before (or at start-up) and not yet removed.
// Every object path a signal carries names an object that exists, or one announced later in
// the same burst: devices and links refer to each other, so in a burst that adds both, one of
// them is announced first (the ObjectManager convention: references resolve once the burst is
// out). A path that was removed and not added again is never named.
void check_no_dangling_references(const SignalRecorder& rec, size_t from, std::set<std::string> known) {
    std::vector<std::string> bad;
    const auto& sigs = rec.signals();
    for (size_t i = from; i < sigs.size(); ++i) {
        const Signal& s = sigs[i];
        if (s.kind == "added")
            known.insert(s.path);
        if (s.kind == "removed") {
            known.erase(s.path);
            continue;
        }
        std::vector<std::string> refs;
        for (auto& [k, v] : s.props.items())
            collect_paths(v, refs);
        for (auto& r : refs) {
            if (known.count(r))
                continue;
            bool added_later = false;
            for (size_t j = i + 1; j < sigs.size() && !added_later; ++j)
                added_later = sigs[j].kind == "added" && sigs[j].path == r;
            if (!added_later)
                bad.push_back("signal #" + std::to_string(i - from) + " (" + s.summary() +
                              ") names " + r + ", not (yet / any more) an object");
        }
    }
    std::string msg;
    for (auto& b : bad)
        msg += b + "\n";
    INFO(msg << rec.dump(from));
    CHECK(bad.empty());
}

const json* find_by(const json& arr, const char* key, const json& value) {
    for (auto& o : arr)
        if (o.contains(key) && o[key] == value)
            return &o;
    return nullptr;
}

constexpr auto kSettle = 400ms; // > coalescing window (50 ms) + a pass, to show nothing follows
constexpr auto kWait = 10s;

} // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("hotplug: add, change and remove an RDMA device", "[hotplug]") {
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string root = rig.testbed.root();
    const json before = rig.described;

    const std::string pci = "/devices/pci0000:3a/0000:3a:03.0/0000:3c:00.0";
    Ib ib{pci, "mlx5_2", "0c42:a103:005b:30f0", "ens2f0np0"};
    const std::string dev = device_path_for_guid(ib.guid);
    const std::string port = dev + "/port/1";
    const std::string link = link_path(1004);

    // Kernel order: PCI function, auxiliary device, netdev, RDMA device, uverbs. The sysfs
    // entries first, then the events back to back (well inside one coalescing window).
    rig.testbed.add(pci_text(pci, "1017") + aux_text(pci, 2, true) +
                    net_text(pci, "ens2f0np0", 1004) + ib_text(ib) +
                    uverbs_text(pci, 2, "mlx5_2"));
    add_as_one_burst(rig, {"/sys" + pci, "/sys" + aux_devpath(pci, 2),
                           "/sys" + net_devpath(pci, "ens2f0np0"), ib.syspath(),
                           "/sys" + uverbs_devpath(pci, 2)});

    REQUIRE(rec.eventually([&] { return rec.size() >= 3; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_per_object(rec, 0,
                     {"added " + link + " org.rdmad1.Link", "added " + dev + " org.rdmad1.Device",
                      "added " + port + " org.rdmad1.Port"});
    // The device is announced before its port.
    {
        auto s = rec.summaries();
        auto d = std::find(s.begin(), s.end(), "added " + dev + " org.rdmad1.Device");
        auto p = std::find(s.begin(), s.end(), "added " + port + " org.rdmad1.Port");
        INFO(rec.dump());
        CHECK(d < p);
    }
    check_no_dangling_references(rec, 0, object_paths(before));
    for (auto& s : rec.signals()) {
        INFO(s.summary() << " " << s.props.dump());
        if (s.path == dev) {
            CHECK(s.props.value("Name", "") == "mlx5_2");
            CHECK(s.props.value("NodeType", "") == "CA");
            CHECK(s.props.value("PCIAddress", "") == "0000:3c:00.0");
            CHECK(s.props.value("VerbsDevice", "") == "/dev/infiniband/uverbs2");
            CHECK(s.props["Ports"] == json({port}));
            CHECK(s.props["Links"] == json({link}));
        } else if (s.path == port) {
            CHECK(s.props.value("State", "") == "ACTIVE");
            CHECK(s.props.value("Transport", "") == "RoCE");
            CHECK(s.props.value("Link", "") == link);
        } else if (s.path == link) {
            CHECK(s.props.value("Name", "") == "ens2f0np0");
            CHECK(s.props.value("RdmaCapable", "") == "yes");
            CHECK(s.props.value("RdmaDevice", "") == dev);
        }
    }
    json d = rig.client->describe();
    CHECK(d["Devices"].size() == before["Devices"].size() + 1);
    CHECK(rig.client->device_by_name("mlx5_2") == dev);
    const json* added = find_by(d["Devices"], "Name", "mlx5_2");
    REQUIRE(added != nullptr);
    // Its port has link-local GIDs only (ib_port_attrs(): no address on the netdev): RoCE v2
    // cannot be routed, and nothing else is wrong.
    CHECK(problem_codes(*added) == std::vector<std::string>{"no-routable-gid"});

    // Port goes down: one PropertiesChanged on the port with State only, and the device's
    // Problems (a port not ACTIVE is a problem) as the only change on the device, after the
    // port's: the fact the event brought first, what the doctor derives from it next.
    size_t mark = rec.size();
    rig.testbed.set_attr(ib.syspath(), "ports/1/state", "1: DOWN");
    rig.testbed.uevent(ib.syspath(), "change");
    REQUIRE(rec.eventually([&] { return rec.size() >= mark + 2; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_signals(rec, mark,
                  {"changed " + port + " org.rdmad1.Port State",
                   "changed " + dev + " org.rdmad1.Device ProblemDetails,Problems"});
    for (size_t i = mark; i < rec.size(); ++i)
        if (rec.signals()[i].path == port)
            CHECK(rec.signals()[i].props["State"] == "DOWN");
    d = rig.client->describe();
    added = find_by(d["Devices"], "Name", "mlx5_2");
    REQUIRE(added != nullptr);
    CHECK(!problem_codes(*added).empty());
    CHECK((*added)["Ports"][0]["State"] == "DOWN");

    // Hot-unplug of the whole function: remove events back to back, then the sysfs entries go
    // (udev sends "remove" before the directory disappears).
    mark = rec.size();
    const std::vector<std::string> gone = {"/sys" + uverbs_devpath(pci, 2), ib.syspath(),
                                           "/sys" + net_devpath(pci, "ens2f0np0"),
                                           "/sys" + aux_devpath(pci, 2), "/sys" + pci};
    for (auto& sp : gone)
        rig.testbed.uevent(sp, "remove");
    for (auto& sp : gone)
        rig.testbed.remove(sp);
    REQUIRE(rec.eventually([&] { return rec.size() >= mark + 3; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_signals(rec, mark,
                  {"removed " + port + " org.rdmad1.Port", "removed " + dev + " org.rdmad1.Device",
                   "removed " + link + " org.rdmad1.Link"});
    CHECK(rig.client->describe() == before);
    rig.stop_daemon();
}

TEST_CASE("start-up: the first objects are not announced before rdmad owns its name; "
          "GetManagedObjects has them all",
          "[hotplug]") {
    PrivateBus bus;
    Testbed testbed("constructed-mlx5-roce");
    // Subscribed before rdmad starts, and without sender='org.rdmad1': a client matching by
    // the name could not receive signals sent before the name had an owner anyway.
    Client early;
    SignalRecorder rec(early);
    DaemonProcess daemon; // returns at READY=1, which rdmad sends after taking the name
    rec.quiet(kSettle);
    INFO(rec.dump());
    // Only the Manager's State goes from "starting" to "running", after the name is taken.
    CHECK(std::none_of(rec.signals().begin(), rec.signals().end(),
                       [](const Signal& s) { return s.kind == "added"; }));

    Client client;
    const json described = client.describe();
    std::set<std::string> want;
    for (const auto& d : described["Devices"]) {
        want.insert(d["Path"].get<std::string>());
        for (const auto& p : d["Ports"])
            want.insert(p["Path"].get<std::string>());
    }
    for (const auto& l : described["Links"])
        want.insert(l["Path"].get<std::string>());
    // The fixture: mlx5_0 and mlx5_1 with one port each, lo and their two netdevs.
    CHECK(want.size() == 7);
    std::map<sdbus::ObjectPath, std::map<std::string, std::map<std::string, sdbus::Variant>>>
        objects;
    client.manager()
        .callMethod("GetManagedObjects")
        .onInterface("org.freedesktop.DBus.ObjectManager")
        .storeResultsTo(objects);
    std::set<std::string> got;
    for (const auto& [path, _] : objects)
        got.insert(path);
    CHECK(got == want);
}

TEST_CASE("hotplug: names holding a control character are matched as the kernel has them, "
          "shown with '?'; a CA's ports/0 is not a port",
          "[hotplug]") {
    // Linux allows any byte but '/' and NUL in a netdev name (dev_valid_name() only refuses
    // those, "." and ".." and whitespace) and in an RDMA device name. rdmad used to sanitize
    // names when it read them, so the GID table's netdev ("ens\x01f0" read from sysfs became
    // "ens?f0") never matched the netdev itself.
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string pci = "/devices/pci0000:3a/0000:3a:03.0/0000:3c:00.0";
    const std::string netdev = std::string("ens\x01") + "f0";
    Ib ib{pci, std::string("mlx5\x02") + "z", "0c42:a103:005b:30f0", netdev};
    const std::string dev = device_path_for_guid(ib.guid);
    const std::string link = link_path(1004);
    // A CA counts ports from 1 (kernel rdma_start_port()); a stray ports/0 is not one.
    std::string ib_with_port0 = ib_text(ib);
    ib_with_port0.insert(ib_with_port0.find("A: sys_image_guid="),
                         "A: ports/0/state=4: ACTIVE\\n\nA: ports/0/link_layer=Ethernet\\n\n");
    rig.testbed.add(pci_text(pci, "1017") + aux_text(pci, 2, true) + net_text(pci, netdev, 1004) +
                    ib_with_port0 + uverbs_text(pci, 2, ib.name));
    add_as_one_burst(rig,
                     {"/sys" + pci, "/sys" + aux_devpath(pci, 2), "/sys" + net_devpath(pci, netdev),
                      ib.syspath(), "/sys" + uverbs_devpath(pci, 2)});
    REQUIRE(rec.eventually([&] { return rec.size() >= 3; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_per_object(rec, 0,
                     {"added " + link + " org.rdmad1.Link", "added " + dev + " org.rdmad1.Device",
                      "added " + dev + "/port/1 org.rdmad1.Port"});
    json d = rig.client->describe();
    const json* device = find_by(d["Devices"], "Name", "mlx5?z");
    REQUIRE(device != nullptr);
    CHECK((*device)["Ports"].size() == 1);
    CHECK((*device)["Ports"][0]["Number"] == 1);
    CHECK((*device)["Ports"][0]["Link"] == link);
    CHECK((*device)["VerbsDevice"] == "/dev/infiniband/uverbs2");
    CHECK((*device)["Links"] == json({link}));
    const json* l = find_by(d["Links"], "Name", "ens?f0");
    REQUIRE(l != nullptr);
    CHECK((*l)["RdmaCapable"] == "yes");
    CHECK((*l)["RdmaDevice"] == dev);
    CHECK(rig.client->device_by_name(ib.name) == dev);
    CHECK(rig.client->link_by_name(netdev) == link);
    rig.stop_daemon();
}

TEST_CASE("hotplug: an isolated port change is handled at once, not at the end of the "
          "coalescing window; changes in quick succession share a pass",
          "[hotplug]") {
    // DESIGN.md: "An isolated event is handled at once; a burst is coalesced." The window is
    // 50 ms (CoalescerTiming::window_usec, daemon/sources/coalescer.hpp); a pass on this host
    // takes a few ms, so "at once" is shown as well under 40 ms, with room for a slow (sanitizer)
    // build.
    Rig rig("constructed-mlx5-roce", DaemonOptions{{"--verbose"}, {}});
    SignalRecorder rec(*rig.client);
    const std::string ib = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0";
    const std::string device = rig.device_path("mlx5_0");
    const std::string port = device + "/port/1";
    std::vector<double> ms;
    std::string state = "4: ACTIVE";
    for (int i = 0; i < 5; ++i) {
        CHECK(rec.quiet(100ms)); // isolated: nothing within the last window
        state = state == "4: ACTIVE" ? "1: DOWN" : "4: ACTIVE";
        rig.testbed.set_attr(ib, "ports/1/state", state + "\n");
        const size_t mark = rec.size();
        const auto t0 = std::chrono::steady_clock::now();
        rig.testbed.uevent(ib, "change");
        REQUIRE(rec.eventually([&] { return rec.changed_since(mark, port, "State"); }, kWait));
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                               t0)
                         .count());
        // The device's Problems (the port DOWN, or no longer) follow the port's State.
        REQUIRE(rec.eventually([&] { return rec.changed_since(mark, device, "Problems"); },
                               kWait));
    }
    std::sort(ms.begin(), ms.end());
    INFO("latencies (ms, sorted): " << json(ms).dump());
    CHECK(ms[2] < 40.0);
    // After start-up's pass (everything), each of them, the first too, re-read the one device
    // and derived it alone (the debug line of Daemon::publish()), not the whole host again.
    {
        const std::string log = rig.daemon->log();
        INFO(log);
        std::vector<std::string> passes;
        for (size_t at = log.find("pass: "); at != std::string::npos; at = log.find("pass: ", at + 1))
            passes.push_back(log.substr(at, log.find('\n', at) - at));
        REQUIRE(passes.size() == 6);
        CHECK(passes[0].find("everything derived again") != std::string::npos);
        for (size_t i = 1; i < passes.size(); ++i)
            CHECK(passes[i].find("pass: 1 RDMA devices and 0 netdevs re-read; ") == 0);
    }

    // Nine changes back to back (DOWN -> ACTIVE, ..., ACTIVE: the last differs from the bus):
    // the first gets its pass at once, the rest share one pass per 50 ms window, however
    // slowly this process manages to send them.
    CHECK(rec.quiet(100ms));
    const size_t mark = rec.size();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 9; ++i) {
        state = state == "4: ACTIVE" ? "1: DOWN" : "4: ACTIVE";
        rig.testbed.set_attr(ib, "ports/1/state", state + "\n");
        rig.testbed.uevent(ib, "change");
    }
    const double sending_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto state_signals = [&] {
        std::vector<std::string> states;
        for (size_t k = mark; k < rec.size(); ++k)
            if (rec.signals()[k].path == port && rec.signals()[k].props.contains("State"))
                states.push_back(rec.signals()[k].props["State"]);
        return states;
    };
    REQUIRE(rec.eventually(
        [&] {
            auto states = state_signals();
            return !states.empty() && states.back() == "ACTIVE"; // the 9th change
        },
        kWait));
    CHECK(rec.quiet(kSettle));
    INFO("sent in " << sending_ms << " ms\n" << rec.dump(mark));
    CHECK(state_signals().size() <= 2 + size_t(sending_ms / 50));
    CHECK(state_signals().size() < 9);
    CHECK(variant_json(rig.client->get(port, "org.rdmad1.Port", "State")) == "ACTIVE");
    rig.stop_daemon();
}

TEST_CASE("hotplug: after random change events (port state, rate, carrier, node "
          "description, GID netdevs) the bus equals a full rescan and a fresh start",
          "[hotplug]") {
    // Change events of known objects take the pass that re-derives only them; a GID that
    // names another netdev changes the netdev classification and takes the full pass. Both
    // must end where reading everything again ends.
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string pci = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.";
    const std::string ibs[2] = {pci + "0/infiniband/mlx5_0", pci + "1/infiniband/mlx5_1"};
    const std::string nets[2] = {pci + "0/net/ens1f0np0", pci + "1/net/ens1f1np1"};
    const char* netdevs[2] = {"ens1f0np0", "ens1f1np1"};
    std::mt19937 rng(20261201);
    INFO("seed 20261201");
    for (int step = 0; step < 60; ++step) {
        const int k = int(rng() % 2);
        switch (rng() % 5) {
        case 0:
            rig.testbed.set_attr(ibs[k], "ports/1/state", rng() % 2 ? "1: DOWN\n" : "4: ACTIVE\n");
            rig.testbed.set_attr(ibs[k], "ports/1/phys_state",
                                 rng() % 2 ? "3: Disabled\n" : "5: LinkUp\n");
            rig.testbed.uevent(ibs[k], "change");
            break;
        case 1:
            rig.testbed.set_attr(ibs[k], "ports/1/rate",
                                 rng() % 2 ? "25 Gb/sec (1X EDR)\n" : "100 Gb/sec (4X EDR)\n");
            rig.testbed.set_attr(ibs[k], "node_desc", "host1 step " + std::to_string(step) + "\n");
            rig.testbed.uevent(ibs[k], "change");
            break;
        case 2:
            rig.testbed.set_attr(nets[k], "operstate", rng() % 2 ? "down\n" : "up\n");
            rig.testbed.uevent(nets[k], "change");
            break;
        case 3: // GID 0 names the other function's netdev, or its own again
            rig.testbed.set_attr(ibs[k], "ports/1/gid_attrs/ndevs/0",
                                 std::string(netdevs[rng() % 2]) + "\n");
            rig.testbed.uevent(ibs[k], "change");
            break;
        default:
            std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 80));
            break;
        }
    }
    // End with isolated changes of each device (the pass that re-derives only it): the port
    // goes down, which is a problem of the device.
    for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 20 && !rec.quiet(kSettle); ++i) {
        }
        rig.testbed.set_attr(ibs[k], "ports/1/state", "1: DOWN\n");
        rig.testbed.set_attr(ibs[k], "ports/1/phys_state", "2: Polling\n");
        rig.testbed.uevent(ibs[k], "change");
    }
    // The last changes' pass comes at the end of a window: wait until rdmad is quiet.
    for (int i = 0; i < 20 && !rec.quiet(kSettle); ++i) {
    }
    CHECK(rec.quiet(kSettle));
    const json d = rig.client->describe();
    const size_t before_hup = rec.size();
    rig.daemon->signal(SIGHUP);
    CHECK(rec.quiet(800ms));
    check_signals(rec, before_hup, {});
    CHECK(rig.client->describe() == d);
    rig.client.reset();
    REQUIRE(rig.daemon->stop() == 0);
    rig.daemon = std::make_unique<DaemonProcess>();
    Client fresh;
    CHECK(fresh.describe() == d);
    REQUIRE(rig.daemon->stop() == 0);
}

TEST_CASE("hotplug: add, rename and remove a netdev (object path by ifindex)", "[hotplug]") {
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string root = rig.testbed.root();
    const json before = rig.described;
    const std::string path = link_path(1100);
    REQUIRE(path == "/org/rdmad1/link/_31100");

    rig.testbed.add(net_text("", "eth0", 1100));
    const std::string old_sp = "/sys" + net_devpath("", "eth0");
    rig.testbed.uevent(old_sp, "add");
    REQUIRE(rec.eventually([&] { return rec.size() >= 1; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_signals(rec, 0, {"added " + path + " org.rdmad1.Link"});
    CHECK(rec.signals()[0].props.value("Name", "") == "eth0");
    CHECK(rec.signals()[0].props.value("Index", 0) == 1100);
    CHECK(rec.signals()[0].props.value("RdmaCapable", "") == "no");
    CHECK(rig.client->link_by_name("eth0") == path);

    // udev renames it: same ifindex, new syspath, `move` with DEVPATH_OLD.
    size_t mark = rec.size();
    const std::string new_sp = "/sys" + net_devpath("", "enp9s0");
    rename_device(root, old_sp, new_sp, "net");
    send_uevent(root, new_sp, "net", "move",
                {{"DEVPATH_OLD", old_sp.substr(4)}, {"INTERFACE", "enp9s0"}, {"IFINDEX", "1100"}});
    REQUIRE(rec.eventually([&] { return rec.size() >= mark + 1; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_signals(rec, mark, {"changed " + path + " org.rdmad1.Link Name"});
    CHECK(rec.signals()[mark].props["Name"] == "enp9s0");
    CHECK(rig.client->link_by_name("enp9s0") == path);
    json d = rig.client->describe();
    CHECK(find_by(d["Links"], "Name", "eth0") == nullptr);
    REQUIRE(find_by(d["Links"], "Name", "enp9s0") != nullptr);
    CHECK((*find_by(d["Links"], "Name", "enp9s0"))["Path"] == path);

    mark = rec.size();
    rig.testbed.uevent(new_sp, "remove");
    rig.testbed.remove(new_sp);
    REQUIRE(rec.eventually([&] { return rec.size() >= mark + 1; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_signals(rec, mark, {"removed " + path + " org.rdmad1.Link"});
    CHECK(rig.client->describe() == before);
    rig.stop_daemon();
}

TEST_CASE("hotplug: renaming an RDMA device keeps its object path and changes Name", "[hotplug]") {
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string root = rig.testbed.root();
    const json before = rig.described;
    const std::string path = rig.device_path("mlx5_0");
    const std::string pci = "/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0";
    const std::string old_sp = "/sys" + pci + "/infiniband/mlx5_0";

    // The kernel renames in place; the uverbs device's ibdev (computed from the device) names
    // the new name, without an event of its own.
    Ib ib{pci, "rocep59s0f0", "0c42:a103:005b:30e0", "ens1f0np0"};
    rename_device(root, old_sp, ib.syspath(), "infiniband");
    rig.testbed.set_attr("/sys" + pci + "/infiniband_verbs/uverbs0", "ibdev", "rocep59s0f0\n");
    send_uevent(root, ib.syspath(), "infiniband", "move",
                {{"DEVPATH_OLD", old_sp.substr(4)}, {"NAME", "rocep59s0f0"}});

    REQUIRE(rec.eventually([&] { return rec.size() >= 1; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_signals(rec, 0, {"changed " + path + " org.rdmad1.Device Name"});
    CHECK(rec.signals()[0].props["Name"] == "rocep59s0f0");
    CHECK(rig.client->device_by_name("rocep59s0f0") == path);
    json d = rig.client->describe();
    json want = before;
    for (auto& dev : want["Devices"])
        if (dev["Name"] == "mlx5_0")
            dev["Name"] = "rocep59s0f0";
    std::sort(want["Devices"].begin(), want["Devices"].end(),
              [](const json& a, const json& b) { return a["Name"] < b["Name"]; });
    json got = d;
    std::sort(got["Devices"].begin(), got["Devices"].end(),
              [](const json& a, const json& b) { return a["Name"] < b["Name"]; });
    CHECK(got == want);
    rig.stop_daemon();
}

namespace {

/// Stops rig's daemon, starts a fresh one on the same testbed, and returns its Describe().
json fresh_describe(Rig& rig) {
    rig.client.reset();
    REQUIRE(rig.daemon->stop() == 0);
    rig.daemon = std::make_unique<DaemonProcess>();
    Client fresh;
    return fresh.describe();
}

/// SIGHUP (a full rescan) changes nothing on the bus: no signal, and Describe() gives `d`
/// (the one before).
void check_rescan(Rig& rig, SignalRecorder& rec, const json& d) {
    const size_t before_hup = rec.size();
    rig.daemon->signal(SIGHUP);
    CHECK(rec.quiet(800ms));
    check_signals(rec, before_hup, {});
    CHECK(rig.client->describe() == d);
}

/// check_rescan(), and a fresh rdmad on the same testbed gives `d` too.
void check_rescan_and_fresh(Rig& rig, SignalRecorder& rec, const json& d) {
    check_rescan(rig, rec, d);
    CHECK(fresh_describe(rig) == d);
}

} // namespace

TEST_CASE("hotplug: a RoCE netdev renamed: its port keeps its Link, the GIDs name the new "
          "name, as a fresh start has them",
          "[hotplug]") {
    // The kernel prints a GID's netdev by its current name (gid_attrs/ndevs) and sends the RDMA
    // device nothing on a netdev rename: only the netdev's "move".
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string root = rig.testbed.root();
    const std::string pci = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0";
    const std::string ib = pci + "/infiniband/mlx5_0";
    const std::string dev = rig.device_path("mlx5_0");
    const std::string old_sp = pci + "/net/ens1f0np0", new_sp = pci + "/net/enp59s0f0";
    rename_device(root, old_sp, new_sp, "net");
    for (int i = 0; i < 4; ++i) // the fixture's GIDs 0-3 are on the netdev (its notes)
        rig.testbed.set_attr(ib, "ports/1/gid_attrs/ndevs/" + std::to_string(i), "enp59s0f0\n");
    send_uevent(
        root, new_sp, "net", "move",
        {{"DEVPATH_OLD", old_sp.substr(4)}, {"INTERFACE", "enp59s0f0"}, {"IFINDEX", "1002"}});
    REQUIRE(rec.eventually([&] { return rec.size() >= 1; }, kWait));
    // The netdev and the port first; the doctor's DCB finding follows with the new name.
    for (int i = 0; i < 20 && !rec.quiet(kSettle); ++i) {
    }
    CHECK(rec.quiet(kSettle));

    const json d = rig.client->describe();
    const json* port = find_by(find_by(d["Devices"], "Name", "mlx5_0")->at("Ports"), "Number", 1);
    REQUIRE(port != nullptr);
    CHECK((*port)["Link"] == link_path(1002));
    REQUIRE((*port)["GIDs"].size() == 4);
    for (const auto& g : (*port)["GIDs"])
        CHECK(g["Netdev"] == "enp59s0f0");
    CHECK((*port)["RecommendedGID"]["Netdev"] == "enp59s0f0");
    const json* link = find_by(d["Links"], "Name", "enp59s0f0");
    REQUIRE(link != nullptr);
    CHECK((*link)["RdmaDevice"] == dev);
    CHECK(find_by(d["Links"], "Name", "ens1f0np0") == nullptr);
    CHECK(fresh_describe(rig) == d);
}

TEST_CASE("hotplug: two RDMA devices swapping names in one burst keep their objects and "
          "netdevs, as a fresh start has them",
          "[hotplug]") {
    // mlx5_0 -> mlx5_tmp, mlx5_1 -> mlx5_0, mlx5_tmp -> mlx5_1, each a "move"; the uverbs
    // devices' ibdev follow (computed by the kernel, no event).
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string root = rig.testbed.root();
    const std::string pci[2] = {"/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0",
                                "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.1"};
    const std::string path0 = rig.device_path("mlx5_0"), path1 = rig.device_path("mlx5_1");
    auto move = [&](int k, const std::string& from, const std::string& to) {
        const std::string old_sp = pci[k] + "/infiniband/" + from;
        const std::string new_sp = pci[k] + "/infiniband/" + to;
        rename_device(root, old_sp, new_sp, "infiniband");
        rig.testbed.set_attr(pci[k] + "/infiniband_verbs/uverbs" + std::to_string(k), "ibdev",
                             to + "\n");
        send_uevent(root, new_sp, "infiniband", "move",
                    {{"DEVPATH_OLD", old_sp.substr(4)}, {"NAME", to}});
    };
    move(0, "mlx5_0", "mlx5_tmp");
    move(1, "mlx5_1", "mlx5_0");
    move(0, "mlx5_tmp", "mlx5_1");
    REQUIRE(rec.eventually([&] { return rec.size() >= 2; }, kWait));
    for (int i = 0; i < 20 && !rec.quiet(kSettle); ++i) {
    }
    CHECK(rec.quiet(kSettle));

    const json d = rig.client->describe();
    // The function 0000:3b:00.0 keeps its object (node GUID) under its new name, and its
    // netdev names that object.
    CHECK(find_by(d["Devices"], "Name", "mlx5_1")->at("Path") == path0);
    CHECK(find_by(d["Devices"], "Name", "mlx5_0")->at("Path") == path1);
    CHECK(rig.client->device_by_name("mlx5_1") == path0);
    CHECK(rig.client->device_by_name("mlx5_0") == path1);
    CHECK(find_by(d["Links"], "Name", "ens1f0np0")->at("RdmaDevice") == path0);
    CHECK(find_by(d["Links"], "Name", "ens1f1np1")->at("RdmaDevice") == path1);
    check_rescan_and_fresh(rig, rec, d);
}

TEST_CASE("hotplug: after random renames of netdevs and RDMA devices among change events, "
          "the bus equals a full rescan and a fresh start",
          "[hotplug]") {
    // Names taken, swapped through a free one and given back, as udev and the kernel do it:
    // the GIDs name their netdev by its current name, the uverbs device its RDMA device's.
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string root = rig.testbed.root();
    const std::string pci[2] = {"/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0",
                                "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.1"};
    std::string ib_name[2] = {"mlx5_0", "mlx5_1"};
    std::string net_name[2] = {"ens1f0np0", "ens1f1np1"};
    const std::vector<std::string> ib_pool = {"mlx5_0", "mlx5_1", "mlx5_2", "rocep59s0f0"};
    const std::vector<std::string> net_pool = {"ens1f0np0", "ens1f1np1", "eth7", "enp59s0f0"};
    int gid_netdev[2][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}}; // which netdev each GID 0-3 is on
    auto ib = [&](int k) { return pci[k] + "/infiniband/" + ib_name[k]; };
    auto net = [&](int k) { return pci[k] + "/net/" + net_name[k]; };
    auto free_name = [&](const std::vector<std::string>& pool, const std::string* taken,
                         uint32_t r) {
        std::vector<std::string> free;
        for (const auto& n : pool)
            if (n != taken[0] && n != taken[1])
                free.push_back(n);
        return free[r % free.size()];
    };
    std::mt19937 rng(20261202);
    INFO("seed 20261202");
    for (int step = 0; step < 60; ++step) {
        const int k = int(rng() % 2);
        switch (rng() % 6) {
        case 0: {
            const std::string to = free_name(net_pool, net_name, rng());
            const std::string old_sp = net(k);
            rename_device(root, old_sp, pci[k] + "/net/" + to, "net");
            net_name[k] = to;
            for (int j = 0; j < 2; ++j)
                for (int i = 0; i < 4; ++i)
                    if (gid_netdev[j][i] == k)
                        rig.testbed.set_attr(ib(j), "ports/1/gid_attrs/ndevs/" + std::to_string(i),
                                             to + "\n");
            send_uevent(root, net(k), "net", "move",
                        {{"DEVPATH_OLD", old_sp.substr(4)}, {"INTERFACE", to}});
            break;
        }
        case 1: {
            const std::string to = free_name(ib_pool, ib_name, rng());
            rename_ib(rig, pci[k], k, ib_name[k], to);
            ib_name[k] = to;
            break;
        }
        case 2: { // GID 0 moves to the other function's netdev, or back
            const int j = int(rng() % 2);
            gid_netdev[k][0] = j;
            rig.testbed.set_attr(ib(k), "ports/1/gid_attrs/ndevs/0", net_name[j] + "\n");
            rig.testbed.uevent(ib(k), "change");
            break;
        }
        case 3:
            rig.testbed.set_attr(ib(k), "ports/1/state", rng() % 2 ? "1: DOWN\n" : "4: ACTIVE\n");
            rig.testbed.uevent(ib(k), "change");
            break;
        case 4:
            rig.testbed.set_attr(net(k), "operstate", rng() % 2 ? "down\n" : "up\n");
            rig.testbed.uevent(net(k), "change");
            break;
        default:
            std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 120));
            break;
        }
    }
    for (int i = 0; i < 20 && !rec.quiet(kSettle); ++i) {
    }
    CHECK(rec.quiet(kSettle));
    const json d = rig.client->describe();
    for (int k = 0; k < 2; ++k) {
        INFO(d.dump());
        CHECK(find_by(d["Devices"], "Name", ib_name[k]) != nullptr);
        CHECK(find_by(d["Links"], "Name", net_name[k]) != nullptr);
    }
    check_rescan_and_fresh(rig, rec, d);
}

TEST_CASE("hotplug: two RoCE netdevs swapping names have their DCB PFC read again", "[hotplug]") {
    // The kernel's DCB follows the device, and its requests name the netdev: after a swap,
    // what rdmad read under a name may belong to the other device. The emulated DCB
    // (tests/integration/fake_dcbnl.c) keeps its state by name, so the PFC shown follows the
    // name here; the GETs in its log show the reads.
    PrivateBus bus;
    Testbed testbed("constructed-mlx5-roce");
    TempDir dir{"rdmad-it-dcb-rename"};
    const std::string log = (dir.path() / "dcb.log").string();
    for (const auto* sub : {"etc", "state"})
        fs::create_directories(dir.path() / sub);
    DaemonOptions o;
    o.args = {"--legacy-mlx4-conf=" + (dir.path() / "no-mlx4.conf").string(),
              "--modprobe-dir=" + (dir.path() / "state").string()};
    DaemonProcess daemon(
        std::move(o), {},
        {{"CONFIGURATION_DIRECTORY", (dir.path() / "etc").string()},
         {"STATE_DIRECTORY", (dir.path() / "state").string()},
         {"LD_PRELOAD", preload_ahead(env_or_fail("FAKE_DCBNL"))},
         {"FAKE_DCBNL_NETDEVS", "ens1f0np0,ens1f1np1"},
         {"FAKE_DCBNL_PFC", "ens1f0np0:0x08,ens1f1np1:0x20"},
         {"FAKE_DCBNL_LOG", log}});
    Client client;
    SignalRecorder rec(client);
    auto pfc_of = [&](const std::string& device) {
        const json d = client.describe();
        return find_by(d["Devices"], "Name", device)->at("Ports")[0]["PFCNoDrop"];
    };
    REQUIRE(pfc_of("mlx5_0") == json({3}));
    REQUIRE(pfc_of("mlx5_1") == json({5}));
    const size_t logged = read_file(log).size();

    const std::string root = testbed.root();
    const std::string pci[2] = {"/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0",
                                "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.1"};
    auto rename = [&](int k, const std::string& from, const std::string& to) {
        const std::string old_sp = pci[k] + "/net/" + from, new_sp = pci[k] + "/net/" + to;
        rename_device(root, old_sp, new_sp, "net");
        for (int i = 0; i < 4; ++i)
            testbed.set_attr(pci[k] + "/infiniband/mlx5_" + std::to_string(k),
                             "ports/1/gid_attrs/ndevs/" + std::to_string(i), to + "\n");
        send_uevent(root, new_sp, "net", "move",
                    {{"DEVPATH_OLD", old_sp.substr(4)}, {"INTERFACE", to}});
    };
    rename(0, "ens1f0np0", "eth7");
    rename(1, "ens1f1np1", "ens1f0np0");
    rename(0, "eth7", "ens1f1np1");
    REQUIRE(rec.eventually([&] { return rec.size() >= 1; }, kWait));
    for (int i = 0; i < 20 && !rec.quiet(kSettle); ++i) {
    }
    const std::string after = read_file(log).substr(logged);
    INFO("DCB requests after the swap:\n" << after);
    CHECK(after.find("GET ens1f0np0\n") != std::string::npos);
    CHECK(after.find("GET ens1f1np1\n") != std::string::npos);
    // Each port shows what DCB answers for its netdev's name now: at the latest by the pass
    // after the reads (under load the signals of the renames may go quiet before it runs; a
    // state that stays wrong still fails after kWait).
    CHECK(rec.eventually(
        [&] { return pfc_of("mlx5_0") == json({5}) && pfc_of("mlx5_1") == json({3}); }, kWait));
    CHECK(pfc_of("mlx5_0") == json({5}));
    CHECK(pfc_of("mlx5_1") == json({3}));
    CHECK(daemon.stop() == 0);
}

TEST_CASE("hotplug: binding the auxiliary device alone does not make a link RDMA-capable",
          "[hotplug]") {
    Rig rig("constructed-mlx5-aux-unbound");
    SignalRecorder rec(*rig.client);
    const json before = rig.described;
    const std::string pci = "/devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0";
    const std::string aux = "/sys" + pci + "/mlx5_core.rdma.0";
    const std::string link = rig.link_path("ens2f0np0");
    REQUIRE(rig.link("ens2f0np0")["RdmaCapable"] == "module-not-loaded");
    REQUIRE(rig.link("ens2f0np0")["Hint"] == "load mlx5_ib");

    // mlx5_ib binds the auxiliary device: `bind`, but no RDMA device yet.
    rig.testbed.set_link(aux, "driver", "../../../../../bus/auxiliary/drivers/mlx5_ib.rdma");
    rig.testbed.uevent(aux, "bind");
    CHECK(rec.quiet(kSettle));
    CHECK(rig.client->describe() == before);
    CHECK(variant_json(rig.client->get(link, "org.rdmad1.Link", "RdmaCapable")) ==
          "module-not-loaded");

    // Then the RDMA device and its uverbs device register.
    Ib ib{pci, "mlx5_0", "0c42:a103:0066:1000", "ens2f0np0"};
    const std::string dev = device_path_for_guid(ib.guid);
    rig.testbed.add(ib_text(ib) + uverbs_text(pci, 0, "mlx5_0"));
    rig.testbed.uevent(ib.syspath(), "add");
    rig.testbed.uevent("/sys" + uverbs_devpath(pci, 0), "add");
    REQUIRE(rec.eventually([&] { return rec.size() >= 3; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_per_object(rec, 0,
                     {"changed " + link + " org.rdmad1.Link Hint,RdmaCapable,RdmaDevice",
                      "added " + dev + " org.rdmad1.Device",
                      "added " + dev + "/port/1 org.rdmad1.Port"});
    check_no_dangling_references(rec, 0, object_paths(before));
    for (auto& s : rec.signals())
        if (s.path == link) {
            CHECK(s.props["RdmaCapable"] == "yes");
            CHECK(s.props["RdmaDevice"] == dev);
            CHECK(s.props["Hint"] == "");
        }
    rig.stop_daemon();
}

TEST_CASE("hotplug: an add racing the first scan gives exactly one object", "[hotplug]") {
    PrivateBus bus;
    Testbed testbed("constructed-mlx5-roce");
    const std::string root = testbed.root();
    const std::string pci = "/devices/pci0000:3a/0000:3a:03.0/0000:3c:00.0";
    Ib ib{pci, "mlx5_2", "0c42:a103:005b:30f0", "ens2f0np0"};
    const std::string dev = device_path_for_guid(ib.guid);
    testbed.add(pci_text(pci, "1017"));
    testbed.add(ib_text(ib));
    testbed.add(uverbs_text(pci, 2, "mlx5_2"));

    // Send `add` as soon as rdmad's monitor exists, i.e. while it enumerates.
    bool sent = false;
    auto race = [&] {
        if (!sent && uevent_listeners(root) > 0) {
            send_uevent(root, ib.syspath(), "infiniband", "add", {{"NAME", "mlx5_2"}});
            sent = true;
        }
    };
    DaemonProcess daemon({}, race);
    INFO("the add was sent before READY=1: " << sent);
    REQUIRE(sent);
    Client client;
    SignalRecorder rec(client);
    rec.quiet(kSettle); // the event's pass, if it comes after READY
    const size_t added = std::count_if(rec.signals().begin(), rec.signals().end(), [&](const Signal& s) {
        return s.kind == "added" && s.path == dev;
    });
    INFO(rec.dump());
    CHECK(added <= 1);
    CHECK(std::count_if(rec.signals().begin(), rec.signals().end(),
                        [](const Signal& s) { return s.kind != "changed" && s.path.find("/port/") == std::string::npos; }) <= 1);
    json d = client.describe();
    size_t n = 0;
    for (auto& x : d["Devices"])
        n += x["Name"] == "mlx5_2";
    CHECK(n == 1);
    CHECK(d["Devices"].size() == 3);
    auto listed = client.list_devices();
    CHECK(listed.size() == 3);
    CHECK(client.device_by_name("mlx5_2") == dev);
    REQUIRE(daemon.stop() == 0);
}

TEST_CASE("hotplug: a device incomplete at start-up is read again by the retries without an "
          "event, exported as it is after them, and a SIGHUP leaves it on the bus",
          "[hotplug]") {
    // A full scan (start-up, SIGHUP, a resync) read it as an "add" is read, but nothing read
    // it again: it stayed hidden until an unrelated uevent's pass retried it. Once exported
    // as it is, a SIGHUP hid it again for the retries' time (removed, then added back).
    Rig rig("constructed-mlx5-roce");
    const std::string pci = "/devices/pci0000:3a/0000:3a:03.0/0000:3c:00.0";
    Ib ib{pci, "mlx5_2", "0c42:a103:005b:30f0", "ens2f0np0"};
    ib.with_ports = false; // an RDMA device without ports: looks incomplete
    rig.testbed.add(pci_text(pci, "1017"));
    rig.testbed.add(ib_text(ib));
    rig.client.reset();
    REQUIRE(rig.daemon->stop() == 0);
    const auto exported = [](Client& c) -> std::optional<json> {
        const json d = c.describe();
        const json* x = find_by(d["Devices"], "Name", "mlx5_2");
        return x ? std::optional<json>(*x) : std::nullopt;
    };
    rig.daemon = std::make_unique<DaemonProcess>();
    rig.client = std::make_unique<Client>();
    SignalRecorder rec(*rig.client);
    // 6 reads 100 ms apart (test_hotplug.cpp's header), then exported with what is there.
    REQUIRE(rec.eventually([&] { return exported(*rig.client).has_value(); }, 3s));
    // Its retries are over: nothing takes it off the bus again. On a loaded machine (the ASan
    // suite, two tests at a time) another signal came within 700 ms once: wait until the
    // passes are over, and require that none of them removed an object.
    const size_t at_export = rec.size();
    bool settled = false;
    for (int i = 0; i < 20 && !settled; ++i)
        settled = rec.quiet(700ms);
    REQUIRE(settled);
    {
        INFO(rec.dump(at_export));
        for (size_t i = at_export; i < rec.size(); ++i)
            CHECK(rec.signals()[i].kind != "removed");
    }
    const json d = rig.client->describe();
    const auto dev = exported(*rig.client);
    REQUIRE(dev);
    CHECK((*dev)["NodeType"] == "CA");
    CHECK((*dev)["NodeGUID"] == ib.guid);
    CHECK((*dev)["Ports"].empty());
    check_rescan(rig, rec, d);
    // A fresh rdmad ends with the same objects once its own retries are done.
    fresh_describe(rig);
    Client fresh;
    SignalRecorder fresh_rec(fresh);
    CHECK(fresh_rec.eventually([&] { return fresh.describe() == d; }, 3s));
    REQUIRE(rig.daemon->stop() == 0);
}

TEST_CASE("hotplug: an incomplete device is completed by the retry, without another event",
          "[hotplug]") {
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const json before = rig.described;
    const std::string pci = "/devices/pci0000:3a/0000:3a:03.0/0000:3c:00.0";
    Ib ib{pci, "mlx5_2", "0c42:a103:005b:30f0", "ens2f0np0"};
    ib.with_node_type = false;
    ib.with_ports = false;
    const std::string dev = device_path_for_guid(ib.guid);
    rig.testbed.add(pci_text(pci, "1017"));
    rig.testbed.add(ib_text(ib));
    rig.testbed.uevent(ib.syspath(), "add");
    std::this_thread::sleep_for(150ms); // the driver is slow to create the attributes
    // Ports first, node_type last: the device is complete only when everything is there.
    Ib full = ib;
    full.with_node_type = full.with_ports = true;
    const std::string ports = ib_port_attrs(full);
    size_t pos = 0;
    while (pos < ports.size()) {
        auto nl = ports.find('\n', pos);
        std::string line = ports.substr(pos + 3, nl - pos - 3); // "A: name=value\n"
        pos = nl + 1;
        auto eq = line.find('=');
        std::string value = line.substr(eq + 1);
        value = value.substr(0, value.size() - 2) + "\n"; // the literal "\n"
        rig.testbed.set_attr(ib.syspath(), line.substr(0, eq), value);
    }
    rig.testbed.set_attr(ib.syspath(), "node_type", "1: CA\n");

    REQUIRE(rec.eventually(
        [&] {
            json d = rig.client->describe();
            const json* x = find_by(d["Devices"], "Name", "mlx5_2");
            return rec.size() >= 2 && x && (*x)["NodeType"] == "CA" && (*x)["Ports"].size() == 1;
        },
        3s));
    CHECK(rec.quiet(700ms)); // past the 5 retries of 100 ms
    json d = rig.client->describe();
    const json* x = find_by(d["Devices"], "Name", "mlx5_2");
    REQUIRE(x != nullptr);
    CHECK((*x)["Ports"][0]["State"] == "ACTIVE");
    CHECK((*x)["Ports"][0]["Transport"] == "RoCE");
    // "new objects appear with InterfacesAdded once fully built": the device is announced
    // complete, with its port, and nothing changes afterwards.
    check_signals(rec, 0, {"added " + dev + " org.rdmad1.Device", "added " + dev + "/port/1 org.rdmad1.Port"});
    if (!rec.signals().empty() && rec.signals()[0].path == dev) {
        CHECK(rec.signals()[0].props.value("NodeType", "") == "CA");
        CHECK(rec.signals()[0].props["Ports"] == json({dev + "/port/1"}));
    }
    rig.stop_daemon();
}

namespace {

// SR-IOV on constructed-sriov: PF 0000:5e:00.0 (mlx5_0, ens4f0np0).
const std::string kSriovRoot = "/devices/pci0000:5d/0000:5d:00.0";
const std::string kPf = kSriovRoot + "/0000:5e:00.0";
std::string vf_slot(int k) { // VFs from 0000:5e:00.2: devfn 2 + k
    char b[32];
    std::snprintf(b, sizeof b, "0000:5e:%02x.%d", (2 + k) / 8, (2 + k) % 8);
    return b;
}
std::string vf_pci(int k) { return kSriovRoot + "/" + vf_slot(k); }
std::string vf_guid(int k) {
    char b[32];
    std::snprintf(b, sizeof b, "0c42:a103:007d:52%02x", 0x10 + k);
    return b;
}

struct SriovStep {
    int vf;
    int step; // 0 pci, 1 net add (ethN), 2 net move, 3 aux, 4 ib, 5 uverbs
};

/// What a GLib client following rdmad's ObjectManager holds: a GDBusObjectManagerClient on
/// its own connection to the rig's bus (its signals wait in the main context until pump()).
class GioCache {
  public:
    /// path -> interface -> property -> value as g_variant_print() prints it (org.rdmad1.*).
    using Objects = std::map<std::string, std::map<std::string, std::map<std::string, std::string>>>;

    explicit GioCache(const std::string& address) {
        GError* error = nullptr;
        conn_ = g_dbus_connection_new_for_address_sync(
            address.c_str(),
            GDBusConnectionFlags(G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                 G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION),
            nullptr, nullptr, &error);
        INFO((error ? error->message : ""));
        REQUIRE(conn_);
        manager_ = g_dbus_object_manager_client_new_sync(
            conn_, G_DBUS_OBJECT_MANAGER_CLIENT_FLAGS_DO_NOT_AUTO_START, "org.rdmad1",
            "/org/rdmad1", nullptr, nullptr, nullptr, nullptr, &error);
        INFO((error ? error->message : ""));
        REQUIRE(manager_);
    }
    ~GioCache() {
        g_object_unref(manager_);
        g_object_unref(conn_);
    }
    GioCache(const GioCache&) = delete;
    GioCache& operator=(const GioCache&) = delete;

    void pump() {
        while (g_main_context_iteration(nullptr, FALSE)) {
        }
    }

    Objects cached() {
        Objects out;
        GList* objects = g_dbus_object_manager_get_objects(manager_);
        for (GList* o = objects; o; o = o->next) {
            const std::string path = g_dbus_object_get_object_path(G_DBUS_OBJECT(o->data));
            GList* ifaces = g_dbus_object_get_interfaces(G_DBUS_OBJECT(o->data));
            for (GList* i = ifaces; i; i = i->next) {
                GDBusProxy* proxy = G_DBUS_PROXY(i->data);
                const std::string name = g_dbus_proxy_get_interface_name(proxy);
                if (name.rfind("org.rdmad1.", 0) != 0)
                    continue;
                auto& props = out[path][name];
                gchar** names = g_dbus_proxy_get_cached_property_names(proxy);
                for (gchar** n = names; n && *n; ++n) {
                    GVariant* v = g_dbus_proxy_get_cached_property(proxy, *n);
                    gchar* text = g_variant_print(v, TRUE);
                    props[*n] = text;
                    g_free(text);
                    g_variant_unref(v);
                }
                g_strfreev(names);
            }
            g_list_free_full(ifaces, g_object_unref);
        }
        g_list_free_full(objects, g_object_unref);
        return out;
    }

    /// GetManagedObjects() now, in the same form.
    Objects managed() {
        Objects out;
        GError* error = nullptr;
        GVariant* reply = g_dbus_connection_call_sync(
            conn_, "org.rdmad1", "/org/rdmad1", "org.freedesktop.DBus.ObjectManager",
            "GetManagedObjects", nullptr, G_VARIANT_TYPE("(a{oa{sa{sv}}})"),
            G_DBUS_CALL_FLAGS_NONE, 10000, nullptr, &error);
        INFO((error ? error->message : ""));
        REQUIRE(reply);
        GVariantIter* objects = nullptr;
        g_variant_get(reply, "(a{oa{sa{sv}}})", &objects);
        const gchar* path = nullptr;
        GVariantIter* ifaces = nullptr;
        while (g_variant_iter_next(objects, "{&oa{sa{sv}}}", &path, &ifaces)) {
            const gchar* iface = nullptr;
            GVariantIter* props = nullptr;
            while (g_variant_iter_next(ifaces, "{&sa{sv}}", &iface, &props)) {
                if (std::string(iface).rfind("org.rdmad1.", 0) == 0) {
                    auto& m = out[path][iface];
                    const gchar* name = nullptr;
                    GVariant* value = nullptr;
                    while (g_variant_iter_next(props, "{&sv}", &name, &value)) {
                        gchar* text = g_variant_print(value, TRUE);
                        m[name] = text;
                        g_free(text);
                        g_variant_unref(value);
                    }
                }
                g_variant_iter_free(props);
            }
            g_variant_iter_free(ifaces);
        }
        g_variant_iter_free(objects);
        g_variant_unref(reply);
        return out;
    }

  private:
    GDBusConnection* conn_ = nullptr;
    GDBusObjectManager* manager_ = nullptr;
};

/// Wait until `cache` equals GetManagedObjects(), pumping its signals.
void check_cache_settles(GioCache& cache) {
    GioCache::Objects managed, cached;
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    do {
        cache.pump();
        managed = cache.managed();
        cached = cache.cached();
        if (managed == cached)
            break;
        std::this_thread::sleep_for(50ms);
    } while (std::chrono::steady_clock::now() < deadline);
    CHECK(managed.size() > 3);
    CHECK(cached == managed);
}

void run_sriov(uint32_t seed, int n = 8, GioCache* (*follow)(Rig&) = nullptr) {
    INFO("seed " << seed);
    Rig rig("constructed-sriov");
    SignalRecorder rec(*rig.client);
    std::unique_ptr<GioCache> cache(follow ? follow(rig) : nullptr);
    const std::string root = rig.testbed.root();
    const std::string pf_dev = rig.device_path("mlx5_0");

    // ---- 2 -> 0 VFs -----------------------------------------------------------------------
    std::vector<std::string> old_vf_objects;
    for (auto name : {"mlx5_1", "mlx5_2"}) {
        old_vf_objects.push_back("removed " + rig.device_path(name) + "/port/1 org.rdmad1.Port");
        old_vf_objects.push_back("removed " + rig.device_path(name) + " org.rdmad1.Device");
    }
    for (auto name : {"ens4f0v0", "ens4f0v1"})
        old_vf_objects.push_back("removed " + rig.link_path(name) + " org.rdmad1.Link");
    // The PF's count (sriov_numvfs, read again when a VF goes): once, 2 -> 0.
    old_vf_objects.push_back("changed " + pf_dev + " org.rdmad1.Device SRIOVNumVFs");
    rig.testbed.set_attr("/sys" + kPf, "sriov_numvfs", "0\n");
    std::vector<std::string> gone;
    for (int k = 0; k < 2; ++k) {
        const std::string pci = "/sys" + vf_pci(k);
        for (auto& sp : {pci + "/infiniband_verbs/uverbs" + std::to_string(k + 1),
                         pci + "/infiniband/mlx5_" + std::to_string(k + 1),
                         pci + "/mlx5_core.rdma." + std::to_string(k + 1),
                         pci + "/net/ens4f0v" + std::to_string(k), pci})
            gone.push_back(sp);
    }
    for (auto& sp : gone)
        rig.testbed.uevent(sp, "remove");
    for (auto& sp : gone)
        rig.testbed.remove(sp);
    for (int k = 0; k < 2; ++k)
        fs::remove(root + "/sys" + kPf + "/virtfn" + std::to_string(k));
    REQUIRE(rec.eventually([&] { return rec.size() >= old_vf_objects.size(); }, kWait));
    CHECK(rec.quiet(kSettle));
    check_per_object(rec, 0, old_vf_objects);
    {
        json d = rig.client->describe();
        CHECK(d["Devices"].size() == 1);
        CHECK(d["Links"].size() == 2);
    }

    // ---- 0 -> n VFs, interleaved -----------------------------------------------------------
    const size_t mark = rec.size();
    rig.testbed.set_attr("/sys" + kPf, "sriov_numvfs", std::to_string(n) + "\n");
    std::vector<int> next(n, 0);
    std::vector<std::string> netname(n);
    std::mt19937 rng(seed);
    std::vector<std::string> order;
    for (;;) {
        std::vector<int> ready;
        for (int k = 0; k < n; ++k)
            if (next[k] < 6)
                ready.push_back(k);
        if (ready.empty())
            break;
        const int k = ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng)];
        const int step = next[k]++;
        const std::string pci = vf_pci(k);
        const std::string eth = "eth" + std::to_string(10 + k);
        const std::string final_name = "ens4f0v" + std::to_string(k);
        const int ifindex = 1010 + k;
        Ib ib{pci, "mlx5_" + std::to_string(k + 1), vf_guid(k), "", "MT4120"};
        order.push_back(std::to_string(k) + ":" + std::to_string(step));
        switch (step) {
        case 0:
            rig.testbed.add(pci_text(pci, "1018", slot_of(kPf)));
            rig.testbed.set_link("/sys" + kPf, "virtfn" + std::to_string(k), "../" + vf_slot(k));
            rig.testbed.uevent("/sys" + pci, "add");
            break;
        case 1:
            netname[k] = eth;
            rig.testbed.add(net_text(pci, eth, ifindex));
            rig.testbed.uevent("/sys" + net_devpath(pci, eth), "add");
            break;
        case 2: {
            netname[k] = final_name;
            rename_device(root, "/sys" + net_devpath(pci, eth), "/sys" + net_devpath(pci, final_name),
                          "net");
            // The GID table names the netdev by its current name (computed by the kernel).
            if (next[k] > 4 || fs::exists(root + ib.syspath()))
                for (int i = 0; i < 4; ++i)
                    rig.testbed.set_attr(ib.syspath(), "ports/1/gid_attrs/ndevs/" + std::to_string(i),
                                         final_name + "\n");
            send_uevent(root, "/sys" + net_devpath(pci, final_name), "net", "move",
                        {{"DEVPATH_OLD", net_devpath(pci, eth)},
                         {"INTERFACE", final_name},
                         {"IFINDEX", std::to_string(ifindex)}});
            break;
        }
        case 3:
            rig.testbed.add(aux_text(pci, k + 1, true));
            rig.testbed.uevent("/sys" + aux_devpath(pci, k + 1), "add");
            break;
        case 4:
            ib.netdev = netname[k].empty() ? eth : netname[k];
            rig.testbed.add(ib_text(ib));
            rig.testbed.uevent(ib.syspath(), "add");
            break;
        case 5:
            // umockdev 0.17.16 aborts when a /dev node name comes back after
            // remove_device() (dev_fd map not cleared): new VFs take uverbs10 and up.
            rig.testbed.add(uverbs_text(pci, 10 + k, ib.name));
            rig.testbed.uevent("/sys" + uverbs_devpath(pci, 10 + k), "add");
            break;
        }
    }
    std::string order_s;
    for (auto& o : order)
        order_s += o + " ";
    INFO("event order (vf:step; 0 pci, 1 net add, 2 move, 3 aux, 4 ib, 5 uverbs): " << order_s);

    auto complete = [&] {
        json d = rig.client->describe();
        size_t vfs = 0;
        for (auto& x : d["Devices"])
            vfs += x["PhysicalFunction"] == pf_dev;
        return vfs == size_t(n);
    };
    REQUIRE(rec.eventually(complete, kWait));
    // Interleaved events give several passes: wait until the signals settle.
    CHECK(rec.eventually([&] { return rec.quiet(kSettle); }, kWait));
    json d = rig.client->describe();
    CHECK(d["Devices"].size() == size_t(n + 1));
    for (int k = 0; k < n; ++k) {
        const std::string name = "mlx5_" + std::to_string(k + 1);
        INFO("VF " << k << " " << name);
        const json* x = find_by(d["Devices"], "Name", name);
        REQUIRE(x != nullptr);
        CHECK((*x)["PhysicalFunction"] == pf_dev);
        CHECK((*x)["PCIAddress"] == vf_slot(k));
        CHECK((*x)["Path"] == device_path_for_guid(vf_guid(k)));
        CHECK((*x)["VerbsDevice"] == "/dev/infiniband/uverbs" + std::to_string(10 + k));
        const json* l = find_by(d["Links"], "Name", "ens4f0v" + std::to_string(k));
        REQUIRE(l != nullptr);
        CHECK((*l)["Path"] == link_path(1010 + k));
        CHECK((*l)["RdmaDevice"] == (*x)["Path"]);
        CHECK((*l)["RdmaCapable"] == "yes");
        REQUIRE((*x)["Ports"].size() == 1);
        CHECK((*x)["Ports"][0]["Link"] == (*l)["Path"]);
    }
    for (auto& l : d["Links"])
        CHECK(l["Name"].get<std::string>().rfind("eth", 0) != 0);
    if (cache)
        check_cache_settles(*cache);

    // Bounded signals: each new object at most 3 (added + 2 changes), nothing else twice.
    {
        auto objs = per_object(rec, mark);
        INFO(rec.dump(mark));
        CHECK(objs.size() >= size_t(3 * n)); // device, port and link per VF
        for (auto& [path, sigs] : objs) {
            INFO(path);
            CHECK(sigs.size() <= 3);
        }
        CHECK(rec.size() - mark <= size_t(3 * 3 * n + 3));
        check_no_dangling_references(rec, mark, object_paths(rig.client->describe()));
    }

    // Incremental state == full rescan state: SIGHUP reads everything again and must find
    // nothing to announce.
    const size_t before_hup = rec.size();
    rig.daemon->signal(SIGHUP);
    CHECK(rec.quiet(800ms));
    check_signals(rec, before_hup, {});
    CHECK(rig.client->describe() == d);
    if (cache) {
        // The PF's RDMA device renamed, as udev's NAME_FALLBACK does: one object keeps its path.
        const std::string pci = kPf;
        const std::string old_sp = "/sys" + pci + "/infiniband/mlx5_0";
        const std::string new_sp = "/sys" + pci + "/infiniband/rocep94s0f0";
        rename_device(root, old_sp, new_sp, "infiniband");
        send_uevent(root, new_sp, "infiniband", "move",
                    {{"DEVPATH_OLD", old_sp.substr(4)}, {"NAME", "rocep94s0f0"}});
        REQUIRE(rec.eventually(
            [&] {
                try {
                    return rig.client->device_by_name("rocep94s0f0") == pf_dev;
                } catch (const sdbus::Error&) {
                    return false; // not seen yet
                }
            },
            kWait));
        check_cache_settles(*cache);
        cache.reset();
        d = rig.client->describe();
    }

    // And a fresh daemon on the same testbed serves the same inventory.
    rig.client.reset();
    REQUIRE(rig.daemon->stop() == 0);
    rig.daemon = std::make_unique<DaemonProcess>();
    Client fresh;
    CHECK(fresh.describe() == d);
    REQUIRE(rig.daemon->stop() == 0);
}

} // namespace

TEST_CASE("hotplug: SR-IOV 2 -> 0 -> 8 VFs, random interleaving", "[hotplug][sriov]") {
    for (uint32_t seed : {1u, 20240607u, 777u}) {
        DYNAMIC_SECTION("seed " << seed) { run_sriov(seed); }
    }
}

TEST_CASE("hotplug: a GDBusObjectManagerClient following rdmad through SR-IOV 2 -> 0 -> 64 "
          "VFs, netdev renames and an RDMA device rename ends equal to GetManagedObjects",
          "[hotplug][sriov]") {
    run_sriov(20261203u, 64, [](Rig& rig) { return new GioCache(rig.bus.address()); });
}

TEST_CASE("hotplug: 1,000 netdev add events in one burst", "[hotplug][burst]") {
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string root = rig.testbed.root();
    const size_t links_before = rig.described["Links"].size();
    const int n = 1000;

    const auto t_setup = std::chrono::steady_clock::now();
    std::vector<std::string> paths;
    // add_from_string() would send an "add" per device through umockdev's sender, which
    // aborts on EAGAIN within a few events: write the entries and send the events ourselves.
    for (int i = 0; i < n; ++i) {
        const std::string name = "vf" + std::to_string(i);
        write_virtual_netdev(root, name, 2000 + i);
        paths.push_back("/sys/devices/virtual/net/" + name);
    }
    const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_setup).count();

    // umockdev_testbed_uevent() aborts once rdmad's socket queue (net.unix.max_dgram_qlen
    // datagrams) is full: send_uevent() waits for room instead.
    const auto t0 = std::chrono::steady_clock::now();
    for (auto& p : paths)
        send_uevent(root, p, "net", "add");
    const double send_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto added = [&] {
        return size_t(std::count_if(rec.signals().begin(), rec.signals().end(),
                                    [](const Signal& s) { return s.kind == "added"; }));
    };
    REQUIRE(rec.eventually([&] { return added() >= size_t(n); }, 60s));
    const double all_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(rec.quiet(kSettle));
    WARN("1,000 netdev adds: testbed setup " << setup_s << " s; events sent in " << send_s
                                              << " s; all 1,000 InterfacesAdded after " << all_s
                                              << " s");
    CHECK(added() == size_t(n));
    std::set<std::string> paths_added;
    for (auto& s : rec.signals())
        if (s.kind == "added")
            paths_added.insert(s.path);
    CHECK(paths_added.size() == size_t(n));
    CHECK(paths_added.count(link_path(2000)) == 1);
    CHECK(paths_added.count(link_path(2999)) == 1);
    {
        INFO(rec.dump(0).substr(0, 4000));
        CHECK(rec.size() - added() <= 5);
    }
    json d = rig.client->describe();
    CHECK(d["Links"].size() == links_before + n);
    rig.stop_daemon();
}

// A monitor overflow (ENOBUFS) cannot be provoked under umockdev: its "netlink" socket is an
// AF_UNIX datagram socket, where a full receive queue blocks or fails the *sender* (EAGAIN)
// and the receiver never sees ENOBUFS. So this checks the other path into the same full
// resync, SIGHUP, after sysfs changed behind rdmad's back (events lost).
TEST_CASE("hotplug: SIGHUP full resync picks up changes whose events were lost", "[hotplug]") {
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const json before = rig.described;
    const std::string pci0 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0";
    const std::string pci1 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.1";
    const std::string dev0 = rig.device_path("mlx5_0");
    const std::string dev1 = rig.device_path("mlx5_1");
    const std::string link1 = rig.link_path("ens1f1np1");

    // No events: port state changes, a netdev appears, mlx5_1 disappears with its netdev.
    rig.testbed.set_attr(pci0 + "/infiniband/mlx5_0", "ports/1/state", "1: DOWN\n");
    write_virtual_netdev(rig.testbed.root(), "dummy0", 1200);
    for (auto sp : {pci1 + "/infiniband_verbs/uverbs1", pci1 + "/infiniband/mlx5_1",
                    pci1 + "/net/ens1f1np1"})
        rig.testbed.remove(sp);
    CHECK(rec.quiet(kSettle));
    CHECK(rig.client->describe() == before);

    rig.daemon->signal(SIGHUP);
    REQUIRE(rec.eventually([&] { return rec.size() >= 6; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_per_object(
        rec, 0,
        {"removed " + dev1 + "/port/1 org.rdmad1.Port", "removed " + dev1 + " org.rdmad1.Device",
         "removed " + link1 + " org.rdmad1.Link", "added " + link_path(1200) + " org.rdmad1.Link",
         "changed " + dev0 + " org.rdmad1.Device ProblemDetails,Problems",
         "changed " + dev0 + "/port/1 org.rdmad1.Port State"});
    json d = rig.client->describe();
    CHECK(d["Devices"].size() == 1);
    CHECK(find_by(d["Links"], "Name", "dummy0") != nullptr);
    rig.stop_daemon();
}

TEST_CASE("hotplug: a verbs char device that is a plain file, a dangling link, or that appears "
          "after start-up: rdmad neither crashes nor hangs, and follows the ports through change "
          "uevents",
          "[hotplug][verbs]") {
    // libibverbs is loaded when a device's verbs char device stat()s (daemon/sources/
    // verbs_events.cpp); one that cannot be opened is followed through uevents only.
    const std::string ib0 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0";
    for (const std::string kind : {"plain file", "dangling link", "appears later"}) {
        DYNAMIC_SECTION(kind) {
            PrivateBus bus;
            Testbed testbed("constructed-mlx5-roce");
            const fs::path dev = fs::path(testbed.root()) / "dev" / "infiniband";
            for (const char* n : {"uverbs0", "uverbs1"}) {
                fs::remove(dev / n);
                if (kind == "plain file")
                    write_file(dev / n, std::string(4096, '\0')); // no sticky bit: no device
                else if (kind == "dangling link")
                    fs::create_symlink(dev / "gone", dev / n);
            }
            DaemonProcess daemon;
            Client client;
            SignalRecorder rec(client);
            const std::string port = client.device_by_name("mlx5_0") + "/port/1";
            CHECK(variant_json(client.get(port, "org.rdmad1.Port", "State")) == "ACTIVE");
            if (kind == "appears later")
                for (const char* n : {"uverbs0", "uverbs1"})
                    write_file(dev / n, std::string(4096, '\0'));
            for (const std::string state : {"1: DOWN", "4: ACTIVE", "1: DOWN"}) {
                const size_t mark = rec.size();
                testbed.set_attr(ib0, "ports/1/state", state + "\n");
                testbed.uevent(ib0, "change");
                const std::string want = state.substr(3);
                INFO(kind << ": " << state << "\n" << daemon.log());
                REQUIRE(rec.eventually(
                    [&] {
                        for (size_t k = mark; k < rec.size(); ++k)
                            if (rec.signals()[k].path == port &&
                                rec.signals()[k].props.value("State", "") == want)
                                return true;
                        return false;
                    },
                    kWait));
            }
            CHECK(variant_json(client.get(port, "org.rdmad1.Port", "State")) == "DOWN");
            CHECK(daemon.stop() == 0);
        }
    }
}

namespace {

using Managed =
    std::map<sdbus::ObjectPath, std::map<std::string, std::map<std::string, sdbus::Variant>>>;

Managed managed_objects(Client& client) {
    Managed out;
    client.manager()
        .callMethod("GetManagedObjects")
        .onInterface("org.freedesktop.DBus.ObjectManager")
        .storeResultsTo(out);
    return out;
}

/// True when `v` holds no JSON object: variant_json() gives a struct as an array, Describe()
/// as an object keyed by field names, so only such values compare one to one.
bool flat(const json& v) {
    if (v.is_object())
        return false;
    if (v.is_array())
        return std::all_of(v.begin(), v.end(), flat);
    return true;
}

/// Describe() `d` shows exactly the objects of `managed`, each with the same value of every
/// property whose value holds no struct; returns how many values it compared.
size_t check_describe_is_managed(const json& d, const Managed& managed) {
    std::map<std::string, const json*> described;
    for (const auto& dev : d["Devices"]) {
        described[dev["Path"]] = &dev;
        for (const auto& p : dev["Ports"])
            described[p["Path"]] = &p;
    }
    for (const auto& l : d["Links"])
        described[l["Path"]] = &l;
    std::set<std::string> paths, want;
    for (const auto& [path, _] : described)
        want.insert(path);
    size_t compared = 0;
    for (const auto& [path, ifaces] : managed) {
        paths.insert(path);
        auto it = described.find(path);
        if (it == described.end())
            continue;
        for (const auto& [iface, props] : ifaces) {
            if (iface.rfind("org.rdmad1.", 0) != 0)
                continue;
            for (const auto& [name, value] : props) {
                const json v = variant_json(value);
                // variant_json() writes an empty array of structs as its signature.
                const bool signature =
                    v.is_string() && v.get<std::string>().starts_with("<signature");
                if (!flat(v) || signature || !it->second->contains(name) ||
                    !flat((*it->second)[name]))
                    continue;
                INFO(path << " " << name);
                CHECK((*it->second)[name] == v);
                ++compared;
            }
        }
    }
    CHECK(paths == want);
    return compared;
}

} // namespace

TEST_CASE(
    "hotplug: Describe() and GetManagedObjects between the events of a burst of "
    "netdev adds, renames, removes, RDMA device changes and SIGHUP rescans: Describe() is never "
    "rendered from a stale size, and ends equal to GetManagedObjects",
    "[hotplug]") {
    // Describe() keeps each object's size and measures the changed ones when the loop is idle
    // or before it answers (DescribeRenderer::measure()): a size kept across a change would
    // make the reply's length differ from what it writes (the daemon then logs "were
    // measured; rendered whole").
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string root = rig.testbed.root();
    const std::string pci[2] = {"/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0",
                                "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.1"};
    std::string ib_name[2] = {"mlx5_0", "mlx5_1"};
    const std::vector<std::string> ib_pool = {"mlx5_0", "mlx5_1", "mlx5_2", "rocep59s0f0"};
    auto ib = [&](int k) { return pci[k] + "/infiniband/" + ib_name[k]; };
    // The virtual netdevs present: ifindex -> current name.
    std::map<int, std::string> virt;
    std::mt19937 rng(20261205);
    INFO("seed 20261205");
    int next_index = 3000;
    size_t describes = 0;
    for (int step = 0; step < 300; ++step) {
        const int k = int(rng() % 2);
        switch (rng() % 7) {
        case 0: { // a new virtual netdev
            const int index = next_index++;
            const std::string name = "v" + std::to_string(index);
            write_virtual_netdev(root, name, index);
            send_uevent(root, "/sys/devices/virtual/net/" + name, "net", "add");
            virt[index] = name;
            break;
        }
        case 1: { // one renamed
            if (virt.empty())
                break;
            auto it = std::next(virt.begin(), long(rng() % virt.size()));
            const std::string to = "r" + std::to_string(step) + "x" + std::to_string(it->first);
            const std::string old_sp = "/sys/devices/virtual/net/" + it->second;
            const std::string new_sp = "/sys/devices/virtual/net/" + to;
            rename_device(root, old_sp, new_sp, "net");
            send_uevent(root, new_sp, "net", "move",
                        {{"DEVPATH_OLD", old_sp.substr(4)},
                         {"INTERFACE", to},
                         {"IFINDEX", std::to_string(it->first)}});
            it->second = to;
            break;
        }
        case 2: { // one removed
            if (virt.empty())
                break;
            auto it = std::next(virt.begin(), long(rng() % virt.size()));
            const std::string sp = "/sys/devices/virtual/net/" + it->second;
            fs::remove_all(root + sp);
            fs::remove(root + "/sys/class/net/" + it->second);
            send_uevent(root, sp, "net", "remove");
            virt.erase(it);
            break;
        }
        case 3: { // an RDMA device renamed
            std::string to;
            for (const auto& n : ib_pool)
                if (n != ib_name[0] && n != ib_name[1] && (to.empty() || rng() % 2))
                    to = n;
            rename_ib(rig, pci[k], k, ib_name[k], to);
            ib_name[k] = to;
            break;
        }
        case 4: // a port change
            rig.testbed.set_attr(ib(k), "ports/1/state", rng() % 2 ? "1: DOWN\n" : "4: ACTIVE\n");
            rig.testbed.set_attr(ib(k), "node_desc", "host1 step " + std::to_string(step) + "\n");
            send_uevent(root, ib(k), "infiniband", "change");
            break;
        case 5:
            std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 60));
            break;
        default: // a full rescan (SIGHUP) among them
            rig.daemon->signal(SIGHUP);
            break;
        }
        // Right after the event, or a few ms later (the idle measuring in between or not).
        if (rng() % 3 == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 8));
        if (rng() % 2) {
            rig.client->describe(); // parses, or throws
            ++describes;
        }
        if (rng() % 4 == 0)
            managed_objects(*rig.client);
        rec.pump(0ms);
    }
    for (int i = 0; i < 40 && !rec.quiet(kSettle); ++i) {
    }
    CHECK(rec.quiet(kSettle));
    const json d = rig.client->describe();
    CHECK(describes > 100);
    CHECK(check_describe_is_managed(d, managed_objects(*rig.client)) > 50);
    for (const auto& [index, name] : virt)
        CHECK(find_by(d["Links"], "Name", name) != nullptr);
    for (int k = 0; k < 2; ++k)
        CHECK(find_by(d["Devices"], "Name", ib_name[k]) != nullptr);
    const std::string log = rig.daemon->log();
    INFO(log.substr(0, 4000));
    CHECK(log.find("were measured") == std::string::npos);
    CHECK(fresh_describe(rig) == d);
}

TEST_CASE("hotplug: an auxiliary device that comes and goes with its PCI function's bind and "
          "unbind uevents alone is found and dropped; a file, a symlink, a one-dot directory "
          "and a directory of another bus beside it are not auxiliary devices",
          "[hotplug]") {
    // A NIC whose driver (xnic) rdmad knows no RDMA companion module of: its netdev is "no"
    // without an unbound RDMA auxiliary device and "module-not-loaded", hint "no module for
    // <aux>", with one (rdma_capability.cpp; no module resolves auxiliary:xnic.rdma). The
    // function sits beside the fixture's 0000:5e:00.0, at the same depth, so that the
    // fixture's own mlx5_core.rdma.0 gives the relative target of the `subsystem` link.
    Rig rig("constructed-mlx5-aux-unbound");
    SignalRecorder rec(*rig.client);
    const std::string root = rig.testbed.root();
    const std::string parent = "/devices/pci0000:5d/0000:5d:02.0";
    const std::string pci = parent + "/0000:5e:00.1";
    const std::string aux_subsystem =
        fs::read_symlink(root + "/sys" + parent + "/0000:5e:00.0/mlx5_core.rdma.0/subsystem")
            .string();
    INFO("subsystem link " << aux_subsystem);
    REQUIRE(aux_subsystem.ends_with("auxiliary"));
    rig.testbed.add("P: " + pci +
                    "\nE: SUBSYSTEM=pci\nE: DRIVER=xnic\nE: PCI_CLASS=20000\n"
                    "E: PCI_ID=1D0F:EFA0\nE: PCI_SLOT_NAME=0000:5e:00.1\n"
                    "A: class=0x020000\\n\nA: device=0xefa0\\n\nA: vendor=0x1d0f\\n\n"
                    "L: driver=../../../../bus/pci/drivers/xnic\n\n" +
                    net_text(pci, "xn0", 1500));
    const std::string link = link_path(1500);
    REQUIRE(rec.eventually([&] { return rec.size() >= 1; }, kWait));
    CHECK(rec.quiet(kSettle));
    auto capable = [&] {
        return variant_json(rig.client->get(link, "org.rdmad1.Link", "RdmaCapable"));
    };
    auto hint = [&] { return variant_json(rig.client->get(link, "org.rdmad1.Link", "Hint")); };
    REQUIRE(capable() == "no");

    // Beside it, entries that are no auxiliary devices: a file and a symlink named like one,
    // a directory with one dot, and a two-dot directory of another bus.
    const fs::path fn = root + "/sys" + pci;
    write_file(fn / "xnic.rdma.7", "not a device\n");
    fs::create_directories(fn / "xnic.rdma.8");
    fs::create_symlink("../../../../bus/platform", fn / "xnic.rdma.8" / "subsystem");
    fs::create_directories(fn / "xnic.3");
    fs::create_symlink(aux_subsystem, fn / "xnic.3" / "subsystem");
    const fs::path aux = fn / "xnic.rdma.0";
    // What probing xnic leaves: its auxiliary device, listed on the bus too; then only the
    // PCI function's "bind" is sent.
    auto make_aux = [&] {
        fs::create_directories(aux);
        write_file(aux / "uevent", "MODALIAS=auxiliary:xnic.rdma\n");
        write_file(aux / "modalias", "auxiliary:xnic.rdma\n");
        fs::create_symlink(aux_subsystem, aux / "subsystem");
        fs::create_directories(root + "/sys/bus/auxiliary/devices");
        fs::create_symlink("../../.." + pci + "/xnic.rdma.0",
                           root + "/sys/bus/auxiliary/devices/xnic.rdma.0");
    };
    make_aux();
    fs::create_symlink("xnic.rdma.0", fn / "xnic.rdma.9");
    size_t mark = rec.size();
    send_uevent(root, "/sys" + pci, "pci", "bind");
    REQUIRE(rec.eventually([&] { return rec.size() >= mark + 1; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_signals(rec, mark, {"changed " + link + " org.rdmad1.Link Hint,RdmaCapable"});
    CHECK(capable() == "module-not-loaded");
    CHECK(hint() == "no module for xnic.rdma.0");
    const json bound = rig.client->describe();

    // Unbound: the auxiliary device goes, and only the PCI function's "unbind" is sent.
    fs::remove_all(aux);
    fs::remove(root + "/sys/bus/auxiliary/devices/xnic.rdma.0");
    mark = rec.size();
    send_uevent(root, "/sys" + pci, "pci", "unbind");
    REQUIRE(rec.eventually([&] { return rec.size() >= mark + 1; }, kWait));
    CHECK(rec.quiet(kSettle));
    check_signals(rec, mark, {"changed " + link + " org.rdmad1.Link Hint,RdmaCapable"});
    CHECK(capable() == "no");
    CHECK(hint() == "");

    // Bound again: found again, as a fresh start finds it.
    make_aux();
    mark = rec.size();
    send_uevent(root, "/sys" + pci, "pci", "bind");
    REQUIRE(rec.eventually([&] { return rec.size() >= mark + 1; }, kWait));
    CHECK(rec.quiet(kSettle));
    CHECK(capable() == "module-not-loaded");
    CHECK(hint() == "no module for xnic.rdma.0");
    const json d = rig.client->describe();
    CHECK(d == bound);
    check_rescan_and_fresh(rig, rec, d);
}

TEST_CASE("hotplug: Describe() during a burst of 500 netdev adds and 250 removes while a "
          "listener reads no signal: never rendered from a stale size, ends equal to "
          "GetManagedObjects",
          "[hotplug][burst]") {
    // The recorder is pumped only at the end: rdmad's signals wait in the bus, so its
    // idle measuring meets queued messages (Bus::on_idle) while Describe() calls come in.
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    Client other;
    const std::string root = rig.testbed.root();
    const size_t links_before = rig.described["Links"].size();
    const int n = 500;
    for (int i = 0; i < n; ++i)
        write_virtual_netdev(root, "b" + std::to_string(i), 4000 + i);
    size_t describes = 0;
    for (int i = 0; i < n; ++i) {
        send_uevent(root, "/sys/devices/virtual/net/b" + std::to_string(i), "net", "add");
        if (i % 20 == 0) {
            other.describe();
            ++describes;
        }
    }
    for (int i = 0; i < n; i += 2) {
        const std::string name = "b" + std::to_string(i);
        fs::remove_all(root + "/sys/devices/virtual/net/" + name);
        fs::remove(root + "/sys/class/net/" + name);
        send_uevent(root, "/sys/devices/virtual/net/" + name, "net", "remove");
        if (i % 10 == 0) {
            other.describe();
            ++describes;
        }
    }
    for (int i = 0; i < 100 && !rec.quiet(kSettle); ++i) {
    }
    const json d = other.describe();
    CHECK(d["Links"].size() == links_before + n / 2);
    CHECK(check_describe_is_managed(d, managed_objects(other)) > size_t(n));
    const std::string log = rig.daemon->log();
    INFO(log.substr(0, 4000));
    CHECK(log.find("were measured") == std::string::npos);
    CHECK(describes > 40);
}

TEST_CASE("Manager.Reload reads the hardware again, as SIGHUP does", "[hotplug]") {
    // rdmactl(1) reload and org.rdmad1(5) Reload() say "as SIGHUP": what changed without an
    // event rdmad follows shows after it (a new user found Reload read only the files).
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const std::string ib = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0";
    const std::string port = rig.device_path("mlx5_0") + "/port/1";
    REQUIRE(rig.port("mlx5_0", 1).value("State", "") == "ACTIVE");
    rig.testbed.set_attr(ib, "ports/1/state", "1: DOWN\n"); // no uevent
    CHECK(rec.quiet(300ms));
    CHECK(variant_json(rig.client->get(port, "org.rdmad1.Port", "State")) == "ACTIVE");
    const size_t mark = rec.size();
    rig.client->manager().callMethod("Reload").onInterface("org.rdmad1.Manager");
    REQUIRE(rec.eventually([&] { return rec.changed_since(mark, port, "State"); }, kWait));
    CHECK(variant_json(rig.client->get(port, "org.rdmad1.Port", "State")) == "DOWN");
}

TEST_CASE("start-up on a host of 40 RDMA devices, read on several threads, gives the objects a "
          "hotplug of the same devices gave, and a full rescan changes nothing",
          "[hotplug][startup]") {
    // From kParallelReadMin (32) devices a full scan reads on several threads
    // (daemon/util/parallel_reads.hpp); a pass after uevents reads on the loop's thread. The
    // same files must give the same objects either way.
    Rig rig("constructed-mlx5-roce");
    SignalRecorder rec(*rig.client);
    const size_t devices_before = rig.described["Devices"].size();
    const size_t links_before = rig.described["Links"].size();
    const int n = 40;
    std::vector<std::pair<std::string, std::string>> events; // syspath, subsystem
    std::vector<Ib> ibs;
    for (int i = 0; i < n; ++i) {
        char bus[8], guid[32];
        std::snprintf(bus, sizeof bus, "%02x", 0x40 + i);
        std::snprintf(guid, sizeof guid, "0c42:a103:0070:%04x", i);
        const std::string pci =
            "/devices/pci0000:3a/0000:3a:03.0/0000:" + std::string(bus) + ":00.0";
        const std::string netdev = "ens" + std::to_string(100 + i) + "np0";
        Ib ib{pci, "mlx5_" + std::to_string(10 + i), guid, netdev};
        ib.state = i % 3 ? "4: ACTIVE" : "1: DOWN";
        rig.testbed.add(pci_text(pci, "1017") + aux_text(pci, 10 + i, true) +
                        net_text(pci, netdev, 1100 + i) + ib_text(ib) +
                        uverbs_text(pci, 10 + i, ib.name));
        events.insert(events.end(), {{"/sys" + pci, "pci"},
                                     {"/sys" + aux_devpath(pci, 10 + i), "auxiliary"},
                                     {"/sys" + net_devpath(pci, netdev), "net"},
                                     {ib.syspath(), "infiniband"},
                                     {"/sys" + uverbs_devpath(pci, 10 + i), "infiniband_verbs"}});
        ibs.push_back(ib);
    }
    // 200 uevents: send_uevent() waits for room in rdmad's socket (net.unix.max_dgram_qlen).
    for (const auto& [syspath, subsystem] : events)
        send_uevent(rig.testbed.root(), syspath, subsystem, "add");
    REQUIRE(rec.eventually([&] { return rec.size() >= size_t(3 * n); }, 30s));
    // On a loaded machine the 200 uevents span several passes, and a later one may still
    // change an object announced before (a device's Links once its netdev is there): wait
    // until the passes are over, then read.
    bool settled = false;
    for (int i = 0; i < 50 && !settled; ++i)
        settled = rec.quiet(kSettle);
    REQUIRE(settled);
    const json d = rig.client->describe();
    REQUIRE(d["Devices"].size() == devices_before + n);
    REQUIRE(d["Links"].size() == links_before + n);
    // Each device as its files say (the helpers above write them).
    for (int i = 0; i < n; ++i) {
        const Ib& ib = ibs[i];
        INFO(ib.name);
        const json* dev = find_by(d["Devices"], "Name", ib.name);
        REQUIRE(dev != nullptr);
        CHECK((*dev)["NodeGUID"] == ib.guid);
        CHECK((*dev)["PCIAddress"] == slot_of(ib.pci_devpath));
        CHECK((*dev)["VerbsDevice"] == "/dev/infiniband/uverbs" + std::to_string(10 + i));
        REQUIRE((*dev)["Ports"].size() == 1);
        CHECK((*dev)["Ports"][0]["State"] == (i % 3 ? "ACTIVE" : "DOWN"));
        const json* link = find_by(d["Links"], "Name", ib.netdev);
        REQUIRE(link != nullptr);
        CHECK((*link)["Index"] == 1100 + i);
        CHECK((*link)["RdmaDevice"] == device_path_for_guid(ib.guid));
    }
    // SIGHUP reads the whole host again (a full scan: several threads); so does a new rdmad.
    check_rescan_and_fresh(rig, rec, d);
}
