// SPDX-License-Identifier: MIT
//
// The verbs that change the desired state (polkit action org.rdmad1.configure):
// set-port-type, set-pfc, set-trust, set-dscp, set-rdma-cm, revert, reconcile, reload. Their
// arguments are checked in main.cpp before any call; what rdmad then makes of the request shows in
// status and doctor.
#include "document.hpp"
#include "table.hpp"
#include "verbs.hpp"

#include <fmt/format.h>

#include <string_view>
#include <vector>

namespace rdmactl {

namespace {

using nlohmann::json;

// The device `name` and its port `number` in `doc`; Failure when either is missing.
std::pair<const json*, const json*> lookup_port(Client& client, const json& doc,
                                                const std::string& name, unsigned number,
                                                bool any_port) {
    const auto path = client.device_by_name(name);
    const json* dev = path ? doc::find_by_path(doc::array(doc, "Devices"), *path) : nullptr;
    if (!dev)
        throw Failure("no RDMA device named " + sanitize(name));
    const auto ports = doc::ports(*dev);
    for (const auto* port : ports)
        if (doc::integer(*port, "Number") == number)
            return {dev, port};
    if (any_port && !ports.empty())
        return {dev, ports.front()};
    throw Failure(fmt::format("{} has no port {}", sanitize(name), number));
}

// The port object to ask a device-wide setting on (PFC, trust, DSCP map, RDMA-CM defaults are
// set on every port's netdev or RoCE port by the daemon): any port will do, port 1 first.
std::string device_port_path(Client& client, const std::string& device) {
    const json doc = client.describe();
    return doc::str(*lookup_port(client, doc, device, 1, true).second, "Path");
}

// " (persistent)", " (exclusive, persistent)", "" as the verbs end their line.
std::string request_flags(bool exclusive, bool persist) {
    std::vector<std::string> flags;
    if (exclusive)
        flags.emplace_back("exclusive");
    if (persist)
        flags.emplace_back("persistent");
    return flags.empty() ? std::string() : fmt::format(" ({})", fmt::join(flags, ", "));
}

// The daemon's "[3,4]" for PFC priorities as the verbs print them: "3,4", "" for "[]".
std::string change_value(const std::string& v) {
    if (v.size() >= 2 && v.front() == '[' && v.back() == ']')
        return v.substr(1, v.size() - 2);
    return v;
}

} // namespace

int verb_set_port_type(Client& client, const Output& out, const std::string& device, unsigned port,
                       const std::string& type, bool persist) {
    (void)out;
    json doc = client.describe();
    auto [dev, p] = lookup_port(client, doc, device, port, false);
    (void)dev;
    client.set_port_type(doc::str(*p, "Path"), type, persist);
    // Nothing more: rdmad replies when it has taken the request, before it has applied it, so
    // a Describe() now would show the old state. status and doctor show the outcome.
    fmt::print("{} port {}: port type {} requested{}\n", sanitize(device), port, type,
               persist ? " (persistent)" : "");
    return 0;
}

int verb_set_pfc(Client& client, const Output& out, const std::string& device,
                 const std::vector<std::uint8_t>& priorities, bool persist) {
    (void)out;
    client.set_pfc_no_drop(device_port_path(client, device), priorities, persist);
    std::vector<std::string> items;
    for (auto prio : priorities)
        items.push_back(std::to_string(prio));
    fmt::print("{}: PFC no-drop priorities {} requested{}\n", sanitize(device),
               fmt::join(items, ","), request_flags(false, persist));
    return 0;
}

int verb_set_trust(Client& client, const Output& out, const std::string& device,
                   const std::string& trust, bool persist) {
    (void)out;
    client.set_trust(device_port_path(client, device), trust, persist);
    fmt::print("{}: trust {} requested{}\n", sanitize(device), trust,
               request_flags(false, persist));
    return 0;
}

int verb_set_dscp(Client& client, const Output& out, const std::string& device, const DscpMap& map,
                  bool exclusive, bool persist) {
    (void)out;
    client.set_dscp_priority(device_port_path(client, device), map, exclusive, persist);
    std::vector<std::string> items;
    for (const auto& [dscp, prio] : map)
        items.push_back(fmt::format("{}:{}", dscp, prio));
    fmt::print("{}: DSCP priorities {} requested{}\n", sanitize(device), fmt::join(items, ","),
               request_flags(exclusive, persist));
    return 0;
}

int verb_set_rdma_cm(Client& client, const Output& out, const std::string& device,
                     const std::string& roce_mode, std::int32_t tos, bool persist) {
    (void)out;
    client.set_rdma_cm(device_port_path(client, device), roce_mode, tos, persist);
    std::vector<std::string> items;
    if (!roce_mode.empty())
        items.push_back("RoCE mode " + roce_mode);
    if (tos >= 0)
        items.push_back(fmt::format("ToS {}", tos));
    fmt::print("{}: RDMA-CM {} requested{}\n", sanitize(device), fmt::join(items, ", "),
               request_flags(false, persist));
    return 0;
}

int verb_revert(Client& client, const Output& out, const std::string& device, unsigned port) {
    (void)out;
    json doc = client.describe();
    // Without PORT: every setting of the device, asked on any port object (port 1 first).
    auto [dev, p] = lookup_port(client, doc, device, port ? port : 1, port == 0);
    (void)dev;
    client.revert(doc::str(*p, "Path"), port ? "PortType" : "");
    if (port)
        fmt::print("{} port {}: port type set over D-Bus dropped; /etc/rdmad applies\n",
                   sanitize(device), port);
    else
        fmt::print("{}: settings made over D-Bus dropped; /etc/rdmad applies\n", sanitize(device));
    return 0;
}

int verb_reconcile(Client& client, const Output& out, bool dry_run) {
    const auto changes = client.reconcile(dry_run);
    // Named after the call: a port type change may have renamed or re-created the device,
    // but its object path stays.
    const json doc = client.describe();
    if (out.json) {
        json list = json::array();
        for (const auto& c : changes)
            list.push_back({{"path", c.path},
                            {"object", doc::object_label(doc, c.path)},
                            {"setting", c.setting},
                            {"from", change_value(c.from)},
                            {"to", change_value(c.to)}});
        print_json(list);
        return 0;
    }
    // Differences rdmad cannot act on (no netdev for PFC, a firmware port type, a refused
    // pair) are not changes; say so, or "Nothing to change." reads as "all in sync".
    size_t out_of_sync = 0;
    for (const auto& d : doc.value("Devices", json::array()))
        for (const auto& p : d.value("Ports", json::array()))
            if (!p.value("InSync", true))
                ++out_of_sync;
    const auto unchangeable = [&] {
        if (out.legend && out_of_sync > changes.size())
            fmt::print("{} {} not in sync that rdmad cannot change; 'rdmactl doctor' says why.\n",
                       out_of_sync - changes.size(),
                       out_of_sync - changes.size() == 1 ? "port is" : "ports are");
    };
    if (changes.empty()) {
        if (out.legend)
            fmt::print("Nothing to change.\n");
        unchangeable();
        return 0;
    }
    Table table({"OBJECT", "SETTING", "FROM", "TO"});
    for (const auto& c : changes)
        table.add_row(
            {doc::object_label(doc, c.path), c.setting, change_value(c.from), change_value(c.to)});
    table.print(stdout, out.legend);
    if (out.legend)
        fmt::print("\n{} {}{}.\n", changes.size(), changes.size() == 1 ? "change" : "changes",
                   dry_run ? " to make (dry run, nothing applied)"
                           : " requested ('rdmactl doctor' shows any that failed)");
    unchangeable();
    return 0;
}

int verb_reload(Client& client, const Output& out) {
    (void)out;
    client.reload();
    return 0;
}

int verb_install_providers(Client& client, const Output& out) {
    const std::vector<std::string> packages = client.install_providers();
    if (out.json) {
        fmt::print("{}\n", json(packages).dump());
        return 0;
    }
    if (packages.empty()) {
        if (out.legend)
            fmt::print("No verbs provider is missing: nothing to install.\n");
        return 0;
    }
    for (const auto& p : packages)
        fmt::print("{}\n", sanitize(p));
    if (out.legend)
        fmt::print("\nPackageKit is installing {} ('rdmactl doctor' shows how it ends).\n",
                   packages.size() == 1 ? "it" : "them");
    return 0;
}

} // namespace rdmactl
