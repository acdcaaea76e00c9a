// SPDX-License-Identifier: MIT
//
// DCB netlink codec over libmnl's message and attribute API (Debian libmnl-dev). Constants and
// struct layouts: <linux/dcbnl.h>, <linux/netlink.h>, <linux/rtnetlink.h> (Debian
// linux-libc-dev). Netlink is host byte order. libmnl reads headers in place, so a span that is
// not 4-byte aligned is walked in an aligned copy; every length is checked as size_t before
// libmnl, which measures with int, steps over it.
#include "actuators/dcb_message.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>

#include <libmnl/libmnl.h>

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

namespace rdmad::dcb {

static_assert(sizeof(struct dcbmsg) == 4);
static_assert(sizeof(struct dcb_app) == 4 && offsetof(struct dcb_app, protocol) == 2);
static_assert(sizeof(struct ieee_pfc) == 136, "DOMAIN.md §2.2: the kernel policy minimum");
static_assert(offsetof(struct ieee_pfc, delay) == 4 && offsetof(struct ieee_pfc, requests) == 8 &&
              offsetof(struct ieee_pfc, indications) == 72);

namespace {

template <class T> T load(std::span<const uint8_t> bytes, size_t offset) {
    T v;
    std::memcpy(&v, bytes.data() + offset, sizeof v);
    return v;
}

/// The room every request needs before its IEEE nest's content: nlmsghdr + dcbmsg + IFNAME +
/// the nest headers (a PFC request is 176 bytes with "eth0").
constexpr size_t request_head = 128;

/// The first part of every request, laid out by libmnl as iproute2 dcb/dcb.c dcb_prepare() does.
struct Request {
    Bytes buf;
    struct nlmsghdr* nlh = nullptr;

    Bytes finish() {
        buf.resize(nlh->nlmsg_len);
        return std::move(buf);
    }
};

/// `room`: the bytes the IEEE nest's content will take.
Request request(uint16_t type, uint8_t cmd, std::string_view ifname, uint32_t seq, uint32_t port,
                size_t room) {
    if (!valid_ifname(ifname))
        throw std::invalid_argument("not a netdev name: \"" + std::string(ifname) + "\"");
    Request r;
    r.buf.assign(request_head + room, 0);
    r.nlh = mnl_nlmsg_put_header(r.buf.data());
    r.nlh->nlmsg_type = type;
    // iproute2 dcb/dcb.c dcb_prepare(): NLM_F_REQUEST | NLM_F_ACK.
    r.nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    r.nlh->nlmsg_seq = seq;
    r.nlh->nlmsg_pid = port;
    auto* d = static_cast<struct dcbmsg*>(mnl_nlmsg_put_extra_header(r.nlh, sizeof(struct dcbmsg)));
    d->dcb_family = AF_UNSPEC;
    d->cmd = cmd;
    // DCB_ATTR_IFNAME is NLA_NUL_STRING (dcbnl_rtnl_policy): iproute2 mnl_attr_put_strz.
    std::string z(ifname);
    mnl_attr_put_strz(r.nlh, DCB_ATTR_IFNAME, z.c_str());
    return r;
}

/// An attribute stream as libmnl walks it: 4-byte aligned (struct nlattr is read in place) and
/// shorter than INT_MAX (libmnl 1.0.4 measures what is left as int). A misaligned span is copied.
class AttrStream {
  public:
    explicit AttrStream(std::span<const uint8_t> bytes) : bytes_(bytes) {
        if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(struct nlattr) != 0) {
            copy_.resize((bytes.size() + 3) / 4);
            std::memcpy(copy_.data(), bytes.data(), bytes.size());
            bytes_ = {reinterpret_cast<const uint8_t*>(copy_.data()), bytes.size()};
        }
    }
    std::span<const uint8_t> bytes() const { return bytes_; }

  private:
    std::span<const uint8_t> bytes_;
    std::vector<uint32_t> copy_;
};

/// What one walk over the attributes after a struct dcbmsg found (dcbnl_ieee_fill(): IFNAME, IEEE
/// { IEEE_PFC }, DCBX; dcbnl_ieee_set(): IEEE as a u8 status).
struct Walk {
    const uint8_t* base = nullptr; ///< the stream being walked, to measure how far it got
    size_t end = 0;                ///< offset after the last attribute libmnl accepted
    IeeeGetReply fill;
    std::string fill_error; ///< the first reason the dcbnl_ieee_fill() reading refuses
    std::optional<std::span<const uint8_t>> first_ieee; ///< payload of the first DCB_ATTR_IEEE
    size_t app_entries = 0; ///< entries of an APP table walked so far, of every type
};

void advance(Walk& w, const struct nlattr* attr) {
    w.end = static_cast<size_t>(reinterpret_cast<const uint8_t*>(attr) - w.base) +
            MNL_ALIGN(attr->nla_len);
}

std::span<const uint8_t> payload_of(const struct nlattr* attr) {
    return {static_cast<const uint8_t*>(mnl_attr_get_payload(attr)),
            mnl_attr_get_payload_len(attr)};
}

/// libmnl's walk stops quietly at an attribute that does not fit (mnl_attr_ok()); the kernel's
/// nla_ok() rules make that an error, so every byte must have been walked (the last attribute's
/// padding may be missing). Returns "" or why not.
std::string unwalked(const Walk& w, size_t size) {
    if (std::min(w.end, size) == size)
        return {};
    if (size - w.end < NLA_HDRLEN)
        return "truncated attribute header";
    auto len = load<uint16_t>({w.base, size}, w.end + offsetof(struct nlattr, nla_len));
    return "attribute length " + std::to_string(len) + " out of bounds";
}

int on_app_entry(const struct nlattr* attr, void* data) {
    auto& w = *static_cast<Walk*>(data);
    advance(w, attr);
    auto& table = *w.fill.app;
    if (++w.app_entries > max_app_entries) {
        w.fill_error =
            "DCB_ATTR_IEEE_APP_TABLE of more than " + std::to_string(max_app_entries) + " entries";
        return MNL_CB_ERROR;
    }
    // dcbnl_ieee_fill(): nla_put(skb, dcbnl_app_attr_type_get(selector), sizeof(struct
    // dcb_app), &app). Kernels 6.3+ send entries of non-IEEE selectors (DCB_APP_SEL_PCP) as
    // type 2, DCB_ATTR_DCB_APP: not ours, skipped (but counted against the bound).
    if (mnl_attr_get_type(attr) != DCB_ATTR_IEEE_APP)
        return MNL_CB_OK;
    size_t len = mnl_attr_get_payload_len(attr);
    if (len < sizeof(struct dcb_app)) {
        w.fill_error = "DCB_ATTR_IEEE_APP of " + std::to_string(len) +
                       " bytes, struct dcb_app needs " + std::to_string(sizeof(struct dcb_app));
        return MNL_CB_ERROR;
    }
    struct dcb_app raw;
    std::memcpy(&raw, mnl_attr_get_payload(attr), sizeof raw);
    // The entries rdmad reads, DSCP ones, must be what the field can hold: a DSCP is 6 bits
    // (RFC 2474), a priority 3 (IEEE 802.1Q PCP; IEEE_8021QAZ_MAX_TCS); iproute2 dcb_app.c
    // refuses to set anything else. Entries of other selectors are passed as sent.
    if (raw.selector == app_sel_dscp && raw.priority >= IEEE_8021QAZ_MAX_TCS) {
        w.fill_error = "DCB_ATTR_IEEE_APP DSCP entry with priority " + std::to_string(raw.priority);
        return MNL_CB_ERROR;
    }
    if (raw.selector == app_sel_dscp && raw.protocol > 63) {
        w.fill_error = "DCB_ATTR_IEEE_APP with DSCP " + std::to_string(raw.protocol);
        return MNL_CB_ERROR;
    }
    table.push_back(AppEntry{raw.selector, raw.priority, raw.protocol});
    return MNL_CB_OK;
}

/// DCB_ATTR_IEEE_APP_TABLE: a nest of struct dcb_app attributes; "" or why it is refused.
std::string parse_app_table(const struct nlattr* attr, std::vector<AppEntry>& out) {
    Walk nested;
    nested.base = static_cast<const uint8_t*>(mnl_attr_get_payload(attr));
    nested.fill.app.emplace();
    mnl_attr_parse_nested(attr, on_app_entry, &nested);
    std::string why = nested.fill_error.empty() ? unwalked(nested, mnl_attr_get_payload_len(attr))
                                                : nested.fill_error;
    if (!why.empty())
        return "in DCB_ATTR_IEEE_APP_TABLE: " + why;
    out = std::move(*nested.fill.app);
    return {};
}

int on_ieee_nested(const struct nlattr* attr, void* data) {
    auto& w = *static_cast<Walk*>(data);
    advance(w, attr);
    if (mnl_attr_get_type(attr) == DCB_ATTR_IEEE_APP_TABLE) {
        std::vector<AppEntry> table;
        std::string why = parse_app_table(attr, table);
        if (!why.empty()) {
            w.fill_error = std::move(why);
            return MNL_CB_ERROR;
        }
        w.fill.app = std::move(table);
        return MNL_CB_OK;
    }
    if (mnl_attr_get_type(attr) != DCB_ATTR_IEEE_PFC)
        return MNL_CB_OK;
    // iproute2 dcb_pfc.c requires exactly sizeof(struct ieee_pfc) (mnl_attr_validate2() with
    // MNL_TYPE_BINARY refuses anything longer); we take at least that much, so a longer struct
    // from a future kernel still decodes.
    size_t len = mnl_attr_get_payload_len(attr);
    if (len < sizeof(struct ieee_pfc)) {
        w.fill_error = "DCB_ATTR_IEEE_PFC of " + std::to_string(len) +
                       " bytes, struct ieee_pfc needs " + std::to_string(sizeof(struct ieee_pfc));
        return MNL_CB_ERROR;
    }
    struct ieee_pfc raw;
    std::memcpy(&raw, mnl_attr_get_payload(attr), sizeof raw);
    PfcState s;
    s.pfc_cap = raw.pfc_cap;
    s.pfc_en = raw.pfc_en;
    s.mbc = raw.mbc;
    s.delay = raw.delay;
    for (size_t i = 0; i < 8; ++i) {
        s.requests[i] = raw.requests[i];
        s.indications[i] = raw.indications[i];
    }
    w.fill.pfc = s;
    return MNL_CB_OK;
}

int on_dcb_attr(const struct nlattr* attr, void* data) {
    auto& w = *static_cast<Walk*>(data);
    advance(w, attr);
    switch (mnl_attr_get_type(attr)) {
    case DCB_ATTR_IFNAME: {
        // NLA_STRING, NUL-terminated by nla_put_string(); keep the bytes before the NUL.
        std::string_view name(static_cast<const char*>(mnl_attr_get_payload(attr)),
                              mnl_attr_get_payload_len(attr));
        w.fill.ifname = std::string(name.substr(0, name.find('\0')));
        break;
    }
    case DCB_ATTR_DCBX:
        if (mnl_attr_validate(attr, MNL_TYPE_U8) < 0) {
            if (w.fill_error.empty())
                w.fill_error = "empty DCB_ATTR_DCBX";
        } else if (w.fill_error.empty()) {
            w.fill.dcbx = mnl_attr_get_u8(attr);
        }
        break;
    case DCB_ATTR_IEEE: {
        // A nest in GET replies and notifications, a u8 status in the IEEE_SET reply.
        if (!w.first_ieee)
            w.first_ieee = payload_of(attr);
        if (!w.fill_error.empty())
            break;
        Walk nested;
        nested.base = static_cast<const uint8_t*>(mnl_attr_get_payload(attr));
        mnl_attr_parse_nested(attr, on_ieee_nested, &nested);
        std::string why = nested.fill_error.empty()
                              ? unwalked(nested, mnl_attr_get_payload_len(attr))
                              : nested.fill_error;
        if (!why.empty())
            w.fill_error = "in DCB_ATTR_IEEE: " + why;
        else {
            if (nested.fill.pfc)
                w.fill.pfc = nested.fill.pfc;
            if (nested.fill.app)
                w.fill.app = std::move(nested.fill.app);
        }
        break;
    }
    default:
        break;
    }
    return MNL_CB_OK;
}

/// Walk the attributes after the struct dcbmsg at the start of `payload` with libmnl. The
/// caller has checked that the payload holds a struct dcbmsg; `error` is set when the stream
/// does not walk to its end.
Walk walk_dcb(const AttrStream& stream, std::string& error) {
    Walk w;
    auto attrs = stream.bytes().subspan(MNL_ALIGN(sizeof(struct dcbmsg)));
    w.base = attrs.data();
    mnl_attr_parse_payload(attrs.data(), attrs.size(), on_dcb_attr, &w);
    error = unwalked(w, attrs.size());
    return w;
}

/// Why a payload cannot be a DCB reply at all, or "".
std::string check_dcb_payload(std::span<const uint8_t> payload, const char* what) {
    if (payload.size() < sizeof(struct dcbmsg))
        return std::string(what) + " shorter than struct dcbmsg";
    // libmnl 1.0.4 measures what is left of a payload as int: refuse what does not fit one.
    if (payload.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
        return std::string(what) + " of " + std::to_string(payload.size()) +
               " bytes, longer than libmnl walks";
    return {};
}

/// Check the struct dcbmsg at the start of a reply payload and walk the attributes after it.
std::optional<Walk> dcb_reply(const AttrStream& stream, uint8_t cmd, std::string& error) {
    auto payload = stream.bytes();
    error = check_dcb_payload(payload, "reply");
    if (!error.empty())
        return std::nullopt;
    auto d = load<struct dcbmsg>(payload, 0);
    if (d.cmd != cmd) {
        error = "reply is for DCB command " + std::to_string(d.cmd) + ", expected " +
                std::to_string(cmd);
        return std::nullopt;
    }
    Walk w = walk_dcb(stream, error);
    if (!error.empty())
        return std::nullopt;
    return w;
}

} // namespace

bool valid_ifname(std::string_view ifname) {
    return !ifname.empty() && ifname.size() <= max_ifname &&
           ifname.find('\0') == std::string_view::npos &&
           ifname.find('/') == std::string_view::npos;
}

Bytes build_ieee_get(std::string_view ifname, uint32_t seq, uint32_t port) {
    return request(RTM_GETDCB, DCB_CMD_IEEE_GET, ifname, seq, port, 0).finish();
}

Bytes build_ieee_set_pfc(std::string_view ifname, const PfcState& pfc, uint32_t seq,
                         uint32_t port) {
    Request r = request(RTM_SETDCB, DCB_CMD_IEEE_SET, ifname, seq, port,
                        MNL_ATTR_HDRLEN + sizeof(struct ieee_pfc));
    struct ieee_pfc raw {};
    raw.pfc_cap = pfc.pfc_cap;
    raw.pfc_en = pfc.pfc_en;
    raw.mbc = pfc.mbc;
    raw.delay = pfc.delay;
    // mnl_attr_nest_start() sets NLA_F_NESTED, as iproute2's request has it; the kernel masks
    // it off (nla_type()).
    struct nlattr* nest = mnl_attr_nest_start(r.nlh, DCB_ATTR_IEEE);
    mnl_attr_put(r.nlh, DCB_ATTR_IEEE_PFC, sizeof raw, &raw);
    mnl_attr_nest_end(r.nlh, nest);
    return r.finish();
}

namespace {

/// DCB_CMD_IEEE_SET/DEL with DCB_ATTR_IEEE { DCB_ATTR_IEEE_APP_TABLE { DCB_ATTR_IEEE_APP... } },
/// nested as iproute2 dcb/dcb_app.c dcb_app_add_del_cb() nests it.
Bytes app_request(uint8_t cmd, std::string_view ifname, std::span<const AppEntry> entries,
                  uint32_t seq, uint32_t port) {
    if (entries.empty())
        throw std::invalid_argument("an APP table request without entries");
    if (entries.size() > max_app_entries)
        throw std::invalid_argument("an APP table request of " + std::to_string(entries.size()) +
                                    " entries, more than " + std::to_string(max_app_entries));
    for (const AppEntry& e : entries) {
        // dcbnl_app_attr_type_get() (kernel 6.3+; iproute2 dcb_app_attr_type_get()): the IEEE
        // selectors go in DCB_ATTR_IEEE_APP, DCB_APP_SEL_PCP in DCB_ATTR_DCB_APP, which this
        // encoder does not send.
        if (e.selector < IEEE_8021QAZ_APP_SEL_ETHERTYPE || e.selector > IEEE_8021QAZ_APP_SEL_DSCP)
            throw std::invalid_argument("APP entry selector " + std::to_string(e.selector) +
                                        " is not an IEEE 802.1Qaz one");
    }
    Request r = request(RTM_SETDCB, cmd, ifname, seq, port,
                        MNL_ATTR_HDRLEN +
                            entries.size() * MNL_ALIGN(MNL_ATTR_HDRLEN + sizeof(struct dcb_app)));
    // mnl_attr_nest_start() sets NLA_F_NESTED on both nests, as iproute2's request has them.
    // The kernel does not mind either way: dcbnl_ieee_set()/dcbnl_ieee_del() parse DCB_ATTR_IEEE
    // with nla_parse_nested_deprecated() (no NLA_F_NESTED check; nla_type() masks the flag off
    // when indexing) and walk the table with nla_for_each_nested() comparing nla_type(), while
    // the kernel's own fill (nla_nest_start_noflag()) sends both without the flag.
    struct nlattr* ieee = mnl_attr_nest_start(r.nlh, DCB_ATTR_IEEE);
    struct nlattr* table = mnl_attr_nest_start(r.nlh, DCB_ATTR_IEEE_APP_TABLE);
    for (const AppEntry& e : entries) {
        struct dcb_app raw {};
        raw.selector = e.selector;
        raw.priority = e.priority;
        raw.protocol = e.protocol;
        mnl_attr_put(r.nlh, DCB_ATTR_IEEE_APP, sizeof raw, &raw);
    }
    mnl_attr_nest_end(r.nlh, table);
    mnl_attr_nest_end(r.nlh, ieee);
    return r.finish();
}

} // namespace

Bytes build_ieee_set_app(std::string_view ifname, std::span<const AppEntry> entries, uint32_t seq,
                         uint32_t port) {
    return app_request(DCB_CMD_IEEE_SET, ifname, entries, seq, port);
}

Bytes build_ieee_del_app(std::string_view ifname, std::span<const AppEntry> entries, uint32_t seq,
                         uint32_t port) {
    return app_request(DCB_CMD_IEEE_DEL, ifname, entries, seq, port);
}

Parsed<std::vector<Message>> split_messages(std::span<const uint8_t> datagram) {
    using R = Parsed<std::vector<Message>>;
    if (datagram.empty())
        return R::fail("empty netlink datagram");
    // libmnl 1.0.4 walks with int lengths: mnl_nlmsg_ok() casts nlmsg_len to int, so a length
    // of 2 GiB or more passed its check and walked past the datagram. Every length is checked
    // here as size_t first; libmnl only steps over what has been checked.
    if (datagram.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
        return R::fail("netlink datagram of " + std::to_string(datagram.size()) +
                       " bytes, longer than libmnl walks");
    AttrStream aligned(datagram); // struct nlmsghdr is read in place as well
    const uint8_t* base = aligned.bytes().data();
    std::vector<Message> out;
    int left = static_cast<int>(datagram.size());
    auto nlh = reinterpret_cast<const struct nlmsghdr*>(base);
    while (left > 0) {
        if (static_cast<size_t>(left) < NLMSG_HDRLEN)
            return R::fail(std::to_string(left) + " stray bytes after the last netlink message");
        if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > static_cast<uint32_t>(left))
            return R::fail("netlink message length " + std::to_string(nlh->nlmsg_len) +
                           " out of bounds (" + std::to_string(left) + " bytes left)");
        if (!mnl_nlmsg_ok(nlh, left))
            return R::fail("netlink message refused by libmnl");
        // The payload is handed out as a span of the caller's bytes, not of an aligned copy.
        auto off = static_cast<size_t>(reinterpret_cast<const uint8_t*>(nlh) - base);
        out.push_back(Message{nlh->nlmsg_type, nlh->nlmsg_flags, nlh->nlmsg_seq, nlh->nlmsg_pid,
                              datagram.subspan(off + NLMSG_HDRLEN, nlh->nlmsg_len - NLMSG_HDRLEN)});
        if (MNL_ALIGN(nlh->nlmsg_len) >= static_cast<uint32_t>(left))
            break; // the last message (its padding may be missing): do not step past the end
        nlh = mnl_nlmsg_next(nlh, &left);
    }
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

Parsed<IeeeGetReply> parse_ieee_get_reply(std::span<const uint8_t> payload) {
    using R = Parsed<IeeeGetReply>;
    AttrStream stream(payload);
    std::string error;
    auto w = dcb_reply(stream, DCB_CMD_IEEE_GET, error);
    if (!w)
        return R::fail(error);
    if (!w->fill_error.empty())
        return R::fail(w->fill_error);
    return R{std::move(w->fill), {}};
}

Parsed<DcbNotification> parse_dcb_notification(std::span<const uint8_t> payload) {
    using R = Parsed<DcbNotification>;
    AttrStream stream(payload);
    std::string error = check_dcb_payload(stream.bytes(), "DCB notification");
    if (!error.empty())
        return R::fail(error);
    DcbNotification n;
    n.cmd = load<struct dcbmsg>(stream.bytes(), 0).cmd;
    Walk w = walk_dcb(stream, error);
    if (!error.empty())
        return R::fail(error);
    if (!w.fill_error.empty())
        return R::fail(w.fill_error);
    if (w.fill.ifname.empty())
        return R::fail("DCB notification without DCB_ATTR_IFNAME");
    n.ifname = std::move(w.fill.ifname);
    // net/dcb/dcbnl.c dcbnl_notify(): dcbnl_ieee_fill() for IEEE commands (IEEE_SET, IEEE_DEL,
    // and IEEE_GET from drivers' dcbnl_ieee_notify()), dcbnl_cee_fill() otherwise. Only the
    // IEEE form carries struct ieee_pfc.
    if (n.cmd == DCB_CMD_IEEE_SET || n.cmd == DCB_CMD_IEEE_GET || n.cmd == DCB_CMD_IEEE_DEL) {
        n.pfc = w.fill.pfc;
        n.dcbx = w.fill.dcbx;
        n.app = std::move(w.fill.app);
    }
    return R{std::move(n), {}};
}

namespace {

/// The u8 DCB_ATTR_IEEE status of the reply to DCB_CMD_IEEE_SET or DCB_CMD_IEEE_DEL (`what`).
Parsed<int> parse_ieee_status_reply(std::span<const uint8_t> payload, uint8_t cmd,
                                    const char* what) {
    AttrStream stream(payload);
    std::string error;
    auto w = dcb_reply(stream, cmd, error);
    if (!w)
        return Parsed<int>::fail(error);
    if (!w->first_ieee)
        return Parsed<int>::fail(std::string(what) +
                                 " reply without its DCB_ATTR_IEEE status byte");
    if (w->first_ieee->empty())
        return Parsed<int>::fail("empty status DCB_ATTR_IEEE");
    // dcbnl_ieee_set(): nla_put_u8(skb, DCB_ATTR_IEEE, err), err a negative errno; iproute2
    // reads it back as int8. A positive byte is no errno we know: keep it as is.
    auto status = static_cast<int8_t>(w->first_ieee->front());
    return Parsed<int>{status < 0 ? -status : status, {}};
}

} // namespace

Parsed<int> parse_ieee_set_reply(std::span<const uint8_t> payload) {
    return parse_ieee_status_reply(payload, DCB_CMD_IEEE_SET, "IEEE_SET");
}

Parsed<int> parse_ieee_del_reply(std::span<const uint8_t> payload) {
    // dcbnl_ieee_del(): err = nla_put_u8(skb, DCB_ATTR_IEEE, err), in the reply dcb_doit()
    // allocated as reply_funcs[DCB_CMD_IEEE_DEL] = { RTM_SETDCB, ... } with cmd IEEE_DEL.
    return parse_ieee_status_reply(payload, DCB_CMD_IEEE_DEL, "IEEE_DEL");
}

} // namespace rdmad::dcb
