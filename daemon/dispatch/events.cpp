// SPDX-License-Identifier: MIT
#include "dispatch/events.hpp"

#include "inventory/object_path.hpp"
#include "inventory/problems.hpp"

#include <algorithm>
#include <stdexcept>

namespace rdmad::dispatch {

const KnownPort& KnownPorts::at(uint32_t number) const {
    auto it = std::lower_bound(ports_.begin(), ports_.end(), number,
                               [](const auto& p, uint32_t n) { return p.first < n; });
    if (it == ports_.end() || it->first != number)
        throw std::out_of_range("KnownPorts::at: no port " + std::to_string(number));
    return it->second;
}

KnownPort& KnownPorts::operator[](uint32_t number) {
    auto it = std::lower_bound(ports_.begin(), ports_.end(), number,
                               [](const auto& p, uint32_t n) { return p.first < n; });
    if (it == ports_.end() || it->first != number)
        it = ports_.insert(it, {number, KnownPort{}});
    return it->second;
}

namespace {

KnownDevice know_device(const DeviceState& d) {
    KnownDevice k;
    for (const auto& p : d.ports)
        k.ports[p.number] = KnownPort{p.state == "ACTIVE", p.in_sync};
    for (const auto& p : d.problems)
        if (in_problems_property(p) && (p.severity == "error" || p.severity == "warning"))
            k.problems.emplace_back(p.code, p.port);
    std::sort(k.problems.begin(), k.problems.end());
    k.problems.erase(std::unique(k.problems.begin(), k.problems.end()), k.problems.end());
    k.problems.shrink_to_fit();
    return k;
}

void put(std::map<std::string, std::string>& env, const char* name, const std::string& value) {
    if (!value.empty())
        env[name] = value;
}

/// A device or port event of `d`: the device as it is, or as it was last when `gone` (then
/// no netdev or port state is named); `port` 0 for the device itself.
Event device_event(const std::string& name, const std::string& id, const DeviceState& d,
                   bool gone, uint32_t port) {
    Event e{name, d.name, {{"RDMAD_EVENT", name}}, "device " + id};
    put(e.env, "RDMAD_DEVICE", d.name);
    put(e.env, "RDMAD_PCI_ADDRESS", d.pci_address);
    std::string path = device_path(id);
    std::string transport = d.ports.empty() ? std::string() : d.ports.front().transport.str();
    if (port) {
        path += "/port/" + std::to_string(port);
        e.key += " port " + std::to_string(port);
        put(e.env, "RDMAD_PORT", std::to_string(port));
    }
    put(e.env, "RDMAD_OBJECT_PATH", path);
    if (!gone)
        for (const auto& p : d.ports)
            if (p.number == port || (!port && p.number == d.ports.front().number)) {
                transport = p.transport;
                put(e.env, "RDMAD_NETDEV", p.netdev);
                if (port)
                    put(e.env, "RDMAD_PORT_STATE", p.state);
                break;
            }
    put(e.env, "RDMAD_TRANSPORT", transport);
    return e;
}

Event link_event(const std::string& name, int32_t ifindex, const LinkState& l) {
    Event e{name, l.name, {{"RDMAD_EVENT", name}}, "link " + std::to_string(ifindex)};
    put(e.env, "RDMAD_NETDEV", l.name);
    put(e.env, "RDMAD_DEVICE", l.rdma_device);
    put(e.env, "RDMAD_PCI_ADDRESS", l.pci_address);
    put(e.env, "RDMAD_OBJECT_PATH", link_path(ifindex));
    return e;
}

/// `e` (device- or link-added or -removed) keyed by its name too: a coalesced queue keeps the
/// removal under the old name of an object that came back under another (the same id after
/// a retraction, a reused ifindex), and the latest event of each name.
Event named(Event e) {
    e.key += " name " + e.object;
    return e;
}

} // namespace

Known know_all(const Inventory& inventory) {
    Known k;
    for (const auto& [syspath, d] : inventory.state().devices)
        k.devices[inventory.id_of(syspath)] = know_device(d);
    return k;
}

std::vector<Event> derive_events(const ChangeSet& changes, const Inventory& inventory,
                                 Known& known) {
    std::vector<Event> out;
    for (const auto& id : changes.devices_removed) {
        auto it = known.devices.find(id);
        if (it == known.devices.end())
            continue;
        if (auto gone = changes.devices_gone.find(id); gone != changes.devices_gone.end())
            out.push_back(named(device_event("device-removed", id, gone->second, true, 0)));
        known.devices.erase(it);
    }
    for (int32_t ifindex : changes.links_removed)
        if (auto gone = changes.links_gone.find(ifindex); gone != changes.links_gone.end())
            out.push_back(named(link_event("link-removed", ifindex, gone->second)));
    for (int32_t ifindex : changes.links_added)
        if (const LinkState* l = inventory.link(ifindex))
            out.push_back(named(link_event("link-added", ifindex, *l)));
    for (const auto& id : changes.devices_added) {
        const DeviceState* d = inventory.device(inventory.syspath_of(id));
        if (!d)
            continue;
        known.devices[id] = know_device(*d);
        out.push_back(named(device_event("device-added", id, *d, false, 0)));
    }
    // What the change set names of each changed device: the transitions are read for those
    // properties only (their value before is what the scripts were told, in `known`).
    static const std::set<std::string> kNothing;
    struct Named {
        const std::set<std::string>* device = &kNothing;
        std::map<uint32_t, const std::set<std::string>*> ports;
    };
    std::map<std::string, Named> changed;
    for (const auto& [id, names] : changes.devices_changed)
        changed[id].device = &names;
    for (const auto& [port, names] : changes.ports_changed)
        changed[port.first].ports[port.second] = &names;
    for (const auto& [id, named] : changed) {
        if (changes.devices_added.count(id))
            continue;
        const DeviceState* d = inventory.device(inventory.syspath_of(id));
        auto it = known.devices.find(id);
        if (!d || it == known.devices.end())
            continue;
        KnownDevice& k = it->second;
        // An init-capture: clang before 16 cannot capture a structured binding (P1091R3).
        auto names_of = [&ports = named.ports](uint32_t n) -> const std::set<std::string>& {
            auto p = ports.find(n);
            return p == ports.end() ? kNothing : *p->second;
        };
        std::set<uint32_t> went_down;
        for (bool up : {false, true})
            for (const auto& p : d->ports) {
                if (!names_of(p.number).count("State"))
                    continue;
                const bool active = p.state == "ACTIVE";
                KnownPort& before = k.ports[p.number];
                if (active != before.active && active == up) {
                    out.push_back(
                        device_event(up ? "port-up" : "port-down", id, *d, false, p.number));
                    if (!up)
                        went_down.insert(p.number);
                    before.active = active;
                }
            }
        if (named.device->count("Problems")) {
            const KnownDevice now = know_device(*d);
            for (const auto& [code, port] : now.problems) {
                // A port that went down says so (port-down); its port-not-active problem is that.
                if (std::binary_search(k.problems.begin(), k.problems.end(),
                                       std::make_pair(code, port)) ||
                    (port && went_down.count(port)))
                    continue;
                Event e = device_event("problem", id, *d, false, port);
                e.key += " problem " + code;
                put(e.env, "RDMAD_PROBLEM", code);
                for (const auto& p : d->problems)
                    if (p.code == code && p.port == port) {
                        put(e.env, "RDMAD_PROBLEM_SEVERITY", p.severity);
                        break;
                    }
                out.push_back(std::move(e));
            }
            k.problems = now.problems;
        }
        for (const auto& p : d->ports) {
            if (!names_of(p.number).count("InSync"))
                continue;
            KnownPort& before = k.ports[p.number];
            if (p.in_sync && !before.in_sync) {
                // One event per port, naming it: a script reacts to the port it was for.
                Event e = device_event("reconciled", id, *d, false, p.number);
                e.key += " reconciled";
                out.push_back(std::move(e));
            }
            before.in_sync = p.in_sync;
        }
    }
    return out;
}

std::vector<Event> coalesce(const std::vector<Event>& events) {
    std::set<std::string> seen;
    std::vector<const Event*> latest;
    for (auto it = events.rbegin(); it != events.rend(); ++it)
        if (seen.insert(it->key).second)
            latest.push_back(&*it);
    std::vector<Event> out;
    out.reserve(latest.size());
    for (auto it = latest.rbegin(); it != latest.rend(); ++it)
        out.push_back(**it);
    return out;
}

} // namespace rdmad::dispatch
