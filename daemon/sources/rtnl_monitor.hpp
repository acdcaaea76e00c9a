// SPDX-License-Identifier: MIT
//
// rtnetlink multicasts on the sd-event loop: link changes (RTMGRP_LINK: carrier and operstate
// of RoCE and iWARP netdevs come only this way, not as uevents), address changes (RoCE GID
// tables follow a netdev's addresses, with no uevent) and DCB changes (RTNLGRP_DCB:
// the kernel reports every DCB SET, whoever made it: dcb, mlnx_qos, lldpad, rdmad itself).
// Only datagrams the kernel sent (source port id 0) are taken.
#pragma once

#include "actuators/dcb_message.hpp"
#include "util/event_source.hpp"
#include "util/mnl_socket.hpp"

#include <cstdint>
#include <functional>
#include <systemd/sd-event.h>

namespace rdmad {

class RtnlMonitor {
  public:
    struct Handlers {
        /// Every RTM_NEWLINK / RTM_DELLINK, by ifindex (> 0).
        std::function<void(int32_t ifindex)> link;
        /// Every RTM_NEWADDR / RTM_DELADDR (IPv4 and IPv6), by ifindex (> 0).
        std::function<void(int32_t ifindex)> address;
        /// Every DCB notification that names a netdev.
        std::function<void(const dcb::DcbNotification&)> dcb;
        /// Notifications were lost (ENOBUFS): every link and every netdev's DCB must be read.
        std::function<void()> overflow;
    };

    /// Throws std::runtime_error when the socket cannot be opened or bound.
    RtnlMonitor(sd_event* event, Handlers handlers);
    RtnlMonitor(const RtnlMonitor&) = delete;
    RtnlMonitor& operator=(const RtnlMonitor&) = delete;

  private:
    static int on_io(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    /// Every datagram queued on `fd`, to the handlers.
    void receive(int fd);

    Handlers handlers_;
    MnlSocket socket_;
    EventSource source_; ///< reads socket_: goes first
};

} // namespace rdmad
