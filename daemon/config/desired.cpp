// SPDX-License-Identifier: MIT
#include "config/desired.hpp"

#include "inventory/attributes.hpp"
#include "reconcile/settings/setting.hpp"

#include <fnmatch.h>

namespace rdmad {

namespace {

bool glob_matches(const std::string& pattern, const std::string& name) {
    // No FNM_PERIOD or FNM_PATHNAME: device and netdev names have neither '/' nor meaningful
    // leading dots.
    return !name.empty() && ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

bool guid_matches(const std::string& wanted, const std::string& actual) {
    // Both sides normalised; the inventory already stores parse_guid()'s form, but a test or a
    // future reader may not.
    const auto a = parse_guid(actual);
    return a && *a == wanted;
}

} // namespace

bool rule_matches(const Match& match, const DeviceState& device,
                  const std::vector<LinkState>& links_of_device) {
    if (match.empty())
        return false;
    if (!match.pci_address.empty() && match.pci_address != device.pci_address)
        return false;
    if (!match.driver.empty() && match.driver != device.kernel_driver)
        return false;
    if (!match.node_guid.empty() && !guid_matches(match.node_guid, device.node_guid))
        return false;
    if (!match.device_glob.empty() && !glob_matches(match.device_glob, device.name))
        return false;
    if (!match.netdev_glob.empty()) {
        bool any = false;
        for (const auto& link : links_of_device)
            any = any || glob_matches(match.netdev_glob, link.name);
        for (const auto& port : device.ports)
            any = any || glob_matches(match.netdev_glob, port.netdev);
        // rxe and siw name their netdev in `parent` rather than through a port.
        any = any || glob_matches(match.netdev_glob, device.parent_netdev);
        if (!any)
            return false;
    }
    return true;
}

DeviceDesired resolve(const DesiredConfig& config, const DeviceState& device,
                      const std::vector<LinkState>& links_of_device) {
    DeviceDesired out;
    for (const auto& rule : config.rules) {
        if (!rule_matches(rule.match, device, links_of_device))
            continue;
        const std::string origin = rule.line ? rule.file + ":" + std::to_string(rule.line)
                                             : rule.file;
        bool set = false;
        for (const Setting* setting : all_settings())
            if (setting->sets(rule)) {
                setting->resolve(rule, origin, out);
                set = true;
            }
        if (rule.require_provider) {
            out.require_provider = *rule.require_provider;
            set = true;
        }
        if (rule.min_rate_gbps) {
            out.min_rate_gbps = rule.min_rate_gbps;
            set = true;
        }
        if (rule.min_active_ports) {
            out.min_active_ports = rule.min_active_ports;
            set = true;
        }
        if (set)
            out.from.push_back(rule.file + ":" + std::to_string(rule.line));
    }
    return out;
}

} // namespace rdmad

namespace rdmad {

std::optional<VfGuid> VfGuids::of(uint32_t vf) const {
    if (base) {
        // No wrap: a GUID past ff:ff:ff:ff:ff:ff:ff:ff is none (the config check refuses a range
        // that passes it within the VFs the rule can ask, reconcile/settings/vf_guids.cpp).
        if (base->node > UINT64_MAX - vf || base->port > UINT64_MAX - vf)
            return std::nullopt;
        return VfGuid{vf, base->node + vf, base->port + vf};
    }
    const auto it = std::lower_bound(list.begin(), list.end(), vf,
                                     [](const VfGuid& g, uint32_t n) { return g.vf < n; });
    if (it == list.end() || it->vf != vf)
        return std::nullopt;
    return *it;
}

} // namespace rdmad
