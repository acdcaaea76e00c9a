// SPDX-License-Identifier: MIT
#include "bus/exporter.hpp"

#include "bus/bus_model.hpp"
#include "util/log.hpp"

namespace rdmad {

Exporter::Exporter(sdbus::IConnection& connection)
    : connection_(connection),
      manager_(std::make_unique<ManagerObject>(connection, model_, describe_)) {}

Exporter::~Exporter() {
    // Children before the ObjectManager; no signals on the way out (the bus may be gone).
    links_.clear();
    ports_.clear();
    devices_.clear();
    manager_.reset();
}

void Exporter::set_methods(Controller* controller, Authorizer* authorizer) {
    methods_ = {controller, authorizer};
    manager_->set_methods(&methods_);
}

void Exporter::retract_device(const std::string& path) {
    auto view = model_.devices.find(path);
    if (view == model_.devices.end())
        return;
    // Ports go before their device.
    for (const auto& p : view->second.ports)
        if (auto it = ports_.find(p.path); it != ports_.end()) {
            try {
                it->second->retract();
            } catch (const std::exception& e) {
                log::warning("InterfacesRemoved for {}: {}", p.path, e.what());
            }
            ports_.erase(it);
        }
    if (auto it = devices_.find(path); it != devices_.end()) {
        try {
            it->second->retract();
        } catch (const std::exception& e) {
            log::warning("InterfacesRemoved for {}: {}", path, e.what());
        }
        devices_.erase(it);
    }
    if (auto it = model_.device_path_by_name.find(view->second.kernel_name);
        it != model_.device_path_by_name.end() && it->second == path)
        model_.device_path_by_name.erase(it);
    model_.devices.erase(view);
    describe_.drop_device(path);
}

void Exporter::show_device(const Inventory& inv, const DeviceState& d) {
    DeviceView next = device_view(inv, d);
    const std::string path = next.path;
    auto it = model_.devices.find(path);
    if (it == model_.devices.end()) {
        // New: the device, then its ports, each announced once fully built.
        auto& v = model_.devices.emplace(path, std::move(next)).first->second;
        model_.device_path_by_name[v.kernel_name] = path;
        describe_.put(v);
        try {
            auto object = std::make_unique<DeviceObject>(connection_, v, &methods_);
            if (announcing_)
                object->announce();
            devices_.emplace(path, std::move(object));
        } catch (const std::exception& e) {
            log::error("{}: {}", path, e.what());
        }
        for (const auto& p : v.ports) {
            try {
                auto object = std::make_unique<PortObject>(connection_, p, &methods_);
                if (announcing_)
                    object->announce();
                ports_.emplace(p.path, std::move(object));
            } catch (const std::exception& e) {
                log::error("{}: {}", p.path, e.what());
            }
        }
        return;
    }
    bool same_ports = it->second.ports.size() == next.ports.size();
    for (size_t i = 0; same_ports && i < next.ports.size(); ++i)
        same_ports = it->second.ports[i].path == next.ports[i].path;
    if (!same_ports) {
        retract_device(path);
        show_device(inv, d);
        return;
    }
    DeviceView before = std::move(it->second);
    it->second = std::move(next);
    const DeviceView& now = it->second;
    describe_.put(now);
    if (before.kernel_name != now.kernel_name) {
        if (auto n = model_.device_path_by_name.find(before.kernel_name);
            n != model_.device_path_by_name.end() && n->second == path)
            model_.device_path_by_name.erase(n);
        model_.device_path_by_name[now.kernel_name] = path;
    }
    try {
        if (auto o = devices_.find(path); o != devices_.end())
            o->second->update(before, now);
    } catch (const std::exception& e) {
        log::error("{}: {}", path, e.what());
    }
    for (size_t i = 0; i < now.ports.size(); ++i) {
        try {
            if (auto o = ports_.find(now.ports[i].path); o != ports_.end())
                o->second->update(before.ports[i], now.ports[i]);
        } catch (const std::exception& e) {
            log::error("{}: {}", now.ports[i].path, e.what());
        }
    }
}

void Exporter::retract_link(int32_t ifindex) {
    auto view = model_.links.find(ifindex);
    if (view == model_.links.end())
        return;
    if (auto it = links_.find(ifindex); it != links_.end()) {
        try {
            it->second->retract();
        } catch (const std::exception& e) {
            log::warning("InterfacesRemoved for {}: {}", view->second.path, e.what());
        }
        links_.erase(it);
    }
    if (auto it = model_.link_path_by_name.find(view->second.kernel_name);
        it != model_.link_path_by_name.end() && it->second == view->second.path)
        model_.link_path_by_name.erase(it);
    model_.links.erase(view);
    describe_.drop_link(ifindex);
}

void Exporter::show_link(const Inventory& inv, const LinkState& l) {
    LinkView next = link_view(inv, l);
    auto it = model_.links.find(l.index);
    if (it == model_.links.end()) {
        auto& v = model_.links.emplace(l.index, std::move(next)).first->second;
        model_.link_path_by_name[v.kernel_name] = v.path;
        describe_.put(v);
        try {
            auto object = std::make_unique<LinkObject>(connection_, v, &methods_);
            if (announcing_)
                object->announce();
            links_.emplace(l.index, std::move(object));
        } catch (const std::exception& e) {
            log::error("{}: {}", v.path, e.what());
        }
        return;
    }
    LinkView before = std::move(it->second);
    it->second = std::move(next);
    const LinkView& now = it->second;
    describe_.put(now);
    if (before.kernel_name != now.kernel_name) {
        if (auto n = model_.link_path_by_name.find(before.kernel_name);
            n != model_.link_path_by_name.end() && n->second == now.path)
            model_.link_path_by_name.erase(n);
        model_.link_path_by_name[now.kernel_name] = now.path;
    }
    try {
        if (auto o = links_.find(l.index); o != links_.end())
            o->second->update(before, now);
    } catch (const std::exception& e) {
        log::error("{}: {}", now.path, e.what());
    }
}

void Exporter::apply(const Inventory& inv, const ChangeSet& changes) {
    // Gone first: a device retracted and announced again (new port numbers, a new id) must
    // not meet its old object.
    for (const auto& id : changes.devices_removed)
        retract_device(device_path(id));
    for (const int32_t index : changes.links_removed)
        retract_link(index);
    // Devices (with their ports), then links: a link's RdmaDevice then names an announced
    // device (a device's Links may name a link announced right after it in the same set).
    std::set<std::string> shown;
    auto show = [&](const std::string& id) {
        if (!shown.insert(id).second)
            return;
        const std::string& syspath = inv.syspath_of(id);
        if (const DeviceState* d = syspath.empty() ? nullptr : inv.device(syspath))
            show_device(inv, *d);
    };
    for (const auto& id : changes.devices_added)
        show(id);
    for (const auto& [id, _] : changes.devices_changed)
        show(id);
    for (const auto& [key, _] : changes.ports_changed)
        show(key.first);
    for (const int32_t index : changes.links_added)
        if (const LinkState* l = inv.link(index))
            show_link(inv, *l);
    for (const auto& [index, _] : changes.links_changed)
        if (!changes.links_added.count(index))
            if (const LinkState* l = inv.link(index))
                show_link(inv, *l);
}

} // namespace rdmad
