// SPDX-License-Identifier: MIT
//
// sd_notify(3) messages that never make rdmad wait. libsystemd's sd_notify() sends with a
// blocking sendmsg() (systemd 252: src/libsystemd/sd-daemon/sd-daemon.c), and a datagram to an
// AF_UNIX socket whose queue holds net.unix.max_dgram_qlen messages blocks until the reader
// takes one (Linux: net/unix/af_unix.c, unix_dgram_sendmsg). A manager that does not read its
// notify socket (systemd busy, a test harness after READY=1) would stop the loop, and with it
// every D-Bus answer.
#pragma once

#include "util/unique_fd.hpp"

#include <string>
#include <string_view>

namespace rdmad {

class Notifier {
  public:
    /// Reads NOTIFY_SOCKET (a path, or "@name" for the abstract namespace); without it, or
    /// with an address rdmad cannot use, every send is a no-op.
    Notifier();
    Notifier(const Notifier&) = delete;
    Notifier& operator=(const Notifier&) = delete;

    /// Sends `state` ("STOPPING=1", "STATUS=...") without blocking: when the receiver's queue
    /// is full the message is dropped. True when it was queued.
    bool send(std::string_view state);

    /// Messages dropped because the receiver's queue was full (or another send error).
    unsigned long dropped() const { return dropped_; }

  private:
    UniqueFd fd_;
    std::string address_; // sockaddr_un.sun_path bytes (a leading NUL for abstract)
    unsigned long dropped_ = 0;
};

} // namespace rdmad
