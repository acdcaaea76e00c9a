// SPDX-License-Identifier: MIT
//
// A fake kernel for DCB netlink (rdmad::dcb::NetlinkTransport) that answers like
// net/dcb/dcbnl.c (DOMAIN.md §2.2-2.3): IEEE_GET, IEEE_SET, EOPNOTSUPP without
// dcbnl_ops, capped ACKs. It decodes requests and lays out replies by hand, so rdmad's own
// encoder and parsers are what the tests check. Used by test_dcb_client.cpp and
// test_reconciler_pfc.cpp.
#pragma once

#include "actuators/dcb_client.hpp"

#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <sys/socket.h>

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

namespace rdmad::test {

using dcb::Bytes;
using dcb::NetlinkTransport;

/// A netdev as the fake kernel models it.
struct FakeNetdev {
    bool dcbnl_ops = true;   ///< false: EOPNOTSUPP (veth, virtio_net, ...)
    bool ieee_getpfc = true; ///< false: IEEE_GET reply without DCB_ATTR_IEEE_PFC
    bool ieee_setpfc = true; ///< false: SET silently ignored, status 0 (CEE-only driver)
    int setpfc_errno = 0;    ///< non-zero: the driver refuses, status byte = -errno
    bool getdcbx = true;
    uint8_t dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
    uint8_t pfc_cap = 8;
    uint8_t pfc_en = 0;
    uint16_t delay = 0;
    /// The APP table (dcb app add ...): sent in every IEEE_GET reply, as dcbnl_ieee_fill()
    /// always sends DCB_ATTR_IEEE_APP_TABLE (empty when the netdev has no entry)
    std::vector<dcb::AppEntry> app;
};

/// Appends netlink structures the way the kernel lays them out (4-byte aligned).
struct Out {
    Bytes b;
    void raw(const void* p, size_t n) {
        auto c = static_cast<const uint8_t*>(p);
        b.insert(b.end(), c, c + n);
        b.resize((b.size() + 3) & ~size_t{3}, 0);
    }
    void attr(uint16_t type, const void* p, size_t n) {
        struct nlattr a {
            static_cast<uint16_t>(4 + n), type
        };
        raw(&a, 4);
        raw(p, n);
    }
};

class FakeKernel final : public NetlinkTransport {
  public:
    static constexpr uint32_t port = 4242;
    std::map<std::string, FakeNetdev> netdevs;
    std::deque<Bytes> queue;    ///< datagrams waiting to be received
    std::deque<Bytes> scripted; ///< the answers to the next request, when `script` is set
    bool script = false;
    int gets = 0, sets = 0, dels = 0;

    ssize_t send(std::span<const uint8_t> req) override {
        if (req.size() < 24)
            return -EINVAL;
        uint16_t type;
        uint32_t seq;
        std::memcpy(&type, req.data() + 4, 2);
        std::memcpy(&seq, req.data() + 8, 4);
        uint8_t cmd = req[17];
        if (script) {
            queue.insert(queue.end(), scripted.begin(), scripted.end());
            scripted.clear();
            return static_cast<ssize_t>(req.size());
        }
        // DCB_ATTR_IFNAME is the first attribute, at offset 20.
        uint16_t ifl;
        std::memcpy(&ifl, req.data() + 20, 2);
        std::string ifname(reinterpret_cast<const char*>(req.data() + 24),
                           strnlen(reinterpret_cast<const char*>(req.data() + 24), ifl - 4));
        auto it = netdevs.find(ifname);
        if (it == netdevs.end()) {
            ack(seq, type, -ENODEV);
            return static_cast<ssize_t>(req.size());
        }
        FakeNetdev& dev = it->second;
        if (cmd == DCB_CMD_IEEE_DEL)
            ++dels;
        if (!dev.dcbnl_ops) {
            ack(seq, type, -EOPNOTSUPP);
            return static_cast<ssize_t>(req.size());
        }
        if (type == RTM_GETDCB && cmd == DCB_CMD_IEEE_GET) {
            ++gets;
            Out o = reply_header(RTM_GETDCB, DCB_CMD_IEEE_GET);
            o.attr(DCB_ATTR_IFNAME, ifname.c_str(), ifname.size() + 1);
            Out nest;
            if (dev.ieee_getpfc) {
                struct ieee_pfc pfc {};
                pfc.pfc_cap = dev.pfc_cap;
                pfc.pfc_en = dev.pfc_en;
                pfc.delay = dev.delay;
                pfc.requests[3] = 17; // counters move on their own
                nest.attr(DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
            }
            Out table;
            for (const auto& e : dev.app) {
                struct dcb_app a {
                    e.selector, e.priority, e.protocol
                };
                table.attr(DCB_ATTR_IEEE_APP, &a, sizeof a);
            }
            nest.attr(DCB_ATTR_IEEE_APP_TABLE, table.b.data(), table.b.size());
            o.attr(DCB_ATTR_IEEE, nest.b.data(), nest.b.size());
            if (dev.getdcbx)
                o.attr(DCB_ATTR_DCBX, &dev.dcbx, 1);
            finish(o, seq);
            ack(seq, type, 0);
        } else if (type == RTM_SETDCB && cmd == DCB_CMD_IEEE_SET) {
            ++sets;
            int err = 0;
            // The IEEE nest follows IFNAME; the PFC attribute is the first inside it.
            size_t nest = 20 + ((ifl + 3u) & ~3u);
            if (req.size() < nest + 8 + 136)
                err = -ERANGE;
            else if (dev.ieee_setpfc && dev.setpfc_errno)
                err = -dev.setpfc_errno;
            else if (dev.ieee_setpfc)
                dev.pfc_en = req[nest + 8 + 1];
            if (err == -ERANGE) {
                ack(seq, type, err);
                return static_cast<ssize_t>(req.size());
            }
            Out o = reply_header(RTM_SETDCB, DCB_CMD_IEEE_SET);
            auto status = static_cast<uint8_t>(static_cast<int8_t>(err));
            o.attr(DCB_ATTR_IEEE, &status, 1);
            finish(o, seq);
            ack(seq, type, 0);
        } else {
            ack(seq, type, -EOPNOTSUPP);
        }
        return static_cast<ssize_t>(req.size());
    }

    ssize_t recv(std::span<uint8_t> buffer) override {
        if (queue.empty())
            return -ETIMEDOUT;
        Bytes d = std::move(queue.front());
        queue.pop_front();
        if (d.size() > buffer.size())
            return -ENOSPC;
        if (!d.empty()) // memcpy from an empty vector's null data() is UB (UBSan)
            std::memcpy(buffer.data(), d.data(), d.size());
        return static_cast<ssize_t>(d.size());
    }

    uint32_t port_id() const override { return port; }

  private:
    static Out reply_header(uint16_t type, uint8_t cmd) {
        Out o;
        struct nlmsghdr h {};
        h.nlmsg_type = type;
        o.raw(&h, sizeof h);
        struct dcbmsg d {};
        d.dcb_family = AF_UNSPEC;
        d.cmd = cmd;
        o.raw(&d, sizeof d);
        return o;
    }
    void finish(Out& o, uint32_t seq) {
        auto h = reinterpret_cast<struct nlmsghdr*>(o.b.data());
        h->nlmsg_len = static_cast<uint32_t>(o.b.size());
        h->nlmsg_seq = seq;
        h->nlmsg_pid = port;
        queue.push_back(std::move(o.b));
    }
    // The ACK is its own datagram, capped (NLM_F_CAPPED), as netlink_ack() sends it.
    void ack(uint32_t seq, uint16_t type, int error) {
        Out o;
        struct nlmsghdr h {};
        h.nlmsg_len = NLMSG_HDRLEN + sizeof(struct nlmsgerr);
        h.nlmsg_type = NLMSG_ERROR;
        h.nlmsg_flags = NLM_F_CAPPED;
        h.nlmsg_seq = seq;
        h.nlmsg_pid = port;
        o.raw(&h, sizeof h);
        struct nlmsgerr e {};
        e.error = error;
        e.msg.nlmsg_type = type;
        e.msg.nlmsg_seq = seq;
        o.raw(&e, sizeof e);
        queue.push_back(std::move(o.b));
    }
};

} // namespace rdmad::test
