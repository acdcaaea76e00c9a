// SPDX-License-Identifier: MIT
//
// Runs an sdbus-c++ 1.2 connection on an sd-event loop. sdbus-c++ 1.2 has no
// attachSdEventLoop() (that came in 2.0), only getEventLoopPollData() and
// processPendingRequest(); this adapter does what 2.0's does: an IO source whose prepare
// callback re-reads the poll data before every wait, plus a one-shot timer for sd-bus
// timeouts. See ../shared/reference/ARCHITECTURE-NOTES.md §2.1.
#pragma once

#include <sdbus-c++/IConnection.h>
#include <systemd/sd-event.h>

namespace rdmad {

class BusEventSource {
  public:
    /// Attach `connection` to `event`. Throws std::system_error when sd-event refuses. When the
    /// connection fails (the bus went away, or dropped us), the loop exits with status 1, so
    /// that systemd restarts the daemon instead of leaving it running off the bus.
    BusEventSource(sd_event* event, sdbus::IConnection& connection);
    ~BusEventSource();
    BusEventSource(const BusEventSource&) = delete;
    BusEventSource& operator=(const BusEventSource&) = delete;

    /// Process every queued message now (e.g. after emitting many signals).
    void drain();

  private:
    static int on_prepare(sd_event_source* s, void* userdata);
    static int on_io(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    static int on_timer(sd_event_source* s, uint64_t usec, void* userdata);

    sd_event* event_;
    sdbus::IConnection& connection_;
    sd_event_source* io_ = nullptr;
    sd_event_source* timer_ = nullptr;
};

} // namespace rdmad
