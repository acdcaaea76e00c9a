// SPDX-License-Identifier: MIT
//
// What rtnetlink multicasts say, pure (no sockets): the ifindex of every RTM_NEWLINK /
// RTM_DELLINK (RTMGRP_LINK) and the netdev and PFC state of every DCB notification
// (RTNLGRP_DCB). Untrusted input: every length is checked (actuators/dcb_message.hpp), a bad
// message is skipped and counted, never read past.
//
// Formats: uapi linux/rtnetlink.h (struct ifinfomsg), linux/dcbnl.h; net/dcb/dcbnl.c
// dcbnl_notify().
#pragma once

#include "actuators/dcb_message.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace rdmad {

/// The changes one rtnetlink datagram announces, in the order it names them.
struct RtnlNotices {
    std::vector<int32_t> links;            ///< ifindex of each RTM_NEWLINK/RTM_DELLINK (> 0)
    std::vector<int32_t> addresses;        ///< ifindex of each RTM_NEWADDR/RTM_DELADDR (> 0)
    std::vector<dcb::DcbNotification> dcb; ///< each RTM_GETDCB/RTM_SETDCB notification
    size_t malformed = 0; ///< messages refused (or 1 for a datagram that does not split)
};

/// Parse one datagram received on a socket bound to RTMGRP_LINK, RTMGRP_IPV4_IFADDR,
/// RTMGRP_IPV6_IFADDR and RTNLGRP_DCB. Messages of
/// other types are ignored.
RtnlNotices parse_rtnl_datagram(std::span<const uint8_t> datagram);

} // namespace rdmad
