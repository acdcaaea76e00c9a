// SPDX-License-Identifier: MIT
#include "reconcile/plan.hpp"

#include "reconcile/settings/setting.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace rdmad {
namespace {

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
        std::vector<SharedText> evidence;
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
        std::string t =
            port.number <= desired.size() ? desired[port.number - 1] : port.port_type.str();
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
               const std::map<std::string, PfcActual>& pfc, const Mlx4ModuleState& mlx4,
               const ModulePlanInput& modules) {
    Plan plan;
    std::set<std::string> netdevs_taken;
    for (const auto& [syspath, dev] : actual.devices) {
        auto want_it = desired.find(syspath);
        if (want_it == desired.end())
            continue;
        const DeviceDesired& want = want_it->second;
        auto& problems = plan.problems[syspath];
        auto& ports = plan.ports[syspath];
        for (auto& p : expectation_problems(dev, want))
            problems.push_back(std::move(p));
        SettingPlanContext ctx{actual, syspath, dev,      want,         pfc,
                               ports,  problems, plan.actions, netdevs_taken};
        for (const Setting* setting : all_settings())
            if (setting->asks(want))
                setting->plan(ctx);
    }
    for (const Setting* setting : all_settings())
        setting->plan_host(actual, desired, mlx4, plan);
    for (const Setting* setting : all_settings())
        setting->plan_modules(actual, modules, plan);
    plan.desired = desired;
    return plan;
}

} // namespace rdmad
