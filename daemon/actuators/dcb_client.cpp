// SPDX-License-Identifier: MIT
//
// DCB netlink client. Socket and dispatch: libmnl (Debian libmnl-dev: mnl_socket_open/bind/
// sendto/recvfrom, mnl_cb_run2); messages: actuators/dcb_message.hpp over <linux/dcbnl.h>
// (linux-libc-dev). Kernel behaviour: net/dcb/dcbnl.c dcb_doit / dcbnl_ieee_set, DOMAIN.md §2.3.
#include "actuators/dcb_client.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/time.h>

namespace rdmad::dcb {

// --- MnlTransport

MnlTransport::MnlTransport(int recv_timeout_ms) : nl_(mnl_socket_open(NETLINK_ROUTE)) {
    if (!nl_)
        throw std::system_error(errno, std::generic_category(), "mnl_socket_open(NETLINK_ROUTE)");
    struct timeval tv {};
    tv.tv_sec = recv_timeout_ms / 1000;
    tv.tv_usec = (recv_timeout_ms % 1000) * 1000;
    if (setsockopt(mnl_socket_get_fd(nl_.get()), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
        mnl_socket_bind(nl_.get(), 0, MNL_SOCKET_AUTOPID) < 0) {
        int e = errno;
        throw std::system_error(e, std::generic_category(), "binding the DCB netlink socket");
    }
}

ssize_t MnlTransport::send(std::span<const uint8_t> bytes) {
    ssize_t n = mnl_socket_sendto(nl_.get(), bytes.data(), bytes.size());
    return n < 0 ? -errno : n;
}

ssize_t MnlTransport::recv(std::span<uint8_t> buffer) {
    ssize_t n = mnl_socket_recvfrom(nl_.get(), buffer.data(), buffer.size());
    if (n >= 0)
        return n;
    // SO_RCVTIMEO expiry reads as EAGAIN; say what it means.
    return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
}

uint32_t MnlTransport::port_id() const {
    return mnl_socket_get_portid(nl_.get());
}

// --- DcbClient

std::string_view to_string(DcbResult::Status status) {
    switch (status) {
    case DcbResult::Status::ok:
        return "ok";
    case DcbResult::Status::not_supported:
        return "not_supported";
    case DcbResult::Status::failed:
        return "failed";
    case DcbResult::Status::not_applied:
        return "not_applied";
    case DcbResult::Status::driver_error:
        return "driver_error";
    }
    return "unknown";
}

namespace {

// One DCB request is answered with at most a reply and an ACK (two datagrams); allow a few
// stale ones from an earlier, abandoned exchange, but never loop forever on a broken peer.
constexpr int max_datagrams = 16;
// Larger than any dcbnl reply (dcbnl_newmsg allocates NLMSG_DEFAULT_SIZE) and libmnl's
// MNL_SOCKET_BUFFER_SIZE; a reply that does not fit comes back as ENOSPC (MSG_TRUNC).
constexpr size_t recv_buffer_size = 32768;

DcbResult failure(DcbResult::Status status, int error, std::string message) {
    DcbResult r;
    r.status = status;
    r.error = error;
    r.message = std::move(message);
    return r;
}

struct Dispatch {
    uint32_t seq;
    uint16_t reply_type;
    const std::function<bool(std::span<const uint8_t>, DcbResult&)>* on_reply;
    DcbResult* result;
    bool acked = false;
    int nl_error = 0;
    std::string bad; ///< why the reply was refused, "" when it was fine
};

std::span<const uint8_t> payload_of(const struct nlmsghdr* nlh) {
    // split_messages() has already checked nlmsg_len against the datagram.
    return {static_cast<const uint8_t*>(mnl_nlmsg_get_payload(nlh)), nlh->nlmsg_len - NLMSG_HDRLEN};
}

int on_data(const struct nlmsghdr* nlh, void* data) {
    auto* d = static_cast<Dispatch*>(data);
    if (nlh->nlmsg_seq != d->seq)
        return MNL_CB_OK; // stale answer to an earlier request
    if (nlh->nlmsg_type != d->reply_type) {
        d->bad = fmt::format("unexpected netlink message type {}", nlh->nlmsg_type);
        return MNL_CB_ERROR;
    }
    if (!(*d->on_reply)(payload_of(nlh), *d->result)) {
        d->bad = d->result->message;
        return MNL_CB_ERROR;
    }
    return MNL_CB_OK;
}

int on_error(const struct nlmsghdr* nlh, void* data) {
    auto* d = static_cast<Dispatch*>(data);
    if (nlh->nlmsg_seq != d->seq)
        return MNL_CB_OK;
    auto e = parse_nlmsg_error(payload_of(nlh));
    if (!e.ok()) {
        d->bad = e.error;
        return MNL_CB_ERROR;
    }
    d->acked = true;
    d->nl_error = *e.value;
    return MNL_CB_STOP;
}

/// An on_reply for DcbClient::exchange(): the reply parsed with `parse` into `out`, or its
/// parser's reason in the result's message.
template <class T>
std::function<bool(std::span<const uint8_t>, DcbResult&)>
parse_into(Parsed<T> (*parse)(std::span<const uint8_t>), std::optional<T>& out) {
    return [parse, &out](std::span<const uint8_t> payload, DcbResult& res) {
        auto p = parse(payload);
        if (!p.ok()) {
            res.message = p.error;
            return false;
        }
        out = std::move(*p.value);
        return true;
    };
}

std::string hex(uint8_t mask) {
    return fmt::format("0x{:02x}", mask);
}

} // namespace

DcbClient::DcbClient(NetlinkTransport& transport, uint32_t first_seq)
    : transport_(transport), seq_(first_seq) {}

bool DcbClient::exchange(
    std::span<const uint8_t> request, uint32_t seq, uint16_t reply_type, const std::string& what,
    DcbResult& result, const std::function<bool(std::span<const uint8_t>, DcbResult&)>& on_reply) {
    ssize_t sent = transport_.send(request);
    if (sent < 0 || static_cast<size_t>(sent) != request.size()) {
        int e = sent < 0 ? static_cast<int>(-sent) : EIO;
        result = failure(DcbResult::Status::failed, e,
                         fmt::format("{}: sending to the kernel: {}", what, std::strerror(e)));
        return false;
    }
    Dispatch d{seq, reply_type, &on_reply, &result, false, 0, {}};
    // The kernel's dispatch callbacks for control messages; NLMSG_ERROR carries the ACK.
    mnl_cb_t ctl[NLMSG_MIN_TYPE] = {};
    ctl[NLMSG_ERROR] = on_error;
    // Not zeroed: recv() writes what it returns, and only that is read. (A zeroed vector cost
    // 32 KiB of memset per request: 4 % of a 1,024-device start-up's instructions.)
    const auto buf = std::make_unique_for_overwrite<uint8_t[]>(recv_buffer_size);
    for (int i = 0; i < max_datagrams && !d.acked; ++i) {
        ssize_t n = transport_.recv(std::span<uint8_t>(buf.get(), recv_buffer_size));
        if (n <= 0) {
            int e = n < 0 ? static_cast<int>(-n) : EPIPE;
            result =
                failure(DcbResult::Status::failed, e,
                        fmt::format("{}: no answer from the kernel: {}", what, std::strerror(e)));
            return false;
        }
        std::span<const uint8_t> datagram(buf.get(), static_cast<size_t>(n));
        // libmnl stops quietly at a truncated message; refuse the datagram outright instead.
        auto split = split_messages(datagram);
        if (!split.ok()) {
            result = failure(DcbResult::Status::failed, EBADMSG,
                             fmt::format("{}: malformed reply: {}", what, split.error));
            return false;
        }
        // seq 0: mnl_cb_run2 does not check it; on_data/on_error skip stale sequence numbers
        // themselves instead of failing on them. The port id is checked by libmnl.
        errno = 0;
        int rc = mnl_cb_run2(datagram.data(), datagram.size(), 0, transport_.port_id(), on_data, &d,
                             ctl, NLMSG_MIN_TYPE);
        if (!d.bad.empty()) {
            result = failure(DcbResult::Status::failed, EBADMSG,
                             fmt::format("{}: malformed reply: {}", what, d.bad));
            return false;
        }
        if (rc == MNL_CB_ERROR) {
            int e = errno ? errno : EPROTO;
            result = failure(DcbResult::Status::failed, e,
                             fmt::format("{}: {}", what, std::strerror(e)));
            return false;
        }
    }
    if (!d.acked) {
        result = failure(DcbResult::Status::failed, EPROTO,
                         fmt::format("{}: no netlink ACK from the kernel", what));
        return false;
    }
    if (d.nl_error == EOPNOTSUPP) {
        // DOMAIN.md §2.3: the netdev's driver has no dcbnl_ops, or the kernel has no CONFIG_DCB.
        result = failure(DcbResult::Status::not_supported, EOPNOTSUPP,
                         fmt::format("{}: no DCB on this netdev (EOPNOTSUPP: its driver has no "
                                     "DCB netlink support, or the kernel lacks CONFIG_DCB)",
                                     what));
        return false;
    }
    if (d.nl_error != 0) {
        result = failure(DcbResult::Status::failed, d.nl_error,
                         fmt::format("{}: {}", what, std::strerror(d.nl_error)));
        return false;
    }
    return true;
}

std::optional<IeeeGetReply> DcbClient::ieee_get(std::string_view ifname, DcbResult& r) {
    std::string what = fmt::format("DCB IEEE_GET on {}", ifname);
    uint32_t seq = next_seq();
    Bytes request = build_ieee_get(ifname, seq, 0);
    std::optional<IeeeGetReply> got;
    if (!exchange(request, seq, RTM_GETDCB, what, r, parse_into(parse_ieee_get_reply, got)))
        return std::nullopt;
    if (!got) {
        r = failure(DcbResult::Status::failed, EPROTO,
                    what + ": the kernel acknowledged but sent no reply");
        return std::nullopt;
    }
    r.status = DcbResult::Status::ok;
    r.error = 0;
    r.dcbx = got->dcbx;
    r.app = got->app;
    if (got->pfc)
        r.state = *got->pfc;
    return got;
}

bool DcbClient::send_with_status(const Bytes& request, uint32_t seq, uint8_t cmd,
                                 const std::string& what, DcbResult& r, int& status) {
    std::optional<int> got;
    if (!exchange(
            request, seq, RTM_SETDCB, what, r,
            parse_into(cmd == DCB_CMD_IEEE_DEL ? parse_ieee_del_reply : parse_ieee_set_reply, got)))
        return false;
    if (!got) {
        r = failure(DcbResult::Status::failed, EPROTO,
                    what + ": the kernel acknowledged but sent no status");
        return false;
    }
    status = *got;
    return true;
}

DcbResult DcbClient::get_pfc(std::string_view ifname) {
    if (!valid_ifname(ifname))
        return failure(DcbResult::Status::failed, EINVAL,
                       fmt::format("\"{}\" is not a netdev name", ifname));
    DcbResult r;
    auto got = ieee_get(ifname, r);
    if (!got)
        return r;
    if (!got->pfc) {
        // DOMAIN.md §2.3: a driver without ieee_getpfc (CEE-only) answers without
        // DCB_ATTR_IEEE_PFC; iproute2 prints "Attribute not found".
        r.status = DcbResult::Status::not_supported;
        r.error = ENODATA;
        r.message = fmt::format("DCB IEEE_GET on {}: the driver does DCB but reports no IEEE PFC "
                                "(no DCB_ATTR_IEEE_PFC in the reply)",
                                ifname);
        return r;
    }
    r.message =
        fmt::format("{}: PFC {} (pfc_cap {})", ifname, hex(r.state.pfc_en), r.state.pfc_cap);
    return r;
}

DcbResult DcbClient::set_pfc(std::string_view ifname, uint8_t mask,
                             const std::optional<PfcState>& known) {
    DcbResult current;
    if (known) {
        if (!valid_ifname(ifname))
            return failure(DcbResult::Status::failed, EINVAL,
                           fmt::format("\"{}\" is not a netdev name", ifname));
        current.status = DcbResult::Status::ok;
        current.state = *known;
    } else {
        current = get_pfc(ifname);
    }
    if (!current.ok())
        return current;
    if (current.state.pfc_en == mask) {
        // Idempotent: mlx5 en_dcbnl.c would toggle the port link for a SET, even an equal one
        // costs a round trip; nothing to do.
        current.message = fmt::format("{}: PFC already {}", ifname, hex(mask));
        return current;
    }

    // Read-modify-write like iproute2 dcb_pfc.c: keep pfc_cap, mbc and delay as read.
    PfcState wanted = current.state;
    wanted.pfc_en = mask;
    std::string what = fmt::format("DCB IEEE_SET PFC {} on {}", hex(mask), ifname);
    uint32_t seq = next_seq();
    Bytes request = build_ieee_set_pfc(ifname, wanted, seq, 0);
    int status = 0;
    DcbResult r;
    if (!send_with_status(request, seq, DCB_CMD_IEEE_SET, what, r, status)) {
        r.state = current.state;
        return r;
    }
    if (status != 0) {
        // DOMAIN.md §2.3: the driver's ieee_setpfc failed; netlink said 0 all the same. (ice:
        // EINVAL while its firmware LLDP agent is on, or when bonded.)
        DcbResult f =
            failure(DcbResult::Status::driver_error, status,
                    fmt::format("{}: the driver refused it: {}", what, std::strerror(status)));
        f.state = current.state;
        f.dcbx = current.dcbx;
        return f;
    }

    DcbResult back = get_pfc(ifname);
    if (!back.ok()) {
        back.message = what + " was accepted, but reading it back failed: " + back.message;
        if (back.status == DcbResult::Status::not_supported)
            back.status = DcbResult::Status::failed;
        return back;
    }
    if (back.state.pfc_en != mask) {
        // DOMAIN.md §2.3: a driver without ieee_setpfc ignores the PFC attribute, status 0.
        back.status = DcbResult::Status::not_applied;
        back.error = 0;
        back.message = fmt::format("{}: accepted, but the driver still reports {}: it ignored "
                                   "the PFC attribute",
                                   what, hex(back.state.pfc_en));
        return back;
    }
    back.message =
        fmt::format("{}: PFC {} applied (was {})", ifname, hex(mask), hex(current.state.pfc_en));
    return back;
}

namespace {

/// "26:3 48:6" (DSCP:priority), as `dcb app show dscp-prio` prints them.
std::string dscp_text(const std::vector<AppEntry>& entries) {
    std::string out;
    for (const AppEntry& e : entries)
        out += fmt::format("{}{}:{}", out.empty() ? "" : " ", e.protocol, e.priority);
    return out.empty() ? "none" : out;
}

} // namespace

DcbResult DcbClient::set_dscp_app(std::string_view ifname, const DscpAppGoal& goal,
                                  const std::optional<std::vector<AppEntry>>& known) {
    if (!valid_ifname(ifname))
        return failure(DcbResult::Status::failed, EINVAL,
                       fmt::format("\"{}\" is not a netdev name", ifname));
    // A goal that cannot be met is refused before anything is sent (or read).
    if (auto check = plan_dscp_app({}, goal); !check.ok())
        return failure(DcbResult::Status::failed, EINVAL,
                       fmt::format("{}: DSCP APP entries: {}", ifname, check.error));
    const std::string table_missing = "the IEEE_GET reply has no DCB_ATTR_IEEE_APP_TABLE";
    DcbResult current;
    if (known) {
        current.status = DcbResult::Status::ok;
    } else {
        if (!ieee_get(ifname, current))
            return current;
        if (!current.app)
            return failure(DcbResult::Status::failed, EPROTO,
                           fmt::format("DCB IEEE_GET on {}: {}", ifname, table_missing));
    }
    const std::vector<AppEntry>& table = known ? *known : *current.app;
    const AppPlan p = *plan_dscp_app(table, goal).value; // the goal was checked above
    if (p.empty()) {
        current.message = fmt::format("{}: DSCP APP entries already as asked", ifname);
        return current;
    }

    // 1. Add, 2. delete (only when every add was taken), 3. read back.
    int set_status = 0, del_status = 0;
    std::string done;
    if (!p.add.empty()) {
        std::string what =
            fmt::format("DCB IEEE_SET APP dscp-prio {} on {}", dscp_text(p.add), ifname);
        uint32_t seq = next_seq();
        DcbResult r;
        if (!send_with_status(build_ieee_set_app(ifname, p.add, seq, 0), seq, DCB_CMD_IEEE_SET,
                              what, r, set_status))
            return r;
        done = what;
    }
    if (set_status == 0 && !p.remove.empty()) {
        std::string what =
            fmt::format("DCB IEEE_DEL APP dscp-prio {} on {}", dscp_text(p.remove), ifname);
        uint32_t seq = next_seq();
        DcbResult r;
        if (!send_with_status(build_ieee_del_app(ifname, p.remove, seq, 0), seq, DCB_CMD_IEEE_DEL,
                              what, r, del_status)) {
            if (!done.empty())
                r.message = done + " was sent; then " + r.message;
            return r;
        }
        done += (done.empty() ? "" : ", then ") + what;
    }

    DcbResult back;
    if (!ieee_get(ifname, back) || !back.app) {
        if (back.ok())
            back = failure(DcbResult::Status::failed, EPROTO, table_missing);
        back.message = done + " was sent, but reading it back failed: " + back.message;
        if (back.status == DcbResult::Status::not_supported)
            back.status = DcbResult::Status::failed;
        return back;
    }
    const std::vector<AppEntry>& now = *back.app;
    auto again = plan_dscp_app(now, goal);
    bool right = again.ok() && again.value->empty() &&
                 std::all_of(p.add.begin(), p.add.end(), [&](const AppEntry& e) {
                     return std::find(now.begin(), now.end(), e) != now.end();
                 });
    std::vector<AppEntry> dscp_now;
    for (const AppEntry& e : now)
        if (e.selector == app_sel_dscp)
            dscp_now.push_back(e);
    if (right) {
        back.message = fmt::format(
            "{}: DSCP APP entries applied: {}{}", ifname, done,
            del_status == ENOENT ? " (the driver had already removed what the DEL named)" : "");
        return back;
    }
    if (set_status != 0 || del_status != 0) {
        // The driver's ieee_setapp/ieee_delapp failed; netlink said 0 all the same.
        const int e = set_status != 0 ? set_status : del_status;
        back.status = DcbResult::Status::driver_error;
        back.error = e;
        back.message =
            fmt::format("{}: the driver refused it: {}{}; dscp-prio now {}", done, std::strerror(e),
                        set_status != 0 && !p.remove.empty() ? " (no entry was deleted)" : "",
                        dscp_text(dscp_now));
        return back;
    }
    back.status = DcbResult::Status::not_applied;
    back.error = 0;
    back.message = fmt::format("{}: accepted, but the driver now reports dscp-prio {}: it "
                               "ignored the APP entries",
                               done, dscp_text(dscp_now));
    return back;
}

} // namespace rdmad::dcb
