// SPDX-License-Identifier: MIT
//
// The DCB netlink client that sets PFC no-drop priorities (DOMAIN.md §2.2-2.3, §7.4): one
// request at a time over an injected NETLINK_ROUTE transport, every SET checked twice (the
// driver's status byte, then an IEEE_GET read-back, because a driver without ieee_setpfc
// silently ignores the PFC attribute). It never sends DCB_CMD_IEEE_DEL, and sends no SET when
// the mask is already there: mlx5 flaps the link on every pfc_en change.
#pragma once

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
    /// The APP table an IEEE_GET read (IeeeGetReply::app); std::nullopt when this call read
    /// none (a SET that had nothing to do, or the reply had no table)
    std::optional<std::vector<AppEntry>> app;
    std::string message;         ///< for the admin: what happened, on which netdev
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

  private:
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
