// SPDX-License-Identifier: MIT
//
// bench-uevent-echo: the least a daemon can do for an isolated port change, as the floor of
// bench/bus-compare.py's latency beside the bare read: it takes the name org.rdmad1 on the
// system bus, receives uevents through a libudev monitor (subsystem infiniband, as rdmad's),
// and for each one re-reads one port's files as `bench-sysfs-read --port` does (state,
// phys_state, link_layer, rate, lid, sm_lid, the GID table with the types and netdevs of its
// non-zero entries), then sends one PropertiesChanged(org.rdmad1.Port, {State}) on the object
// path given, and flushes. No inventory, no comparison, no derive, no other object. What it
// costs beyond the bare read is the uevent's wake-up and the bus's hop, which any daemon pays.
//
//   bench-uevent-echo --port DEV/PORT --path OBJECT_PATH
//
// Run it under the umockdev preload (UMOCKDEV_DIR) like rdmad. Prints "ready" once the name
// is owned and the monitor listens; ends on SIGTERM.
#include "bare_reads.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <libudev.h>
#include <poll.h>
#include <string>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>
#include <vector>

namespace {

volatile sig_atomic_t stop = 0;

/// The port's files as bench-sysfs-read --port reads them; returns its state ("ACTIVE").
std::string read_port(const std::string& p) {
    bench::ReadCount count;
    std::string state = bench::read_port(p, false, count);
    // "4: ACTIVE\n" -> "ACTIVE"
    const auto colon = state.find(": ");
    if (colon != std::string::npos)
        state.erase(0, colon + 2);
    while (!state.empty() && (state.back() == '\n' || state.back() == ' '))
        state.pop_back();
    return state;
}

} // namespace

int main(int argc, char** argv) {
    std::string port, path;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--port") && i + 1 < argc)
            port = argv[++i];
        else if (!std::strcmp(argv[i], "--path") && i + 1 < argc)
            path = argv[++i];
    }
    const auto slash = port.find('/');
    if (slash == std::string::npos || path.empty()) {
        std::fprintf(stderr, "usage: %s --port DEV/PORT --path OBJECT_PATH\n", argv[0]);
        return 2;
    }
    const std::string dir =
        "/sys/class/infiniband/" + port.substr(0, slash) + "/ports/" + port.substr(slash + 1) + "/";
    std::signal(SIGTERM, [](int) { stop = 1; });

    sd_bus* bus = nullptr;
    int r = sd_bus_open_system(&bus);
    if (r >= 0)
        r = sd_bus_request_name(bus, "org.rdmad1", 0);
    if (r < 0) {
        std::fprintf(stderr, "bench-uevent-echo: the bus: %s\n", std::strerror(-r));
        return 1;
    }
    udev* u = udev_new();
    udev_monitor* mon = u ? udev_monitor_new_from_netlink(u, "udev") : nullptr;
    if (!mon || udev_monitor_filter_add_match_subsystem_devtype(mon, "infiniband", nullptr) < 0 ||
        udev_monitor_enable_receiving(mon) < 0) {
        std::fprintf(stderr, "bench-uevent-echo: no udev monitor\n");
        return 1;
    }
    std::printf("ready\n");
    std::fflush(stdout);
    while (!stop) {
        pollfd fds[2] = {{udev_monitor_get_fd(mon), POLLIN, 0},
                         {sd_bus_get_fd(bus), static_cast<short>(sd_bus_get_events(bus)), 0}};
        if (::poll(fds, 2, 1000) < 0 && errno != EINTR)
            break;
        if (fds[0].revents & POLLIN) {
            while (udev_device* d = udev_monitor_receive_device(mon)) {
                udev_device_unref(d);
                const std::string state = read_port(dir);
                sd_bus_emit_signal(bus, path.c_str(), "org.freedesktop.DBus.Properties",
                                   "PropertiesChanged", "sa{sv}as", "org.rdmad1.Port", 1,
                                   "State", "s", state.c_str(), 0);
                sd_bus_flush(bus);
            }
        }
        while (sd_bus_process(bus, nullptr) > 0) {
        }
    }
    udev_monitor_unref(mon);
    udev_unref(u);
    sd_bus_flush_close_unref(bus);
    return 0;
}
