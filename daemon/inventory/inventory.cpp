// SPDX-License-Identifier: MIT
#include "inventory/inventory.hpp"

#include "inventory/problems.hpp"
#include "inventory/properties.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

namespace rdmad {
namespace {

const std::string kNone;

/// Names of the device properties that differ between `a` and `b` (ports aside: they are
/// objects of their own; "Ports" when their numbers differ), from the property table
/// (inventory/properties.hpp): internal facts the bus does not show are named by their field.
std::set<std::string> device_diff(const DeviceState& a, const DeviceState& b) {
    std::set<std::string> out;
    add_differences(device_properties(), a, b, out);
    return out;
}

std::set<std::string> port_diff(const PortState& a, const PortState& b) {
    std::set<std::string> out;
    add_differences(port_properties(), a, b, out);
    return out;
}

std::set<std::string> link_diff(const LinkState& a, const LinkState& b) {
    std::set<std::string> out;
    add_differences(link_properties(), a, b, out);
    return out;
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
        if (auto gone = o.devices_gone.find(id); gone != o.devices_gone.end())
            devices_gone.emplace(id, gone->second); // the first removal's, as for links
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
        if (links_added.erase(i))
            continue; // added and gone within the same set: never shown
        links_removed.insert(i);
        if (auto gone = o.links_gone.find(i); gone != o.links_gone.end())
            links_gone.emplace(i, gone->second); // the first removal's, if it came back between
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
    const SyspathRef* first = by_name_.first(name);
    return first ? device(**first) : nullptr;
}

const DeviceState* Inventory::device_at_pci(const std::string& pci_address) const {
    if (pci_address.empty())
        return nullptr;
    const SyspathRef* first = by_pci_.first(pci_address);
    return first ? device(**first) : nullptr;
}

const LinkState* Inventory::link(int32_t ifindex) const {
    auto it = state_.links.find(ifindex);
    return it == state_.links.end() ? nullptr : &it->second;
}

const LinkState* Inventory::link_named(const std::string& name) const {
    const int32_t* first = link_by_name_.first(name);
    return first ? link(*first) : nullptr;
}

std::set<int32_t> Inventory::links_of(const std::string& device_name) const {
    std::set<int32_t> out;
    links_of_.for_each(device_name, [&](int32_t index) { out.insert(index); });
    return out;
}

const std::string& Inventory::id_of(const std::string& syspath) const {
    auto it = ids_.find(syspath);
    return it == ids_.end() ? kNone : it->second;
}

const std::string& Inventory::syspath_of(const std::string& id) const {
    auto it = syspath_by_id_.find(id);
    return it == syspath_by_id_.end() ? kNone : *it->second;
}

// ---- indexes ------------------------------------------------------------------------------

void Inventory::index_device(SyspathRef key, const DeviceState& d, bool add) {
    const std::string g = guid_digits(d.node_guid);
    if (add) {
        by_name_.add(d.name, key);
        if (!d.pci_address.empty())
            by_pci_.add(d.pci_address, key);
        if (!g.empty())
            ++guid_count_[g];
        if (!d.physical_function.empty())
            vfs_of_.add(d.physical_function, key);
        for (const auto& p : d.ports)
            if (!p.netdev.empty())
                ports_on_.add(p.netdev, {key, p.number});
        return;
    }
    by_name_.remove(d.name, key);
    if (!d.pci_address.empty())
        by_pci_.remove(d.pci_address, key);
    if (!g.empty())
        if (auto it = guid_count_.find(g); it != guid_count_.end() && --it->second == 0)
            guid_count_.erase(it);
    if (!d.physical_function.empty())
        vfs_of_.remove(d.physical_function, key);
    for (const auto& p : d.ports)
        if (!p.netdev.empty())
            ports_on_.remove(p.netdev, std::make_pair(key, p.number));
}

void Inventory::index_link(const LinkState& l, bool add) {
    if (add) {
        link_by_name_.add(l.name, l.index);
        if (!l.rdma_device.empty())
            links_of_.add(l.rdma_device, l.index);
        return;
    }
    link_by_name_.remove(l.name, l.index);
    if (!l.rdma_device.empty())
        links_of_.remove(l.rdma_device, l.index);
}

void Inventory::mark_device_relatives(const DeviceState& d) {
    // Links name their device by name (RdmaDevice); VFs their PF by PCI address.
    links_of_.for_each(d.name, [&](int32_t index) { unresolved_links_.insert(index); });
    if (!d.pci_address.empty())
        vfs_of_.for_each(d.pci_address, [&](SyspathRef vf) { unresolved_devices_.insert(*vf); });
    unresolved_devices_.insert(d.syspath);
}

void Inventory::mark_link_relatives(const LinkState& l) {
    if (!l.rdma_device.empty())
        by_name_.for_each(l.rdma_device, [&](SyspathRef d) { unresolved_devices_.insert(*d); });
    ports_on_.for_each(l.name, [&](const std::pair<SyspathRef, uint32_t>& port) {
        unresolved_devices_.insert(*port.first);
    });
    unresolved_links_.insert(l.index);
}

ChangeSet Inventory::settle() {
    ++version_;
    ChangeSet cs;
    for (const auto& syspath : unresolved_devices_) {
        auto it = state_.devices.find(syspath);
        if (it == state_.devices.end())
            continue;
        DeviceState& d = it->second;
        const std::string& id = id_of(syspath);
        std::vector<int32_t> links;
        links_of_.for_each(d.name, [&](int32_t index) { links.push_back(index); });
        if (links != d.link_indexes) {
            d.link_indexes = std::move(links);
            cs.devices_changed[id].insert("Links");
        }
        const DeviceState* pf = device_at_pci(d.physical_function);
        std::string pf_id = pf && pf != &d ? id_of(pf->syspath) : kNone;
        if (pf_id != d.pf_id) {
            d.pf_id = std::move(pf_id);
            cs.devices_changed[id].insert("PhysicalFunction");
        }
        for (auto& p : d.ports) {
            const LinkState* l = p.netdev.empty() ? nullptr : link_named(p.netdev);
            const int32_t index = l ? l->index : 0;
            if (index != p.link_index) {
                p.link_index = index;
                cs.ports_changed[{id, p.number}].insert("Link");
            }
        }
    }
    for (const int32_t index : unresolved_links_) {
        auto it = state_.links.find(index);
        if (it == state_.links.end())
            continue;
        LinkState& l = it->second;
        const DeviceState* d = l.rdma_device.empty() ? nullptr : device_named(l.rdma_device);
        std::string id = d ? id_of(d->syspath) : kNone;
        if (id != l.rdma_device_id) {
            l.rdma_device_id = std::move(id);
            cs.links_changed[index].insert("RdmaDevice");
        }
    }
    unresolved_devices_.clear();
    unresolved_links_.clear();
    return cs;
}

ChangeSet Inventory::settled(ChangeSet cs) {
    if (batch_ == 0)
        cs.merge(settle());
    return cs;
}

void Inventory::begin_pass() {
    pass_before_.clear();
    pass_added_.clear();
    // Every device of a pass that starts empty (start-up) is added in it: nothing to keep.
    in_pass_ = !state_.devices.empty();
}

void Inventory::end_pass(ChangeSet& cs) {
    in_pass_ = false;
    for (const auto& [syspath, before] : pass_before_) {
        const DeviceState* now = device(syspath);
        const std::string& id = id_of(syspath);
        if (!now || id.empty() || cs.devices_added.count(id) ||
            now->ports.size() != before.ports.size())
            continue;
        if (auto named = cs.devices_changed.find(id); named != cs.devices_changed.end()) {
            const std::set<std::string> net = device_diff(before, *now);
            std::erase_if(named->second, [&](const std::string& p) { return !net.count(p); });
            if (named->second.empty())
                cs.devices_changed.erase(named);
        }
        for (size_t i = 0; i < now->ports.size(); ++i) {
            auto named = cs.ports_changed.find({id, now->ports[i].number});
            if (named == cs.ports_changed.end() || before.ports[i].number != now->ports[i].number)
                continue;
            const std::set<std::string> net = port_diff(before.ports[i], now->ports[i]);
            std::erase_if(named->second, [&](const std::string& p) { return !net.count(p); });
            if (named->second.empty())
                cs.ports_changed.erase(named);
        }
    }
    pass_before_.clear();
    pass_added_.clear();
}

void Inventory::begin_batch() {
    ++batch_;
}

ChangeSet Inventory::end_batch() {
    if (batch_ > 0 && --batch_ == 0)
        return settle();
    return {};
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
        if (by_pci_.count(d.pci_address) == 1)
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
    moved.devices_gone.emplace(id->second, *d);
    syspath_by_id_.erase(id->second);
    id->second = g;
    syspath_by_id_[g] = id->first;
    moved.devices_added.insert(g);
    mark_device_relatives(*d);
    cs.merge(moved);
    return true;
}

// ---- updates ------------------------------------------------------------------------------

ChangeSet Inventory::put_device(DeviceState d) {
    ++version_;
    ChangeSet cs;
    const SharedText syspath = d.syspath; // the text d holds, shared by its key
    ++objects_compared_;
    auto it = state_.devices.find(syspath);
    if (it == state_.devices.end()) {
        const auto& [key, stored] = *state_.devices.emplace(syspath, std::move(d)).first;
        if (in_pass_)
            pass_added_.insert(key);
        index_device(&key.str(), stored, true);
        const std::string id = choose_id(stored);
        ids_[&key.str()] = id;
        syspath_by_id_[id] = &key.str();
        cs.devices_added.insert(id);
        mark_device_relatives(stored);
        return settled(std::move(cs));
    }
    DeviceState& old = it->second;
    const std::string& id = id_of(syspath);
    // What the Inventory resolves stays until the names settle again.
    d.link_indexes = old.link_indexes;
    d.pf_id = old.pf_id;
    for (auto& p : d.ports)
        for (const auto& q : old.ports)
            if (q.number == p.number)
                p.link_index = q.link_index;
    std::set<std::string> props = device_diff(old, d);
    const bool ports_same = !props.count("Ports");
    if (in_pass_ && (!props.empty() || old.ports != d.ports) && !pass_added_.count(syspath))
        pass_before_.try_emplace(syspath.str(), old); // the first put of the pass only
    bool netdevs_moved = !ports_same;
    if (ports_same)
        for (size_t i = 0; i < d.ports.size(); ++i) {
            auto p = port_diff(old.ports[i], d.ports[i]);
            netdevs_moved = netdevs_moved || p.count("netdev");
            if (!p.empty())
                cs.ports_changed[{id, d.ports[i].number}] = std::move(p);
        }
    const bool relatives = props.count("Name") || props.count("PCIAddress");
    if (relatives)
        mark_device_relatives(old);
    index_device(&it->first.str(), old, false);
    // The device as it was, when its object goes: retracted below and announced again, or
    // moved to the GUID's path (upgrade_id()), maybe renamed in the same put.
    std::optional<DeviceState> was;
    if (!ports_same)
        cs.devices_gone.emplace(id, std::move(old)); // retracted below, announced again
    else if (props.count("NodeGUID"))
        was = std::move(old);
    old = std::move(d);
    index_device(&it->first.str(), old, true);
    if (relatives)
        mark_device_relatives(old);
    if (netdevs_moved || props.count("physical_function"))
        unresolved_devices_.insert(syspath);
    if (!props.empty())
        cs.devices_changed[id].insert(props.begin(), props.end());
    if (!ports_same) {
        // Other port numbers: the device is retracted and announced again with its ports.
        cs.devices_changed.erase(id);
        std::erase_if(cs.ports_changed, [&](const auto& p) { return p.first.first == id; });
        cs.devices_removed.insert(id);
        cs.devices_added.insert(id);
    }
    if (props.count("NodeGUID")) {
        const std::string before = id; // upgrade_id() changes the id `id` refers to
        if (upgrade_id(syspath, cs) && was)
            if (auto gone = cs.devices_gone.find(before); gone != cs.devices_gone.end())
                gone->second = std::move(*was); // its old name, not the one just read
    }
    return settled(std::move(cs));
}

ChangeSet Inventory::remove_device(std::string syspath) {
    ++version_;
    ChangeSet cs;
    auto it = state_.devices.find(syspath);
    if (it == state_.devices.end())
        return cs;
    auto id_entry = ids_.find(syspath);
    const std::string id = id_entry == ids_.end() ? std::string() : id_entry->second;
    index_device(&it->first.str(), it->second, false);
    mark_device_relatives(it->second);
    // Out of every index before the entry (the key they point at) goes.
    if (id_entry != ids_.end())
        ids_.erase(id_entry);
    syspath_by_id_.erase(id);
    cs.devices_gone.emplace(id, std::move(it->second));
    state_.devices.erase(it);
    cs.devices_removed.insert(id);
    cs.devices_changed.erase(id);
    return settled(std::move(cs));
}

void Inventory::rename_device(std::string old_syspath, std::string new_syspath) {
    ++version_;
    auto it = state_.devices.find(old_syspath);
    if (it == state_.devices.end() || state_.devices.count(new_syspath))
        return;
    index_device(&it->first.str(), it->second, false);
    std::string id;
    if (auto id_entry = ids_.find(old_syspath); id_entry != ids_.end()) {
        id = std::move(id_entry->second);
        ids_.erase(id_entry);
    }
    DeviceState d = std::move(it->second);
    state_.devices.erase(it);
    d.syspath = new_syspath;
    const auto& [key, stored] = *state_.devices.emplace(new_syspath, std::move(d)).first;
    index_device(&key.str(), stored, true);
    syspath_by_id_[id] = &key.str();
    ids_[&key.str()] = std::move(id);
}

ChangeSet Inventory::put_link(LinkState l) {
    ++version_;
    ChangeSet cs;
    ++objects_compared_;
    auto it = state_.links.find(l.index);
    if (it == state_.links.end()) {
        index_link(l, true);
        cs.links_added.insert(l.index);
        mark_link_relatives(l);
        state_.links.emplace(l.index, std::move(l));
        return settled(std::move(cs));
    }
    LinkState& old = it->second;
    l.rdma_device_id = old.rdma_device_id; // until the names settle again
    auto props = link_diff(old, l);
    if (props.empty())
        return settled(std::move(cs));
    const bool relatives = props.count("Name") || props.count("rdma_device");
    if (relatives)
        mark_link_relatives(old);
    index_link(old, false);
    old = std::move(l);
    index_link(old, true);
    if (relatives)
        mark_link_relatives(old);
    cs.links_changed[old.index].insert(props.begin(), props.end());
    return settled(std::move(cs));
}

ChangeSet Inventory::remove_link(int32_t ifindex) {
    ++version_;
    ChangeSet cs;
    auto it = state_.links.find(ifindex);
    if (it == state_.links.end())
        return cs;
    index_link(it->second, false);
    mark_link_relatives(it->second);
    cs.links_gone.emplace(ifindex, std::move(it->second));
    state_.links.erase(it);
    cs.links_removed.insert(ifindex);
    return settled(std::move(cs));
}

ChangeSet Inventory::replace(HostState next) {
    ++version_;
    // One batch: the references settle once, against the whole new state.
    begin_batch();
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
    using Entry = decltype(next.devices)::iterator;
    std::vector<Entry> fresh;
    for (auto it = next.devices.begin(); it != next.devices.end(); ++it) {
        if (state_.devices.count(it->first))
            cs.merge(put_device(std::move(it->second)));
        else
            fresh.push_back(it);
    }
    std::sort(fresh.begin(), fresh.end(),
              [](Entry a, Entry b) { return a->second.name < b->second.name; });
    // Stored first, so that the indexes point at their keys; ids are chosen once every new
    // device is indexed. Their entries move over whole (node handles): no second copy of any
    // device, not even of its struct, while both maps hold the host.
    std::vector<std::pair<SyspathRef, const DeviceState*>> stored;
    stored.reserve(fresh.size());
    for (Entry it : fresh) {
        const auto& [key, d] = *state_.devices.insert(next.devices.extract(it)).position;
        if (in_pass_)
            pass_added_.insert(key);
        stored.emplace_back(&key.str(), &d);
    }
    for (const auto& [key, d] : stored)
        index_device(key, *d, true);
    for (const auto& [key, d] : stored) {
        const std::string id = choose_id(*d);
        ids_[key] = id;
        syspath_by_id_[id] = key;
    }
    for (const auto& [key, d] : stored) {
        cs.devices_added.insert(ids_.find(key)->second);
        mark_device_relatives(*d);
        ++objects_compared_;
    }
    // A device whose GUID is now unique (its twin went) takes it as its id.
    for (const auto& [syspath, _] : state_.devices)
        upgrade_id(syspath, cs);
    for (auto it = next.links.begin(); it != next.links.end();) {
        if (state_.links.count(it->first) || it->first != it->second.index) {
            cs.merge(put_link(std::move(it->second)));
            ++it;
            continue;
        }
        // New: its entry moves over whole, as put_link() would add it.
        const LinkState& l = state_.links.insert(next.links.extract(it++)).position->second;
        ++objects_compared_;
        index_link(l, true);
        cs.links_added.insert(l.index);
        mark_link_relatives(l);
    }
    cs.merge(end_batch());
    return cs;
}

} // namespace rdmad
