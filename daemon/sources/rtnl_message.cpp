// SPDX-License-Identifier: MIT
#include "sources/rtnl_message.hpp"

#include <climits>
#include <cstdint>
#include <cstring>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

namespace rdmad {

RtnlNotices parse_rtnl_datagram(std::span<const uint8_t> datagram) {
    RtnlNotices out;
    // dcb::split_messages walks with size_t lengths checked against what is left: libmnl
    // 1.0.4's mnl_nlmsg_ok() casts nlmsg_len to int, so a length of 2 GiB or more passed its
    // check and walked past the datagram.
    auto messages = dcb::split_messages(datagram);
    if (!messages.ok()) {
        out.malformed = 1;
        return out;
    }
    for (const auto& m : *messages.value) {
        switch (m.type) {
        case RTM_NEWLINK:
        case RTM_DELLINK: {
            struct ifinfomsg ifi {};
            if (m.payload.size() < sizeof ifi) {
                ++out.malformed;
                break;
            }
            std::memcpy(&ifi, m.payload.data(), sizeof ifi);
            if (ifi.ifi_index > 0)
                out.links.push_back(ifi.ifi_index);
            else
                ++out.malformed;
            break;
        }
        case RTM_NEWADDR:
        case RTM_DELADDR: {
            // struct ifaddrmsg (uapi linux/if_addr.h): ifa_index is a __u32.
            struct ifaddrmsg ifa {};
            if (m.payload.size() < sizeof ifa) {
                ++out.malformed;
                break;
            }
            std::memcpy(&ifa, m.payload.data(), sizeof ifa);
            if (ifa.ifa_index > 0 && ifa.ifa_index <= uint32_t(INT32_MAX))
                out.addresses.push_back(static_cast<int32_t>(ifa.ifa_index));
            else
                ++out.malformed;
            break;
        }
        case RTM_GETDCB:
        case RTM_SETDCB: {
            auto n = dcb::parse_dcb_notification(m.payload);
            if (n.ok() && dcb::valid_ifname(n.value->ifname))
                out.dcb.push_back(std::move(*n.value));
            else
                ++out.malformed;
            break;
        }
        default:
            break;
        }
    }
    return out;
}

} // namespace rdmad
