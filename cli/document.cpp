// SPDX-License-Identifier: MIT
#include "document.hpp"

#include "rdmad_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

namespace rdmactl::doc {

namespace {

const json* member(const json& obj, const char* key) {
    if (!obj.is_object())
        return nullptr;
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// "Natural" order of kernel names: runs of digits compare by value.
bool natural_less(std::string_view a, std::string_view b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (is_digit(a[i]) && is_digit(b[j])) {
            std::size_t ie = i, je = j;
            while (ie < a.size() && is_digit(a[ie]))
                ++ie;
            while (je < b.size() && is_digit(b[je]))
                ++je;
            std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
            while (na.size() > 1 && na.front() == '0')
                na.remove_prefix(1);
            while (nb.size() > 1 && nb.front() == '0')
                nb.remove_prefix(1);
            if (na.size() != nb.size())
                return na.size() < nb.size();
            if (na != nb)
                return na < nb;
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j])
                return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

std::vector<const json*> pointers(const json& items) {
    std::vector<const json*> out;
    for (const auto& item : items)
        if (item.is_object())
            out.push_back(&item);
    return out;
}

} // namespace

std::string str(const json& obj, const char* key) {
    const json* v = member(obj, key);
    return v && v->is_string() ? v->get<std::string>() : std::string();
}

bool boolean(const json& obj, const char* key) {
    const json* v = member(obj, key);
    return v && v->is_boolean() && v->get<bool>();
}

std::int64_t integer(const json& obj, const char* key, std::int64_t fallback) {
    const json* v = member(obj, key);
    return v && v->is_number_integer() ? v->get<std::int64_t>() : fallback;
}

double number(const json& obj, const char* key, double fallback) {
    const json* v = member(obj, key);
    return v && v->is_number() ? v->get<double>() : fallback;
}

std::vector<std::string> strings(const json& obj, const char* key) {
    std::vector<std::string> out;
    for (const auto& v : array(obj, key))
        if (v.is_string())
            out.push_back(v.get<std::string>());
    return out;
}

const json& array(const json& obj, const char* key) {
    static const json empty = json::array();
    const json* v = member(obj, key);
    return v && v->is_array() ? *v : empty;
}

std::vector<const json*> devices(const json& doc) {
    auto out = pointers(array(doc, "Devices"));
    std::stable_sort(out.begin(), out.end(), [](const json* a, const json* b) {
        return natural_less(str(*a, "Name"), str(*b, "Name"));
    });
    return out;
}

std::vector<const json*> links(const json& doc) {
    auto out = pointers(array(doc, "Links"));
    std::stable_sort(out.begin(), out.end(), [](const json* a, const json* b) {
        return integer(*a, "Index") < integer(*b, "Index");
    });
    return out;
}

std::vector<const json*> ports(const json& device) {
    auto out = pointers(array(device, "Ports"));
    std::stable_sort(out.begin(), out.end(), [](const json* a, const json* b) {
        return integer(*a, "Number") < integer(*b, "Number");
    });
    return out;
}

const json* find_by_path(const json& items, const std::string& path) {
    if (path.empty() || path == "/")
        return nullptr;
    for (const auto& item : items)
        if (str(item, "Path") == path)
            return &item;
    return nullptr;
}

std::string name_of(const json& doc, const std::string& path) {
    if (const json* d = find_by_path(array(doc, "Devices"), path))
        return str(*d, "Name");
    if (const json* l = find_by_path(array(doc, "Links"), path))
        return str(*l, "Name");
    return {};
}

std::string provider_text(const json& device) {
    std::string provider = str(device, "Provider");
    if (provider.empty())
        return {};
    return boolean(device, "ProviderInstalled") ? provider : provider + " (missing)";
}

std::string transport_text(const json& port) {
    std::string transport = str(port, "Transport");
    const auto versions = strings(port, "RoCEVersions");
    if (transport == "RoCE" && !versions.empty())
        transport += fmt::format(" {}", fmt::join(versions, ","));
    return transport;
}

std::string rate_text(const json& port) {
    const double rate = number(port, "RateGbps");
    if (rate < 0)
        return {};
    return fmt::format("{:g} Gb/s", rate);
}

std::string problem_text(const json& problem) {
    return fmt::format("{}: {} ({})", str(problem, "Severity"), str(problem, "Text"),
                       str(problem, "Code"));
}

std::string priorities_text(const json& obj, const char* key) {
    std::vector<std::string> items;
    for (const auto& v : array(obj, key))
        if (v.is_number_integer())
            items.push_back(std::to_string(v.get<std::int64_t>()));
    return fmt::format("{}", fmt::join(items, ","));
}

std::string actual_port_type(const json& port) {
    std::string type = str(port, "PortType");
    if (!type.empty())
        return type;
    // dbus/org.rdmad1.Port.xml LinkLayer: "InfiniBand", "Ethernet", "Unknown", ...
    const std::string link_layer = str(port, "LinkLayer");
    if (link_layer == "InfiniBand")
        return "ib";
    if (link_layer == "Ethernet")
        return "eth";
    return {};
}

bool has_firmware_port_type_problem(const json& device, std::int64_t number) {
    // daemon/reconcile/settings/port_type.cpp: "port <n> is <link layer> but <type> is
    // asked..." of a port type in firmware that rdmad cannot read (no mstconfig, or a
    // function that refuses it), or from an rdmad that only reports it.
    const std::string prefix = fmt::format("port {} is ", number);
    for (const auto& p : array(device, "Problems")) {
        const std::string code = str(p, "Code");
        if ((code == "port-type-firmware" || code == "mstconfig-missing" ||
             code == "mstconfig-failed") &&
            str(p, "Text").rfind(prefix, 0) == 0)
            return true;
    }
    return false;
}

std::string dscp_map_text(const json& obj, const char* key) {
    std::vector<std::string> items;
    for (const auto& e : array(obj, key))
        if (e.is_object())
            items.push_back(
                fmt::format("{}:{}", integer(e, "DSCP", -1), integer(e, "Priority", -1)));
    return fmt::format("{}", fmt::join(items, ","));
}

namespace {

// The differences of the settings beside port type and PFC where something is
// asked: "Trust pcp, desired dscp", "DSCPPriority 26:0, desired 26:3", "RDMACMToS -, desired
// 106". A DSCP map differs when an entry asked is missing (without `exclusive`, rdmad leaves
// the others), or, when nothing else differs, when the maps differ at all (`exclusive`, which
// is not on the bus).
std::vector<std::string> lossless_diffs(const json& port) {
    auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
    std::vector<std::string> diffs;
    const auto compare = [&](const char* key, const std::string& now, const std::string& want) {
        if (!want.empty() && now != want)
            diffs.push_back(fmt::format("{} {}, desired {}", key, dash(now), want));
    };
    compare("Trust", str(port, "Trust"), str(port, "DesiredTrust"));
    const json& map = array(port, "DSCPPriority");
    const json& want_map = array(port, "DesiredDSCPPriority");
    const bool missing = std::any_of(want_map.begin(), want_map.end(), [&](const json& e) {
        return std::find(map.begin(), map.end(), e) == map.end();
    });
    const auto map_diff = [&] {
        return fmt::format("DSCPPriority {}, desired {}", dash(dscp_map_text(port, "DSCPPriority")),
                           dscp_map_text(port, "DesiredDSCPPriority"));
    };
    if (missing)
        diffs.push_back(map_diff());
    compare("RDMACMRoCEMode", str(port, "RDMACMRoCEMode"), str(port, "DesiredRDMACMRoCEMode"));
    const auto tos = [&](const char* key) {
        const std::int64_t v = integer(port, key, -1);
        return v < 0 ? std::string() : std::to_string(v);
    };
    compare("RDMACMToS", tos("RDMACMToS"), tos("DesiredRDMACMToS"));
    if (diffs.empty() && !want_map.empty() && map != want_map)
        diffs.push_back(map_diff()); // nothing else explains it: exclusive
    return diffs;
}

} // namespace

std::string sync_text(const json& port, bool skip_port_type, const json* device) {
    if (!port.is_object() || !port.contains("InSync") || boolean(port, "InSync"))
        return {};
    auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
    std::vector<std::string> diffs;
    const std::string type = actual_port_type(port), want_type = str(port, "DesiredPortType");
    // "auto (ib)" is what mlx4's "auto" looks like once the hardware has sensed the link; a
    // type set in firmware (no PortType) is never "auto", and any satisfies "auto".
    const bool firmware = str(port, "PortType").empty();
    const bool type_ok = want_type.empty() || type == want_type ||
                         (want_type == "auto" && (firmware || type.rfind("auto", 0) == 0));
    // ConnectX-4+: the firmware holds the type asked for its next boot.
    const std::string pending = str(port, "PendingPortType");
    if (!pending.empty())
        diffs.push_back(
            fmt::format("PortType {}, {} pending a firmware reset or reboot", dash(type), pending));
    else if (!type_ok && !skip_port_type)
        diffs.push_back(fmt::format("PortType {}, desired {}", dash(type), want_type));
    const std::string pfc = priorities_text(port, "PFCNoDrop");
    const std::string want_pfc = priorities_text(port, "DesiredPFCNoDrop");
    const std::vector<std::string> lossless = lossless_diffs(port);
    // An empty DesiredPFCNoDrop is both "nothing asked" and "PFC off": name it only when
    // nothing else explains the difference.
    if (pfc != want_pfc && (!want_pfc.empty() || (diffs.empty() && lossless.empty() && type_ok)))
        diffs.push_back(fmt::format("PFCNoDrop {}, desired {}", dash(pfc), dash(want_pfc)));
    diffs.insert(diffs.end(), lossless.begin(), lossless.end());
    // The SR-IOV VF count is the device's (its PF's ports are out of sync while it differs).
    if (device) {
        const std::int64_t want_vfs = integer(*device, "DesiredSRIOVNumVFs", -1);
        if (want_vfs >= 0 && integer(*device, "SRIOVNumVFs") != want_vfs)
            diffs.push_back(fmt::format("SRIOVNumVFs {}, desired {}",
                                        integer(*device, "SRIOVNumVFs"), want_vfs));
    }
    if (diffs.empty())
        return type_ok || !skip_port_type ? "not in sync" : "";
    return fmt::format("not in sync: {}", fmt::join(diffs, "; "));
}

std::pair<const json*, const json*> find_port(const json& doc, const std::string& path) {
    if (path.empty() || path == "/")
        return {nullptr, nullptr};
    for (const auto& dev : array(doc, "Devices"))
        if (const json* port = find_by_path(array(dev, "Ports"), path))
            return {&dev, port};
    return {nullptr, nullptr};
}

std::string object_label(const json& doc, const std::string& path) {
    if (path == rdmad::api::kManagerPath)
        return "rdmad";
    if (auto [dev, port] = find_port(doc, path); port)
        return fmt::format("{} port {}", str(*dev, "Name"), integer(*port, "Number"));
    std::string name = name_of(doc, path);
    return name.empty() ? path : name;
}

} // namespace rdmactl::doc
