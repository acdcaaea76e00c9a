// SPDX-License-Identifier: MIT
#include "reconcile/plan.hpp"

#include "config/pfc.hpp"
#include "inventory/driver_capabilities.hpp"

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

/// The desired state's expectations of `dev` (min_rate_gbps, min_active_ports): reported as
/// warnings, never acted on. A port's rate counts only while it is ACTIVE (a port that is not
/// has no rate to speak of) and only when it parsed; one not ACTIVE is port-not-active's story.
std::vector<Problem> expectation_problems(const DeviceState& dev, const DeviceDesired& want) {
    std::vector<Problem> out;
    const std::string dir = "/sys/class/infiniband/" + dev.name + "/ports/";
    if (want.min_rate_gbps)
        for (const auto& port : dev.ports) {
            if (port.state != "ACTIVE" || port.rate_gbps < 0 ||
                port.rate_gbps >= *want.min_rate_gbps)
                continue;
            out.push_back(
                {"port-below-min-rate",
                 "warning",
                 fmt::format("port {}: {:g} Gb/s, below the {:g} Gb/s the desired state expects "
                             "(min_rate_gbps)",
                             port.number, port.rate_gbps, *want.min_rate_gbps),
                 {fmt::format("{}{}/rate = {}", dir, port.number, port.rate)},
                 port.netdev.empty()
                     ? std::string("check the cable, the transceiver and the switch port's speed "
                                   "(ibstat, ibportstate), or lower min_rate_gbps")
                     : fmt::format("check the cable, the transceiver and the switch port's speed "
                                   "(ethtool {}), or lower min_rate_gbps",
                                   port.netdev),
                 port.number});
        }
    if (want.min_active_ports) {
        std::vector<std::string> evidence;
        uint32_t active = 0;
        for (const auto& port : dev.ports) {
            active += port.state == "ACTIVE";
            evidence.push_back(fmt::format("{}{}/state = {}", dir, port.number,
                                           port.state.empty() ? "unreadable" : port.state));
        }
        if (active < *want.min_active_ports)
            out.push_back({"too-few-active-ports", "warning",
                           fmt::format("{} of {} ports ACTIVE, the desired state expects at "
                                       "least {} (min_active_ports)",
                                       active, dev.ports.size(), *want.min_active_ports),
                           std::move(evidence),
                           "see why each port is not ACTIVE (port-not-active), or lower "
                           "min_active_ports"});
    }
    return out;
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

/// The `set LINK_TYPE_P<n>=<v>` part of the mstconfig remedy for port `port` of `dev`. The
/// setting is per card and <n> is the card's physical port (DOMAIN.md §1.4: `mlxconfig -d <dev>
/// set LINK_TYPE_P1=<n> [LINK_TYPE_P2=<n>]`); a ConnectX-4+ PCI function drives one port, so
/// function 0 is P1 and function 1 is P2.
std::string link_type_setting(const DeviceState& dev, uint32_t port, const std::string& type) {
    uint32_t card_port = port;
    const auto dot = dev.pci_address.rfind('.');
    if (dot != std::string::npos && dev.pci_address.size() == dot + 2) {
        const char fn = dev.pci_address[dot + 1];
        if (fn == '0' || fn == '1')
            card_port = static_cast<uint32_t>(fn - '0') + 1;
    }
    return fmt::format("LINK_TYPE_P{}={}", card_port, link_type_value(type));
}

bool link_layer_satisfies(const std::string& desired, const std::string& link_layer) {
    if (desired == "auto")
        return true;
    return (desired == "ib" && link_layer == "InfiniBand") ||
           (desired == "eth" && link_layer == "Ethernet");
}

} // namespace

uint32_t invalid_mlx4_port(const std::vector<std::string>& types) {
    // rdma-core redhat/rdma.mlx4-setup.sh: "In order for port1 to be eth, port2 to must also be
    // eth" (it refuses eth with ib or auto on port 2). Older kernels refused eth/ib in
    // mlx4_check_port_params; current ones only without DPDP (DOMAIN.md §1.3). An auto port 2
    // may sense ib, so rdmad follows the script.
    if (types.size() >= 2 && types[0] == "eth" && types[1] != "eth")
        return 2;
    return 0;
}

std::vector<std::string> resulting_port_types(const DeviceState& device,
                                              const std::vector<std::string>& desired) {
    std::vector<std::string> out;
    for (const auto& port : device.ports) {
        if (port.number == 0)
            continue;
        if (out.size() < port.number)
            out.resize(port.number);
        std::string t = port.number <= desired.size() ? desired[port.number - 1] : port.port_type;
        if (t.rfind("auto", 0) == 0)
            t = "auto";
        out[port.number - 1] = t;
    }
    return out;
}

bool port_type_satisfied(const std::string& desired, const std::string& actual) {
    if (desired == actual)
        return true;
    if (desired == "auto")
        return actual.rfind("auto", 0) == 0;
    return actual == "auto (" + desired + ")";
}

Plan make_plan(const HostState& actual, const std::map<std::string, DeviceDesired>& desired,
               const std::map<std::string, PfcActual>& pfc, const Mlx4ModuleState& mlx4) {
    Plan plan;
    std::map<std::string, uint8_t> mlx4_masks; // by syspath; the module options are host-wide
    std::set<std::string> pfc_netdevs_done;
    for (const auto& [syspath, dev] : actual.devices) {
        auto want_it = desired.find(syspath);
        if (want_it == desired.end())
            continue;
        const DeviceDesired& want = want_it->second;
        auto& problems = plan.problems[syspath];
        auto& ports = plan.ports[syspath];
        for (auto& p : expectation_problems(dev, want))
            problems.push_back(std::move(p));

        // ---- port type ----
        if (!want.port_type.empty()) {
            const PortTypeSwitch where = driver_capabilities(dev.kernel_driver).port_type;
            // mlx4 (a switch in sysfs) checks the pair the card would end up with: a port
            // nothing is asked of keeps its type (mlx4-setup.sh skips a dual-port card whose
            // line names port 1 only; rdmad writes it when the result is a valid pair).
            const std::vector<std::string> resulting = resulting_port_types(dev, want.port_type);
            if (where == PortTypeSwitch::sysfs && invalid_mlx4_port(resulting)) {
                for (const auto& port : dev.ports)
                    if (port.number >= 1 && port.number <= want.port_type.size()) {
                        PortPlan& pp = ports[port.number];
                        pp.desired_port_type = want.port_type[port.number - 1];
                        pp.in_sync = port_type_satisfied(pp.desired_port_type, port.port_type);
                    }
                problems.push_back(
                    {"port-type-invalid", "error",
                     fmt::format("port 2 must be eth while port 1 is eth (mlx4), but it would be "
                                 "{}: port types left as they are",
                                 resulting.size() >= 2 && !resulting[1].empty() ? resulting[1]
                                                                                : "unknown")});
            } else {
                std::vector<Action> writes;
                for (const auto& port : dev.ports) {
                    if (port.number == 0 || port.number > want.port_type.size())
                        continue;
                    const std::string& type = want.port_type[port.number - 1];
                    PortPlan& pp = ports[port.number];
                    pp.desired_port_type = type;
                    if (where == PortTypeSwitch::sysfs) {
                        if (port_type_satisfied(type, port.port_type))
                            continue;
                        pp.in_sync = false;
                        Action a{Action::Kind::mlx4_port_type, dev.name, syspath, port.number,
                                 dev.pci_address, "", type, 0, "PortType",
                                 port.port_type, type};
                        writes.push_back(std::move(a));
                    } else if (!link_layer_satisfies(type, port.link_layer)) {
                        pp.in_sync = false;
                        if (where != PortTypeSwitch::firmware) {
                            problems.push_back(
                                {"port-type-unsupported", "warning",
                                 fmt::format("port {} is {} but {} is asked: {} has no port type "
                                             "switch",
                                             port.number, port.link_layer, type,
                                             dev.kernel_driver.empty() ? dev.name
                                                                       : dev.kernel_driver)});
                            problems.back().port = port.number;
                        } else if (!dev.physical_function.empty()) {
                            problems.push_back(
                                {"port-type-firmware", "warning",
                                 fmt::format("port {} is {} but {} is asked: this is an SR-IOV "
                                             "virtual function; the port type is a firmware "
                                             "setting of the card, made on its physical function "
                                             "{} with mstconfig",
                                             port.number, port.link_layer, type,
                                             dev.physical_function)});
                            problems.back().port = port.number;
                        } else {
                            problems.push_back(
                                {"port-type-firmware", "warning",
                                 fmt::format("port {} is {} but {} is asked: on this adapter the "
                                             "port type is a firmware setting; run mstconfig -d "
                                             "{} set {} and reboot",
                                             port.number, port.link_layer, type, dev.pci_address,
                                             link_type_setting(dev, port.number, type))});
                            problems.back().port = port.number;
                        }
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
                    problems.back().port = port.number;
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
                    problems.back().port = port.number;
                    continue;
                }
                if (now.status != PfcActual::Status::ok) {
                    pp.in_sync = false;
                    problems.push_back({"pfc-unreadable", "warning",
                                        fmt::format("{}: PFC cannot be read: {}", port.netdev,
                                                    now.message)});
                    problems.back().port = port.number;
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
                    problems.back().port = port.number;
                    continue;
                }
                if (pfc_netdevs_done.insert(port.netdev).second)
                    plan.actions.push_back({Action::Kind::pfc, dev.name, syspath, port.number, "",
                                            port.netdev, "", *mask, "PFCNoDrop",
                                            join(now.priorities), join(want.pfc_no_drop)});
            }
            if (driver_capabilities(dev.kernel_driver).host_wide_pfc_option)
                mlx4_masks[syspath] = *mask;
        }

    }

    // mlx4 PFC is also a module option (mlx4_en pfctx/pfcrx), applied at module load, one
    // value for every mlx4 card of the host: the last device (by syspath) decides, and the
    // others that ask a different mask are told.
    std::optional<uint8_t> mlx4_mask;
    if (!mlx4_masks.empty())
        mlx4_mask = mlx4_masks.rbegin()->second;
    for (const auto& [syspath, mask] : mlx4_masks)
        if (mask != *mlx4_mask)
            plan.problems[syspath].push_back(
                {"pfc-module-conflict", "warning",
                 fmt::format("mlx4_en takes one pfctx/pfcrx for the whole host: {:#04x} for "
                             "another mlx4 device wins over {:#04x} asked here",
                             *mlx4_mask, mask)});
    // rdmad's file with nothing asking for it any more (a request without persist, a rule
    // removed): remove it, but only where mlx4 is present, since a card or driver that is not
    // there yet (rdmad started first) will read it when it loads, and not while a rule might
    // still ask it (Mlx4ModuleState::keep_file).
    const bool mlx4_present =
        std::any_of(actual.devices.begin(), actual.devices.end(), [](const auto& d) {
            return driver_capabilities(d.second.kernel_driver).host_wide_pfc_option;
        });
    if (!mlx4_mask && mlx4_present && mlx4.file_pfctx && !mlx4.keep_file)
        plan.actions.push_back({Action::Kind::mlx4_modprobe_remove, "", "", 0, "", "", "", 0,
                                "mlx4_en pfctx/pfcrx", fmt::format("{:#04x}", *mlx4.file_pfctx),
                                "(removed)"});
    if (mlx4_mask) {
        if (mlx4.file_pfctx != mlx4_mask)
            plan.actions.push_back({Action::Kind::mlx4_modprobe, "", "", 0, "", "", "", *mlx4_mask,
                                    "mlx4_en pfctx/pfcrx",
                                    mlx4.file_pfctx ? fmt::format("{:#04x}", *mlx4.file_pfctx) : "",
                                    fmt::format("{:#04x}", *mlx4_mask)});
        if (mlx4.loaded_pfctx && mlx4.loaded_pfctx != mlx4_mask)
            for (const auto& [syspath, dev] : actual.devices)
                if (driver_capabilities(dev.kernel_driver).host_wide_pfc_option &&
                    desired.count(syspath))
                    plan.problems[syspath].push_back(
                        {"pending-reload", "warning",
                         fmt::format("mlx4_en runs with pfctx {:#04x}; {:#04x} takes effect when "
                                     "mlx4_en is reloaded",
                                     *mlx4.loaded_pfctx, *mlx4_mask)});
    }
    plan.desired = desired;
    return plan;
}

} // namespace rdmad
