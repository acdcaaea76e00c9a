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

namespace {
/// How long Describe()'s measuring waits again while the bus still holds queued messages.
constexpr uint64_t kMeasureRetryUsec = 5'000;
} // namespace

// Member order is teardown order: the objects go before polkit's pending calls, both before
// the connection (flushed, then closed).
struct Bus::Parts {
    BusPtr bus;
    std::unique_ptr<Authorizer> authorizer;
    std::unique_ptr<Objects> objects;
    std::unique_ptr<ManagerObject> manager;
    /// Describe()'s sizes measured when the loop is idle (SD_EVENT_PRIORITY_IDLE) and the
    /// bus has taken every message queued: a timer, so that waiting for the socket (a burst's
    /// 3,000 InterfacesAdded fill it) is a wait, not a spin. Last: torn down before the
    /// objects.
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
    if (sd_event_add_time(event, into(parts_->measure), CLOCK_MONOTONIC, 0, 0, on_idle,
                          parts_.get()) < 0)
        throw std::runtime_error("cannot add the Describe() measuring source");
    if (sd_event_source_set_priority(parts_->measure.get(), SD_EVENT_PRIORITY_IDLE) < 0 ||
        sd_event_source_set_enabled(parts_->measure.get(), SD_EVENT_OFF) < 0)
        throw std::runtime_error("cannot set up the Describe() measuring source");
}

int Bus::on_idle(sd_event_source* source, uint64_t, void* userdata) {
    return at_loop_edge("Describe() measuring", [&] {
        auto* parts = static_cast<Parts*>(userdata);
        // Messages still queued for the socket go first: rendering now would hold them.
        uint64_t queued = 0;
        if (sd_bus_get_n_queued_write(parts->bus.get(), &queued) >= 0 && queued > 0) {
            sd_event_source_set_time_relative(source, kMeasureRetryUsec);
            sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
            return;
        }
        parts->objects->measure_describe();
    });
}

Bus::~Bus() = default;

void Bus::apply(const Inventory& inventory, const ChangeSet& changes) {
    parts_->objects->apply(inventory, changes);
    sd_event_source_set_time(parts_->measure.get(), 0); // due now, run when idle
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
