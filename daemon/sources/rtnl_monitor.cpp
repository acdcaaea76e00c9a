// SPDX-License-Identifier: MIT
#include "sources/rtnl_monitor.hpp"

#include "util/log.hpp"

#include <cerrno>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdexcept>
#include <sys/epoll.h>
#include <vector>

namespace rdmad {

RtnlMonitor::RtnlMonitor(sd_event* event, Handler handler) : handler_(std::move(handler)) {
    socket_ = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (!socket_)
        throw std::runtime_error("cannot open an rtnetlink socket");
    // RTMGRP_LINK: RTM_NEWLINK/RTM_DELLINK multicasts (uapi linux/rtnetlink.h).
    if (mnl_socket_bind(socket_, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0) {
        mnl_socket_close(socket_);
        throw std::runtime_error("cannot bind the rtnetlink socket");
    }
    if (sd_event_add_io(event, &source_, mnl_socket_get_fd(socket_), EPOLLIN, on_io, this) < 0) {
        mnl_socket_close(socket_);
        throw std::runtime_error("sd_event_add_io (rtnetlink) failed");
    }
}

RtnlMonitor::~RtnlMonitor() {
    sd_event_source_disable_unref(source_);
    if (socket_)
        mnl_socket_close(socket_);
}

int RtnlMonitor::on_io(sd_event_source*, int, uint32_t, void* userdata) {
    auto* self = static_cast<RtnlMonitor*>(userdata);
    std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
    for (;;) {
        ssize_t n = mnl_socket_recvfrom(self->socket_, buf.data(), buf.size());
        if (n < 0) {
            if (errno == ENOBUFS) {
                log::warning("rtnetlink overflowed: rereading every link");
                self->handler_(0);
                continue;
            }
            break; // EAGAIN: drained
        }
        auto* nlh = reinterpret_cast<const struct nlmsghdr*>(buf.data());
        int len = static_cast<int>(n);
        for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
            if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
                continue;
            if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
                continue;
            auto* ifi = static_cast<const struct ifinfomsg*>(mnl_nlmsg_get_payload(nlh));
            if (ifi->ifi_index > 0)
                self->handler_(ifi->ifi_index);
        }
    }
    return 0;
}

} // namespace rdmad
