// SPDX-License-Identifier: MIT
#include "bus/exporter.hpp"

#include "bus/bus_model.hpp"
#include "util/log.hpp"

#include <set>

namespace rdmad {
namespace {

template <typename View>
std::set<std::string> paths_of(const std::vector<const View*>& views) {
    std::set<std::string> paths;
    for (const View* v : views)
        paths.insert(v->path);
    return paths;
}

/// Retract and destroy the objects whose path is not in `views`.
template <typename Object, typename View>
void remove_missing(std::map<std::string, std::unique_ptr<Object>>& objects,
                    const std::vector<const View*>& views) {
    const std::set<std::string> wanted = paths_of(views);
    for (auto it = objects.begin(); it != objects.end();) {
        if (wanted.count(it->first)) {
            ++it;
            continue;
        }
        try {
            it->second->retract();
        } catch (const std::exception& e) {
            log::warning("InterfacesRemoved for {}: {}", it->first, e.what());
        }
        it = objects.erase(it);
    }
}

/// Update the existing objects; create and announce the new ones once fully built.
template <typename Object, typename View>
void add_or_update(sdbus::IConnection& connection, Controller* controller,
                   std::map<std::string, std::unique_ptr<Object>>& objects,
                   const std::vector<const View*>& views) {
    for (const View* v : views) {
        // One object that the bus refuses must not keep the others from being updated.
        try {
            auto it = objects.find(v->path);
            if (it != objects.end()) {
                it->second->update(*v);
                continue;
            }
            auto object = std::make_unique<Object>(connection, *v, controller);
            object->announce();
            objects.emplace(v->path, std::move(object));
        } catch (const std::exception& e) {
            log::error("{}: {}", v->path, e.what());
        }
    }
}

} // namespace

Exporter::Exporter(sdbus::IConnection& connection)
    : connection_(connection), manager_(std::make_unique<ManagerObject>(connection, model_)) {}

Exporter::~Exporter() {
    // Children before the ObjectManager; no signals on the way out (the bus may be gone).
    links_.clear();
    ports_.clear();
    devices_.clear();
    manager_.reset();
}

void Exporter::set_controller(Controller* controller) {
    controller_ = controller;
    manager_->set_controller(controller);
}

void Exporter::rename_device(const std::string& old_syspath, const std::string& new_syspath) {
    auto it = ids_.find(old_syspath);
    if (it == ids_.end())
        return;
    std::string id = std::move(it->second);
    ids_.erase(it);
    ids_[new_syspath] = std::move(id);
}

void Exporter::publish(const Inventory& inventory) {
    model_ = build_bus_model(inventory, &ids_);
    device_index_.clear();
    link_index_.clear();
    for (size_t i = 0; i < model_.devices.size(); ++i)
        device_index_[model_.devices[i].state.syspath] = i;
    for (size_t i = 0; i < model_.links.size(); ++i)
        link_index_[model_.links[i].state.index] = i;
    link_path_by_name_ = link_paths_by_name(model_);
    std::vector<const DeviceView*> devices;
    std::vector<const PortView*> ports;
    std::vector<const LinkView*> links;
    for (const auto& d : model_.devices) {
        devices.push_back(&d);
        for (const auto& p : d.ports)
            ports.push_back(&p);
    }
    for (const auto& l : model_.links)
        links.push_back(&l);
    // Ports go before their device and come after it.
    remove_missing(ports_, ports);
    remove_missing(devices_, devices);
    remove_missing(links_, links);
    // Devices, then their ports, then links: a link's RdmaDevice then names an announced
    // device (a device's Links may name a link announced right after it in the same burst).
    add_or_update(connection_, controller_, devices_, devices);
    add_or_update(connection_, controller_, ports_, ports);
    add_or_update(connection_, controller_, links_, links);
}

bool Exporter::update(const Inventory& inventory, const std::set<std::string>& devices,
                      const std::set<int32_t>& links) {
    // Build every new view first: one that cannot be refreshed means a full publish, and
    // nothing must have been emitted by then.
    std::vector<std::pair<size_t, DeviceView>> device_views;
    std::vector<std::pair<size_t, LinkView>> link_views;
    for (const auto& syspath : devices) {
        auto index = device_index_.find(syspath);
        auto device = inventory.devices.find(syspath);
        if (index == device_index_.end() || device == inventory.devices.end()) {
            publish(inventory);
            return false;
        }
        DeviceView view = model_.devices[index->second];
        if (!refresh_device_view(view, device->second, link_path_by_name_)) {
            publish(inventory);
            return false;
        }
        device_views.emplace_back(index->second, std::move(view));
    }
    for (const int32_t ifindex : links) {
        auto index = link_index_.find(ifindex);
        auto link = inventory.links.find(ifindex);
        if (index == link_index_.end() || link == inventory.links.end() ||
            link->second.name != model_.links[index->second].kernel_name) {
            publish(inventory);
            return false;
        }
        LinkView view = model_.links[index->second];
        refresh_link_view(view, link->second);
        link_views.emplace_back(index->second, std::move(view));
    }
    for (auto& [i, view] : device_views) {
        model_.devices[i] = std::move(view);
        const DeviceView& v = model_.devices[i];
        auto update = [](auto& objects, const auto& v) {
            try {
                if (auto it = objects.find(v.path); it != objects.end())
                    it->second->update(v);
            } catch (const std::exception& e) {
                log::error("{}: {}", v.path, e.what());
            }
        };
        update(devices_, v);
        for (const auto& p : v.ports)
            update(ports_, p);
    }
    for (auto& [i, view] : link_views) {
        model_.links[i] = std::move(view);
        const LinkView& v = model_.links[i];
        try {
            if (auto it = links_.find(v.path); it != links_.end())
                it->second->update(v);
        } catch (const std::exception& e) {
            log::error("{}: {}", v.path, e.what());
        }
    }
    return true;
}

} // namespace rdmad
