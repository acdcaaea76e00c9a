// SPDX-License-Identifier: MIT
//
// A fake kernel for DCB netlink (rdmad::dcb::NetlinkTransport) that answers like
// net/dcb/dcbnl.c (DOMAIN.md §2.2-2.3): IEEE_GET, IEEE_SET (PFC, APP table), IEEE_DEL (APP
// table), EOPNOTSUPP without dcbnl_ops, capped ACKs. It decodes requests and lays out replies by
// hand, so rdmad's own encoder and parsers are what the tests check. Used by
// test_dcb_client.cpp and test_reconciler_pfc.cpp.
//
// APP entries: by default as the kernel's own table code for a driver without ieee_setapp /
// ieee_delapp: dcb_ieee_setapp() adds an entry unless that exact (selector, protocol, priority)
// is there (EEXIST), so a DSCP may map to several priorities; dcb_ieee_delapp() removes the exact
// match or fails with ENOENT. dcbnl_ieee_set()/dcbnl_ieee_del() hand the entries over in order and
// stop at the first failure, whose errno becomes the reply's status byte. FakeNetdev::mlx5_app
// answers as mlx5e_dcbnl_ieee_setapp()/_delapp() (drivers/net/ethernet/mellanox/mlx5/core/en/
// en_dcbnl.c) instead.
#pragma once

#include "actuators/dcb_client.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <sys/socket.h>
#include <vector>

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
    /// APP entries as mlx5 takes them: DSCP ones only (EINVAL otherwise); a setapp of a DSCP
    /// that maps elsewhere replaces that mapping (the old entry goes); a delapp whose priority
    /// is not the DSCP's current one fails with ENOENT. The first DSCP entry switches the port
    /// to DSCP trust, removing the last switches it back to PCP (counted in `to_pcp_trust`).
    bool mlx5_app = false;
    bool ignore_app = false; ///< APP entries of a SET/DEL silently ignored, status 0
    int setapp_errno = 0;    ///< non-zero: the driver refuses every APP entry of a SET
    /// Times the table went from some DSCP entry to none: a port that trusted DSCP trusting PCP
    /// (mlx5 switches its hardware there; iproute2 and mlnx_qos read it so).
    int to_pcp_trust = 0;
};

/// One APP request the fake kernel received: DCB_CMD_IEEE_SET or _DEL, and its entries in order.
struct AppRequest {
    uint8_t cmd = 0;
    std::vector<dcb::AppEntry> entries;
    bool operator==(const AppRequest&) const = default;
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
    std::vector<AppRequest> app_requests; ///< every APP SET/DEL, in the order received

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
        } else if (type == RTM_SETDCB && (cmd == DCB_CMD_IEEE_SET || cmd == DCB_CMD_IEEE_DEL)) {
            if (cmd == DCB_CMD_IEEE_SET)
                ++sets;
            // dcbnl_ieee_set()/_del(): DCB_ATTR_IEEE parsed with dcbnl_ieee_policy (a short
            // IEEE_PFC is -ERANGE from netlink itself); then PFC, then the APP table, each entry
            // handed to the driver in order until one fails.
            const size_t attrs = 20;
            std::span<const uint8_t> ieee = find_attr(req.subspan(attrs), DCB_ATTR_IEEE);
            if (ieee.data() == nullptr) {
                ack(seq, type, -EINVAL);
                return static_cast<ssize_t>(req.size());
            }
            std::span<const uint8_t> pfc = find_attr(ieee, DCB_ATTR_IEEE_PFC);
            std::span<const uint8_t> table = find_attr(ieee, DCB_ATTR_IEEE_APP_TABLE);
            if (pfc.data() != nullptr && pfc.size() < sizeof(struct ieee_pfc)) {
                ack(seq, type, -ERANGE);
                return static_cast<ssize_t>(req.size());
            }
            int err = 0;
            if (cmd == DCB_CMD_IEEE_SET && pfc.data() != nullptr) {
                if (dev.ieee_setpfc && dev.setpfc_errno)
                    err = -dev.setpfc_errno;
                else if (dev.ieee_setpfc)
                    dev.pfc_en = pfc[offsetof(struct ieee_pfc, pfc_en)];
            }
            if (err == 0 && table.data() != nullptr)
                err = app_table(dev, cmd, table);
            Out o = reply_header(RTM_SETDCB, cmd);
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
    /// The payload of the first attribute of `type` (NLA_F_NESTED masked off) in `attrs`, or
    /// an empty span with a null data() when there is none or the stream does not hold.
    static std::span<const uint8_t> find_attr(std::span<const uint8_t> attrs, uint16_t type) {
        size_t off = 0;
        while (off + NLA_HDRLEN <= attrs.size()) {
            struct nlattr a;
            std::memcpy(&a, attrs.data() + off, sizeof a);
            if (a.nla_len < NLA_HDRLEN || off + a.nla_len > attrs.size())
                return {};
            if ((a.nla_type & NLA_TYPE_MASK) == type)
                return attrs.subspan(off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN);
            off += NLA_ALIGN(a.nla_len);
        }
        return {};
    }

    static size_t dscp_entries(const FakeNetdev& dev) {
        return static_cast<size_t>(std::count_if(dev.app.begin(), dev.app.end(), [](auto& e) {
            return e.selector == IEEE_8021QAZ_APP_SEL_DSCP;
        }));
    }

    /// dcb_ieee_setapp(): EEXIST for an exact duplicate, else added (net/dcb/dcbnl.c).
    static int table_add(FakeNetdev& dev, const dcb::AppEntry& e) {
        if (std::find(dev.app.begin(), dev.app.end(), e) != dev.app.end())
            return -EEXIST;
        dev.app.push_back(e);
        return 0;
    }
    /// dcb_ieee_delapp(): the exact match goes, ENOENT without one.
    static int table_del(FakeNetdev& dev, const dcb::AppEntry& e) {
        auto it = std::find(dev.app.begin(), dev.app.end(), e);
        if (it == dev.app.end())
            return -ENOENT;
        dev.app.erase(it);
        return 0;
    }

    /// mlx5e_dcbnl_ieee_setapp(): the DSCP's old mapping (dscp2prio[], modelled as the table's
    /// entry for it, priority 0 without one) is deleted, the new one added.
    static int mlx5_setapp(FakeNetdev& dev, const dcb::AppEntry& e) {
        if (e.selector != IEEE_8021QAZ_APP_SEL_DSCP || e.protocol >= 64)
            return -EINVAL;
        (void)table_del(dev,
                        dcb::AppEntry{e.selector, mlx5_dscp2prio(dev, e.protocol), e.protocol});
        return table_add(dev, e);
    }
    /// mlx5e_dcbnl_ieee_delapp(): ENOENT without DSCP entries or when the priority is not the
    /// DSCP's current one; otherwise the entry goes (and dscp2prio[] back to 0).
    static int mlx5_delapp(FakeNetdev& dev, const dcb::AppEntry& e) {
        if (e.selector != IEEE_8021QAZ_APP_SEL_DSCP || e.protocol >= 64)
            return -EINVAL;
        if (dscp_entries(dev) == 0 || e.priority != mlx5_dscp2prio(dev, e.protocol))
            return -ENOENT;
        return table_del(dev, e);
    }
    static uint8_t mlx5_dscp2prio(const FakeNetdev& dev, uint16_t dscp) {
        for (const auto& a : dev.app)
            if (a.selector == IEEE_8021QAZ_APP_SEL_DSCP && a.protocol == dscp)
                return a.priority;
        return 0;
    }

    /// The entries of DCB_ATTR_IEEE_APP_TABLE, one by one until one fails: 0 or -errno. The
    /// whole request goes to app_requests, whether or not the driver got to every entry.
    int app_table(FakeNetdev& dev, uint8_t cmd, std::span<const uint8_t> table) {
        AppRequest logged{cmd, {}};
        int stop = 0; // -ERANGE at an entry shorter than struct dcb_app, after those before it
        for (size_t off = 0; off + NLA_HDRLEN <= table.size();) {
            struct nlattr a;
            std::memcpy(&a, table.data() + off, sizeof a);
            if (a.nla_len < NLA_HDRLEN || off + a.nla_len > table.size())
                break;
            if ((a.nla_type & NLA_TYPE_MASK) == DCB_ATTR_IEEE_APP) {
                if (a.nla_len < NLA_HDRLEN + sizeof(struct dcb_app)) {
                    stop = -ERANGE;
                    break;
                }
                struct dcb_app raw;
                std::memcpy(&raw, table.data() + off + NLA_HDRLEN, sizeof raw);
                logged.entries.push_back(dcb::AppEntry{raw.selector, raw.priority, raw.protocol});
            }
            off += NLA_ALIGN(a.nla_len);
        }
        app_requests.push_back(logged);
        if (dev.ignore_app)
            return 0;
        for (const dcb::AppEntry& e : logged.entries) {
            const size_t before = dscp_entries(dev);
            int err;
            if (cmd == DCB_CMD_IEEE_SET)
                err = dev.setapp_errno ? -dev.setapp_errno
                      : dev.mlx5_app   ? mlx5_setapp(dev, e)
                                       : table_add(dev, e);
            else
                err = dev.mlx5_app ? mlx5_delapp(dev, e) : table_del(dev, e);
            if (before > 0 && dscp_entries(dev) == 0)
                ++dev.to_pcp_trust;
            if (err)
                return err;
        }
        return stop;
    }

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
