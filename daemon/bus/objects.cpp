// SPDX-License-Identifier: MIT
#include "bus/objects.hpp"

#include "bus/vtable.hpp"
#include "inventory/object_path.hpp"
#include "inventory/properties.hpp"
#include "rdmad_api.hpp"
#include "util/log.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace rdmad {
namespace {

void check(int r, const char* what) {
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), what);
}

/// A NULL-terminated array of malloc()ed strings, as sd-bus frees a node enumerator's answer.
int to_strv(const std::vector<std::string>& paths, char*** out) {
    char** v = static_cast<char**>(std::calloc(paths.size() + 1, sizeof(char*)));
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < paths.size(); ++i) {
        v[i] = strdup(paths[i].c_str());
        if (!v[i]) {
            for (size_t k = 0; k < i; ++k)
                std::free(v[k]);
            std::free(v);
            return -ENOMEM;
        }
    }
    *out = v;
    return 0;
}

/// The exported, changing rows of `table` among `names` (a change set's), in table order.
template <typename State>
std::vector<const char*> emitted(PropertyTable<State> table, const std::set<std::string>& names) {
    std::vector<const char*> out;
    for (const auto& row : table)
        if (row.exported() && !row.constant && names.count(row.name))
            out.push_back(row.name);
    return out;
}

} // namespace

Objects::Objects(sd_bus* bus, const Methods& methods) : bus_(bus), methods_(methods) {
    found_device_.self = found_port_.self = found_link_.self = this;
    device_vtable_ = make_vtable(device_properties(), &Objects::get_device, {});
    port_vtable_ = make_vtable(
        port_properties(), &Objects::get_port,
        {SD_BUS_METHOD_WITH_NAMES("SetPortType", "sb", SD_BUS_PARAM(type) SD_BUS_PARAM(persist),
                                  "", , &Objects::set_port_type, kMethodFlags),
         SD_BUS_METHOD_WITH_NAMES("SetPFCNoDrop", "ayb",
                                  SD_BUS_PARAM(priorities) SD_BUS_PARAM(persist), "", ,
                                  &Objects::set_pfc_no_drop, kMethodFlags),
         SD_BUS_METHOD_WITH_NAMES("SetTrust", "sb", SD_BUS_PARAM(trust) SD_BUS_PARAM(persist),
                                  "", , &Objects::set_trust, kMethodFlags),
         SD_BUS_METHOD_WITH_NAMES("SetDSCPPriority", "a(yy)bb",
                                  SD_BUS_PARAM(map) SD_BUS_PARAM(exclusive) SD_BUS_PARAM(persist),
                                  "", , &Objects::set_dscp_priority, kMethodFlags),
         SD_BUS_METHOD_WITH_NAMES("SetRDMACM", "sib",
                                  SD_BUS_PARAM(roce_mode) SD_BUS_PARAM(tos) SD_BUS_PARAM(persist),
                                  "", , &Objects::set_rdma_cm, kMethodFlags),
         SD_BUS_METHOD_WITH_NAMES("Revert", "s", SD_BUS_PARAM(setting), "", , &Objects::revert,
                                  kMethodFlags)});
    link_vtable_ = make_vtable(link_properties(), &Objects::get_link, {});

    sd_bus_slot* slot = nullptr;
    check(sd_bus_add_fallback_vtable(bus_, &slot, api::kDevicePrefix, api::kDeviceInterface,
                                     device_vtable_.data(), &Objects::find_device, this),
          "cannot register org.rdmad1.Device");
    device_slot_.reset(slot);
    check(sd_bus_add_fallback_vtable(bus_, &slot, api::kDevicePrefix, api::kPortInterface,
                                     port_vtable_.data(), &Objects::find_port, this),
          "cannot register org.rdmad1.Port");
    port_slot_.reset(slot);
    check(sd_bus_add_fallback_vtable(bus_, &slot, api::kLinkPrefix, api::kLinkInterface,
                                     link_vtable_.data(), &Objects::find_link, this),
          "cannot register org.rdmad1.Link");
    link_slot_.reset(slot);
    check(sd_bus_add_node_enumerator(bus_, &slot, api::kDevicePrefix, &Objects::enumerate_devices,
                                     this),
          "cannot register the device objects");
    device_nodes_.reset(slot);
    check(sd_bus_add_node_enumerator(bus_, &slot, api::kLinkPrefix, &Objects::enumerate_links,
                                     this),
          "cannot register the netdev objects");
    link_nodes_.reset(slot);
}

// ---- lookups ------------------------------------------------------------------------------

bool Objects::resolve_device(const char* path, Found& f) const {
    if (!inventory_)
        return false;
    auto id = device_id_of_path(path);
    if (!id || !shown_.count(*id))
        return false;
    const std::string& syspath = inventory_->syspath_of(*id);
    const DeviceState* d = syspath.empty() ? nullptr : inventory_->device(syspath);
    if (!d)
        return false;
    f.path = path;
    f.id = std::move(*id);
    f.device = d;
    f.port = nullptr;
    return true;
}

bool Objects::resolve_port(const char* path, Found& f) const {
    if (!inventory_)
        return false;
    auto key = port_of_path(path);
    if (!key || !shown_.count(key->first))
        return false;
    const std::string& syspath = inventory_->syspath_of(key->first);
    const DeviceState* d = syspath.empty() ? nullptr : inventory_->device(syspath);
    if (!d)
        return false;
    auto p = std::find_if(d->ports.begin(), d->ports.end(),
                          [&](const PortState& s) { return s.number == key->second; });
    if (p == d->ports.end())
        return false;
    f.path = path;
    f.id = std::move(key->first);
    f.device = d;
    f.port = &*p;
    return true;
}

bool Objects::resolve_link(const char* path, Found& f) const {
    if (!inventory_)
        return false;
    auto index = ifindex_of_path(path);
    const LinkState* l = index ? inventory_->link(*index) : nullptr;
    if (!l)
        return false;
    f.path = path;
    f.link = l;
    return true;
}

int Objects::find_device(sd_bus*, const char* path, const char*, void* userdata, void** found,
                         sd_bus_error* error) {
    auto* self = static_cast<Objects*>(userdata);
    return errors::guard(error, [&] {
        if (!self->resolve_device(path, self->found_device_))
            return 0;
        *found = &self->found_device_;
        return 1;
    });
}

int Objects::find_port(sd_bus*, const char* path, const char*, void* userdata, void** found,
                       sd_bus_error* error) {
    auto* self = static_cast<Objects*>(userdata);
    return errors::guard(error, [&] {
        if (!self->resolve_port(path, self->found_port_))
            return 0;
        *found = &self->found_port_;
        return 1;
    });
}

int Objects::find_link(sd_bus*, const char* path, const char*, void* userdata, void** found,
                       sd_bus_error* error) {
    auto* self = static_cast<Objects*>(userdata);
    return errors::guard(error, [&] {
        if (!self->resolve_link(path, self->found_link_))
            return 0;
        *found = &self->found_link_;
        return 1;
    });
}

int Objects::enumerate_devices(sd_bus*, const char*, void* userdata, char*** nodes,
                               sd_bus_error* error) {
    auto* self = static_cast<Objects*>(userdata);
    return errors::guard(error, [&] {
        std::vector<std::string> paths;
        for (const auto& [id, ports] : self->shown_) {
            paths.push_back(device_path(id));
            for (const uint32_t n : ports)
                paths.push_back(port_path(id, n));
        }
        return to_strv(paths, nodes);
    });
}

int Objects::enumerate_links(sd_bus*, const char*, void* userdata, char*** nodes,
                             sd_bus_error* error) {
    auto* self = static_cast<Objects*>(userdata);
    return errors::guard(error, [&] {
        std::vector<std::string> paths;
        if (self->inventory_)
            for (const auto& [index, _] : self->inventory_->state().links)
                paths.push_back(link_path(index));
        return to_strv(paths, nodes);
    });
}

// ---- getters ------------------------------------------------------------------------------
// sd-bus calls the finder for a path right before the getters and methods of that path, so
// `userdata` is what it found; the path is compared anyway, and looked up again if it differs.

int Objects::get_device(sd_bus*, const char* path, const char*, const char* property,
                        sd_bus_message* reply, void* userdata, sd_bus_error* error) {
    auto* f = static_cast<Found*>(userdata);
    if (f->path != path && !f->self->resolve_device(path, *f))
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "no object %s", path);
    return write_property(device_properties(), property, reply, *f->device,
                          PropertyContext{*f->self->inventory_, f->device}, error);
}

int Objects::get_port(sd_bus*, const char* path, const char*, const char* property,
                      sd_bus_message* reply, void* userdata, sd_bus_error* error) {
    auto* f = static_cast<Found*>(userdata);
    if (f->path != path && !f->self->resolve_port(path, *f))
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "no object %s", path);
    return write_property(port_properties(), property, reply, *f->port,
                          PropertyContext{*f->self->inventory_, f->device}, error);
}

int Objects::get_link(sd_bus*, const char* path, const char*, const char* property,
                      sd_bus_message* reply, void* userdata, sd_bus_error* error) {
    auto* f = static_cast<Found*>(userdata);
    if (f->path != path && !f->self->resolve_link(path, *f))
        return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "no object %s", path);
    return write_property(link_properties(), property, reply, *f->link,
                          PropertyContext{*f->self->inventory_}, error);
}

// ---- Port's methods -----------------------------------------------------------------------

int Objects::set_port_type(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* f = static_cast<Found*>(userdata);
    const char* type = nullptr;
    int persist = 0;
    if (int r = sd_bus_message_read(m, "sb", &type, &persist); r < 0)
        return r;
    const std::string t = type;
    const std::string syspath = f->device->syspath;
    const uint32_t port = f->port->number;
    const Methods& methods = f->self->methods_;
    return call_authorized(
        methods, m, error,
        [&] {
            if (!api::valid_port_type(t))
                throw MethodError(api::kInvalidArgument,
                                  "port type must be \"ib\", \"eth\" or \"auto\"");
            methods.controller->check_port_type(syspath, port, t, persist);
        },
        [c = methods.controller, syspath, port, t, persist](sd_bus_message* call) {
            c->set_port_type(syspath, port, t, persist);
            return sd_bus_reply_method_return(call, "");
        });
}

int Objects::set_pfc_no_drop(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* f = static_cast<Found*>(userdata);
    const void* data = nullptr;
    size_t size = 0;
    int persist = 0;
    if (int r = sd_bus_message_read_array(m, 'y', &data, &size); r < 0)
        return r;
    if (int r = sd_bus_message_read(m, "b", &persist); r < 0)
        return r;
    const auto* bytes = static_cast<const uint8_t*>(data);
    std::vector<uint8_t> priorities(bytes, bytes + size);
    std::sort(priorities.begin(), priorities.end());
    const std::string syspath = f->device->syspath;
    const Methods& methods = f->self->methods_;
    return call_authorized(
        methods, m, error,
        [&] {
            // As in rdmad.conf(5): leaving PFC alone is the absence of a rule, not [].
            if (std::string why = api::pfc_priorities_error(priorities); !why.empty())
                throw MethodError(api::kInvalidArgument, why);
            methods.controller->check_pfc(syspath, "PFC");
        },
        [c = methods.controller, syspath, priorities, persist](sd_bus_message* call) {
            c->set_pfc(syspath, priorities, persist);
            return sd_bus_reply_method_return(call, "");
        });
}

int Objects::set_trust(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    const char* trust = nullptr;
    int persist = 0;
    if (int r = sd_bus_message_read(m, "sb", &trust, &persist); r < 0)
        return r;
    Rule request;
    request.trust = trust;
    const bool valid = *request.trust == "dscp" || *request.trust == "pcp";
    return set_settings(m, userdata, error, valid ? "" : "trust must be \"dscp\" or \"pcp\"",
                        std::move(request), persist, false);
}

int Objects::set_dscp_priority(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    DscpMap map;
    if (int r = sd_bus_message_enter_container(m, 'a', "(yy)"); r < 0)
        return r;
    for (;;) {
        uint8_t dscp = 0, priority = 0;
        const int r = sd_bus_message_read(m, "(yy)", &dscp, &priority);
        if (r < 0)
            return r;
        if (r == 0)
            break;
        map.emplace_back(dscp, priority);
    }
    if (int r = sd_bus_message_exit_container(m); r < 0)
        return r;
    int exclusive = 0, persist = 0;
    if (int r = sd_bus_message_read(m, "bb", &exclusive, &persist); r < 0)
        return r;
    std::sort(map.begin(), map.end());
    // As in rdmad.conf(5): DSCP 0-63 (6 bits, RFC 2474), priorities 0-7, each DSCP once, and
    // at least one entry (leaving the map alone is the absence of a request: Revert).
    std::string invalid;
    if (map.empty())
        invalid = "the map must have at least one (DSCP, priority) entry";
    for (size_t i = 0; i < map.size() && invalid.empty(); ++i) {
        if (map[i].first > 63 || map[i].second > api::kMaxPriority)
            invalid = fmt::format("({}, {}): DSCP must be 0-63 and priority 0-7", map[i].first,
                                  map[i].second);
        else if (i && map[i].first == map[i - 1].first)
            invalid = fmt::format("DSCP {} is listed twice", map[i].first);
    }
    Rule request;
    request.dscp_priority = std::move(map);
    request.exclusive = exclusive != 0;
    return set_settings(m, userdata, error, invalid, std::move(request), persist, false);
}

int Objects::set_rdma_cm(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    const char* mode = nullptr;
    int32_t tos = -1;
    int persist = 0;
    if (int r = sd_bus_message_read(m, "sib", &mode, &tos, &persist); r < 0)
        return r;
    Rule request;
    std::string invalid;
    const std::string roce_mode = mode;
    if (!roce_mode.empty() && roce_mode != "RoCE v2" && roce_mode != "IB/RoCE v1")
        invalid = "roce_mode must be \"RoCE v2\", \"IB/RoCE v1\" or \"\" (left alone)";
    else if (tos < -1 || tos > 255)
        invalid = "tos must be 0-255, or -1 (left alone)";
    else if (roce_mode.empty() && tos < 0)
        invalid = "nothing asked: give roce_mode, tos or both";
    if (!roce_mode.empty())
        request.rdma_cm_roce_mode = roce_mode;
    if (tos >= 0)
        request.rdma_cm_tos = static_cast<uint8_t>(tos);
    return set_settings(m, userdata, error, invalid, std::move(request), persist, true);
}

int Objects::set_settings(sd_bus_message* m, void* userdata, sd_bus_error* error,
                          std::string invalid, Rule request, bool persist, bool rdma_cm) {
    auto* f = static_cast<Found*>(userdata);
    const std::string syspath = f->device->syspath;
    const Methods& methods = f->self->methods_;
    return call_authorized(
        methods, m, error,
        [&] {
            if (!invalid.empty())
                throw MethodError(api::kInvalidArgument, invalid);
            if (rdma_cm)
                methods.controller->check_rdma_cm(syspath);
            else
                methods.controller->check_pfc(syspath, "the DCB APP table (DSCP trust and map)");
        },
        [c = methods.controller, syspath, request, persist](sd_bus_message* call) {
            c->set_settings(syspath, request, persist);
            return sd_bus_reply_method_return(call, "");
        });
}

int Objects::revert(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* f = static_cast<Found*>(userdata);
    const char* setting = nullptr;
    if (int r = sd_bus_message_read(m, "s", &setting); r < 0)
        return r;
    const std::string s = setting;
    const std::string syspath = f->device->syspath;
    const uint32_t port = f->port->number;
    return call_authorized(
        f->self->methods_, m, error,
        [&] {
            if (!api::valid_revert_setting(s))
                throw MethodError(api::kInvalidArgument,
                                  "setting must be \"\" (every setting) or \"PortType\"");
        },
        [c = f->self->methods_.controller, syspath, port, s](sd_bus_message* call) {
            c->revert(syspath, port, s);
            return sd_bus_reply_method_return(call, "");
        });
}

// ---- change sets --------------------------------------------------------------------------

void Objects::announce(const std::string& path) {
    if (!announcing_)
        return;
    if (int r = sd_bus_emit_object_added(bus_, path.c_str()); r < 0)
        log::warning("InterfacesAdded for {}: {}", path, std::strerror(-r));
}

void Objects::retract(const std::string& path, const char* interface) {
    // The object is gone from the Inventory, so sd_bus_emit_object_removed() would find no
    // interface: name them, as sd_bus_emit_object_added() announced them.
    if (int r = sd_bus_emit_interfaces_removed(bus_, path.c_str(), "org.freedesktop.DBus.Peer",
                                               "org.freedesktop.DBus.Introspectable",
                                               "org.freedesktop.DBus.Properties", interface,
                                               nullptr);
        r < 0)
        log::warning("InterfacesRemoved for {}: {}", path, std::strerror(-r));
}

void Objects::retract_device(const std::string& id) {
    auto it = shown_.find(id);
    if (it == shown_.end())
        return;
    // Ports go before their device.
    for (const uint32_t n : it->second)
        retract(port_path(id, n), api::kPortInterface);
    retract(device_path(id), api::kDeviceInterface);
    shown_.erase(it);
}

void Objects::announce_device(const std::string& id, const DeviceState& d) {
    auto& ports = shown_[id];
    ports.clear();
    for (const auto& p : d.ports)
        ports.push_back(p.number);
    announce(device_path(id));
    for (const auto& p : d.ports)
        announce(port_path(id, p.number));
}

void Objects::emit_changed(const std::string& path, const char* interface,
                           const std::vector<const char*>& names) {
    if (names.empty())
        return;
    std::vector<char*> strv;
    for (const char* n : names)
        strv.push_back(const_cast<char*>(n));
    strv.push_back(nullptr);
    if (int r = sd_bus_emit_properties_changed_strv(bus_, path.c_str(), interface, strv.data());
        r < 0)
        log::warning("PropertiesChanged for {}: {}", path, std::strerror(-r));
}

void Objects::apply(const Inventory& inv, const ChangeSet& changes) {
    inventory_ = &inv;
    // What the finders found points into the Inventory before this change.
    for (Found* f : {&found_device_, &found_port_, &found_link_}) {
        f->path.clear();
        f->device = nullptr;
        f->port = nullptr;
        f->link = nullptr;
    }
    describe_.changed(inv, changes);
    auto device = [&](const std::string& id) -> const DeviceState* {
        const std::string& syspath = inv.syspath_of(id);
        return syspath.empty() ? nullptr : inv.device(syspath);
    };
    // Gone first: a device retracted and announced again (new port numbers, a new id) must
    // not meet its old object.
    for (const auto& id : changes.devices_removed)
        retract_device(id);
    for (const int32_t index : changes.links_removed)
        retract(link_path(index), api::kLinkInterface);
    // Devices (with their ports), then links: a link's RdmaDevice then names an announced
    // device (a device's Links may name a link announced right after it in the same set).
    std::set<std::string> reannounced;
    for (const auto& id : changes.devices_added)
        if (const DeviceState* d = device(id)) {
            retract_device(id);
            announce_device(id, *d);
            reannounced.insert(id);
        }
    for (const auto& [id, names] : changes.devices_changed)
        if (!reannounced.count(id) && (names.count("Ports") || !shown_.count(id)))
            if (const DeviceState* d = device(id)) {
                retract_device(id);
                announce_device(id, *d);
                reannounced.insert(id);
            }
    // A port's own facts before its device's properties: what an isolated port change is
    // about (State, PhysicalState) reaches a client first; the device's Problems and
    // ProblemDetails are derived from it. Both are sent in this one call, before the loop
    // reads again.
    for (const auto& [key, names] : changes.ports_changed)
        if (!reannounced.count(key.first) && shown_.count(key.first))
            emit_changed(port_path(key.first, key.second), api::kPortInterface,
                         emitted(port_properties(), names));
    for (const auto& [id, names] : changes.devices_changed)
        if (!reannounced.count(id) && device(id))
            emit_changed(device_path(id), api::kDeviceInterface,
                         emitted(device_properties(), names));
    for (const int32_t index : changes.links_added)
        if (inv.link(index))
            announce(link_path(index));
    for (const auto& [index, names] : changes.links_changed)
        if (!changes.links_added.count(index) && inv.link(index))
            emit_changed(link_path(index), api::kLinkInterface, emitted(link_properties(), names));
}

} // namespace rdmad
