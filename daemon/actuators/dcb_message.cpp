// SPDX-License-Identifier: MIT
//
// DCB netlink codec. Constants and struct layouts: <linux/dcbnl.h>, <linux/netlink.h>,
// <linux/rtnetlink.h> (Debian linux-libc-dev). Netlink is host byte order; fields are read with
// memcpy because a datagram owes us no alignment.
#include "actuators/dcb_message.hpp"

#include <cstring>
#include <stdexcept>

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

namespace rdmad::dcb {

static_assert(sizeof(struct dcbmsg) == 4);
static_assert(sizeof(struct ieee_pfc) == 136, "DOMAIN.md §2.2: the kernel policy minimum");
static_assert(offsetof(struct ieee_pfc, delay) == 4 && offsetof(struct ieee_pfc, requests) == 8 &&
              offsetof(struct ieee_pfc, indications) == 72);

namespace {

constexpr size_t align4(size_t n) {
    return (n + 3) & ~size_t{3};
}

template <class T> T load(std::span<const uint8_t> bytes, size_t offset) {
    T v;
    std::memcpy(&v, bytes.data() + offset, sizeof v);
    return v;
}

/// Appends netlink structures to a byte vector; nests are closed by patching their length.
class Writer {
  public:
    Writer(uint16_t type, uint8_t cmd, uint32_t seq, uint32_t port) {
        struct nlmsghdr h {};
        h.nlmsg_type = type;
        // iproute2 dcb/dcb.c dcb_prepare(): NLM_F_REQUEST | NLM_F_ACK.
        h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        h.nlmsg_seq = seq;
        h.nlmsg_pid = port;
        put(&h, sizeof h);
        struct dcbmsg d {};
        d.dcb_family = AF_UNSPEC;
        d.cmd = cmd;
        put(&d, sizeof d);
    }
    void attr(uint16_t type, const void* data, size_t len) {
        struct nlattr a {};
        a.nla_len = static_cast<uint16_t>(NLA_HDRLEN + len);
        a.nla_type = type;
        put(&a, sizeof a);
        put(data, len);
    }
    size_t nest_start(uint16_t type) {
        size_t at = out_.size();
        // libmnl mnl_attr_nest_start() (which iproute2 uses) sets NLA_F_NESTED; the kernel
        // masks it off (nla_type()).
        struct nlattr a {};
        a.nla_type = type | NLA_F_NESTED;
        put(&a, sizeof a);
        return at;
    }
    void nest_end(size_t at) {
        auto len = static_cast<uint16_t>(out_.size() - at);
        std::memcpy(out_.data() + at + offsetof(struct nlattr, nla_len), &len, sizeof len);
    }
    Bytes finish() {
        auto len = static_cast<uint32_t>(out_.size());
        std::memcpy(out_.data() + offsetof(struct nlmsghdr, nlmsg_len), &len, sizeof len);
        return std::move(out_);
    }

  private:
    void put(const void* data, size_t len) {
        auto p = static_cast<const uint8_t*>(data);
        out_.insert(out_.end(), p, p + len);
        out_.resize(align4(out_.size()), 0);
    }
    Bytes out_;
};

Writer request(uint16_t type, uint8_t cmd, std::string_view ifname, uint32_t seq, uint32_t port) {
    if (!valid_ifname(ifname))
        throw std::invalid_argument("not a netdev name: \"" + std::string(ifname) + "\"");
    Writer w(type, cmd, seq, port);
    // DCB_ATTR_IFNAME is NLA_NUL_STRING (dcbnl_rtnl_policy): iproute2 mnl_attr_put_strz.
    std::string z(ifname);
    w.attr(DCB_ATTR_IFNAME, z.c_str(), z.size() + 1);
    return w;
}

/// One netlink attribute inside an attribute stream.
struct Attr {
    uint16_t type; ///< without NLA_F_NESTED / NLA_F_NET_BYTEORDER
    std::span<const uint8_t> value;
};

/// Walk an attribute stream; a header that does not fit, or a length shorter than the header or
/// longer than what is left, is an error (the kernel's nla_ok() rules).
Parsed<std::vector<Attr>> split_attrs(std::span<const uint8_t> bytes) {
    std::vector<Attr> out;
    size_t off = 0;
    while (off < bytes.size()) {
        size_t left = bytes.size() - off;
        if (left < NLA_HDRLEN)
            return Parsed<std::vector<Attr>>::fail("truncated attribute header");
        auto a = load<struct nlattr>(bytes, off);
        if (a.nla_len < NLA_HDRLEN || a.nla_len > left)
            return Parsed<std::vector<Attr>>::fail("attribute length " + std::to_string(a.nla_len) +
                                                   " out of bounds");
        out.push_back(Attr{static_cast<uint16_t>(a.nla_type & NLA_TYPE_MASK),
                           bytes.subspan(off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN)});
        off += std::min(align4(a.nla_len), left);
    }
    return Parsed<std::vector<Attr>>{std::move(out), {}};
}

/// Check the struct dcbmsg at the start of a reply payload and return the attributes after it.
Parsed<std::vector<Attr>> dcb_attrs(std::span<const uint8_t> payload, uint8_t cmd) {
    if (payload.size() < sizeof(struct dcbmsg))
        return Parsed<std::vector<Attr>>::fail("reply shorter than struct dcbmsg");
    auto d = load<struct dcbmsg>(payload, 0);
    if (d.cmd != cmd)
        return Parsed<std::vector<Attr>>::fail("reply is for DCB command " + std::to_string(d.cmd) +
                                               ", expected " + std::to_string(cmd));
    return split_attrs(payload.subspan(align4(sizeof(struct dcbmsg))));
}

PfcState decode_pfc(std::span<const uint8_t> v) {
    PfcState s;
    s.pfc_cap = v[offsetof(struct ieee_pfc, pfc_cap)];
    s.pfc_en = v[offsetof(struct ieee_pfc, pfc_en)];
    s.mbc = v[offsetof(struct ieee_pfc, mbc)];
    s.delay = load<uint16_t>(v, offsetof(struct ieee_pfc, delay));
    for (size_t i = 0; i < 8; ++i) {
        s.requests[i] = load<uint64_t>(v, offsetof(struct ieee_pfc, requests) + 8 * i);
        s.indications[i] = load<uint64_t>(v, offsetof(struct ieee_pfc, indications) + 8 * i);
    }
    return s;
}

} // namespace

bool valid_ifname(std::string_view ifname) {
    return !ifname.empty() && ifname.size() <= max_ifname &&
           ifname.find('\0') == std::string_view::npos &&
           ifname.find('/') == std::string_view::npos;
}

Bytes build_ieee_get(std::string_view ifname, uint32_t seq, uint32_t port) {
    return request(RTM_GETDCB, DCB_CMD_IEEE_GET, ifname, seq, port).finish();
}

Bytes build_ieee_set_pfc(std::string_view ifname, const PfcState& pfc, uint32_t seq,
                         uint32_t port) {
    Writer w = request(RTM_SETDCB, DCB_CMD_IEEE_SET, ifname, seq, port);
    struct ieee_pfc raw {};
    raw.pfc_cap = pfc.pfc_cap;
    raw.pfc_en = pfc.pfc_en;
    raw.mbc = pfc.mbc;
    raw.delay = pfc.delay;
    size_t nest = w.nest_start(DCB_ATTR_IEEE);
    w.attr(DCB_ATTR_IEEE_PFC, &raw, sizeof raw);
    w.nest_end(nest);
    return w.finish();
}

Bytes build_get_dcbx(std::string_view ifname, uint32_t seq, uint32_t port) {
    return request(RTM_GETDCB, DCB_CMD_GDCBX, ifname, seq, port).finish();
}

Parsed<std::vector<Message>> split_messages(std::span<const uint8_t> datagram) {
    using R = Parsed<std::vector<Message>>;
    std::vector<Message> out;
    size_t off = 0;
    while (off < datagram.size()) {
        size_t left = datagram.size() - off;
        if (left < NLMSG_HDRLEN)
            return R::fail(std::to_string(left) + " stray bytes after the last netlink message");
        auto h = load<struct nlmsghdr>(datagram, off);
        if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > left)
            return R::fail("netlink message length " + std::to_string(h.nlmsg_len) +
                           " out of bounds (" + std::to_string(left) + " bytes left)");
        out.push_back(Message{h.nlmsg_type, h.nlmsg_flags, h.nlmsg_seq, h.nlmsg_pid,
                              datagram.subspan(off + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN)});
        off += std::min<size_t>(NLMSG_ALIGN(h.nlmsg_len), left);
    }
    if (out.empty())
        return R::fail("empty netlink datagram");
    return R{std::move(out), {}};
}

Parsed<int> parse_nlmsg_error(std::span<const uint8_t> payload) {
    // struct nlmsgerr { int error; struct nlmsghdr msg; }: even a capped ACK (NLM_F_CAPPED)
    // echoes the request header; libmnl refuses anything shorter as well (EBADMSG).
    if (payload.size() < sizeof(struct nlmsgerr))
        return Parsed<int>::fail("NLMSG_ERROR shorter than struct nlmsgerr");
    int error = load<int>(payload, 0);
    if (error > 0 || error < -4095)
        return Parsed<int>::fail("NLMSG_ERROR with impossible error " + std::to_string(error));
    return Parsed<int>{-error, {}};
}

namespace {

/// The attributes of dcbnl_ieee_fill() (DCB_ATTR_IFNAME, DCB_ATTR_IEEE { DCB_ATTR_IEEE_PFC },
/// DCB_ATTR_DCBX), shared by the IEEE_GET reply and the RTNLGRP_DCB notification.
Parsed<IeeeGetReply> parse_ieee_fill(const std::vector<Attr>& attrs) {
    using R = Parsed<IeeeGetReply>;
    IeeeGetReply reply;
    for (const Attr& a : attrs) {
        if (a.type == DCB_ATTR_IFNAME) {
            // NLA_STRING, NUL-terminated by nla_put_string(); keep the bytes before the NUL.
            std::string_view name(reinterpret_cast<const char*>(a.value.data()), a.value.size());
            reply.ifname = std::string(name.substr(0, name.find('\0')));
            continue;
        }
        if (a.type == DCB_ATTR_DCBX) {
            if (a.value.empty())
                return R::fail("empty DCB_ATTR_DCBX");
            reply.dcbx = a.value[0];
        } else if (a.type == DCB_ATTR_IEEE) {
            auto nested = split_attrs(a.value);
            if (!nested.ok())
                return R::fail("in DCB_ATTR_IEEE: " + nested.error);
            for (const Attr& n : *nested.value) {
                if (n.type != DCB_ATTR_IEEE_PFC)
                    continue;
                // iproute2 dcb_pfc.c requires exactly sizeof(struct ieee_pfc); we take at least
                // that much, so a longer struct from a future kernel still decodes.
                if (n.value.size() < sizeof(struct ieee_pfc))
                    return R::fail("DCB_ATTR_IEEE_PFC of " + std::to_string(n.value.size()) +
                                   " bytes, struct ieee_pfc needs " +
                                   std::to_string(sizeof(struct ieee_pfc)));
                reply.pfc = decode_pfc(n.value);
            }
        }
    }
    return R{reply, {}};
}

} // namespace

Parsed<IeeeGetReply> parse_ieee_get_reply(std::span<const uint8_t> payload) {
    auto top = dcb_attrs(payload, DCB_CMD_IEEE_GET);
    if (!top.ok())
        return Parsed<IeeeGetReply>::fail(top.error);
    return parse_ieee_fill(*top.value);
}

Parsed<DcbNotification> parse_dcb_notification(std::span<const uint8_t> payload) {
    using R = Parsed<DcbNotification>;
    if (payload.size() < sizeof(struct dcbmsg))
        return R::fail("DCB notification shorter than struct dcbmsg");
    DcbNotification n;
    n.cmd = load<struct dcbmsg>(payload, 0).cmd;
    auto attrs = split_attrs(payload.subspan(align4(sizeof(struct dcbmsg))));
    if (!attrs.ok())
        return R::fail(attrs.error);
    auto fill = parse_ieee_fill(*attrs.value);
    if (!fill.ok())
        return R::fail(fill.error);
    if (fill.value->ifname.empty())
        return R::fail("DCB notification without DCB_ATTR_IFNAME");
    n.ifname = fill.value->ifname;
    // net/dcb/dcbnl.c dcbnl_notify(): dcbnl_ieee_fill() for IEEE commands (IEEE_SET, IEEE_DEL,
    // and IEEE_GET from drivers' dcbnl_ieee_notify()), dcbnl_cee_fill() otherwise. Only the
    // IEEE form carries struct ieee_pfc.
    if (n.cmd == DCB_CMD_IEEE_SET || n.cmd == DCB_CMD_IEEE_GET || n.cmd == DCB_CMD_IEEE_DEL) {
        n.pfc = fill.value->pfc;
        n.dcbx = fill.value->dcbx;
    }
    return R{std::move(n), {}};
}

Parsed<int> parse_ieee_set_reply(std::span<const uint8_t> payload) {
    auto top = dcb_attrs(payload, DCB_CMD_IEEE_SET);
    if (!top.ok())
        return Parsed<int>::fail(top.error);
    for (const Attr& a : *top.value) {
        if (a.type != DCB_ATTR_IEEE)
            continue;
        if (a.value.empty())
            return Parsed<int>::fail("empty status DCB_ATTR_IEEE");
        // dcbnl_ieee_set(): nla_put_u8(skb, DCB_ATTR_IEEE, err), err a negative errno; iproute2
        // reads it back as int8. A positive byte is no errno we know: keep it as is.
        auto status = static_cast<int8_t>(a.value[0]);
        return Parsed<int>{status < 0 ? -status : status, {}};
    }
    return Parsed<int>::fail("IEEE_SET reply without its DCB_ATTR_IEEE status byte");
}

Parsed<uint8_t> parse_dcbx_reply(std::span<const uint8_t> payload) {
    auto top = dcb_attrs(payload, DCB_CMD_GDCBX);
    if (!top.ok())
        return Parsed<uint8_t>::fail(top.error);
    for (const Attr& a : *top.value) {
        if (a.type != DCB_ATTR_DCBX)
            continue;
        if (a.value.empty())
            return Parsed<uint8_t>::fail("empty DCB_ATTR_DCBX");
        return Parsed<uint8_t>{a.value[0], {}};
    }
    return Parsed<uint8_t>::fail("GDCBX reply without DCB_ATTR_DCBX");
}

} // namespace rdmad::dcb
