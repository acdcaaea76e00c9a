// SPDX-License-Identifier: MIT
//
// rdmactl -H A -H B ... diff: what differs between hosts that should be alike. Devices are
// grouped by board (BoardID: the PSID on Mellanox; else HCAType, else KernelDriver), ports
// by board and port number; within a group every device of every host should have the same
// firmware, provider, and per port the same port type, rate and width, RoCE MTU, PFC no-drop
// priorities and recommended RoCE GID index (a fixed NCCL_IB_GID_INDEX is safe only when it is
// the same everywhere), and every host the same number of such devices. One Describe() per
// host.
#include "document.hpp"
#include "table.hpp"
#include "verbs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace rdmactl {

namespace {

using nlohmann::json;

// What is compared, in the order printed: (port 0) the device's, then each port's.
// The setting names are the D-Bus properties they come from ("Devices": how many).
const std::vector<std::string> kDeviceSettings = {"Devices", "FirmwareVersion", "Provider"};
const std::vector<std::string> kPortSettings = {"PortType", "Rate", "ActiveMTU", "PFCNoDrop",
                                                "RecommendedGID"};

// Group: (board, port number; 0 for the device's own settings).
using Group = std::pair<std::string, std::int64_t>;
// value text -> host -> the devices (names) that have it.
using Values = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

std::string board_of(const json& dev) {
    for (const char* key : {"BoardID", "HCAType", "KernelDriver"})
        if (std::string v = doc::str(dev, key); !v.empty())
            return v;
    return "?";
}

// "mlx5 (ibverbs-providers)", "mlx5 (ibverbs-providers, missing)", "-" when none is needed.
std::string provider_value(const json& dev) {
    const std::string provider = doc::str(dev, "Provider");
    if (provider.empty())
        return "-";
    std::string details = doc::str(dev, "ProviderPackage");
    if (dev.contains("ProviderInstalled") && !doc::boolean(dev, "ProviderInstalled"))
        details += details.empty() ? "missing" : ", missing";
    return details.empty() ? provider : fmt::format("{} ({})", provider, details);
}

bool is_roce(const json& port) {
    return doc::str(port, "Transport").rfind("RoCE", 0) == 0;
}

// RoCE MTU: "1024 (netdev 1500)"; "" (not compared) for a port that is not RoCE.
std::string mtu_value(const json& port) {
    if (!port.contains("ActiveMTU") || !is_roce(port))
        return {};
    return fmt::format("{} (netdev {})", doc::integer(port, "ActiveMTU"),
                       doc::integer(port, "NetdevMTU"));
}

// The RoCE GID index applications should use (NCCL_IB_GID_INDEX): "3 (RoCE v2)", "none"
// when the port has no such GID; "" (not compared) for a port that is not RoCE or a daemon
// without RecommendedGID (an older one).
std::string gid_value(const json& port) {
    if (!is_roce(port) || !port.contains("RecommendedGID") || !port["RecommendedGID"].is_object())
        return {};
    const json& gid = port["RecommendedGID"];
    if (doc::str(gid, "GID").empty())
        return "none";
    return fmt::format("{} ({})", doc::integer(gid, "Index"), doc::str(gid, "Type"));
}

std::string port_value(const json& port, const std::string& setting) {
    if (setting == "PortType") {
        const std::string type = doc::actual_port_type(port);
        return type.empty() ? "-" : type;
    }
    if (setting == "Rate") {
        const std::string rate = doc::str(port, "Rate");
        return rate.empty() ? "-" : rate;
    }
    if (setting == "ActiveMTU")
        return mtu_value(port);
    if (setting == "RecommendedGID")
        return gid_value(port);
    const std::string prios = doc::priorities_text(port, "PFCNoDrop");
    return prios.empty() ? "none" : prios;
}

// "alpha (mlx5_0, mlx5_1), beta (mlx5_2)"; without the names for the Devices count.
std::string hosts_text(const std::map<std::string, std::vector<std::string>>& hosts,
                       const std::vector<std::string>& order, bool names) {
    std::vector<std::string> parts;
    for (const auto& host : order) {
        const auto it = hosts.find(host);
        if (it == hosts.end())
            continue;
        parts.push_back(names ? fmt::format("{} ({})", host, fmt::join(it->second, ", ")) : host);
    }
    return fmt::format("{}", fmt::join(parts, ", "));
}

} // namespace

int verb_diff(const std::vector<HostDoc>& docs, const std::map<std::string, std::string>& errors,
              const Output& out) {
    std::vector<std::string> order;
    std::map<Group, std::map<std::string, Values>> groups;
    // Devices per board per host; a host without the board counts 0 below.
    std::map<std::string, std::map<std::string, std::size_t>> counts;
    for (const auto& [host, doc] : docs) {
        order.push_back(host);
        for (const auto* dev : doc::devices(doc)) {
            const std::string board = board_of(*dev);
            const std::string name = doc::str(*dev, "Name");
            ++counts[board][host];
            auto& device = groups[{board, 0}];
            device["FirmwareVersion"][doc::str(*dev, "FirmwareVersion")][host].push_back(name);
            device["Provider"][provider_value(*dev)][host].push_back(name);
            for (const auto* port : doc::ports(*dev)) {
                auto& settings = groups[{board, doc::integer(*port, "Number")}];
                for (const std::string& setting : kPortSettings)
                    if (std::string v = port_value(*port, setting); !v.empty())
                        settings[setting][v][host].push_back(name);
            }
        }
    }
    for (const auto& [board, per_host] : counts)
        for (const auto& host : order) {
            const auto it = per_host.find(host);
            groups[{board, 0}]["Devices"][std::to_string(it == per_host.end() ? 0 : it->second)]
                  [host];
        }

    // Every group and setting with more than one value, values with the most hosts first.
    json differences = json::array();
    Table table({"BOARD", "PORT", "SETTING", "VALUE", "HOSTS"});
    table.align_right(1);
    for (const auto& [group, settings] : groups) {
        const auto& [board, port] = group;
        const bool device_level = port == 0;
        const auto& names = device_level ? kDeviceSettings : kPortSettings;
        for (const std::string& setting : names) {
            const auto found = settings.find(setting);
            if (found == settings.end() || found->second.size() < 2)
                continue;
            std::vector<const Values::value_type*> values;
            for (const auto& v : found->second)
                values.push_back(&v);
            std::stable_sort(values.begin(), values.end(), [](const auto* a, const auto* b) {
                return a->second.size() > b->second.size();
            });
            const bool with_names = setting != "Devices";
            json entry = {
                {"board", board}, {"port", port}, {"setting", setting}, {"values", json::array()}};
            for (const auto* v : values) {
                json hosts = json::object();
                for (const auto& [host, devices] : v->second)
                    hosts[host] = devices;
                entry["values"].push_back({{"value", v->first}, {"hosts", hosts}});
                table.add_row({board, device_level ? "" : std::to_string(port), setting, v->first,
                               hosts_text(v->second, order, with_names)});
            }
            differences.push_back(std::move(entry));
        }
    }
    const int status = differences.empty() ? 0 : kExitProblems;

    if (out.json) {
        json unreachable = json::object();
        for (const auto& [host, error] : errors)
            unreachable[host] = error;
        print_json({{"hosts", order}, {"errors", unreachable}, {"differences", differences}});
        return status;
    }
    if (differences.empty()) {
        // Fewer than two hosts answered: nothing was compared (the errors say why).
        if (out.legend && order.size() >= 2)
            fmt::print("No differences between {} {}.\n", order.size(),
                       order.size() == 1 ? "host" : "hosts");
        return status;
    }
    table.print(stdout, out.legend, out.color);
    if (out.legend)
        fmt::print("\n{} {} between {} {}.\n", differences.size(),
                   differences.size() == 1 ? "setting differs" : "settings differ", order.size(),
                   order.size() == 1 ? "host" : "hosts");
    return status;
}

} // namespace rdmactl
