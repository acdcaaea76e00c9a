// SPDX-License-Identifier: MIT
#include "inventory/rdma_capability.hpp"

#include <array>
#include <string_view>
#include <utility>

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

bool gids_name(const PortState& port, const std::string& netdev) {
    for (const auto& gid : port.gids)
        if (gid.netdev == netdev)
            return true;
    return false;
}

const DeviceState* serving_device(const HostState& inv, const LinkState& link) {
    // The per-port mapping (GID netdevs, rxe parent) wins over the per-function one
    // (DOMAIN.md §3.4): on a PCI function with two RDMA devices, the one whose GIDs name the
    // netdev serves it.
    for (const auto& [_, dev] : inv.devices) {
        if (!dev.parent_netdev.empty() && dev.parent_netdev == link.name)
            return &dev;
        for (const auto& port : dev.ports)
            if (gids_name(port, link.name))
                return &dev;
    }
    for (const auto& [_, dev] : inv.devices)
        for (const auto& port : dev.ports)
            if (port.netdev == link.name)
                return &dev;
    if (!link.pci_address.empty())
        for (const auto& [_, dev] : inv.devices)
            if (dev.pci_address == link.pci_address)
                return &dev;
    return nullptr;
}

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

std::string fallback_aux_module(const std::string& aux_name) {
    return lookup(kAuxModules, strip_id(aux_name));
}

std::string companion_rdma_module(const std::string& nic_driver) {
    return lookup(kCompanions, nic_driver);
}

void classify_links(HostState& inv, const std::vector<AuxDevice>& aux,
                    const ModuleLookup& modules) {
    // A port that names no netdev in its GID table (IB, iWARP, old kernels) is served by the
    // netdev on the same PCI function whose `dev_port` is port - 1 and whose type matches the
    // link layer (ARPHRD_ETHER 1, ARPHRD_INFINIBAND 32 for IPoIB). DOMAIN.md §3.4: mlx4 has
    // one RDMA device for two ports, and the netdev's dev_port is port - 1.
    for (auto& [_, dev] : inv.devices) {
        if (dev.pci_address.empty())
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
            for (const auto& [__, link] : inv.links)
                if (link.pci_address == dev.pci_address && link.dev_port + 1 == port.number &&
                    link.type == type) {
                    port.netdev = link.name;
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
    for (auto& [_, link] : inv.links) {
        link.rdma_capable.clear();
        link.rdma_device.clear();
        link.hint.clear();
        if (const DeviceState* dev = serving_device(inv, link)) {
            link.rdma_capable = "yes";
            link.rdma_device = dev->name;
            link.hint = provider_hint(*dev);
        }
    }
    // Second pass: lower devices (bond slaves) of a served upper device, e.g. the PFs of a
    // RoCE LAG whose mlx5_bond_0 names bond0.
    for (auto& [_, link] : inv.links) {
        if (!link.rdma_capable.empty() || link.master.empty())
            continue;
        for (const auto& [__, upper] : inv.links)
            if (upper.name == link.master && upper.rdma_capable == "yes") {
                link.rdma_capable = "yes";
                link.rdma_device = upper.rdma_device;
                link.hint = upper.hint;
                break;
            }
    }
    // Third pass: hardware that could, but whose RDMA driver is not bound.
    for (auto& [_, link] : inv.links) {
        if (!link.rdma_capable.empty())
            continue;
        std::string module;
        std::string unbound;
        for (const auto& a : aux) {
            if (a.pci_address.empty() || a.pci_address != link.pci_address ||
                !is_rdma_aux_device(a.name) || !a.driver.empty())
                continue;
            module = modules.resolve ? modules.resolve(a.modalias) : std::string{};
            if (module.empty())
                module = fallback_aux_module(a.name);
            unbound = a.name;
            break;
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
