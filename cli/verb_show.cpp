// SPDX-License-Identifier: MIT
//
// rdmactl show NAME: every property of the RDMA device NAME (and of its ports), else of the
// netdev NAME. The daemon resolves the name to a path; the values come from Describe(), the
// same document --json prints.
#include "document.hpp"
#include "table.hpp"
#include "terminal.hpp"
#include "verbs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

namespace rdmactl {

namespace {

using nlohmann::json;

// The order of the D-Bus XML (dbus/org.rdmad1.*.xml) after the Path (a port: its Number first);
// GIDs last because they are long. Keys a newer daemon adds are printed after these.
constexpr std::array kDeviceKeys = {"Path",
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
                                    "Provider",
                                    "ProviderInstalled",
                                    "ProviderPackage",
                                    "VerbsDevice",
                                    "PhysicalFunction",
                                    "SRIOVNumVFs",
                                    "SRIOVTotalVFs",
                                    "DesiredSRIOVNumVFs",
                                    "VFIndex",
                                    "DesiredVFGUIDs",
                                    "Links",
                                    "DesiredOrigin",
                                    "Problems",
                                    "ProblemDetails"};
constexpr std::array kPortKeys = {"Number",
                                  "Path",
                                  "State",
                                  "PhysicalState",
                                  "LinkLayer",
                                  "Transport",
                                  "RoCEVersions",
                                  "RateGbps",
                                  "Rate",
                                  "LID",
                                  "SMLID",
                                  "Link",
                                  "PortType",
                                  "DesiredPortType",
                                  "NextBootPortType",
                                  "PendingPortType",
                                  "PFCNoDrop",
                                  "DesiredPFCNoDrop",
                                  "Trust",
                                  "DesiredTrust",
                                  "DSCPPriority",
                                  "DesiredDSCPPriority",
                                  "RDMACMRoCEMode",
                                  "DesiredRDMACMRoCEMode",
                                  "RDMACMToS",
                                  "DesiredRDMACMToS",
                                  "InSync",
                                  "RecommendedGID",
                                  "GIDs"};
// The lossless-RoCE settings besides PFC (org.rdmad1(5)): shown for a port when one
// of them is known or asked, left out of InfiniBand ports and an rdmad without these keys.
constexpr std::array kLosslessKeys = {
    "Trust",          "DesiredTrust",          "DSCPPriority", "DesiredDSCPPriority",
    "RDMACMRoCEMode", "DesiredRDMACMRoCEMode", "RDMACMToS",    "DesiredRDMACMToS"};
constexpr std::array kLinkKeys = {"Path",      "Name",        "Index",      "PCIAddress", "Driver",
                                  "OperState", "RdmaCapable", "RdmaDevice", "Hint"};

// Properties of type "o" / "ao" other than Path: shown by the name of the object they point to.
bool is_reference(std::string_view key) {
    return key == "PhysicalFunction" || key == "Link" || key == "RdmaDevice" || key == "Links";
}

std::string reference_text(const json& doc, const std::string& path) {
    if (path.empty() || path == "/")
        return {};
    std::string name = doc::name_of(doc, path);
    return name.empty() ? path : name;
}

std::vector<std::string> gid_lines(const json& gids) {
    Table table({"INDEX", "GID", "TYPE", "NETDEV"});
    table.align_right(0);
    for (const auto& g : gids)
        table.add_row({std::to_string(doc::integer(g, "Index")), doc::str(g, "GID"),
                       doc::str(g, "Type"), doc::str(g, "Netdev")});
    return table.lines();
}

// DesiredOrigin [{"Key", "Origin"}]: "pfc_no_drop  from profile lossless-roce (file:3)", the
// keys padded to one column.
std::vector<std::string> origin_lines(const json& origins) {
    std::size_t width = 0;
    for (const auto& o : origins)
        width = std::max(width, doc::str(o, "Key").size());
    std::vector<std::string> out;
    for (const auto& o : origins)
        if (o.is_object())
            out.push_back(
                fmt::format("{:<{}}  from {}", doc::str(o, "Key"), width, doc::str(o, "Origin")));
    return out;
}

// True when the value of a kLosslessKeys key says something: a trust or mode, a map entry, a
// ToS (-1 is unknown or not asked).
bool lossless_known(const json& v) {
    if (v.is_string())
        return !v.get_ref<const std::string&>().empty();
    if (v.is_array())
        return !v.empty();
    return v.is_number_integer() && v.get<std::int64_t>() >= 0;
}

std::vector<std::string> problem_lines(const json& problems) {
    std::vector<std::string> out;
    for (const auto& p : problems)
        out.push_back(doc::problem_text(p));
    return out;
}

// One value as text lines; Fields sanitizes them.
std::vector<std::string> value_lines(const json& doc, std::string_view key, const json& v) {
    if (key == "GIDs")
        return gid_lines(v);
    if (key == "RecommendedGID") {
        // "3 0000:...:c0a8:0101 (RoCE v2, enp1s0f0np0, 192.168.1.1)"; nothing when none.
        if (!v.is_object() || doc::str(v, "GID").empty())
            return {};
        std::string where = doc::str(v, "Type");
        for (const char* k : {"Netdev", "IP"})
            if (!doc::str(v, k).empty())
                where += ", " + doc::str(v, k);
        return {fmt::format("{} {} ({})", doc::integer(v, "Index"), doc::str(v, "GID"), where)};
    }
    if (key == "Problems" || key == "ProblemDetails")
        return problem_lines(v);
    if (key == "DesiredOrigin")
        return v.is_array() ? origin_lines(v) : std::vector<std::string>{};
    if (key == "DesiredVFGUIDs") {
        // One line a VF: "vf 0: node 0011:2233:4455:6600 port 0011:2233:4455:6700".
        std::vector<std::string> lines;
        for (const auto& g : v.is_array() ? v : json::array())
            lines.push_back(fmt::format("vf {}: node {} port {}", doc::integer(g, "VF"),
                                        doc::str(g, "NodeGUID"), doc::str(g, "PortGUID")));
        return lines;
    }
    if (key == "DSCPPriority" || key == "DesiredDSCPPriority") {
        std::string text = doc::dscp_map_text(json{{"v", v}}, "v");
        return text.empty() ? std::vector<std::string>{} : std::vector<std::string>{text};
    }
    if ((key == "RDMACMToS" || key == "DesiredRDMACMToS") && v.is_number() && v.get<double>() < 0)
        return {};
    if (is_reference(key)) {
        std::vector<std::string> out;
        for (const auto& p : v.is_array() ? v : json::array({v}))
            if (p.is_string())
                if (auto text = reference_text(doc, p.get<std::string>()); !text.empty())
                    out.push_back(text);
        return out;
    }
    if (key == "PFCNoDrop" || key == "DesiredPFCNoDrop") {
        // ay: "3,4"; empty ("-") when none.
        std::string text = doc::priorities_text(json{{"v", v}}, "v");
        return text.empty() ? std::vector<std::string>{} : std::vector<std::string>{text};
    }
    if (key == "RateGbps" && v.is_number() && v.get<double>() < 0)
        return {};
    // 0 is "none or unknown" (org.rdmad1(5)): an InfiniBand port has no RoCE MTU.
    if ((key == "ActiveMTU" || key == "NetdevMTU") && v.is_number() && v.get<double>() == 0)
        return {};
    if (v.is_string())
        return {v.get<std::string>()};
    if (v.is_boolean())
        return {v.get<bool>() ? "yes" : "no"};
    if (v.is_number_float())
        return {fmt::format("{:g}", v.get<double>())};
    if (v.is_number())
        return {v.dump()};
    if (v.is_array() &&
        std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); })) {
        std::vector<std::string> items;
        for (const auto& e : v)
            items.push_back(e.get<std::string>());
        return items.empty() ? items
                             : std::vector<std::string>{fmt::format("{}", fmt::join(items, ", "))};
    }
    if (v.is_null())
        return {};
    return {v.dump(-1, ' ', false, json::error_handler_t::replace)};
}

template <std::size_t N>
Fields fields_of(const json& doc, const json& obj, const std::array<const char*, N>& keys,
                 std::initializer_list<std::string_view> skip = {}) {
    Fields fields;
    for (const char* key : keys)
        if (obj.contains(key))
            fields.add(key, value_lines(doc, key, obj.at(key)));
    for (const auto& [key, value] : obj.items()) {
        const bool known = std::find(keys.begin(), keys.end(), std::string_view(key)) != keys.end();
        const bool skipped =
            std::find(skip.begin(), skip.end(), std::string_view(key)) != skip.end();
        if (!known && !skipped)
            fields.add(key, value_lines(doc, key, value));
    }
    return fields;
}

// Problems lines ("warning: ...") take their severity's colour, State ACTIVE green.
void paint_fields(Fields& fields) {
    fields.paint_key("State", state_color);
    for (const char* key : {"Problems", "ProblemDetails"})
        fields.paint_key(key, [](std::string_view line) {
            return severity_color(line.substr(0, line.find(':')));
        });
}

void print_device(const json& doc, const json& dev, const Output& out) {
    // SR-IOV (org.rdmad1(5)): shown for a PF (SRIOVTotalVFs > 0) or when a count is
    // asked, left out of every other device.
    json shown_dev = dev;
    if (doc::integer(dev, "SRIOVTotalVFs") <= 0 && doc::integer(dev, "DesiredSRIOVNumVFs", -1) < 0)
        for (const char* key : {"SRIOVNumVFs", "SRIOVTotalVFs", "DesiredSRIOVNumVFs"})
            shown_dev.erase(key);
    else if (doc::integer(dev, "DesiredSRIOVNumVFs", -1) < 0)
        shown_dev.erase("DesiredSRIOVNumVFs");
    // VF GUIDs: a VF's index on its PF, the GUIDs asked of a PF's VFs when any.
    if (doc::integer(dev, "VFIndex", -1) < 0)
        shown_dev.erase("VFIndex");
    if (!dev.contains("DesiredVFGUIDs") || dev.at("DesiredVFGUIDs").empty())
        shown_dev.erase("DesiredVFGUIDs");
    // ProblemDetails has every problem of Problems, and the info ones: each once (a new user
    // saw every warning twice).
    if (dev.contains("ProblemDetails"))
        shown_dev.erase("Problems");
    std::vector<Fields> sections{fields_of(doc, shown_dev, kDeviceKeys, {"Ports"})};
    for (const auto* port : doc::ports(dev)) {
        // A port type asked of an adapter that sets it in firmware (PortType ""): the type
        // it has is its link layer's, and the Problems above give the remedy.
        json shown = *port;
        if (doc::str(*port, "PortType").empty() && !doc::str(*port, "DesiredPortType").empty())
            if (std::string type = doc::actual_port_type(*port); !type.empty())
                shown["PortType"] = type + " (from LinkLayer; set in firmware)";
        // ConnectX-4+ firmware port type: shown where rdmad read it; a pending
        // type says what applies it.
        if (doc::str(*port, "NextBootPortType").empty())
            shown.erase("NextBootPortType");
        if (std::string pending = doc::str(*port, "PendingPortType"); pending.empty())
            shown.erase("PendingPortType");
        else
            shown["PendingPortType"] = pending + " (after a firmware reset or reboot)";
        if (std::none_of(kLosslessKeys.begin(), kLosslessKeys.end(), [&](const char* key) {
                return port->contains(key) && lossless_known(port->at(key));
            }))
            for (const char* key : kLosslessKeys)
                shown.erase(key);
        sections.push_back(fields_of(doc, shown, kPortKeys));
    }
    std::size_t width = 0;
    for (auto& s : sections) {
        width = std::max(width, s.key_width());
        paint_fields(s);
    }
    for (std::size_t i = 0; i < sections.size(); ++i) {
        if (i > 0 && out.legend)
            fmt::print("\n");
        sections[i].print(stdout, width, out.color);
    }
}

} // namespace

json show_lookup(Client& client, const std::string& name) {
    const char* kind = nullptr;
    std::optional<std::string> path = client.device_by_name(name);
    if (path) {
        kind = "Devices";
    } else if ((path = client.link_by_name(name))) {
        kind = "Links";
    }
    json doc = path ? client.describe() : json();
    // The object can also vanish between the lookup and Describe().
    const json* obj = path ? doc::find_by_path(doc::array(doc, kind), *path) : nullptr;
    if (!obj)
        throw Failure("no RDMA device or netdev named " + sanitize(name));
    json object = *obj;
    return {{"Kind", kind}, {"Object", std::move(object)}, {"Doc", std::move(doc)}};
}

int verb_show(const json& found, const Output& out) {
    const json& obj = found.at("Object");
    const json& doc = found.at("Doc");
    if (out.json)
        print_json(obj);
    else if (found.at("Kind") == "Devices")
        print_device(doc, obj, out);
    else
        fields_of(doc, obj, kLinkKeys).print(stdout, 0, out.color);
    return 0;
}

} // namespace rdmactl
