// SPDX-License-Identifier: MIT
#include "reconcile/plan.hpp"

#include "config/pfc.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace rdmad {
namespace {

std::string join(const std::vector<uint8_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}

// mlxconfig LINK_TYPE_P<n>: 1 InfiniBand, 2 Ethernet, 3 VPI (auto). Source: NVIDIA MFT
// documentation of mlxconfig/mstconfig (Debian package mstflint).
std::string link_type_value(const std::string& port_type) {
    if (port_type == "ib")
        return "1";
    if (port_type == "eth")
        return "2";
    return "3";
}

bool link_layer_satisfies(const std::string& desired, const std::string& link_layer) {
    if (desired == "auto")
        return true;
    return (desired == "ib" && link_layer == "InfiniBand") ||
           (desired == "eth" && link_layer == "Ethernet");
}

} // namespace

uint32_t invalid_mlx4_port(const std::vector<std::string>& types) {
    if (types.size() >= 2 && types[0] == "eth" && types[1] == "ib")
        return 2;
    return 0;
}

bool port_type_satisfied(const std::string& desired, const std::string& actual) {
    if (desired == actual)
        return true;
    if (desired == "auto")
        return actual.rfind("auto", 0) == 0;
    return actual == "auto (" + desired + ")";
}

Plan make_plan(const Inventory& actual, const std::map<std::string, DeviceDesired>& desired,
               const std::map<std::string, PfcActual>& pfc, const Mlx4ModuleState& mlx4) {
    Plan plan;
    std::optional<uint8_t> mlx4_mask; // module options are one per host (module-wide)
    std::set<std::string> pfc_netdevs_done;
    for (const auto& [syspath, dev] : actual.devices) {
        auto want_it = desired.find(syspath);
        if (want_it == desired.end())
            continue;
        const DeviceDesired& want = want_it->second;
        auto& problems = plan.problems[syspath];
        auto& ports = plan.ports[syspath];

        // ---- port type ----
        if (!want.port_type.empty()) {
            const bool mlx4 = dev.kernel_driver == "mlx4_core";
            if (mlx4 && invalid_mlx4_port(want.port_type)) {
                problems.push_back({"port-type-invalid", "error",
                                    "port 2 cannot be InfiniBand while port 1 is Ethernet "
                                    "(mlx4): port types left as they are"});
            } else {
                std::vector<Action> writes;
                for (const auto& port : dev.ports) {
                    if (port.number == 0 || port.number > want.port_type.size())
                        continue;
                    const std::string& type = want.port_type[port.number - 1];
                    PortPlan& pp = ports[port.number];
                    pp.desired_port_type = type;
                    if (mlx4) {
                        if (port_type_satisfied(type, port.port_type))
                            continue;
                        pp.in_sync = false;
                        Action a{Action::Kind::mlx4_port_type, dev.name, syspath, port.number,
                                 dev.pci_address, "", type, 0, "PortType",
                                 port.port_type, type};
                        writes.push_back(std::move(a));
                    } else if (!link_layer_satisfies(type, port.link_layer)) {
                        pp.in_sync = false;
                        problems.push_back(
                            {"port-type-firmware", "warning",
                             fmt::format("port {} is {} but {} is asked: on this adapter the "
                                         "port type is a firmware setting; run mstconfig -d {} "
                                         "set LINK_TYPE_P{}={} and reboot",
                                         port.number, port.link_layer, type, dev.pci_address,
                                         port.number, link_type_value(type))});
                    }
                }
                // Port 2 first when port 1 becomes Ethernet, so no step is eth/ib.
                const bool port1_eth = !want.port_type.empty() && want.port_type[0] == "eth";
                std::stable_sort(writes.begin(), writes.end(), [&](const Action& a, const Action& b) {
                    return port1_eth ? a.port > b.port : a.port < b.port;
                });
                for (auto& w : writes)
                    plan.actions.push_back(std::move(w));
            }
        }

        // ---- PFC no-drop priorities ----
        if (!want.pfc_no_drop.empty()) {
            const auto mask = pfc_mask(want.pfc_no_drop);
            if (!mask)
                continue; // the config layer refuses these; nothing to do here
            for (const auto& port : dev.ports) {
                PortPlan& pp = ports[port.number];
                pp.desired_pfc = want.pfc_no_drop;
                if (port.netdev.empty()) {
                    pp.in_sync = false;
                    problems.push_back({"pfc-no-netdev", "warning",
                                        fmt::format("port {} has no netdev: PFC cannot be set",
                                                    port.number)});
                    continue;
                }
                auto it = pfc.find(port.netdev);
                const PfcActual now = it == pfc.end() ? PfcActual{} : it->second;
                if (now.status == PfcActual::Status::ok)
                    pp.pfc_now = now.priorities;
                if (now.status == PfcActual::Status::not_supported) {
                    pp.in_sync = false;
                    problems.push_back({"no-dcb", "warning",
                                        fmt::format("{} has no DCB (EOPNOTSUPP): PFC no-drop "
                                                    "priorities cannot be set on it",
                                                    port.netdev)});
                    continue;
                }
                if (now.status != PfcActual::Status::ok) {
                    pp.in_sync = false;
                    problems.push_back({"pfc-unreadable", "warning",
                                        fmt::format("{}: PFC cannot be read: {}", port.netdev,
                                                    now.message)});
                    continue;
                }
                if (now.priorities == want.pfc_no_drop)
                    continue;
                pp.in_sync = false;
                if (now.lldpad || now.willing) {
                    problems.push_back(
                        {"pfc-owned-elsewhere", "warning",
                         fmt::format("{}: PFC is {} but {} is asked; {} owns DCB here, so rdmad "
                                     "does not fight it",
                                     port.netdev, join(now.priorities), join(want.pfc_no_drop),
                                     now.lldpad ? "lldpad" : "firmware DCBX in willing mode")});
                    continue;
                }
                if (pfc_netdevs_done.insert(port.netdev).second)
                    plan.actions.push_back({Action::Kind::pfc, dev.name, syspath, port.number, "",
                                            port.netdev, "", *mask, "PFCNoDrop",
                                            join(now.priorities), join(want.pfc_no_drop)});
            }
            if (dev.kernel_driver == "mlx4_core")
                mlx4_mask = *mask;
        }

    }

    // mlx4 PFC is also a module option (mlx4_en pfctx/pfcrx), applied at module load.
    if (mlx4_mask) {
        if (mlx4.file_pfctx != mlx4_mask)
            plan.actions.push_back({Action::Kind::mlx4_modprobe, "", "", 0, "", "", "", *mlx4_mask,
                                    "mlx4_en pfctx/pfcrx",
                                    mlx4.file_pfctx ? fmt::format("{:#04x}", *mlx4.file_pfctx) : "",
                                    fmt::format("{:#04x}", *mlx4_mask)});
        if (mlx4.loaded_pfctx && mlx4.loaded_pfctx != mlx4_mask)
            for (const auto& [syspath, dev] : actual.devices)
                if (dev.kernel_driver == "mlx4_core" && desired.count(syspath))
                    plan.problems[syspath].push_back(
                        {"pending-reload", "warning",
                         fmt::format("mlx4_en runs with pfctx {:#04x}; {:#04x} takes effect when "
                                     "mlx4_en is reloaded",
                                     *mlx4.loaded_pfctx, *mlx4_mask)});
    }
    return plan;
}

} // namespace rdmad
