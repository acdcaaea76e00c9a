// SPDX-License-Identifier: MIT
//
// Owning handles of sd-bus objects (sd-bus(3)): each releases its object when it goes, so a
// class's member order is its teardown order.
#pragma once

#include <memory>
#include <systemd/sd-bus.h>

namespace rdmad {

struct BusCloser {
    /// Flush what is queued (replies, signals), close, drop.
    void operator()(sd_bus* bus) const { sd_bus_flush_close_unref(bus); }
};
struct SlotUnref {
    void operator()(sd_bus_slot* slot) const { sd_bus_slot_unref(slot); }
};
struct MessageUnref {
    void operator()(sd_bus_message* m) const { sd_bus_message_unref(m); }
};

using BusPtr = std::unique_ptr<sd_bus, BusCloser>;
/// A registration (vtable, enumerator, object manager, match, pending call): dropping it
/// unregisters.
using SlotPtr = std::unique_ptr<sd_bus_slot, SlotUnref>;
using MessagePtr = std::unique_ptr<sd_bus_message, MessageUnref>;

/// A new reference to `m`.
inline MessagePtr ref(sd_bus_message* m) { return MessagePtr(sd_bus_message_ref(m)); }

/// sd_bus_error that frees itself.
struct BusError {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    BusError() = default;
    BusError(const BusError&) = delete;
    BusError& operator=(const BusError&) = delete;
    ~BusError() { sd_bus_error_free(&error); }
    sd_bus_error* get() { return &error; }
};

} // namespace rdmad
