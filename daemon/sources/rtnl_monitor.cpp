// SPDX-License-Identifier: MIT
#include "sources/rtnl_monitor.hpp"

#include "sources/rtnl_message.hpp"
#include "util/log.hpp"
#include "util/loop_edge.hpp"

#include <cerrno>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdexcept>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <vector>

namespace rdmad {

RtnlMonitor::RtnlMonitor(sd_event* event, Handlers handlers) : handlers_(std::move(handlers)) {
    socket_.reset(mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!socket_)
        throw std::runtime_error("cannot open an rtnetlink socket");
    // RTMGRP_LINK, the address groups and RTNLGRP_DCB (23, so bit 22 of the legacy group
    // mask): uapi linux/rtnetlink.h. Multicast to RTNLGRP_DCB needs no capability to receive
    // (rtnetlink is NL_CFG_F_NONROOT_RECV).
    const unsigned groups =
        RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | (1u << (RTNLGRP_DCB - 1));
    if (mnl_socket_bind(socket_.get(), groups, MNL_SOCKET_AUTOPID) < 0)
        throw std::runtime_error("cannot bind the rtnetlink socket");
    if (sd_event_add_io(event, into(source_), mnl_socket_get_fd(socket_.get()), EPOLLIN, on_io,
                        this) < 0)
        throw std::runtime_error("sd_event_add_io (rtnetlink) failed");
}

namespace {

/// The loop's edge for one handler call: what it cannot take is logged, and the rest of the
/// datagram (and of the queue) is still delivered.
template <typename F, typename... Args>
void deliver(const char* what, const F& handler, const Args&... args) {
    if (handler)
        at_loop_edge(what, [&] { handler(args...); });
}

} // namespace

int RtnlMonitor::on_io(sd_event_source*, int fd, uint32_t, void* userdata) {
    return at_loop_edge("rtnetlink", [&] { static_cast<RtnlMonitor*>(userdata)->receive(fd); });
}

void RtnlMonitor::receive(int fd) {
    std::vector<uint8_t> buf(MNL_SOCKET_BUFFER_SIZE);
    for (;;) {
        struct sockaddr_nl from {};
        struct iovec iov {
            buf.data(), buf.size()
        };
        struct msghdr msg {};
        msg.msg_name = &from;
        msg.msg_namelen = sizeof from;
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        const ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOBUFS) {
                log::warning("rtnetlink overflowed: rereading every link and its DCB state");
                deliver("rtnetlink overflow", handlers_.overflow);
                continue;
            }
            break; // EAGAIN: drained
        }
        // A process with CAP_NET_ADMIN may send to our port or multicast to the groups:
        // only the kernel (port id 0) speaks for the hardware.
        if (msg.msg_namelen != sizeof from || from.nl_family != AF_NETLINK || from.nl_pid != 0) {
            log::debug("rtnetlink: ignored a datagram from port id {}", from.nl_pid);
            continue;
        }
        if (msg.msg_flags & MSG_TRUNC) {
            log::warning("rtnetlink: a datagram did not fit {} bytes; rereading every link",
                         buf.size());
            deliver("rtnetlink overflow", handlers_.overflow);
            continue;
        }
        const RtnlNotices notices =
            parse_rtnl_datagram(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
        if (notices.malformed)
            log::debug("rtnetlink: skipped {} malformed messages", notices.malformed);
        for (const int32_t ifindex : notices.links)
            deliver("rtnetlink link", handlers_.link, ifindex);
        for (const int32_t ifindex : notices.addresses)
            deliver("rtnetlink address", handlers_.address, ifindex);
        for (const auto& d : notices.dcb)
            deliver("rtnetlink DCB", handlers_.dcb, d);
    }
}

} // namespace rdmad
