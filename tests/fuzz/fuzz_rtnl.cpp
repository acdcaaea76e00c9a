// SPDX-License-Identifier: MIT
//
// libFuzzer target: one datagram of the rtnetlink monitor socket (RTMGRP_LINK and RTNLGRP_DCB),
// through parse_rtnl_datagram() (daemon/sources/rtnl_message.hpp; formats: uapi
// linux/netlink.h, linux/rtnetlink.h struct ifinfomsg, linux/dcbnl.h). The kernel sends it,
// but a bug there, a truncated read or another sender on the group must not make rdmad read
// past the datagram. Invariants: no out-of-bounds read (ASan); every link notice names an
// ifindex > 0; every DCB notice names a valid interface name and a bounded APP table whose
// DSCP entries are in range; notices and refusals together are at most the number of messages
// the datagram can hold (one per 16-byte header); a datagram that does not split is one
// refusal and nothing else.
#include "fuzz_check.hpp"
#include "sources/rtnl_message.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <linux/netlink.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::span<const uint8_t> in(data, size);
    const rdmad::RtnlNotices n = rdmad::parse_rtnl_datagram(in);
    for (const int32_t ifindex : n.links)
        check(ifindex > 0, "a link notice names an ifindex > 0");
    for (const auto& d : n.dcb) {
        check(rdmad::dcb::valid_ifname(d.ifname), "a DCB notice names a valid netdev");
        check(d.ifname.size() <= rdmad::dcb::max_ifname, "a DCB notice's name fits IFNAMSIZ");
        if (d.app) {
            check(d.app->size() <= rdmad::dcb::max_app_entries, "an APP table is bounded");
            for (const auto& e : *d.app)
                check(e.selector != rdmad::dcb::app_sel_dscp ||
                          (e.protocol <= 63 && e.priority <= 7),
                      "a DSCP entry holds a DSCP and a priority");
        }
    }
    const size_t messages = size / NLMSG_HDRLEN;
    check(n.links.size() + n.dcb.size() + n.malformed <= std::max<size_t>(messages, 1),
          "at most one notice or refusal per message");
    if (!rdmad::dcb::split_messages(in).ok())
        check(n.malformed == 1 && n.links.empty() && n.dcb.empty(),
              "a datagram that does not split is refused whole");
    // Deterministic: the same bytes say the same.
    const rdmad::RtnlNotices again = rdmad::parse_rtnl_datagram(in);
    check(again.links == n.links && again.dcb.size() == n.dcb.size() &&
              again.malformed == n.malformed,
          "parsing is deterministic");
    return 0;
}
