// SPDX-License-Identifier: MIT
//
// Shared by bench-describe and bench-reconcile-call: open the system bus
// ($DBUS_SYSTEM_BUS_ADDRESS) and authenticate with a Peer.Ping to org.rdmad1, before any clock
// starts, so a timed call afterwards is only its round trip.
#pragma once

#include <cstdio>
#include <cstring>
#include <systemd/sd-bus.h>

/// The connection, or nullptr after a message on stderr that starts with `prog`.
inline sd_bus* open_rdmad_bus(const char* prog) {
    sd_bus* bus = nullptr;
    int r = sd_bus_open_system(&bus);
    if (r < 0) {
        std::fprintf(stderr, "%s: cannot open the system bus: %s\n", prog, std::strerror(-r));
        return nullptr;
    }
    sd_bus_error err = SD_BUS_ERROR_NULL;
    sd_bus_message* reply = nullptr;
    r = sd_bus_call_method(bus, "org.rdmad1", "/org/rdmad1", "org.freedesktop.DBus.Peer", "Ping",
                           &err, &reply, "");
    if (r < 0) {
        std::fprintf(stderr, "%s: Ping: %s\n", prog, err.message ? err.message : "?");
        sd_bus_error_free(&err);
        sd_bus_flush_close_unref(bus);
        return nullptr;
    }
    sd_bus_message_unref(reply);
    return bus;
}
