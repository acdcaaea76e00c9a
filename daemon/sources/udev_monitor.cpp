// SPDX-License-Identifier: MIT
#include "sources/udev_monitor.hpp"

#include "util/log.hpp"

#include <cerrno>
#include <stdexcept>

namespace rdmad {

namespace {
// A large receive buffer absorbs SR-IOV bursts of hundreds of devices (bolt uses 128 MiB).
constexpr int kReceiveBuffer = 128 * 1024 * 1024;
constexpr const char* kSubsystems[] = {"infiniband", "infiniband_verbs", "net", "pci",
                                       "auxiliary"};
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
    int r = sd_event_add_io(event, &source_, fd, EPOLLIN, on_io, this);
    if (r < 0)
        throw std::runtime_error("sd_event_add_io (udev monitor) failed");
}

UdevMonitor::~UdevMonitor() { sd_event_source_disable_unref(source_); }

int UdevMonitor::on_io(sd_event_source*, int, uint32_t, void* userdata) {
    static_cast<UdevMonitor*>(userdata)->drain();
    return 0;
}

void UdevMonitor::drain() {
    UdevMonitor* self = this;
    for (;;) {
        errno = 0;
        udev::Device dev(udev_monitor_receive_device(self->monitor_.get()));
        if (!dev) {
            if (errno == ENOBUFS) {
                log::warning("udev monitor overflowed: resynchronising");
                self->handler_(nullptr, true);
                continue;
            }
            break;
        }
        Uevent ev;
        ev.action = udev::str(udev_device_get_action(dev.get()));
        ev.subsystem = udev::str(udev_device_get_subsystem(dev.get()));
        ev.syspath = udev::str(udev_device_get_syspath(dev.get()));
        ev.devpath_old = udev::str(udev_device_get_property_value(dev.get(), "DEVPATH_OLD"));
        try {
            self->handler_(&ev, false);
        } catch (const std::exception& e) {
            log::error("uevent {} {}: {}", ev.action, ev.syspath, e.what());
        }
    }
}

} // namespace rdmad
