// SPDX-License-Identifier: MIT
#include "bus/bus.hpp"

#include "bus/authorizer.hpp"
#include "bus/manager_object.hpp"
#include "bus/objects.hpp"
#include "bus/sd_bus_ptr.hpp"
#include "util/event_source.hpp"
#include "util/loop_edge.hpp"
#include "rdmad_api.hpp"

#include <cstring>
#include <stdexcept>
#include <system_error>

namespace rdmad {

// Member order is teardown order: the objects go before polkit's pending calls, both before
// the connection (flushed, then closed).
struct Bus::Parts {
    BusPtr bus;
    std::unique_ptr<Authorizer> authorizer;
    std::unique_ptr<Objects> objects;
    std::unique_ptr<ManagerObject> manager;
    /// Describe()'s sizes measured when the loop is idle (SD_EVENT_PRIORITY_IDLE), after a
    /// change set's signals and the pass are done. Last: torn down before the objects.
    EventSource measure;
};

Bus::Bus(sd_event* event, Controller& controller) : parts_(std::make_unique<Parts>()) {
    sd_bus* raw = nullptr;
    // sd_bus_open_system(3): DBUS_SYSTEM_BUS_ADDRESS when set.
    int r = sd_bus_open_system(&raw);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "cannot connect to the system bus");
    parts_->bus.reset(raw);
    r = sd_bus_attach_event(raw, event, SD_EVENT_PRIORITY_NORMAL);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "cannot attach the bus to the loop");
    // When the bus goes away or drops us, the loop ends with EXIT_FAILURE, so that systemd
    // restarts rdmad instead of leaving it running off the bus.
    sd_bus_set_exit_on_disconnect(raw, 1);
    parts_->authorizer = std::make_unique<Authorizer>(raw);
    const Methods methods{&controller, parts_->authorizer.get()};
    parts_->objects = std::make_unique<Objects>(raw, methods);
    parts_->manager = std::make_unique<ManagerObject>(raw, *parts_->objects, methods);
    // into() stores the source at the end of its statement: the calls on it come after.
    if (sd_event_add_defer(event, into(parts_->measure), on_idle, parts_.get()) < 0)
        throw std::runtime_error("cannot add the Describe() measuring source");
    if (sd_event_source_set_priority(parts_->measure.get(), SD_EVENT_PRIORITY_IDLE) < 0 ||
        sd_event_source_set_enabled(parts_->measure.get(), SD_EVENT_OFF) < 0)
        throw std::runtime_error("cannot set up the Describe() measuring source");
}

int Bus::on_idle(sd_event_source*, void* userdata) {
    return at_loop_edge("Describe() measuring",
                        [&] { static_cast<Parts*>(userdata)->objects->measure_describe(); });
}

Bus::~Bus() = default;

void Bus::apply(const Inventory& inventory, const ChangeSet& changes) {
    parts_->objects->apply(inventory, changes);
    sd_event_source_set_enabled(parts_->measure.get(), SD_EVENT_ONESHOT);
}

void Bus::set_sources(const std::vector<std::string>& sources) {
    parts_->manager->set_sources(sources);
}

void Bus::set_loaded_modules(const std::vector<std::string>& modules) {
    parts_->manager->set_loaded_modules(modules);
}

void Bus::set_problems(const std::vector<Problem>& problems) {
    parts_->manager->set_problems(problems);
}

void Bus::set_rdma_netns(const RdmaNetnsState& netns) { parts_->manager->set_rdma_netns(netns); }

void Bus::set_install_providers_mode(const std::string& mode) {
    parts_->manager->set_install_providers_mode(mode);
}

void Bus::set_state(const std::string& state) { parts_->manager->set_state(state); }

const std::string& Bus::state() const { return parts_->manager->state(); }

void Bus::request_name() {
    int r = sd_bus_request_name(parts_->bus.get(), api::kBusName, 0);
    if (r == -EEXIST)
        throw std::runtime_error(std::string("cannot take the bus name ") + api::kBusName +
                                 ": another process owns it (is rdmad already running?)");
    if (r < 0)
        throw std::runtime_error(std::string("cannot take the bus name ") + api::kBusName + ": " +
                                 std::strerror(-r));
    parts_->objects->start_announcing();
}

} // namespace rdmad
