// SPDX-License-Identifier: MIT
//
// DCB netlink messages, pure (no sockets): the bytes of the requests rdmad sends to set PFC
// no-drop priorities and the DSCP entries of the IEEE APP table, and strict parsers for the
// kernel's replies (untrusted input: every length is checked, nothing is read out of bounds, a bad
// reply is an error string).
//
// Formats: kernel include/uapi/linux/dcbnl.h (Debian linux-libc-dev) and net/dcb/dcbnl.c
// (dcb_doit, dcbnl_ieee_fill, dcbnl_ieee_set, dcbnl_ieee_del, dcbnl_getdcbx); requests are laid out
// exactly as iproute2 dcb/dcb.c sends them (see tests/unit/data/dcb/). DOMAIN.md §2.2-2.3.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad::dcb {

using Bytes = std::vector<uint8_t>;

/// struct ieee_pfc (linux/dcbnl.h), decoded. pfc_en bit i is 802.1p priority i (not a traffic
/// class, whatever the header comment says: iproute2 man dcb-pfc, mlnx_qos, mlx5 en_dcbnl.c).
struct PfcState {
    uint8_t pfc_cap = 0;                ///< how many priorities may have PFC at once
    uint8_t pfc_en = 0;                 ///< the no-drop priorities, bit i = priority i
    uint8_t mbc = 0;                    ///< MACsec bypass capability
    uint16_t delay = 0;                 ///< round-trip allowance in bit times (mlx5: cable length)
    std::array<uint64_t, 8> requests{}; ///< PFC frames sent, per priority
    std::array<uint64_t, 8> indications{}; ///< PFC frames received, per priority
    bool operator==(const PfcState&) const = default;
};

/// A parser's answer: the value, or why the bytes were refused.
template <class T> struct Parsed {
    std::optional<T> value;
    std::string error; ///< set exactly when !value
    bool ok() const { return value.has_value(); }
    static Parsed fail(std::string why) { return Parsed{std::nullopt, std::move(why)}; }
};

/// The netlink header fields of one message of a reply datagram, and its payload.
struct Message {
    uint16_t type = 0;
    uint16_t flags = 0;
    uint32_t seq = 0;
    uint32_t port = 0;
    std::span<const uint8_t> payload; ///< the bytes after struct nlmsghdr, within nlmsg_len
};

/// One struct dcb_app (linux/dcbnl.h) of DCB_ATTR_IEEE_APP_TABLE: `protocol` is what the
/// selector matches (for IEEE_8021QAZ_APP_SEL_DSCP, 5: the DSCP 0-63), `priority` the 802.1p
/// priority 0-7 it gets.
struct AppEntry {
    uint8_t selector = 0;
    uint8_t priority = 0;
    uint16_t protocol = 0;
    auto operator<=>(const AppEntry&) const = default;
};

/// IEEE_8021QAZ_APP_SEL_DSCP (linux/dcbnl.h): an APP entry whose protocol is a DSCP.
constexpr uint8_t app_sel_dscp = 5;

/// The most APP entries a table may hold before the parser refuses it. dcb_doit() builds a
/// reply in one NLMSG_DEFAULT_SIZE skb (about a page), 8 bytes an entry: some 500 fit; every
/// DSCP to every priority is 512.
constexpr size_t max_app_entries = 1024;

/// What an IEEE_GET reply says (dcbnl_ieee_fill). Absent attributes stay std::nullopt: a driver
/// without ieee_getpfc sends no DCB_ATTR_IEEE_PFC, one without getdcbx no DCB_ATTR_DCBX.
struct IeeeGetReply {
    std::string ifname; ///< DCB_ATTR_IFNAME, "" when absent (a GET reply need not echo it)
    std::optional<PfcState> pfc;
    std::optional<uint8_t> dcbx;
    /// DCB_ATTR_IEEE { DCB_ATTR_IEEE_APP_TABLE }: its DCB_ATTR_IEEE_APP entries in the order
    /// sent (entries of other types, e.g. DCB_ATTR_DCB_APP of kernel 6.3+, are skipped); an
    /// empty table is an empty vector, std::nullopt when the reply had no table.
    std::optional<std::vector<AppEntry>> app;
};

/// What an RTNLGRP_DCB notification says (net/dcb/dcbnl.c dcbnl_notify(), sent by the kernel
/// after every DCB SET/DEL, whoever sent it, and by drivers through dcbnl_ieee_notify()).
struct DcbNotification {
    uint8_t cmd = 0;             ///< the DCB command it reports (DCB_CMD_IEEE_SET, ...)
    std::string ifname;          ///< the netdev, from DCB_ATTR_IFNAME
    std::optional<PfcState> pfc; ///< the PFC state now, when the IEEE form carried it
    std::optional<uint8_t> dcbx; ///< DCB_CAP_DCBX_* flags, when the IEEE form carried them
    /// The APP table now (as IeeeGetReply::app), when the IEEE form carried it
    std::optional<std::vector<AppEntry>> app;
};

/// The longest interface name DCB_ATTR_IFNAME takes (IFNAMSIZ - 1).
constexpr size_t max_ifname = 15;

/// True when `ifname` fits DCB_ATTR_IFNAME: 1..15 bytes, no NUL, no '/'.
bool valid_ifname(std::string_view ifname);

// --- Requests. All are NLM_F_REQUEST|NLM_F_ACK like iproute2's, `port` goes to nlmsg_pid (0 is
// "the kernel assigns", what iproute2 sends). They throw std::invalid_argument on a bad ifname.

/// RTM_GETDCB, DCB_CMD_IEEE_GET, DCB_ATTR_IFNAME (`dcb pfc show dev IFNAME`).
Bytes build_ieee_get(std::string_view ifname, uint32_t seq, uint32_t port);

/// RTM_SETDCB, DCB_CMD_IEEE_SET, DCB_ATTR_IFNAME, nest DCB_ATTR_IEEE { DCB_ATTR_IEEE_PFC:
/// struct ieee_pfc }. pfc_cap, pfc_en, mbc and delay come from `pfc`; the counters are sent as
/// zero (no driver reads them on set; iproute2 echoes what it read).
Bytes build_ieee_set_pfc(std::string_view ifname, const PfcState& pfc, uint32_t seq, uint32_t port);

/// RTM_SETDCB, DCB_CMD_IEEE_SET, DCB_ATTR_IFNAME, nest DCB_ATTR_IEEE { nest
/// DCB_ATTR_IEEE_APP_TABLE { DCB_ATTR_IEEE_APP: struct dcb_app, one per entry, in order } }, as
/// iproute2 `dcb app add` sends it (tests/unit/data/dcb/ieee_set_app_request.txt). The kernel
/// hands the entries to the driver one by one (dcbnl_ieee_set(): ops->ieee_setapp or
/// dcb_ieee_setapp()) and stops at the first that fails; dcb_ieee_setapp() refuses an entry
/// already in the table with EEXIST. Throws std::invalid_argument on a bad ifname, an empty
/// `entries`, more than max_app_entries, or a selector that is not an IEEE one (1-5: only those
/// go in DCB_ATTR_IEEE_APP; kernels 6.3+ refuse the rest there with EINVAL).
Bytes build_ieee_set_app(std::string_view ifname, std::span<const AppEntry> entries, uint32_t seq,
                         uint32_t port);

/// The same request with DCB_CMD_IEEE_DEL (`dcb app del`,
/// tests/unit/data/dcb/ieee_del_app_request.txt): the kernel removes each exact
/// (selector, protocol, priority) match (dcbnl_ieee_del(): ops->ieee_delapp or
/// dcb_ieee_delapp(), ENOENT when there is none) and stops at the first that fails. The message
/// type is RTM_SETDCB all the same (net/dcb/dcbnl.c reply_funcs[]; there is no RTM_DELDCB).
Bytes build_ieee_del_app(std::string_view ifname, std::span<const AppEntry> entries, uint32_t seq,
                         uint32_t port);

// --- Replies.

/// Split one received datagram into its netlink messages. Every nlmsg_len must cover its header
/// and fit the datagram; bytes left over that are not alignment padding make it an error.
Parsed<std::vector<Message>> split_messages(std::span<const uint8_t> datagram);

/// The payload of an NLMSG_ERROR: 0 for an ACK, otherwise the positive errno (EOPNOTSUPP when
/// the netdev has no dcbnl_ops or the kernel has no CONFIG_DCB).
Parsed<int> parse_nlmsg_error(std::span<const uint8_t> payload);

/// The payload of the RTM_GETDCB reply to DCB_CMD_IEEE_GET.
Parsed<IeeeGetReply> parse_ieee_get_reply(std::span<const uint8_t> payload);

/// The payload of an RTM_GETDCB/RTM_SETDCB notification on RTNLGRP_DCB. Refused without
/// DCB_ATTR_IFNAME. `pfc` is set only for the IEEE commands whose fill carries it; a CEE
/// notification (dcbnl_cee_fill) names the netdev only, which must then be read.
Parsed<DcbNotification> parse_dcb_notification(std::span<const uint8_t> payload);

/// The payload of the RTM_SETDCB reply to DCB_CMD_IEEE_SET: the driver's status, carried as the
/// u8 DCB_ATTR_IEEE (its negative errno truncated to 8 bits; NLMSG_ERROR is 0 all the same).
/// Returns 0 or the positive errno (0xEA -> 22, EINVAL).
Parsed<int> parse_ieee_set_reply(std::span<const uint8_t> payload);

/// The payload of the reply to DCB_CMD_IEEE_DEL: laid out as the IEEE_SET reply (dcbnl_ieee_del()
/// puts the same u8 DCB_ATTR_IEEE status in an RTM_SETDCB message), but its struct dcbmsg says
/// DCB_CMD_IEEE_DEL, and a reply for another command is refused. Returns 0 or the positive
/// errno (ENOENT: no such entry in the table).
Parsed<int> parse_ieee_del_reply(std::span<const uint8_t> payload);

} // namespace rdmad::dcb
