// SPDX-License-Identifier: MIT
//
// The DSCP part of a netdev's IEEE APP table (DCB_ATTR_IEEE_APP_TABLE, selector
// IEEE_8021QAZ_APP_SEL_DSCP), pure: what to add and what to delete so that it becomes what the
// settings `trust` and `dscp_priority` ask. DcbClient::set_dscp_app() sends it.
//
// Trust is not a DCB attribute of its own on an upstream kernel: a netdev trusts DSCP when its APP
// table has a DSCP entry and 802.1p (PCP) when it has none. That is how iproute2 `dcb app` and
// mlnx_qos read it (mlnx-tools python/mlnx_qos Trust.getTrust(): countAppSelector(DSCP) == 0 ->
// "pcp"), and how mlx5 switches it: the first DSCP entry sets the port to DSCP trust, removing
// the last one sets it back to PCP (drivers/net/ethernet/mellanox/mlx5/core/en/en_dcbnl.c
// mlx5e_dcbnl_ieee_setapp()/mlx5e_dcbnl_ieee_delapp(), dscp_app_cnt).
#pragma once

#include "actuators/dcb_message.hpp"

#include <map>
#include <optional>
#include <span>
#include <vector>

namespace rdmad::dcb {

/// The setting `trust`.
enum class Trust { dscp, pcp };

/// What the settings ask of a netdev's DSCP APP entries.
struct DscpAppGoal {
    /// `dscp_priority`: DSCP (0-63) -> 802.1p priority (0-7). Wider than the fields so that an
    /// out-of-range value from the configuration is refused, not truncated.
    std::map<int, int> dscp_priority;
    /// Remove the DSCP entries `dscp_priority` does not name. Without it they are left alone
    /// (another tool's, or a driver's). Has no effect without `dscp_priority`.
    bool exclusive = false;
    /// std::nullopt when the setting is absent. pcp: no DSCP entry at all. dscp: at least one;
    /// with no `dscp_priority` that is default_dscp_map() when the table has no DSCP entry yet,
    /// and nothing when it has one (mlnx_qos --trust dscp: Trust.setTrust() returns when the
    /// trust it reads is already dscp).
    std::optional<Trust> trust;
};

/// The requests that make a table what a DscpAppGoal asks, in the order they must be sent.
struct AppPlan {
    /// Sent first, in one IEEE_SET: the asked entries that are not in the table exactly.
    std::vector<AppEntry> add;
    /// Sent after the adds, in one IEEE_DEL: the DSCP entries not asked (exclusive, or trust
    /// pcp) first, then those an added entry replaces (same DSCP, another priority).
    ///
    /// Adding before deleting keeps the port in DSCP trust throughout a replacement (mlx5 would
    /// switch to PCP and back, and traffic would be classified by PCP meanwhile). The order of
    /// the deletes matters because the kernel stops a DEL at the first entry that fails
    /// (dcbnl_ieee_del(): goto err): mlx5's setapp has already removed the entry a new one
    /// replaces, so deleting it fails with ENOENT (mlx5e_dcbnl_ieee_delapp(): priority differs
    /// from dscp2prio[]); putting those last keeps that failure from skipping a delete that was
    /// still needed. With dcb_ieee_setapp() (drivers without ieee_setapp) the replaced entry is
    /// still there and its delete succeeds.
    std::vector<AppEntry> remove;
    bool empty() const { return add.empty() && remove.empty(); }
    bool operator==(const AppPlan&) const = default;
};

/// The DSCP map mlnx_qos --trust dscp installs on an upstream kernel (no MLNX_OFED qos/trust
/// sysfs file): all 64 DSCPs, DSCP d -> priority d >> 3 (mlnx-tools python/dcbnetlink.py
/// DcbAppTable.setDefaultAppEntry(ctrl, IEEE_8021QAZ_APP_SEL_DSCP, 64), commented "firmware
/// default"), so CS1 (8) -> 1, AF31 (26) -> 3, EF (46) -> 5, CS6 (48) -> 6. Sorted by DSCP.
std::vector<AppEntry> default_dscp_map();

/// The plan that makes the DSCP entries of `current` (the netdev's APP table; entries of other
/// selectors are ignored and never touched) what `goal` asks. Empty when nothing differs.
/// Refused (with why) when a DSCP is outside 0-63, a priority outside 0-7, or trust pcp comes
/// with a non-empty dscp_priority (a DSCP entry is DSCP trust). Entries come sorted by DSCP, then
/// priority, within each part described at AppPlan.
Parsed<AppPlan> plan_dscp_app(std::span<const AppEntry> current, const DscpAppGoal& goal);

} // namespace rdmad::dcb
