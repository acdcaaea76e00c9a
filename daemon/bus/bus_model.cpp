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

/// Every string a view exports made valid for D-Bus, names and attributes on one line
/// (one_line_text()), problem texts as messages (message_text()). The inventory keeps what the kernel gave
/// (names are bytes, and are matched as such: a GID's netdev against a netdev's name); this is
/// where they leave rdmad.
void sanitize(DeviceState& d) {
    for (std::string* s : {&d.name, &d.node_type, &d.node_guid, &d.sys_image_guid,
                           &d.firmware_version, &d.hca_type, &d.board_id, &d.node_description,
                           &d.pci_address, &d.kernel_driver, &d.provider, &d.provider_package,
                           &d.verbs_device, &d.physical_function})
        *s = one_line_text(*s);
    for (auto& p : d.problems) {
        p.code = valid_utf8(p.code);
        p.text = message_text(p.text);
        p.remedy = message_text(p.remedy);
        for (auto& e : p.evidence)
            e = message_text(e);
    }
}

void sanitize(PortState& p) {
    for (std::string* s : {&p.state, &p.phys_state, &p.link_layer, &p.transport, &p.rate,
                           &p.netdev, &p.port_type})
        *s = one_line_text(*s);
    for (auto& g : p.gids) {
        g.gid = one_line_text(g.gid);
        g.type = one_line_text(g.type);
        g.netdev = one_line_text(g.netdev);
    }
    for (std::string* s : {&p.recommended_gid.gid, &p.recommended_gid.type,
                           &p.recommended_gid.netdev, &p.recommended_gid.ip})
        *s = one_line_text(*s);
}

void sanitize(LinkState& l) {
    for (std::string* s : {&l.name, &l.pci_address, &l.driver, &l.operstate, &l.master, &l.kind,
                           &l.rdma_capable, &l.rdma_device, &l.hint})
        *s = one_line_text(*s);
}

} // namespace

std::string encode_path(const std::string& prefix, const std::string& id) {
    char* out = nullptr;
    int r = sd_bus_path_encode(prefix.c_str(), id.c_str(), &out);
    if (r < 0 || !out)
        throw std::runtime_error("sd_bus_path_encode failed");
    std::string path(out);
    std::free(out);
    return path;
}

std::string device_path(const std::string& id) {
    return encode_path(kDevicePrefix, id);
}

std::string link_path(int32_t ifindex) {
    return encode_path(kLinkPrefix, std::to_string(ifindex));
}

DeviceView device_view(const Inventory& inv, const DeviceState& d) {
    DeviceView v;
    v.state = d;
    v.kernel_name = d.name;
    v.path = device_path(inv.id_of(d.syspath));
    // Netdev names are matched raw (bytes), before the strings are made valid for the bus.
    // Ports are shown by their own objects: their state moves there (one copy, not two).
    v.ports.reserve(v.state.ports.size());
    for (auto& port : v.state.ports) {
        PortView pv;
        pv.state = std::move(port);
        pv.path = v.path + "/port/" + std::to_string(port.number);
        pv.device_syspath = d.syspath;
        if (const LinkState* l =
                pv.state.netdev.empty() ? nullptr : inv.link_named(pv.state.netdev))
            pv.link_path = link_path(l->index);
        sanitize(pv.state);
        v.ports.push_back(std::move(pv));
    }
    v.state.ports.clear();
    v.state.ports.shrink_to_fit();
    for (const int32_t index : inv.links_of(d.name))
        v.link_paths.push_back(link_path(index));
    if (const DeviceState* pf = inv.device_at_pci(d.physical_function); pf && pf != &d)
        v.pf_path = device_path(inv.id_of(pf->syspath));
    sanitize(v.state);
    return v;
}

LinkView link_view(const Inventory& inv, const LinkState& l) {
    LinkView v;
    v.state = l;
    v.kernel_name = l.name;
    v.path = link_path(l.index);
    if (const DeviceState* d = l.rdma_device.empty() ? nullptr : inv.device_named(l.rdma_device))
        v.device_path = device_path(inv.id_of(d->syspath));
    sanitize(v.state);
    return v;
}

std::vector<const DeviceView*> BusModel::devices_by_name() const {
    std::vector<const DeviceView*> out;
    out.reserve(devices.size());
    for (const auto& [_, v] : devices)
        out.push_back(&v);
    std::sort(out.begin(), out.end(), [](const DeviceView* a, const DeviceView* b) {
        return a->kernel_name < b->kernel_name;
    });
    return out;
}

BusModel build_bus_model(const Inventory& inv) {
    BusModel model;
    for (const auto& [_, d] : inv.state().devices) {
        DeviceView v = device_view(inv, d);
        model.device_path_by_name.emplace(v.kernel_name, v.path);
        std::string path = v.path;
        model.devices.emplace(std::move(path), std::move(v));
    }
    for (const auto& [index, l] : inv.state().links) {
        LinkView v = link_view(inv, l);
        model.link_path_by_name.emplace(v.kernel_name, v.path);
        model.links.emplace(index, std::move(v));
    }
    return model;
}

BusModel build_bus_model(const HostState& state) {
    Inventory inv;
    inv.replace(state);
    return build_bus_model(inv);
}

} // namespace rdmad
