// SPDX-License-Identifier: MIT
#include "bus/event_loop.hpp"

#include "util/log.hpp"

#include <cstdint>
#include <system_error>

namespace rdmad {

BusEventSource::BusEventSource(sd_event* event, sdbus::IConnection& connection)
    : event_(event), connection_(connection) {
    auto pd = connection_.getEventLoopPollData();
    int r = sd_event_add_io(event, &io_, pd.fd, static_cast<uint32_t>(pd.events), on_io, this);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "sd_event_add_io (bus)");
    r = sd_event_source_set_prepare(io_, on_prepare);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "sd_event_source_set_prepare");
    // Accuracy 1 ms, not sd-event's default 250 ms slack: sd-bus timeouts are precise.
    r = sd_event_add_time(event, &timer_, CLOCK_MONOTONIC, UINT64_MAX, 1000, on_timer, this);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "sd_event_add_time (bus)");
    sd_event_source_set_enabled(timer_, SD_EVENT_OFF);
}

BusEventSource::~BusEventSource() {
    sd_event_source_disable_unref(timer_);
    sd_event_source_disable_unref(io_);
}

void BusEventSource::drain() {
    while (connection_.processPendingRequest()) {
    }
}

int BusEventSource::on_prepare(sd_event_source*, void* userdata) {
    auto* self = static_cast<BusEventSource*>(userdata);
    try {
        auto pd = self->connection_.getEventLoopPollData();
        sd_event_source_set_io_events(self->io_, static_cast<uint32_t>(pd.events));
        if (pd.timeout_usec == UINT64_MAX) {
            sd_event_source_set_enabled(self->timer_, SD_EVENT_OFF);
        } else {
            sd_event_source_set_time(self->timer_, pd.timeout_usec);
            sd_event_source_set_enabled(self->timer_, SD_EVENT_ONESHOT);
        }
    } catch (const std::exception& e) {
        log::error("bus poll data: {}", e.what());
    }
    return 0;
}

int BusEventSource::on_io(sd_event_source*, int, uint32_t, void* userdata) {
    auto* self = static_cast<BusEventSource*>(userdata);
    try {
        self->drain();
    } catch (const std::exception& e) {
        log::error("lost the bus connection: {}", e.what());
        sd_event_exit(self->event_, 1);
    }
    return 0;
}

int BusEventSource::on_timer(sd_event_source*, uint64_t, void* userdata) {
    return on_io(nullptr, -1, 0, userdata);
}

} // namespace rdmad
