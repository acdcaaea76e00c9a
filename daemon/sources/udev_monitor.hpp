// SPDX-License-Identifier: MIT
//
// The udev monitor: uevents for the subsystems rdmad reads, delivered on the sd-event loop.
// Opened before the start-up enumeration, so an add that races the scan is not lost.
#pragma once

#include "sources/udev.hpp"
#include "util/event_source.hpp"

#include <functional>
#include <string>
#include <sys/epoll.h>
#include <systemd/sd-event.h>

namespace rdmad {

struct Uevent {
    std::string action; ///< "add", "remove", "change", "move", "bind", "unbind"
    std::string subsystem;
    std::string syspath;
    std::string devpath_old; ///< DEVPATH_OLD of a "move" (rename)
};

class UdevMonitor {
  public:
    /// Called for every uevent; `overflow` is true when events were lost (ENOBUFS) and the
    /// receiver must resynchronise fully.
    using Handler = std::function<void(const Uevent* event, bool overflow)>;

    /// Subsystems watched: infiniband, infiniband_verbs, net, pci, auxiliary.
    /// Throws std::runtime_error when the monitor cannot be opened.
    UdevMonitor(struct udev* ctx, sd_event* event, Handler handler);
    UdevMonitor(const UdevMonitor&) = delete;
    UdevMonitor& operator=(const UdevMonitor&) = delete;

    /// Hand every uevent already queued on the monitor to the handler, without waiting. The
    /// daemon calls it right before a pass, so that the rest of a burst that has started joins
    /// the pass its first event scheduled.
    void drain();

  private:
    static int on_io(sd_event_source* s, int fd, uint32_t revents, void* userdata);

    Handler handler_;
    udev::Monitor monitor_;
    EventSource source_; ///< reads monitor_: goes first
};

} // namespace rdmad
