// SPDX-License-Identifier: MIT
#include "inventory/rdma_capability.hpp"

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rdmad {
namespace {

// Auxiliary device name prefix (devname without ".<id>") -> RDMA module.
// Source: DOMAIN.md §5 table; kernel drivers/base/auxiliary.c (MODALIAS=auxiliary:<name>).
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kAuxModules{{
    {"mlx5_core.rdma", "mlx5_ib"},
    {"mlx5_core.multiport", "mlx5_ib"},
    {"mlx4_core.ib", "mlx4_ib"},
    {"ice.iwarp", "irdma"},
    {"ice.roce", "irdma"},
    {"i40e.iwarp", "irdma"},
    {"bnxt_en.rdma", "bnxt_re"},
    {"mana.rdma", "mana_ib"},
    {"ionic.rdma", "ionic_rdma"},
}};

// NIC driver -> RDMA module, for pairs that bind without (or before) auxiliary devices.
// Source: DOMAIN.md §5; rdma-core kernel-boot/rdma-hw-modules.rules, with its stale names
// corrected (hns -> hns_roce_hw_v2).
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kCompanions{{
    {"cxgb4", "iw_cxgb4"},
    {"be2net", "ocrdma"},
    {"qede", "qedr"},
    {"hns3", "hns_roce_hw_v2"},
    {"enic", "usnic_verbs"},
    {"bnxt_en", "bnxt_re"},
    {"mlx4_core", "mlx4_ib"},
    {"mlx4_en", "mlx4_ib"},
    {"mlx5_core", "mlx5_ib"},
    {"mana", "mana_ib"},
}};

template <typename Table>
std::string lookup(const Table& table, std::string_view key) {
    for (const auto& [k, v] : table)
        if (k == key)
            return std::string(v);
    return {};
}

std::string strip_id(const std::string& aux_name) {
    auto dot = aux_name.rfind('.');
    return dot == std::string::npos ? aux_name : aux_name.substr(0, dot);
}

/// Which RDMA device serves a netdev, looked up by name and PCI address: each map holds the
/// first device (in the inventory's order) that matches, as a walk over the devices would find.
class ServingIndex {
  public:
    explicit ServingIndex(const HostState& inv) {
        for (const auto& [_, dev] : inv.devices) {
            if (!dev.parent_netdev.empty())
                by_port_mapping_.emplace(dev.parent_netdev, &dev);
            for (const auto& port : dev.ports) {
                for (const auto& gid : port.gids)
                    by_port_mapping_.emplace(gid.netdev, &dev);
                by_port_netdev_.emplace(port.netdev, &dev);
            }
            by_pci_.emplace(dev.pci_address, &dev);
        }
    }
    /// The per-port mapping (GID netdevs, rxe parent) wins over the per-function one
    /// (DOMAIN.md §3.4): on a PCI function with two RDMA devices, the one whose GIDs name the
    /// netdev serves it.
    const DeviceState* serving(const LinkState& link) const {
        if (auto it = by_port_mapping_.find(link.name); it != by_port_mapping_.end())
            return it->second;
        if (auto it = by_port_netdev_.find(link.name); it != by_port_netdev_.end())
            return it->second;
        if (!link.pci_address.empty())
            if (auto it = by_pci_.find(link.pci_address); it != by_pci_.end())
                return it->second;
        return nullptr;
    }

  private:
    std::unordered_map<std::string_view, const DeviceState*> by_port_mapping_;
    std::unordered_map<std::string_view, const DeviceState*> by_port_netdev_;
    std::unordered_map<std::string_view, const DeviceState*> by_pci_;
};

std::string provider_hint(const DeviceState& dev) {
    if (!dev.provider.empty() && !dev.provider_installed)
        return "install " + dev.provider_package + " (verbs provider " + dev.provider + ")";
    return {};
}

} // namespace

bool is_rdma_aux_device(const std::string& name) {
    // "<drv>.<function>.<id>" with function rdma, roce, iwarp, ib or multiport.
    auto last = name.rfind('.');
    if (last == std::string::npos || last == 0)
        return false;
    auto prev = name.rfind('.', last - 1);
    if (prev == std::string::npos)
        return false;
    std::string_view function(name.data() + prev + 1, last - prev - 1);
    return function == "rdma" || function == "roce" || function == "iwarp" || function == "ib" ||
           function == "multiport";
}

bool is_unbound_rdma_aux(const AuxDevice& aux) {
    return !aux.pci_address.empty() && is_rdma_aux_device(aux.name) && aux.driver.empty();
}

std::string fallback_aux_module(const std::string& aux_name) {
    return lookup(kAuxModules, strip_id(aux_name));
}

std::string companion_rdma_module(const std::string& nic_driver) {
    return lookup(kCompanions, nic_driver);
}

void classify_links(HostState& inv, const std::vector<AuxDevice>& aux,
                    const ModuleLookup& modules) {
    // Indexed lookups, built once: the walk of every device for every netdev made a full
    // pass quadratic (1,024 devices and 1,025 netdevs: a million device visits).
    std::unordered_map<std::string_view, std::vector<const LinkState*>> links_at_pci;
    for (const auto& [_, link] : inv.links)
        links_at_pci[link.pci_address].push_back(&link);

    // A port that names no netdev in its GID table (IB, iWARP, old kernels) is served by the
    // netdev on the same PCI function whose `dev_port` is port - 1 and whose type matches the
    // link layer (ARPHRD_ETHER 1, ARPHRD_INFINIBAND 32 for IPoIB). DOMAIN.md §3.4: mlx4 has
    // one RDMA device for two ports, and the netdev's dev_port is port - 1.
    for (auto& [_, dev] : inv.devices) {
        if (dev.pci_address.empty())
            continue;
        const auto same_function = links_at_pci.find(dev.pci_address);
        if (same_function == links_at_pci.end())
            continue;
        for (auto& port : dev.ports) {
            bool named = false;
            for (const auto& gid : port.gids)
                named = named || !gid.netdev.empty();
            if (named || !port.netdev.empty())
                continue;
            const uint32_t type = port.link_layer == "InfiniBand" && port.transport != "iWARP"
                                      ? 32u
                                      : 1u;
            for (const LinkState* link : same_function->second)
                if (link->dev_port + 1 == port.number && link->type == type) {
                    port.netdev = link->name;
                    break;
                }
        }
    }
    for (auto& [_, dev] : inv.devices)
        if (!dev.parent_netdev.empty())
            for (auto& port : dev.ports)
                if (port.netdev.empty())
                    port.netdev = dev.parent_netdev;

    // First pass: links served directly.
    const ServingIndex serving(inv);
    for (auto& [_, link] : inv.links) {
        link.rdma_capable = {};
        link.rdma_device.clear();
        link.hint = {};
        if (const DeviceState* dev = serving.serving(link)) {
            link.rdma_capable = "yes";
            link.rdma_device = dev->name;
            link.hint = provider_hint(*dev);
        }
    }
    // Second pass: lower devices (bond slaves) of a served upper device, e.g. the PFs of a
    // RoCE LAG whose mlx5_bond_0 names bond0. The first served netdev of that name (by
    // ifindex) is the upper one.
    std::unordered_map<std::string_view, const LinkState*> served_by_name;
    for (const auto& [_, link] : inv.links)
        if (link.rdma_capable == "yes")
            served_by_name.emplace(link.name, &link);
    for (auto& [_, link] : inv.links) {
        if (!link.rdma_capable.empty() || link.master.empty())
            continue;
        if (auto upper = served_by_name.find(link.master); upper != served_by_name.end()) {
            link.rdma_capable = "yes";
            link.rdma_device = upper->second->rdma_device;
            link.hint = upper->second->hint;
            served_by_name.emplace(link.name, &link); // the upper of a bond over bonds
        }
    }
    // Third pass: hardware that could, but whose RDMA driver is not bound.
    std::unordered_map<std::string_view, const AuxDevice*> unbound_rdma_aux; // by PCI address
    for (const auto& a : aux)
        if (is_unbound_rdma_aux(a))
            unbound_rdma_aux.emplace(a.pci_address, &a);
    for (auto& [_, link] : inv.links) {
        if (!link.rdma_capable.empty())
            continue;
        std::string module;
        std::string unbound;
        if (auto a = unbound_rdma_aux.find(link.pci_address); a != unbound_rdma_aux.end()) {
            module = modules.resolve ? modules.resolve(a->second->modalias) : std::string{};
            if (module.empty())
                module = fallback_aux_module(a->second->name);
            unbound = a->second->name;
        }
        if (unbound.empty() && !link.pci_address.empty())
            module = companion_rdma_module(link.driver);
        if (!module.empty()) {
            link.rdma_capable = "module-not-loaded";
            const bool loaded = modules.loaded && modules.loaded(module);
            if (loaded && !unbound.empty())
                link.hint = module + " is loaded but not bound to " + unbound;
            else if (loaded)
                link.hint = module + " is loaded but serves no device here";
            else
                link.hint = "load " + module;
            continue;
        }
        if (!unbound.empty()) {
            link.rdma_capable = "module-not-loaded";
            link.hint = "no module for " + unbound;
            continue;
        }
        // A netdev on hardware whose driver link is missing: we cannot tell.
        link.rdma_capable = (!link.pci_address.empty() && link.driver.empty()) ? "unknown" : "no";
    }
}

} // namespace rdmad
