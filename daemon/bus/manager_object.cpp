// SPDX-License-Identifier: MIT
#include "bus/manager_object.hpp"

#include "bus/bus_model.hpp"
#include "bus/describe.hpp"
#include "bus/errors.hpp"
#include "config.h"
#include "util/text.hpp"

namespace rdmad {

ManagerObject::ManagerObject(sdbus::IConnection& connection, const BusModel& model,
                             const DescribeRenderer& describe)
    : AdaptorInterfaces(connection, kManagerPath), model_(model), describe_(describe) {
    registerAdaptor();
}

ManagerObject::~ManagerObject() { unregisterAdaptor(); }

void ManagerObject::set_state(const std::string& state) {
    if (state == state_)
        return;
    state_ = state;
    emitPropertiesChangedSignal(org::rdmad1::Manager_adaptor::INTERFACE_NAME, {"State"});
}

std::string ManagerObject::Version() { return RDMAD_VERSION; }

void ManagerObject::set_sources(const std::vector<std::string>& sources) {
    // File names are bytes (a conf.d name need not be UTF-8); D-Bus strings must be UTF-8.
    std::vector<std::string> shown;
    for (const auto& s : sources)
        shown.push_back(valid_utf8(s));
    if (shown == sources_)
        return;
    sources_ = std::move(shown);
    emitPropertiesChangedSignal(org::rdmad1::Manager_adaptor::INTERFACE_NAME,
                                {"DesiredStateSource"});
}

void ManagerObject::set_problems(const std::vector<Problem>& problems) {
    // They quote file names and outside input: made valid and bounded once, for the property
    // and Describe() alike.
    std::vector<Problem> shown;
    for (const auto& p : problems)
        shown.push_back({valid_utf8(p.code), valid_utf8(p.severity), message_text(p.text)});
    if (shown == problems_)
        return;
    problems_ = std::move(shown);
    emitPropertiesChangedSignal(org::rdmad1::Manager_adaptor::INTERFACE_NAME, {"Problems"});
}

std::vector<sdbus::Struct<std::string, std::string, std::string>> ManagerObject::Problems() {
    std::vector<sdbus::Struct<std::string, std::string, std::string>> out;
    for (const auto& p : problems_)
        out.emplace_back(p.code, p.severity, p.text);
    return out;
}

std::string ManagerObject::sender() {
    const sdbus::Message* m = getObject().getCurrentlyProcessedMessage();
    return m ? m->getSender() : std::string();
}

namespace {

std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>
to_bus(const ChangeList& changes) {
    std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> out;
    out.reserve(changes.size());
    for (const auto& c : changes)
        out.emplace_back(c);
    return out;
}

} // namespace

void ManagerObject::Reconcile(
    sdbus::Result<std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>>&&
        result,
    bool dry_run) {
    Controller* c = methods_ ? methods_->controller : nullptr;
    if (dry_run) {
        // A preview changes nothing: no authorization.
        auto work = [c] {
            if (!c)
                throw MethodError(api::kNotSupported, "reconciliation is not available");
            return to_bus(c->reconcile(true));
        };
        method_call::answer(result, work);
        return;
    }
    call_authorized(
        methods_, sender(), std::move(result), [] {}, [c] { return to_bus(c->reconcile(false)); });
}

void ManagerObject::Reload(sdbus::Result<>&& result) {
    Controller* c = methods_ ? methods_->controller : nullptr;
    call_authorized(
        methods_, sender(), std::move(result), [] {}, [c] { c->reload(); });
}

std::vector<sdbus::Struct<std::string, sdbus::ObjectPath>> ManagerObject::ListDevices() {
    return errors::guard([&] {
        std::vector<sdbus::Struct<std::string, sdbus::ObjectPath>> out;
        for (const DeviceView* d : model_.devices_by_name())
            out.emplace_back(d->state.name, sdbus::ObjectPath(d->path));
        return out;
    });
}

sdbus::ObjectPath ManagerObject::GetDeviceByName(const std::string& name) {
    return errors::guard([&] {
        // The kernel limits RDMA device names to IB_DEVICE_NAME_MAX (64) bytes.
        if (name.empty() || name.size() > 64)
            throw errors::make(errors::InvalidArgument, "an RDMA device name has 1 to 64 bytes");
        if (auto it = model_.device_path_by_name.find(name); it != model_.device_path_by_name.end())
            return sdbus::ObjectPath(it->second);
        throw errors::make(errors::NoSuchObject, "no RDMA device named " + one_line_text(name));
    });
}

sdbus::ObjectPath ManagerObject::GetLinkByName(const std::string& name) {
    return errors::guard([&] {
        // IFNAMSIZ is 16 with the terminating NUL (include/uapi/linux/if.h).
        if (name.empty() || name.size() > 15)
            throw errors::make(errors::InvalidArgument, "a netdev name has 1 to 15 bytes");
        if (auto it = model_.link_path_by_name.find(name); it != model_.link_path_by_name.end())
            return sdbus::ObjectPath(it->second);
        throw errors::make(errors::NoSuchObject, "no netdev named " + one_line_text(name));
    });
}

std::string ManagerObject::Describe() {
    return errors::guard(
        [&] { return describe_.render(model_, RDMAD_VERSION, state_, sources_, problems_); });
}

} // namespace rdmad
