// SPDX-License-Identifier: MIT
#include "daemon.hpp"

#include "util/log.hpp"

#include <csignal>
#include <sdbus-c++/sdbus-c++.h>
#include <stdexcept>
#include <systemd/sd-daemon.h>

namespace rdmad {

namespace {
constexpr const char* kBusName = "org.rdmad1";
}

Daemon::Daemon(DaemonOptions options) : options_(std::move(options)) {
    if (sd_event_default(&event_) < 0)
        throw std::runtime_error("cannot create the sd-event loop");
    scanner_ = std::make_unique<Scanner>(options_.scan);
    // Monitor before enumerate: an add racing the first scan is then seen by the rescan it
    // triggers, and the rescan's result is the same inventory (no duplicate objects).
    monitor_ = std::make_unique<UdevMonitor>(
        scanner_->udev_context(), event_, [this](const Uevent* ev, bool overflow) {
            if (overflow || !ev) {
                full_resync_ = true; // events were lost: the next pass reads everything
            } else {
                log::debug("uevent {} {} {}", ev->action, ev->subsystem, ev->syspath);
                if (auto renamed = scanner_->note(*ev); renamed && exporter_)
                    exporter_->rename_device(renamed->first, renamed->second);
            }
            schedule_pass(options_.coalesce_usec);
        });
    try {
        rtnl_ = std::make_unique<RtnlMonitor>(event_, [this](int32_t ifindex) {
            scanner_->note_link(ifindex);
            schedule_pass(options_.coalesce_usec);
        });
    } catch (const std::exception& e) {
        log::warning("{}: netdev carrier changes are seen through uevents only", e.what());
    }
    verbs_ = std::make_unique<VerbsEvents>(event_, [this](const std::string& device) {
        scanner_->note_device(device);
        schedule_pass(options_.coalesce_usec);
    });
    connection_ = sdbus::createSystemBusConnection();
    bus_source_ = std::make_unique<BusEventSource>(event_, *connection_);
    exporter_ = std::make_unique<Exporter>(*connection_);

    if (sd_event_add_time(event_, &timer_, CLOCK_MONOTONIC, UINT64_MAX, 0, on_timer, this) < 0)
        throw std::runtime_error("cannot add the coalescing timer");
    sd_event_source_set_enabled(timer_, SD_EVENT_OFF);

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    const int sigs[3] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; ++i)
        if (sd_event_add_signal(event_, &signals_[i], sigs[i], on_signal, this) < 0)
            throw std::runtime_error("cannot add signal handlers");
    // WATCHDOG=1 at half of WATCHDOG_USEC when systemd asks for it.
    sd_event_set_watchdog(event_, true);
}

Daemon::~Daemon() {
    for (auto* s : signals_)
        sd_event_source_disable_unref(s);
    sd_event_source_disable_unref(timer_);
    exporter_.reset();
    verbs_.reset();
    rtnl_.reset();
    bus_source_.reset();
    connection_.reset();
    monitor_.reset();
    scanner_.reset();
    sd_event_unref(event_);
}

void Daemon::schedule_pass(uint64_t delay_usec) {
    int enabled = SD_EVENT_OFF;
    sd_event_source_get_enabled(timer_, &enabled);
    if (enabled != SD_EVENT_OFF)
        return; // a pass is already due; this event joins it
    uint64_t now = 0;
    sd_event_now(event_, CLOCK_MONOTONIC, &now);
    sd_event_source_set_time(timer_, now + delay_usec);
    sd_event_source_set_enabled(timer_, SD_EVENT_ONESHOT);
}

void Daemon::pass() {
    bool incomplete = false;
    if (full_resync_) {
        full_resync_ = false;
        scanner_->full_scan();
    } else {
        incomplete = scanner_->refresh();
    }
    publish();
    if (incomplete)
        schedule_pass(options_.retry_usec);
}

void Daemon::publish() {
    Inventory inv = scanner_->inventory();
    exporter_->publish(inv);
    verbs_->track(scanner_->devices_with_verbs());
    sd_notifyf(false, "STATUS=%zu RDMA devices, %zu netdevs", inv.devices.size(),
               inv.links.size());
}

int Daemon::on_timer(sd_event_source*, uint64_t, void* userdata) {
    auto* self = static_cast<Daemon*>(userdata);
    try {
        self->pass();
    } catch (const std::exception& e) {
        // Keep the last good state on the bus; read everything next time.
        log::error("pass failed: {}", e.what());
        self->full_resync_ = true;
    }
    return 0;
}

int Daemon::on_signal(sd_event_source*, const struct signalfd_siginfo* si, void* userdata) {
    auto* self = static_cast<Daemon*>(userdata);
    if (si->ssi_signo == SIGHUP) {
        log::info("SIGHUP: rereading the hardware");
        self->full_resync_ = true;
        self->schedule_pass(0);
        return 0;
    }
    sd_notify(false, "STOPPING=1");
    sd_event_exit(self->event_, 0);
    return 0;
}

int Daemon::run() {
    scanner_->full_scan();
    publish();
    // Take the name only once the first inventory is on the bus.
    connection_->requestName(kBusName);
    exporter_->manager().set_state("running");
    const auto& model = exporter_->model();
    log::info("ready: {} RDMA devices, {} netdevs", model.devices.size(), model.links.size());
    sd_notify(false, "READY=1");
    int r = sd_event_loop(event_);
    return r < 0 ? 1 : r;
}

} // namespace rdmad
