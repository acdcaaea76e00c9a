// SPDX-License-Identifier: MIT
//
// The DCB netlink client that sets PFC no-drop priorities (DOMAIN.md §2.2-2.3, §7.4) and the
// DSCP entries of the IEEE APP table: one request at a time over an injected NETLINK_ROUTE
// transport, every change checked twice (the driver's status byte, then an IEEE_GET read-back,
// because a driver without ieee_setpfc silently ignores the PFC attribute). It sends no SET when
// the mask is already there (mlx5 flaps the link on every pfc_en change), and DCB_CMD_IEEE_DEL
// only for DSCP APP entries, after the entries that replace them were added.
#pragma once

#include "actuators/dcb_app.hpp"
#include "actuators/dcb_message.hpp"
#include "util/mnl_socket.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace rdmad::dcb {

/// One request/reply netlink socket. Tests put a fake kernel behind it.
class NetlinkTransport {
  public:
    virtual ~NetlinkTransport() = default;
    /// Send one request; the byte count, or -errno.
    virtual ssize_t send(std::span<const uint8_t> bytes) = 0;
    /// Receive one datagram into `buffer`; its size, or -errno (-ENOSPC when it did not fit).
    virtual ssize_t recv(std::span<uint8_t> buffer) = 0;
    /// The port id the kernel bound the socket to (replies carry it in nlmsg_pid).
    virtual uint32_t port_id() const = 0;
};

/// The real transport: an AF_NETLINK/NETLINK_ROUTE socket through libmnl (Debian libmnl-dev),
/// bound to no multicast group, in the network namespace of the thread that constructs it.
class MnlTransport final : public NetlinkTransport {
  public:
    /// Throws std::system_error when the socket cannot be opened or bound. A receive timeout
    /// (default 5 s) keeps a missing reply from blocking the daemon forever.
    explicit MnlTransport(int recv_timeout_ms = 5000);
    MnlTransport(const MnlTransport&) = delete;
    MnlTransport& operator=(const MnlTransport&) = delete;

    ssize_t send(std::span<const uint8_t> bytes) override;
    ssize_t recv(std::span<uint8_t> buffer) override;
    uint32_t port_id() const override;

  private:
    MnlSocket nl_;
};

/// The outcome of one client call.
struct DcbResult {
    enum class Status {
        ok,
        not_supported, ///< no DCB on this netdev (EOPNOTSUPP), or DCB without IEEE PFC
        failed,        ///< netlink error, or a reply we could not make sense of
        not_applied,   ///< the SET was accepted but the read-back differs: driver ignored it
        driver_error,  ///< the driver refused the SET (status byte in the reply)
    } status = Status::failed;
    int error = 0;               ///< errno, when there is one
    PfcState state;              ///< what IEEE_GET read (after a SET: the read-back)
    std::optional<uint8_t> dcbx; ///< DCBX mode (DCB_CAP_DCBX_* flags), when the reply had it
    /// The APP table an IEEE_GET read (IeeeGetReply::app): after set_dscp_app() sent anything,
    /// the read-back (also when it is not what was asked). std::nullopt when this call read
    /// none (a SET that had nothing to do with what the caller knew, or the reply had no table)
    std::optional<std::vector<AppEntry>> app;
    std::string message; ///< for the admin: what happened, on which netdev
    bool ok() const { return status == Status::ok; }
};

/// A readable name for a status ("not_applied").
std::string_view to_string(DcbResult::Status status);

class DcbClient {
  public:
    /// `transport` must outlive the client.
    explicit DcbClient(NetlinkTransport& transport, uint32_t first_seq = 0);

    /// IEEE_GET: the current PFC state of netdev `ifname` (and its DCBX mode when the driver
    /// reports one).
    DcbResult get_pfc(std::string_view ifname);

    /// Make `mask` (bit i = priority i) the no-drop priorities of `ifname`: IEEE_SET only
    /// when the mask differs (keeping pfc_cap/mbc/delay as read), then one IEEE_GET read-back.
    /// `current` is the state already known (the inventory's); without it an IEEE_GET reads
    /// it first. ok only when the read-back shows `mask`.
    DcbResult set_pfc(std::string_view ifname, uint8_t mask,
                      const std::optional<PfcState>& current = std::nullopt);

    /// Make the DSCP entries of `ifname`'s IEEE APP table what `goal` asks (settings `trust`
    /// and `dscp_priority`; plan_dscp_app() in actuators/dcb_app.hpp says what that is), leaving
    /// entries of other selectors alone.
    ///
    /// `current` is the APP table already known (the inventory's; only its DSCP entries are
    /// used, so PfcActual::dscp_map as {5, priority, DSCP} entries will do); without it an
    /// IEEE_GET reads it first. Nothing is sent when nothing differs. Otherwise, in this order:
    ///  1. one IEEE_SET with every entry to add (build_ieee_set_app());
    ///  2. only if the driver took it (status 0), one IEEE_DEL with every entry to remove
    ///     (build_ieee_del_app()): the table never passes through "no DSCP entry", which on
    ///     mlx5 would switch the port to PCP trust and back (AppPlan says why, and in what
    ///     order the deletes go);
    ///  3. one IEEE_GET read-back, whose table is returned in DcbResult::app (with its PFC
    ///     state in `state` and DCBX mode in `dcbx` when it carried them).
    /// The result is ok only when the read-back's DSCP entries are what was asked: nothing
    /// left to plan against it, and every added entry in it. Otherwise:
    ///  - not_supported: no DCB on the netdev (EOPNOTSUPP from netlink);
    ///  - driver_error, `error` the status byte's errno: the driver refused the SET (mlx5:
    ///    EOPNOTSUPP without DSCP support, EINVAL for a non-DSCP entry; the deletes are then not
    ///    sent) or the DEL (ENOENT), and the read-back is not what was asked. A DEL failing
    ///    with ENOENT because mlx5's setapp already removed the replaced entry is ok when the
    ///    read-back is right;
    ///  - not_applied: every status was 0 but the read-back differs (the driver ignored it);
    ///  - failed: bad ifname or goal (EINVAL), netlink errors (ENODEV, ...), malformed or
    ///    missing replies, an IEEE_GET reply without an APP table (EPROTO).
    DcbResult set_dscp_app(std::string_view ifname, const DscpAppGoal& goal,
                           const std::optional<std::vector<AppEntry>>& current = std::nullopt);

  private:
    /// IEEE_GET: the reply, or std::nullopt with `result` filled with why not.
    std::optional<IeeeGetReply> ieee_get(std::string_view ifname, DcbResult& result);
    /// Send an IEEE_SET or IEEE_DEL (`cmd`) and read the driver's status byte from its reply
    /// into `status`. Fills `result` and returns false on any failure to get one.
    bool send_with_status(const Bytes& request, uint32_t seq, uint8_t cmd, const std::string& what,
                          DcbResult& result, int& status);
    /// Send `request` and read datagrams until its ACK; the reply message of `reply_type`
    /// (if any) is handed to `on_reply`. Fills `result` and returns false on any failure.
    bool exchange(std::span<const uint8_t> request, uint32_t seq, uint16_t reply_type,
                  const std::string& what, DcbResult& result,
                  const std::function<bool(std::span<const uint8_t>, DcbResult&)>& on_reply);
    uint32_t next_seq() { return seq_++; }

    NetlinkTransport& transport_;
    uint32_t seq_;
};

} // namespace rdmad::dcb
