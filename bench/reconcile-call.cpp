// SPDX-License-Identifier: MIT
//
// bench-reconcile-call: time org.rdmad1.Manager.Reconcile(true), the dry run, on the system
// bus ($DBUS_SYSTEM_BUS_ADDRESS). As in bench-describe, the connection is opened and
// authenticated (a Peer.Ping to org.rdmad1, rdmad-bus.hpp) before any clock starts. Calls it N times, one
// after the other, and prints one line a call: "<microseconds> <changes returned>". With
// --dump FILE, writes the last call's changes there, one "object\tsetting\tfrom\tto" a line.
//
//   bench-reconcile-call [--calls N] [--dump FILE]
#include "rdmad-bus.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <systemd/sd-bus.h>
#include <vector>

namespace {

struct Change {
    std::string object, setting, from, to;
};

// Reads the a(ssss) reply; returns false on a malformed reply.
bool read_changes(sd_bus_message* reply, std::vector<Change>& out) {
    out.clear();
    if (sd_bus_message_enter_container(reply, 'a', "(ssss)") < 0)
        return false;
    const char *o, *s, *f, *t;
    int r;
    while ((r = sd_bus_message_read(reply, "(ssss)", &o, &s, &f, &t)) > 0)
        out.push_back({o, s, f, t});
    return r == 0 && sd_bus_message_exit_container(reply) >= 0;
}

} // namespace

int main(int argc, char** argv) {
    int calls = 1;
    const char* dump = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--dump") && i + 1 < argc)
            dump = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--calls N] [--dump FILE]\n", argv[0]);
            return 2;
        }
    }
    sd_bus* bus = open_rdmad_bus("bench-reconcile-call");
    if (!bus)
        return 1;
    sd_bus_error err = SD_BUS_ERROR_NULL;
    sd_bus_message* reply = nullptr;
    int r = 0;

    std::vector<Change> changes;
    for (int i = 0; i < calls; ++i) {
        sd_bus_message* call = nullptr;
        sd_bus_message_new_method_call(bus, &call, "org.rdmad1", "/org/rdmad1",
                                       "org.rdmad1.Manager", "Reconcile");
        sd_bus_message_append(call, "b", 1);
        const auto t0 = std::chrono::steady_clock::now();
        r = sd_bus_call(bus, call, 600ULL * 1000 * 1000, &err, &reply);
        const bool ok = r >= 0 && read_changes(reply, changes);
        const auto t1 = std::chrono::steady_clock::now();
        if (!ok) {
            std::fprintf(stderr, "bench-reconcile-call: Reconcile(true): %s\n",
                         err.message ? err.message : "malformed reply");
            return 1;
        }
        std::printf("%.0f %zu\n", std::chrono::duration<double, std::micro>(t1 - t0).count(),
                    changes.size());
        reply = sd_bus_message_unref(reply);
        sd_bus_message_unref(call);
    }
    if (dump) {
        FILE* f = std::fopen(dump, "w");
        if (!f) {
            std::perror(dump);
            return 1;
        }
        for (const auto& c : changes)
            std::fprintf(f, "%s\t%s\t%s\t%s\n", c.object.c_str(), c.setting.c_str(),
                         c.from.c_str(), c.to.c_str());
        if (std::fclose(f) != 0) {
            std::perror(dump);
            return 1;
        }
    }
    sd_bus_error_free(&err);
    sd_bus_flush_close_unref(bus);
    return 0;
}
