// SPDX-License-Identifier: MIT
#include "bus/manager_object.hpp"

#include "bus/vtable.hpp"
#include "config.h"
#include "inventory/object_path.hpp"
#include "rdmad_api.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

#include <cstring>
#include <malloc.h>
#include <system_error>
#include <utility>

namespace rdmad {
namespace {

/// What the Manager answers from before the first inventory is shown: nothing.
const Inventory& empty_inventory() {
    static const Inventory empty;
    return empty;
}

/// Reply with one object path.
int reply_path(sd_bus_message* m, const std::string& path) {
    return sd_bus_reply_method_return(m, "o", path.c_str());
}

/// Manager.Reconcile()'s a(ssss) reply.
int reply_changes(sd_bus_message* call, const ChangeList& changes) {
    sd_bus_message* raw = nullptr;
    int r = sd_bus_message_new_method_return(call, &raw);
    if (r < 0)
        return r;
    MessagePtr reply(raw);
    MessageWriter w(reply.get());
    w.begin_array("(ssss)");
    for (const auto& [object, setting, from, to] : changes) {
        w.begin_struct("ssss");
        for (const std::string* s : {&object, &setting, &from, &to})
            w.string(valid_utf8(*s));
        w.end_struct();
    }
    w.end_array();
    return sd_bus_send(nullptr, reply.get(), nullptr);
}

} // namespace

ManagerObject::ManagerObject(sd_bus* bus, Objects& objects, const Methods& methods)
    : bus_(bus), objects_(objects), methods_(methods) {
    state_.version = RDMAD_VERSION;
    vtable_ = make_vtable(
        manager_properties(), &ManagerObject::get,
        {SD_BUS_METHOD_WITH_NAMES("ListDevices", "", , "a(so)", SD_BUS_PARAM(devices),
                                  &ManagerObject::list_devices, kMethodFlags),
         SD_BUS_METHOD_WITH_NAMES("GetDeviceByName", "s", SD_BUS_PARAM(name), "o",
                                  SD_BUS_PARAM(device), &ManagerObject::get_device_by_name,
                                  kMethodFlags),
         SD_BUS_METHOD_WITH_NAMES("GetLinkByName", "s", SD_BUS_PARAM(name), "o",
                                  SD_BUS_PARAM(link), &ManagerObject::get_link_by_name,
                                  kMethodFlags),
         SD_BUS_METHOD_WITH_NAMES("Describe", "", , "s", SD_BUS_PARAM(json),
                                  &ManagerObject::describe, kMethodFlags),
         SD_BUS_METHOD_WITH_NAMES("Reconcile", "b", SD_BUS_PARAM(dry_run), "a(ssss)",
                                  SD_BUS_PARAM(changes), &ManagerObject::reconcile, kMethodFlags),
         SD_BUS_METHOD("Reload", "", "", &ManagerObject::reload, kMethodFlags),
         SD_BUS_METHOD_WITH_NAMES("InstallProviders", "", , "as", SD_BUS_PARAM(packages),
                                  &ManagerObject::install_providers, kMethodFlags)});
    sd_bus_slot* slot = nullptr;
    int r = sd_bus_add_object_manager(bus_, &slot, api::kManagerPath);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "cannot add the object manager");
    object_manager_.reset(slot);
    r = sd_bus_add_object_vtable(bus_, &slot, api::kManagerPath, api::kManagerInterface,
                                 vtable_.data(), this);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "cannot register org.rdmad1.Manager");
    vtable_slot_.reset(slot);
}

void ManagerObject::emit(const char* property) {
    if (int r = sd_bus_emit_properties_changed(bus_, api::kManagerPath, api::kManagerInterface,
                                               property, nullptr);
        r < 0)
        log::warning("PropertiesChanged for {}: {}", api::kManagerPath, std::strerror(-r));
}

void ManagerObject::set_state(const std::string& state) {
    if (state == state_.state)
        return;
    state_.state = state;
    emit("State");
}

void ManagerObject::set_sources(const std::vector<std::string>& sources) {
    // File names are bytes (a conf.d name need not be UTF-8); D-Bus strings must be UTF-8.
    std::vector<std::string> shown;
    for (const auto& s : sources)
        shown.push_back(valid_utf8(s));
    if (shown == state_.sources)
        return;
    state_.sources = std::move(shown);
    emit("DesiredStateSource");
}

void ManagerObject::set_rdma_netns(const RdmaNetnsState& netns) {
    const RdmaNetnsState old = std::exchange(state_.rdma_netns, netns);
    if (old.now != netns.now)
        emit("RdmaNetnsMode");
    if (old.desired != netns.desired)
        emit("DesiredRdmaNetnsMode");
    if (old.pending() != netns.pending())
        emit("PendingRdmaNetnsMode");
}

void ManagerObject::set_install_providers_mode(const std::string& mode) {
    if (mode == state_.install_providers_mode)
        return;
    state_.install_providers_mode = mode;
    emit("InstallProvidersMode");
}

void ManagerObject::set_problems(const std::vector<Problem>& problems) {
    // They quote file names and outside input: made valid and bounded once, for the property
    // and Describe() alike.
    std::vector<Problem> shown;
    for (const auto& p : problems)
        shown.push_back({valid_utf8(p.code), valid_utf8(p.severity), message_text(p.text)});
    if (shown == state_.problems)
        return;
    state_.problems = std::move(shown);
    emit("Problems");
}

void ManagerObject::set_loaded_modules(const std::vector<std::string>& modules) {
    if (modules == state_.loaded_modules)
        return;
    state_.loaded_modules = modules;
    emit("LoadedModules");
}

int ManagerObject::get(sd_bus*, const char*, const char*, const char* property,
                       sd_bus_message* reply, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<ManagerObject*>(userdata);
    const Inventory* inv = self->objects_.inventory();
    return write_property(manager_properties(), property, reply, self->state_,
                          PropertyContext{inv ? *inv : empty_inventory()}, error);
}

int ManagerObject::list_devices(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<ManagerObject*>(userdata);
    return errors::guard(error, [&] {
        const Inventory* inv = self->objects_.inventory();
        sd_bus_message* raw = nullptr;
        if (int r = sd_bus_message_new_method_return(m, &raw); r < 0)
            return r;
        MessagePtr reply(raw);
        MessageWriter w(reply.get());
        w.begin_array("(so)");
        for (const auto& [d, id] : devices_by_name(inv ? *inv : empty_inventory())) {
            w.begin_struct("so");
            write_line(w, d->name);
            w.object_path(device_path(*id));
            w.end_struct();
        }
        w.end_array();
        return sd_bus_send(nullptr, reply.get(), nullptr);
    });
}

int ManagerObject::get_device_by_name(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<ManagerObject*>(userdata);
    const char* name = nullptr;
    if (int r = sd_bus_message_read(m, "s", &name); r < 0)
        return r;
    return errors::guard(error, [&] {
        const std::string n = name;
        // The kernel limits RDMA device names to IB_DEVICE_NAME_MAX (64) bytes.
        if (n.empty() || n.size() > 64)
            return errors::set(error, errors::InvalidArgument,
                               "an RDMA device name has 1 to 64 bytes");
        const Inventory* inv = self->objects_.inventory();
        const DeviceState* d = inv ? inv->device_named(n) : nullptr;
        if (!d)
            return errors::set(error, errors::NoSuchObject,
                               "no RDMA device named " + one_line_text(n));
        return reply_path(m, device_path(inv->id_of(d->syspath)));
    });
}

int ManagerObject::get_link_by_name(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<ManagerObject*>(userdata);
    const char* name = nullptr;
    if (int r = sd_bus_message_read(m, "s", &name); r < 0)
        return r;
    return errors::guard(error, [&] {
        const std::string n = name;
        // IFNAMSIZ is 16 with the terminating NUL (include/uapi/linux/if.h).
        if (n.empty() || n.size() > 15)
            return errors::set(error, errors::InvalidArgument, "a netdev name has 1 to 15 bytes");
        const Inventory* inv = self->objects_.inventory();
        const LinkState* l = inv ? inv->link_named(n) : nullptr;
        if (!l)
            return errors::set(error, errors::NoSuchObject, "no netdev named " + one_line_text(n));
        return reply_path(m, link_path(l->index));
    });
}

int ManagerObject::describe(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<ManagerObject*>(userdata);
    return errors::guard(error, [&] {
        const Inventory& inv =
            self->objects_.inventory() ? *self->objects_.inventory() : empty_inventory();
        // Objects changed since the loop was last idle are measured first, and kept.
        self->objects_.measure_describe();
        const DescribeRenderer& describe = self->objects_.describe();
        // Each object goes straight into the reply's body, rendered into one scratch text: at
        // 1,024 devices the document is 2.6 MB, and any whole copy of it (a string, kept
        // texts) doubled the daemon's peak.
        const size_t size = describe.size(inv, self->state_);
        sd_bus_message* raw = nullptr;
        if (int r = sd_bus_message_new_method_return(m, &raw); r < 0)
            return r;
        MessagePtr reply(raw);
        char* body = nullptr;
        if (int r = sd_bus_message_append_string_space(reply.get(), size, &body); r < 0)
            return r;
        size_t at = 0;
        const size_t written = describe.write(inv, self->state_, [&](std::string_view piece) {
            if (at + piece.size() <= size)
                std::memcpy(body + at, piece.data(), piece.size());
            at += piece.size();
        });
        if (written != size) {
            // A kept size went stale (an Inventory change that bypassed the renderer): answer
            // with the document rendered whole, and say so.
            log::error("Describe(): {} bytes written where {} were measured; rendered whole",
                       written, size);
            if (int r = sd_bus_message_new_method_return(m, &raw); r < 0)
                return r;
            reply.reset(raw);
            if (int r = sd_bus_message_append(reply.get(), "s",
                                              describe_json(inv, self->state_).c_str());
                r < 0)
                return r;
        }
        const int r = sd_bus_send(nullptr, reply.get(), nullptr);
        reply.reset();
        // The reply's buffer and the scratch text went back to malloc; give the pages back
        // as well, so that a Describe() leaves the daemon as large as it was.
        malloc_trim(0);
        return r;
    });
}

int ManagerObject::reconcile(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<ManagerObject*>(userdata);
    int dry_run = 0;
    if (int r = sd_bus_message_read(m, "b", &dry_run); r < 0)
        return r;
    Controller* c = self->methods_.controller;
    if (dry_run) {
        // A preview changes nothing: no authorization.
        return errors::guard(error, [&] {
            if (!c)
                throw MethodError(api::kNotSupported, "reconciliation is not available");
            return reply_changes(m, c->reconcile(true));
        });
    }
    return call_authorized(
        self->methods_, m, error, [] {},
        [c](sd_bus_message* call) { return reply_changes(call, c->reconcile(false)); });
}

int ManagerObject::reload(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<ManagerObject*>(userdata);
    Controller* c = self->methods_.controller;
    return call_authorized(self->methods_, m, error, [] {}, [c](sd_bus_message* m) {
        // Answered when the read (on a worker) is in force; the loop serves calls meanwhile.
        c->reload([call = method_call::keep(m)](std::optional<MethodError> e) {
            if (e) {
                method_call::reply_error(call.get(), e->name(), e->message());
            } else if (int r = sd_bus_reply_method_return(call.get(), ""); r < 0) {
                log::warning("cannot send the reply: {}", std::strerror(-r));
            }
        });
        return 0;
    });
}

int ManagerObject::install_providers(sd_bus_message* m, void* userdata, sd_bus_error* error) {
    auto* self = static_cast<ManagerObject*>(userdata);
    Controller* c = self->methods_.controller;
    return call_authorized(
        self->methods_, m, error, [c] { c->check_install_providers(); },
        [c](sd_bus_message* call) {
            const std::vector<std::string> packages = c->install_providers();
            sd_bus_message* raw = nullptr;
            if (int r = sd_bus_message_new_method_return(call, &raw); r < 0)
                return r;
            MessagePtr reply(raw);
            MessageWriter w(reply.get());
            w.begin_array("s");
            for (const auto& p : packages)
                w.string(valid_utf8(p));
            w.end_array();
            return sd_bus_send(nullptr, reply.get(), nullptr);
        },
        api::kInstallProvidersAction);
}

} // namespace rdmad
