// SPDX-License-Identifier: MIT
//
// bench-describe: time one org.rdmad1.Manager.Describe() call on the system bus
// ($DBUS_SYSTEM_BUS_ADDRESS). The connection is opened and authenticated (a Peer.Ping to
// org.rdmad1) before the clock starts, so the figure is the call's round trip: rdmad
// building the JSON, marshalling, the bus daemon relaying it, and unmarshalling here.
// Prints "<microseconds> <JSON bytes>"; with an argument, also writes the JSON to that file.
#include "rdmad-bus.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <systemd/sd-bus.h>

int main(int argc, char** argv) {
    sd_bus* bus = open_rdmad_bus("bench-describe");
    if (!bus)
        return 1;
    sd_bus_error err = SD_BUS_ERROR_NULL;
    sd_bus_message* reply = nullptr;
    sd_bus_message* call = nullptr;
    sd_bus_message_new_method_call(bus, &call, "org.rdmad1", "/org/rdmad1", "org.rdmad1.Manager",
                                   "Describe");
    const auto t0 = std::chrono::steady_clock::now();
    int r = sd_bus_call(bus, call, 600ULL * 1000 * 1000, &err, &reply);
    const char* json = nullptr;
    if (r >= 0)
        r = sd_bus_message_read(reply, "s", &json);
    const auto t1 = std::chrono::steady_clock::now();
    if (r < 0 || !json) {
        std::fprintf(stderr, "bench-describe: Describe: %s\n",
                     err.message ? err.message : std::strerror(-r));
        return 1;
    }
    const size_t bytes = std::strlen(json);
    if (argc > 1) {
        FILE* f = std::fopen(argv[1], "w");
        if (!f || std::fwrite(json, 1, bytes, f) != bytes || std::fclose(f) != 0) {
            std::perror(argv[1]);
            return 1;
        }
    }
    std::printf("%.0f %zu\n", std::chrono::duration<double, std::micro>(t1 - t0).count(), bytes);
    sd_bus_message_unref(reply);
    sd_bus_message_unref(call);
    sd_bus_error_free(&err);
    sd_bus_flush_close_unref(bus);
    return 0;
}
