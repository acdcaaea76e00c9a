// SPDX-License-Identifier: MIT
#include "sources/udev_monitor.hpp"

#include "util/log.hpp"
#include "util/loop_edge.hpp"

#include <cerrno>
#include <stdexcept>

namespace rdmad {

namespace {
// A large receive buffer absorbs SR-IOV bursts of hundreds of devices (bolt uses 128 MiB).
constexpr int kReceiveBuffer = 128 * 1024 * 1024;
constexpr const char* kSubsystems[] = {"infiniband", "infiniband_verbs", "net", "pci", "auxiliary"};
} // namespace

UdevMonitor::UdevMonitor(struct udev* ctx, sd_event* event, Handler handler)
    : handler_(std::move(handler)) {
    // The "udev" group: events after udev processed them (renames done). Subsystem filters
    // only: tag filters drop umockdev's events (DESIGN.md pitfalls).
    monitor_.reset(udev_monitor_new_from_netlink(ctx, "udev"));
    if (!monitor_)
        throw std::runtime_error("cannot open the udev monitor");
    for (const char* s : kSubsystems)
        udev_monitor_filter_add_match_subsystem_devtype(monitor_.get(), s, nullptr);
    if (udev_monitor_set_receive_buffer_size(monitor_.get(), kReceiveBuffer) < 0)
        log::debug("udev monitor: cannot set a {} byte receive buffer", kReceiveBuffer);
    if (udev_monitor_enable_receiving(monitor_.get()) < 0)
        throw std::runtime_error("cannot enable the udev monitor");
    int fd = udev_monitor_get_fd(monitor_.get());
    int r = sd_event_add_io(event, into(source_), fd, EPOLLIN, on_io, this);
    if (r < 0)
        throw std::runtime_error("sd_event_add_io (udev monitor) failed");
}

int UdevMonitor::on_io(sd_event_source*, int, uint32_t, void* userdata) {
    // drain() keeps its handler's exceptions; copying a uevent's strings may still throw.
    return at_loop_edge("udev monitor", [&] { static_cast<UdevMonitor*>(userdata)->drain(); });
}

void UdevMonitor::drain() {
    // Each call of the handler is an edge: one uevent it cannot take (or a resync it cannot
    // start) is logged, and the rest of the queue is still delivered.
    auto deliver = [this](const Uevent* ev, bool overflow) {
        const std::string what =
            ev ? "uevent " + ev->action + " " + ev->syspath : std::string("udev monitor overflow");
        at_loop_edge(what.c_str(), [&] { handler_(ev, overflow); });
    };
    for (;;) {
        errno = 0;
        udev::Device dev(udev_monitor_receive_device(monitor_.get()));
        if (!dev) {
            if (errno == ENOBUFS) {
                log::warning("udev monitor overflowed: resynchronising");
                deliver(nullptr, true);
                continue;
            }
            break;
        }
        Uevent ev;
        ev.action = udev::str(udev_device_get_action(dev.get()));
        ev.subsystem = udev::str(udev_device_get_subsystem(dev.get()));
        ev.syspath = udev::str(udev_device_get_syspath(dev.get()));
        ev.devpath_old = udev::str(udev_device_get_property_value(dev.get(), "DEVPATH_OLD"));
        deliver(&ev, false);
    }
}

} // namespace rdmad
