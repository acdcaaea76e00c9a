// SPDX-License-Identifier: MIT
//
// Link changes from rtnetlink (RTMGRP_LINK): carrier and operstate changes of RoCE and iWARP
// netdevs come only this way, not as uevents. libmnl on the sd-event loop.
#pragma once

#include <cstdint>
#include <functional>
#include <systemd/sd-event.h>

struct mnl_socket;

namespace rdmad {

class RtnlMonitor {
  public:
    /// Called with the ifindex of every RTM_NEWLINK / RTM_DELLINK.
    using Handler = std::function<void(int32_t ifindex)>;

    /// Throws std::runtime_error when the socket cannot be opened or bound.
    RtnlMonitor(sd_event* event, Handler handler);
    ~RtnlMonitor();
    RtnlMonitor(const RtnlMonitor&) = delete;
    RtnlMonitor& operator=(const RtnlMonitor&) = delete;

  private:
    static int on_io(sd_event_source* s, int fd, uint32_t revents, void* userdata);

    mnl_socket* socket_ = nullptr;
    sd_event_source* source_ = nullptr;
    Handler handler_;
};

} // namespace rdmad
