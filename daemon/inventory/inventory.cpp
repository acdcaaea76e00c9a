// SPDX-License-Identifier: MIT
#include "inventory/inventory.hpp"

#include "inventory/problems.hpp"

#include <algorithm>
#include <iterator>
#include <vector>

namespace rdmad {
namespace {

const std::string kNone;

/// Names of the device properties that differ between `a` and `b` (ports aside: they are
/// objects of their own; "Ports" when their numbers differ). Internal facts the bus does not
/// show are named by their field.
std::set<std::string> device_diff(const DeviceState& a, const DeviceState& b) {
    std::set<std::string> out;
    auto cmp = [&](const auto& x, const auto& y, const char* name) {
        if (x != y)
            out.insert(name);
    };
    cmp(a.name, b.name, "Name");
    cmp(a.node_type, b.node_type, "NodeType");
    cmp(a.node_guid, b.node_guid, "NodeGUID");
    cmp(a.sys_image_guid, b.sys_image_guid, "SysImageGUID");
    cmp(a.firmware_version, b.firmware_version, "FirmwareVersion");
    cmp(a.hca_type, b.hca_type, "HCAType");
    cmp(a.board_id, b.board_id, "BoardID");
    cmp(a.node_description, b.node_description, "NodeDescription");
    cmp(a.pci_address, b.pci_address, "PCIAddress");
    cmp(a.kernel_driver, b.kernel_driver, "KernelDriver");
    cmp(a.provider, b.provider, "Provider");
    cmp(a.provider_installed, b.provider_installed, "ProviderInstalled");
    cmp(a.provider_package, b.provider_package, "ProviderPackage");
    cmp(a.verbs_device, b.verbs_device, "VerbsDevice");
    cmp(a.physical_function, b.physical_function, "PhysicalFunction");
    // Problems shows all but the doctor's info findings; ProblemDetails every problem.
    std::vector<Problem> serious_a, serious_b;
    std::copy_if(a.problems.begin(), a.problems.end(), std::back_inserter(serious_a),
                 in_problems_property);
    std::copy_if(b.problems.begin(), b.problems.end(), std::back_inserter(serious_b),
                 in_problems_property);
    cmp(serious_a, serious_b, "Problems");
    cmp(a.problems, b.problems, "ProblemDetails");
    cmp(a.pcie_path, b.pcie_path, "pcie_path");
    cmp(a.syspath, b.syspath, "syspath");
    cmp(a.parent_netdev, b.parent_netdev, "parent_netdev");
    bool same_ports = a.ports.size() == b.ports.size();
    for (size_t i = 0; same_ports && i < a.ports.size(); ++i)
        same_ports = a.ports[i].number == b.ports[i].number;
    if (!same_ports)
        out.insert("Ports");
    return out;
}

std::set<std::string> port_diff(const PortState& a, const PortState& b) {
    std::set<std::string> out;
    auto cmp = [&](const auto& x, const auto& y, const char* name) {
        if (x != y)
            out.insert(name);
    };
    cmp(a.state, b.state, "State");
    cmp(a.phys_state, b.phys_state, "PhysicalState");
    cmp(a.link_layer, b.link_layer, "LinkLayer");
    cmp(a.transport, b.transport, "Transport");
    cmp(a.roce_versions, b.roce_versions, "RoCEVersions");
    cmp(a.rate_gbps, b.rate_gbps, "RateGbps");
    cmp(a.rate, b.rate, "Rate");
    cmp(a.lid, b.lid, "LID");
    cmp(a.sm_lid, b.sm_lid, "SMLID");
    cmp(a.gids, b.gids, "GIDs");
    cmp(a.netdev, b.netdev, "Link");
    cmp(a.port_type, b.port_type, "PortType");
    cmp(a.desired_port_type, b.desired_port_type, "DesiredPortType");
    cmp(a.pfc_no_drop, b.pfc_no_drop, "PFCNoDrop");
    cmp(a.desired_pfc_no_drop, b.desired_pfc_no_drop, "DesiredPFCNoDrop");
    cmp(a.in_sync, b.in_sync, "InSync");
    cmp(a.netdev_mtu, b.netdev_mtu, "NetdevMTU");
    cmp(a.active_mtu, b.active_mtu, "ActiveMTU");
    cmp(a.recommended_gid, b.recommended_gid, "RecommendedGID");
    cmp(a.pfc, b.pfc, "pfc");
    cmp(a.pkey0, b.pkey0, "pkey0");
    return out;
}

std::set<std::string> link_diff(const LinkState& a, const LinkState& b) {
    std::set<std::string> out;
    auto cmp = [&](const auto& x, const auto& y, const char* name) {
        if (x != y)
            out.insert(name);
    };
    cmp(a.name, b.name, "Name");
    cmp(a.pci_address, b.pci_address, "PCIAddress");
    cmp(a.driver, b.driver, "Driver");
    cmp(a.operstate, b.operstate, "OperState");
    cmp(a.rdma_capable, b.rdma_capable, "RdmaCapable");
    cmp(a.rdma_device, b.rdma_device, "RdmaDevice");
    cmp(a.hint, b.hint, "Hint");
    cmp(a.kind, b.kind, "kind");
    cmp(a.lower_ifindex, b.lower_ifindex, "lower_ifindex");
    cmp(a.syspath, b.syspath, "syspath");
    cmp(a.master, b.master, "master");
    cmp(a.dev_port, b.dev_port, "dev_port");
    cmp(a.type, b.type, "type");
    cmp(a.carrier, b.carrier, "carrier");
    cmp(a.flags, b.flags, "flags");
    cmp(a.mtu, b.mtu, "mtu");
    return out;
}

template <typename K, typename V>
void erase_from(std::map<K, std::set<V>>& index, const K& key, const V& value) {
    auto it = index.find(key);
    if (it == index.end())
        return;
    it->second.erase(value);
    if (it->second.empty())
        index.erase(it);
}

} // namespace

std::string guid_digits(const std::string& guid) {
    std::string digits;
    digits.reserve(16);
    for (char c : guid)
        if (c != ':')
            digits += c;
    if (digits.empty() || digits.find_first_not_of('0') == std::string::npos)
        return {};
    return digits;
}

// ---- ChangeSet ----------------------------------------------------------------------------

bool ChangeSet::empty() const {
    return devices_added.empty() && devices_removed.empty() && devices_changed.empty() &&
           ports_changed.empty() && links_added.empty() && links_removed.empty() &&
           links_changed.empty();
}

size_t ChangeSet::size() const {
    return devices_added.size() + devices_removed.size() + devices_changed.size() +
           ports_changed.size() + links_added.size() + links_removed.size() + links_changed.size();
}

void ChangeSet::merge(const ChangeSet& o) {
    for (const auto& id : o.devices_removed) {
        if (devices_added.erase(id)) {
            // Added and gone within the same set: never shown.
            devices_changed.erase(id);
            std::erase_if(ports_changed, [&](const auto& p) { return p.first.first == id; });
            continue;
        }
        devices_removed.insert(id);
        devices_changed.erase(id);
        std::erase_if(ports_changed, [&](const auto& p) { return p.first.first == id; });
    }
    for (const auto& id : o.devices_added)
        devices_added.insert(id);
    for (const auto& [id, props] : o.devices_changed)
        if (!devices_added.count(id))
            devices_changed[id].insert(props.begin(), props.end());
    for (const auto& [key, props] : o.ports_changed)
        if (!devices_added.count(key.first))
            ports_changed[key].insert(props.begin(), props.end());
    for (const int32_t i : o.links_removed) {
        links_changed.erase(i);
        if (!links_added.erase(i))
            links_removed.insert(i);
    }
    for (const int32_t i : o.links_added) {
        // An ifindex removed, then added again in one set: a new netdev, retract and announce.
        links_added.insert(i);
    }
    for (const auto& [i, props] : o.links_changed)
        if (!links_added.count(i))
            links_changed[i].insert(props.begin(), props.end());
}

// ---- lookups ------------------------------------------------------------------------------

const DeviceState* Inventory::device(const std::string& syspath) const {
    auto it = state_.devices.find(syspath);
    return it == state_.devices.end() ? nullptr : &it->second;
}

const DeviceState* Inventory::device_named(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : device(*it->second.begin());
}

const DeviceState* Inventory::device_at_pci(const std::string& pci_address) const {
    if (pci_address.empty())
        return nullptr;
    auto it = by_pci_.find(pci_address);
    return it == by_pci_.end() ? nullptr : device(*it->second.begin());
}

const LinkState* Inventory::link(int32_t ifindex) const {
    auto it = state_.links.find(ifindex);
    return it == state_.links.end() ? nullptr : &it->second;
}

const LinkState* Inventory::link_named(const std::string& name) const {
    auto it = link_by_name_.find(name);
    return it == link_by_name_.end() ? nullptr : link(*it->second.begin());
}

std::set<int32_t> Inventory::links_of(const std::string& device_name) const {
    auto it = links_of_.find(device_name);
    return it == links_of_.end() ? std::set<int32_t>{} : it->second;
}

const std::string& Inventory::id_of(const std::string& syspath) const {
    auto it = ids_.find(syspath);
    return it == ids_.end() ? kNone : it->second;
}

const std::string& Inventory::syspath_of(const std::string& id) const {
    auto it = syspath_by_id_.find(id);
    return it == syspath_by_id_.end() ? kNone : it->second;
}

// ---- indexes ------------------------------------------------------------------------------

void Inventory::index_device(const DeviceState& d, bool add) {
    const std::string g = guid_digits(d.node_guid);
    if (add) {
        by_name_[d.name].insert(d.syspath);
        if (!d.pci_address.empty())
            by_pci_[d.pci_address].insert(d.syspath);
        if (!g.empty())
            ++guid_count_[g];
        if (!d.physical_function.empty())
            vfs_of_[d.physical_function].insert(d.syspath);
        for (const auto& p : d.ports)
            if (!p.netdev.empty())
                ports_on_[p.netdev].insert({d.syspath, p.number});
        return;
    }
    erase_from(by_name_, d.name, d.syspath);
    if (!d.pci_address.empty())
        erase_from(by_pci_, d.pci_address, d.syspath);
    if (!g.empty())
        if (auto it = guid_count_.find(g); it != guid_count_.end() && --it->second == 0)
            guid_count_.erase(it);
    if (!d.physical_function.empty())
        erase_from(vfs_of_, d.physical_function, d.syspath);
    for (const auto& p : d.ports)
        if (!p.netdev.empty())
            erase_from(ports_on_, p.netdev, std::make_pair(d.syspath, p.number));
}

void Inventory::index_link(const LinkState& l, bool add) {
    if (add) {
        link_by_name_[l.name].insert(l.index);
        if (!l.rdma_device.empty())
            links_of_[l.rdma_device].insert(l.index);
        return;
    }
    erase_from(link_by_name_, l.name, l.index);
    if (!l.rdma_device.empty())
        erase_from(links_of_, l.rdma_device, l.index);
}

void Inventory::device_relatives(const DeviceState& d, ChangeSet& cs) const {
    // Links name their device by name (RdmaDevice); VFs their PF by PCI address.
    if (auto it = links_of_.find(d.name); it != links_of_.end())
        for (const int32_t i : it->second)
            cs.links_changed[i].insert("RdmaDevice");
    if (!d.pci_address.empty())
        if (auto it = vfs_of_.find(d.pci_address); it != vfs_of_.end())
            for (const auto& vf : it->second)
                if (vf != d.syspath)
                    cs.devices_changed[id_of(vf)].insert("PhysicalFunction");
}

void Inventory::link_relatives(const LinkState& l, ChangeSet& cs) const {
    if (!l.rdma_device.empty())
        if (auto it = by_name_.find(l.rdma_device); it != by_name_.end())
            for (const auto& syspath : it->second)
                cs.devices_changed[id_of(syspath)].insert("Links");
    if (auto it = ports_on_.find(l.name); it != ports_on_.end())
        for (const auto& [syspath, number] : it->second)
            cs.ports_changed[{id_of(syspath), number}].insert("Link");
}

// ---- identity -----------------------------------------------------------------------------

std::string Inventory::choose_id(const DeviceState& d) const {
    std::string id;
    if (std::string g = guid_digits(d.node_guid); !g.empty()) {
        auto it = guid_count_.find(g);
        if (it != guid_count_.end() && it->second == 1)
            id = g;
    }
    if (id.empty() && !d.pci_address.empty()) {
        auto it = by_pci_.find(d.pci_address);
        if (it != by_pci_.end() && it->second.size() == 1)
            id = d.pci_address;
    }
    if (id.empty())
        id = d.name;
    const std::string base = id;
    for (int n = 1; syspath_by_id_.count(id); ++n)
        id = base + "_" + std::to_string(n);
    return id;
}

bool Inventory::upgrade_id(const std::string& syspath, ChangeSet& cs) {
    const DeviceState* d = device(syspath);
    const std::string g = d ? guid_digits(d->node_guid) : std::string();
    auto id = ids_.find(syspath);
    if (g.empty() || id == ids_.end() || id->second == g || guid_count_[g] != 1 ||
        syspath_by_id_.count(g))
        return false;
    // The object moves to the path a fresh start would give it.
    ChangeSet moved;
    moved.devices_removed.insert(id->second);
    syspath_by_id_.erase(id->second);
    id->second = g;
    syspath_by_id_[g] = syspath;
    moved.devices_added.insert(g);
    device_relatives(*d, moved);
    cs.merge(moved);
    return true;
}

// ---- updates ------------------------------------------------------------------------------

ChangeSet Inventory::put_device(DeviceState d) {
    ChangeSet cs;
    const std::string syspath = d.syspath;
    ++objects_compared_;
    auto it = state_.devices.find(syspath);
    if (it == state_.devices.end()) {
        index_device(d, true);
        const std::string id = choose_id(d);
        ids_[syspath] = id;
        syspath_by_id_[id] = syspath;
        cs.devices_added.insert(id);
        auto& stored = state_.devices.emplace(syspath, std::move(d)).first->second;
        device_relatives(stored, cs);
        return cs;
    }
    DeviceState& old = it->second;
    const std::string& id = id_of(syspath);
    std::set<std::string> props = device_diff(old, d);
    const bool ports_same = !props.count("Ports");
    if (ports_same)
        for (size_t i = 0; i < d.ports.size(); ++i) {
            auto p = port_diff(old.ports[i], d.ports[i]);
            if (!p.empty())
                cs.ports_changed[{id, d.ports[i].number}] = std::move(p);
        }
    const bool relatives = props.count("Name") || props.count("PCIAddress");
    if (relatives)
        device_relatives(old, cs);
    index_device(old, false);
    old = std::move(d);
    index_device(old, true);
    if (relatives)
        device_relatives(old, cs);
    if (!props.empty())
        cs.devices_changed[id].insert(props.begin(), props.end());
    if (!ports_same) {
        // Other port numbers: the device is retracted and announced again with its ports.
        cs.devices_changed.erase(id);
        std::erase_if(cs.ports_changed, [&](const auto& p) { return p.first.first == id; });
        cs.devices_removed.insert(id);
        cs.devices_added.insert(id);
    }
    if (props.count("NodeGUID"))
        upgrade_id(syspath, cs);
    return cs;
}

ChangeSet Inventory::remove_device(std::string syspath) {
    ChangeSet cs;
    auto it = state_.devices.find(syspath);
    if (it == state_.devices.end())
        return cs;
    const std::string id = ids_[syspath];
    index_device(it->second, false);
    device_relatives(it->second, cs);
    state_.devices.erase(it);
    ids_.erase(syspath);
    syspath_by_id_.erase(id);
    cs.devices_removed.insert(id);
    cs.devices_changed.erase(id);
    return cs;
}

void Inventory::rename_device(std::string old_syspath, std::string new_syspath) {
    auto it = state_.devices.find(old_syspath);
    if (it == state_.devices.end() || state_.devices.count(new_syspath))
        return;
    DeviceState d = std::move(it->second);
    index_device(d, false);
    state_.devices.erase(it);
    d.syspath = new_syspath;
    index_device(d, true);
    state_.devices.emplace(new_syspath, std::move(d));
    std::string id = std::move(ids_[old_syspath]);
    ids_.erase(old_syspath);
    syspath_by_id_[id] = new_syspath;
    ids_[new_syspath] = std::move(id);
}

ChangeSet Inventory::put_link(LinkState l) {
    ChangeSet cs;
    ++objects_compared_;
    auto it = state_.links.find(l.index);
    if (it == state_.links.end()) {
        index_link(l, true);
        cs.links_added.insert(l.index);
        link_relatives(l, cs);
        state_.links.emplace(l.index, std::move(l));
        return cs;
    }
    LinkState& old = it->second;
    auto props = link_diff(old, l);
    if (props.empty())
        return cs;
    const bool relatives = props.count("Name") || props.count("RdmaDevice");
    if (relatives)
        link_relatives(old, cs);
    index_link(old, false);
    old = std::move(l);
    index_link(old, true);
    if (relatives)
        link_relatives(old, cs);
    cs.links_changed[old.index].insert(props.begin(), props.end());
    return cs;
}

ChangeSet Inventory::remove_link(int32_t ifindex) {
    ChangeSet cs;
    auto it = state_.links.find(ifindex);
    if (it == state_.links.end())
        return cs;
    index_link(it->second, false);
    link_relatives(it->second, cs);
    state_.links.erase(it);
    cs.links_removed.insert(ifindex);
    return cs;
}

ChangeSet Inventory::replace(HostState next) {
    ChangeSet cs;
    std::vector<std::string> gone_devices;
    for (const auto& [syspath, _] : state_.devices)
        if (!next.devices.count(syspath))
            gone_devices.push_back(syspath);
    for (const auto& syspath : gone_devices)
        cs.merge(remove_device(syspath));
    std::vector<int32_t> gone_links;
    for (const auto& [index, _] : state_.links)
        if (!next.links.count(index))
            gone_links.push_back(index);
    for (const int32_t index : gone_links)
        cs.merge(remove_link(index));
    // Known devices first: their ids stay. New ones then in name order, with every new
    // device indexed first, so that a GUID or PCI address shared with another new device is
    // seen as shared (the ids a fresh start gives).
    std::vector<DeviceState*> fresh;
    for (auto& [syspath, d] : next.devices) {
        if (state_.devices.count(syspath))
            cs.merge(put_device(std::move(d)));
        else
            fresh.push_back(&d);
    }
    std::sort(fresh.begin(), fresh.end(),
              [](const DeviceState* a, const DeviceState* b) { return a->name < b->name; });
    for (DeviceState* d : fresh)
        index_device(*d, true);
    for (DeviceState* d : fresh) {
        const std::string id = choose_id(*d);
        ids_[d->syspath] = id;
        syspath_by_id_[id] = d->syspath;
    }
    for (DeviceState* d : fresh) {
        const std::string syspath = d->syspath;
        cs.devices_added.insert(ids_[syspath]);
        auto& stored = state_.devices.emplace(syspath, std::move(*d)).first->second;
        device_relatives(stored, cs);
        ++objects_compared_;
    }
    // A device whose GUID is now unique (its twin went) takes it as its id.
    for (const auto& [syspath, _] : state_.devices)
        upgrade_id(syspath, cs);
    for (auto& [index, l] : next.links)
        cs.merge(put_link(std::move(l)));
    return cs;
}

} // namespace rdmad
