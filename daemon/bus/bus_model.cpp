// SPDX-License-Identifier: MIT
#include "bus/bus_model.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <systemd/sd-bus.h>

namespace rdmad {
namespace {

std::string guid_digits(const std::string& guid) {
    std::string digits;
    for (char c : guid)
        if (c != ':')
            digits += c;
    if (digits.empty() || digits.find_first_not_of('0') == std::string::npos)
        return {};
    return digits;
}

/// Every string a view exports made valid for D-Bus. The inventory keeps what the kernel gave
/// (names are bytes, and are matched as such: a GID's netdev against a netdev's name); this is
/// where they leave rdmad.
void sanitize(DeviceState& d) {
    for (std::string* s : {&d.name, &d.node_type, &d.node_guid, &d.sys_image_guid,
                           &d.firmware_version, &d.hca_type, &d.board_id, &d.node_description,
                           &d.pci_address, &d.kernel_driver, &d.provider, &d.provider_package,
                           &d.verbs_device, &d.physical_function})
        *s = valid_utf8(*s);
    for (auto& p : d.problems) {
        p.code = valid_utf8(p.code);
        p.text = message_text(p.text);
    }
}

void sanitize(PortState& p) {
    for (std::string* s : {&p.state, &p.phys_state, &p.link_layer, &p.transport, &p.rate,
                           &p.netdev, &p.port_type})
        *s = valid_utf8(*s);
    for (auto& g : p.gids) {
        g.gid = valid_utf8(g.gid);
        g.type = valid_utf8(g.type);
        g.netdev = valid_utf8(g.netdev);
    }
}

void sanitize(LinkState& l) {
    for (std::string* s : {&l.name, &l.pci_address, &l.driver, &l.operstate, &l.master,
                           &l.rdma_capable, &l.rdma_device, &l.hint})
        *s = valid_utf8(*s);
}

/// The port views of `v` from its state (before sanitizing: netdev names are matched raw).
void set_port_views(DeviceView& v, const std::map<std::string, std::string>& link_path_by_name) {
    v.ports.clear();
    for (const auto& port : v.state.ports) {
        PortView pv;
        pv.state = port;
        pv.path = v.path + "/port/" + std::to_string(port.number);
        pv.device_syspath = v.state.syspath;
        if (auto it = link_path_by_name.find(port.netdev); it != link_path_by_name.end())
            pv.link_path = it->second;
        v.ports.push_back(std::move(pv));
    }
}

void finish_view(DeviceView& v) {
    v.kernel_name = v.state.name;
    sanitize(v.state);
    for (auto& p : v.ports)
        sanitize(p.state);
}

void finish_view(LinkView& l) {
    l.kernel_name = l.state.name;
    sanitize(l.state);
}

} // namespace

bool refresh_device_view(DeviceView& view, const DeviceState& device,
                         const std::map<std::string, std::string>& link_path_by_name) {
    if (device.syspath != view.state.syspath || device.ports.size() != view.ports.size())
        return false;
    for (size_t i = 0; i < device.ports.size(); ++i)
        if (device.ports[i].number != view.ports[i].state.number)
            return false;
    view.state = device;
    set_port_views(view, link_path_by_name);
    finish_view(view);
    return true;
}

void refresh_link_view(LinkView& view, const LinkState& link) {
    view.state = link;
    finish_view(view);
}

std::map<std::string, std::string> link_paths_by_name(const BusModel& model) {
    std::map<std::string, std::string> out;
    for (const auto& l : model.links)
        out.emplace(l.kernel_name, l.path);
    return out;
}

std::string encode_path(const std::string& prefix, const std::string& id) {
    char* out = nullptr;
    int r = sd_bus_path_encode(prefix.c_str(), id.c_str(), &out);
    if (r < 0 || !out)
        throw std::runtime_error("sd_bus_path_encode failed");
    std::string path(out);
    std::free(out);
    return path;
}

namespace {

/// How often each node GUID and PCI address occurs, counted once per model build (a count per
/// device would make building the model quadratic in the device count).
struct IdCounts {
    std::map<std::string, size_t> guids;
    std::map<std::string, size_t> pci;
    explicit IdCounts(const Inventory& inv) {
        for (const auto& [_, o] : inv.devices) {
            ++guids[guid_digits(o.node_guid)];
            ++pci[o.pci_address];
        }
    }
};

std::string object_id(const IdCounts& counts, const DeviceState& d) {
    if (std::string g = guid_digits(d.node_guid); !g.empty() && counts.guids.at(g) == 1)
        return g;
    if (!d.pci_address.empty() && counts.pci.at(d.pci_address) == 1)
        return d.pci_address;
    return d.name;
}

} // namespace

std::string device_object_id(const Inventory& inv, const DeviceState& d) {
    return object_id(IdCounts(inv), d);
}

BusModel build_bus_model(const Inventory& inv, std::map<std::string, std::string>* sticky_ids) {
    BusModel model;
    std::map<std::string, std::string> device_path_by_name;
    std::map<std::string, std::string> device_path_by_pci;
    std::map<std::string, std::string> link_path_by_name;

    for (const auto& [index, link] : inv.links)
        link_path_by_name.emplace(link.name, encode_path(kLinkPrefix, std::to_string(index)));

    std::vector<const DeviceState*> devices;
    for (const auto& [_, d] : inv.devices)
        devices.push_back(&d);
    std::sort(devices.begin(), devices.end(),
              [](const DeviceState* a, const DeviceState* b) { return a->name < b->name; });
    const IdCounts counts(inv);
    std::map<std::string, int> used; // ids must stay unique even for odd inventories
    if (sticky_ids) {
        for (auto it = sticky_ids->begin(); it != sticky_ids->end();)
            it = inv.devices.count(it->first) ? std::next(it) : sticky_ids->erase(it);
        for (const auto& [_, id] : *sticky_ids)
            ++used[id];
    }
    for (const DeviceState* d : devices) {
        std::string id;
        if (sticky_ids)
            if (auto it = sticky_ids->find(d->syspath); it != sticky_ids->end()) {
                id = it->second;
                // An id taken while the node GUID was unreadable (EIO at hotplug) or shared
                // gives way to the GUID once it reads and is unique: the path a fresh start
                // gives, so that a rescan after the fault leaves the bus as a restart would.
                const std::string g = guid_digits(d->node_guid);
                if (!g.empty() && id != g && counts.guids.at(g) == 1 && used[g] == 0) {
                    --used[id];
                    id = g;
                    ++used[id];
                    it->second = id;
                }
            }
        if (id.empty()) {
            id = object_id(counts, *d);
            const std::string base = id;
            for (int n = 1; used[id] > 0; ++n)
                id = base + "_" + std::to_string(n);
            ++used[id];
            if (sticky_ids)
                (*sticky_ids)[d->syspath] = id;
        }
        std::string path = encode_path(kDevicePrefix, id);
        device_path_by_name.emplace(d->name, path);
        if (!d->pci_address.empty())
            device_path_by_pci.emplace(d->pci_address, path);
        DeviceView v;
        v.state = *d;
        v.path = path;
        model.devices.push_back(std::move(v));
    }

    for (auto& v : model.devices) {
        set_port_views(v, link_path_by_name);
        for (const auto& [_, link] : inv.links)
            if (link.rdma_device == v.state.name)
                v.link_paths.push_back(link_path_by_name.at(link.name));
        if (!v.state.physical_function.empty())
            if (auto it = device_path_by_pci.find(v.state.physical_function);
                it != device_path_by_pci.end())
                v.pf_path = it->second;
    }

    for (const auto& [index, link] : inv.links) {
        LinkView lv;
        lv.state = link;
        lv.path = link_path_by_name.at(link.name);
        if (auto it = device_path_by_name.find(link.rdma_device); it != device_path_by_name.end())
            lv.device_path = it->second;
        model.links.push_back(std::move(lv));
    }
    for (auto& v : model.devices)
        finish_view(v);
    for (auto& l : model.links)
        finish_view(l);
    return model;
}

} // namespace rdmad
