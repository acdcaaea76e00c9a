// SPDX-License-Identifier: MIT
//
// The XML in dbus/ is the single source of the API; the daemon's vtables are built from its
// property tables. These cases keep the two equal: the live introspection of a Manager,
// Device, Port and Link object has exactly the members, signatures, argument names and
// annotations of dbus/org.rdmad1.*.xml (both parsed by GLib's GDBusNodeInfo), `busctl tree`
// lists every object, and GetManagedObjects() equals GetAll() on each object.
#include "harness.hpp"

#include <catch2/catch.hpp>
#include <gio/gio.h>

#include <map>
#include <set>
#include <string>
#include <vector>

using namespace it;

namespace {

using Managed =
    std::map<sdbus::ObjectPath, std::map<std::string, std::map<std::string, sdbus::Variant>>>;

/// One interface as text lines: every member with its arguments and annotations, sorted, so
/// two descriptions compare as sets and a difference reads as the member that differs.
std::set<std::string> describe(const GDBusInterfaceInfo* iface) {
    std::set<std::string> out;
    auto annotations = [](GDBusAnnotationInfo** a) {
        std::string s;
        for (; a && *a; ++a)
            s += std::string(" @") + (*a)->key + "=" + (*a)->value;
        return s;
    };
    for (GDBusMethodInfo** m = iface->methods; m && *m; ++m) {
        std::string line = std::string("method ") + (*m)->name + "(";
        for (GDBusArgInfo** a = (*m)->in_args; a && *a; ++a)
            line += std::string(" in ") + (*a)->name + ":" + (*a)->signature;
        for (GDBusArgInfo** a = (*m)->out_args; a && *a; ++a)
            line += std::string(" out ") + (*a)->name + ":" + (*a)->signature;
        out.insert(line + " )" + annotations((*m)->annotations));
    }
    for (GDBusSignalInfo** s = iface->signals; s && *s; ++s) {
        std::string line = std::string("signal ") + (*s)->name + "(";
        for (GDBusArgInfo** a = (*s)->args; a && *a; ++a)
            line += std::string(" ") + (*a)->name + ":" + (*a)->signature;
        out.insert(line + " )" + annotations((*s)->annotations));
    }
    for (GDBusPropertyInfo** p = iface->properties; p && *p; ++p) {
        const char* access = (*p)->flags == G_DBUS_PROPERTY_INFO_FLAGS_READABLE ? "read"
                             : (*p)->flags == G_DBUS_PROPERTY_INFO_FLAGS_WRITABLE
                                 ? "write"
                                 : "readwrite";
        out.insert(std::string("property ") + (*p)->name + ":" + (*p)->signature + " " + access +
                   annotations((*p)->annotations));
    }
    out.insert("interface" + annotations(iface->annotations));
    return out;
}

/// The interface `name` of the introspection XML `xml`; REQUIREs it parses and has it.
std::set<std::string> interface_of(const std::string& xml, const std::string& name) {
    GError* error = nullptr;
    GDBusNodeInfo* node = g_dbus_node_info_new_for_xml(xml.c_str(), &error);
    INFO(xml);
    REQUIRE(node);
    GDBusInterfaceInfo* iface = g_dbus_node_info_lookup_interface(node, name.c_str());
    REQUIRE(iface);
    auto out = describe(iface);
    g_dbus_node_info_unref(node);
    return out;
}

std::string introspect(Client& client, const std::string& path) {
    std::string xml;
    client.proxy(path)
        ->callMethod("Introspect")
        .onInterface("org.freedesktop.DBus.Introspectable")
        .storeResultsTo(xml);
    return xml;
}

Managed managed_objects(Client& client) {
    Managed out;
    client.proxy("/org/rdmad1")
        ->callMethod("GetManagedObjects")
        .onInterface("org.freedesktop.DBus.ObjectManager")
        .storeResultsTo(out);
    return out;
}

json as_json(const std::map<std::string, sdbus::Variant>& props) {
    json out = json::object();
    for (const auto& [name, value] : props)
        out[name] = variant_json(value);
    return out;
}

} // namespace

TEST_CASE("introspection: every object kind shows exactly the members of dbus/*.xml",
          "[introspection]") {
    Rig rig("constructed-mlx5-roce");
    const std::string xml_dir = env_or_fail("DBUS_XML_DIR");
    const std::string device = rig.device_path("mlx5_0");
    const std::map<std::string, std::string> objects = {
        {"org.rdmad1.Manager", "/org/rdmad1"},
        {"org.rdmad1.Device", device},
        {"org.rdmad1.Port", device + "/port/1"},
        {"org.rdmad1.Link", rig.link_path("ens1f0np0")},
    };
    for (const auto& [iface, path] : objects) {
        INFO(iface << " at " << path);
        const auto want = interface_of(read_file(xml_dir + "/" + iface + ".xml"), iface);
        const auto live = interface_of(introspect(*rig.client, path), iface);
        CHECK(live == want);
        // The object has that interface and none of the other three.
        const std::string xml = introspect(*rig.client, path);
        for (const auto& [other, _] : objects)
            if (other != iface)
                CHECK(xml.find("\"" + other + "\"") == std::string::npos);
    }
    rig.stop_daemon();
}

TEST_CASE("introspection: busctl tree lists every object, GetManagedObjects equals GetAll on "
          "each", "[introspection]") {
    Rig rig("procfs-hfi1-mlx4-mlx5");
    const Managed managed = managed_objects(*rig.client);
    // Every device, port and netdev Describe() shows is a managed object, and nothing else.
    std::set<std::string> described;
    for (const auto& d : rig.described["Devices"]) {
        described.insert(d["Path"]);
        for (const auto& p : d["Ports"])
            described.insert(p["Path"]);
    }
    for (const auto& l : rig.described["Links"])
        described.insert(l["Path"]);
    std::set<std::string> paths;
    for (const auto& [path, _] : managed)
        paths.insert(path);
    CHECK(paths == described);
    REQUIRE(paths.size() > 3);

    for (const auto& [path, ifaces] : managed) {
        INFO(path);
        for (const auto& [iface, props] : ifaces) {
            if (iface.rfind("org.rdmad1.", 0) != 0) {
                CHECK(props.empty()); // Peer, Introspectable, Properties
                continue;
            }
            std::map<std::string, sdbus::Variant> all;
            rig.client->proxy(path)
                ->callMethod("GetAll")
                .onInterface("org.freedesktop.DBus.Properties")
                .withArguments(iface)
                .storeResultsTo(all);
            CHECK(as_json(all) == as_json(props));
        }
    }

    const RunResult tree = run_program({"busctl", "--system", "--list", "tree", "org.rdmad1"});
    REQUIRE(tree.status == 0);
    std::set<std::string> listed;
    size_t start = 0;
    while (start < tree.out.size()) {
        size_t end = tree.out.find('\n', start);
        if (end == std::string::npos)
            end = tree.out.size();
        if (end > start)
            listed.insert(tree.out.substr(start, end - start));
        start = end + 1;
    }
    INFO(tree.out);
    for (const auto& p : paths)
        CHECK(listed.count(p));
    CHECK(listed.count("/org/rdmad1"));
    rig.stop_daemon();
}
