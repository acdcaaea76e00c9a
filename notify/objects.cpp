// SPDX-License-Identifier: MIT
#include "objects.hpp"

#include "org.rdmad1.Device.proxy.h"
#include "org.rdmad1.Manager.proxy.h"
#include "org.rdmad1.Port.proxy.h"
#include "rdmad_api.hpp"

#include <tuple>
#include <utility>

namespace rdmad::notify {

namespace {

template <typename T> std::optional<T> get(const Properties& props, const std::string& name) {
    auto it = props.find(name);
    if (it == props.end() || !it->second.containsValueOfType<T>())
        return std::nullopt;
    return it->second.get<T>();
}

// Problems: a(sss) (code, severity, text).
using ProblemsValue = std::vector<sdbus::Struct<std::string, std::string, std::string>>;
// ProblemDetails: a(sssassu) (code, severity, text, evidence, remedy, port).
using DetailsValue = std::vector<sdbus::Struct<std::string, std::string, std::string,
                                               std::vector<std::string>, std::string, uint32_t>>;

// DSCPPriority, DesiredDSCPPriority: a(yy) (DSCP, priority).
using DscpValue = std::vector<sdbus::Struct<uint8_t, uint8_t>>;
// DesiredOrigin: a(ss) (key, origin).
using OriginValue = std::vector<sdbus::Struct<std::string, std::string>>;

// `to` = props[name] when it is there with the type T; whether it was.
template <typename T> bool take(const Properties& props, const std::string& name, T& to) {
    auto v = get<T>(props, name);
    if (v)
        to = std::move(*v);
    return v.has_value();
}

bool take_dscp(const Properties& props, const std::string& name, DscpMap& to) {
    auto v = get<DscpValue>(props, name);
    if (!v)
        return false;
    to.clear();
    for (const auto& e : *v)
        to.emplace_back(std::get<0>(e), std::get<1>(e));
    return true;
}

} // namespace

bool update_port_settings(const Properties& props, PortSettings& s) {
    bool found = false;
    found |= take(props, "InSync", s.in_sync);
    found |= take(props, "LinkLayer", s.link_layer);
    found |= take(props, "PortType", s.port_type);
    found |= take(props, "DesiredPortType", s.desired_port_type);
    found |= take(props, "PFCNoDrop", s.pfc_no_drop);
    found |= take(props, "DesiredPFCNoDrop", s.desired_pfc_no_drop);
    found |= take(props, "Trust", s.trust);
    found |= take(props, "DesiredTrust", s.desired_trust);
    found |= take_dscp(props, "DSCPPriority", s.dscp_priority);
    found |= take_dscp(props, "DesiredDSCPPriority", s.desired_dscp_priority);
    found |= take(props, "RDMACMRoCEMode", s.rdma_cm_roce_mode);
    found |= take(props, "DesiredRDMACMRoCEMode", s.desired_rdma_cm_roce_mode);
    found |= take(props, "RDMACMToS", s.rdma_cm_tos);
    found |= take(props, "DesiredRDMACMToS", s.desired_rdma_cm_tos);
    return found;
}

bool update_provider(const Properties& props, bool& installed, std::string& package) {
    bool found = take(props, "ProviderInstalled", installed);
    found |= take(props, "ProviderPackage", package);
    return found;
}

std::optional<std::string> install_mode_from(const Properties& props) {
    return get<std::string>(props, "InstallProvidersMode");
}

std::optional<std::map<std::string, std::string>> origin_from(const Properties& props) {
    auto v = get<OriginValue>(props, "DesiredOrigin");
    if (!v)
        return std::nullopt;
    std::map<std::string, std::string> out;
    for (const auto& e : *v)
        out[std::get<0>(e)] = std::get<1>(e);
    return out;
}

std::optional<std::vector<Problem>> problems_from(const Properties& props) {
    if (auto details = get<DetailsValue>(props, "ProblemDetails")) {
        std::vector<Problem> out;
        for (const auto& d : *details)
            out.push_back(
                {std::get<0>(d), std::get<1>(d), std::get<2>(d), std::get<4>(d), std::get<5>(d)});
        return out;
    }
    if (auto problems = get<ProblemsValue>(props, "Problems")) {
        std::vector<Problem> out;
        for (const auto& p : *problems)
            out.push_back({std::get<0>(p), std::get<1>(p), std::get<2>(p), "", 0});
        return out;
    }
    return std::nullopt;
}

DeviceState device_from(const Properties& props) {
    DeviceState d;
    d.name = get<std::string>(props, "Name").value_or("");
    d.pci_address = get<std::string>(props, "PCIAddress").value_or("");
    d.problems = problems_from(props).value_or(std::vector<Problem>{});
    d.origin = origin_from(props).value_or(std::map<std::string, std::string>{});
    update_provider(props, d.provider_installed, d.provider_package);
    return d;
}

PortState port_from(const std::string& path, const Properties& props) {
    PortState p;
    const std::string infix = std::string("/") + api::kPortElement + "/";
    const auto at = path.rfind(infix);
    p.device_path = at == std::string::npos ? std::string() : path.substr(0, at);
    p.number = get<uint32_t>(props, "Number").value_or(0);
    p.state = get<std::string>(props, "State").value_or("");
    update_port_settings(props, p.settings);
    return p;
}

Snapshot snapshot_from(const ManagedObjects& objects) {
    Snapshot s;
    for (const auto& [path, ifaces] : objects) {
        for (const auto& [iface, props] : ifaces) {
            if (iface == org::rdmad1::Device_proxy::INTERFACE_NAME)
                s.devices[path] = device_from(props);
            else if (iface == org::rdmad1::Port_proxy::INTERFACE_NAME)
                s.ports[path] = port_from(path, props);
            else if (iface == org::rdmad1::Manager_proxy::INTERFACE_NAME) {
                s.manager_problems = problems_from(props).value_or(std::vector<Problem>{});
                s.install_providers_mode = install_mode_from(props).value_or("");
            }
        }
    }
    return s;
}

} // namespace rdmad::notify
