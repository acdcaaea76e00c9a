// SPDX-License-Identifier: MIT
//
// Which GID a RoCE application should use on each port (NCCL_IB_GID_INDEX, UCX_IB_GID_INDEX,
// `ib_write_bw -x`), and the warning when no GID of a RoCE v2 port can leave its subnet.
#pragma once

#include "doctor/facts.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rdmad::doctor {

/// True for a GID that is not all zeros and not link-local (fe80::/10, RFC 4291 §2.5.6).
/// `gid` is the kernel's uncompressed form ("%pI6": 8 groups of 4 hex digits); false for
/// anything else.
bool routable_gid(const std::string& gid);
/// The same for a GID held as bytes.
bool routable_gid(const Gid& gid);

/// True for an IPv4-mapped GID (::ffff:a.b.c.d, RFC 4291 §2.5.5.2): the GID the kernel makes
/// for an IPv4 address of a RoCE netdev (drivers/infiniband/core/roce_gid_mgmt.c).
bool ipv4_mapped_gid(const std::string& gid);
bool ipv4_mapped_gid(const Gid& gid);

/// The IP address a GID carries, as text: "192.0.2.1" for an IPv4-mapped GID, RFC 5952
/// (inet_ntop(3)) text for any other GID; "" when `gid` is not in the kernel's form.
std::string gid_ip(const std::string& gid);
/// The same for a GID held as bytes (the all-zero GID gives "::").
std::string gid_ip(const Gid& gid);

/// The GID to use on a RoCE port, by preference:
///  1. RoCE v2 with an IPv4-mapped GID,
///  2. RoCE v2 with a routable IPv6 GID,
///  3. RoCE v1 (IPv4-mapped, then routable IPv6, then link-local), only when the port has no
///     RoCE v2 GID at all (a RoCE v2 port with only link-local v2 GIDs gets none:
///     check_gid() says why),
/// each on the port's own netdev first, then on a VLAN or bond stacked on it (netdev kind
/// "vlan" or "bond", or the port netdev's master), never on an overlay or another netdev
/// (a vxlan that carries the same address), then by the lowest table index. `links` gives the
/// kind of each netdev; without it only the port's own netdev is trusted. Nothing (an empty
/// `gid`) for other transports and when no entry qualifies.
RecommendedGid recommend_gid(const PortState& port, const LinkIndex* links);

/// Fill every port's `recommended_gid` (recommend_gid()).
void derive_recommended_gids(DeviceState& d, const Facts& facts);

/// For a RoCE port whose RoCE v2 GIDs are all link-local (or whose routable ones sit on
/// netdevs that are not the port's): "no-routable-gid" (warning), the evidence the GID table,
/// the remedy an address on the netdev. Nothing otherwise (a port without GIDs is not judged).
std::vector<Problem> check_gid(const DeviceState& d, const PortState& port);

} // namespace rdmad::doctor
