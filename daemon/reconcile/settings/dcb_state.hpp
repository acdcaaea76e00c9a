// SPDX-License-Identifier: MIT
//
// What the DCB settings (pfc_no_drop.cpp, dscp.cpp) share: whether a port's netdev has a DCB
// state that can be compared and written, one write per netdev and plan, and the guarded
// write with its read-back.
#pragma once

#include "reconcile/settings/setting.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace rdmad {

/// How a DCB setting names itself in the problems usable_dcb_state() reports.
struct DcbSettingNames {
    std::string_view code_prefix; ///< "pfc": "pfc-no-netdev", "pfc-unreadable"
    std::string_view short_name;  ///< "PFC": "port 1 has no netdev: PFC cannot be set"
    std::string_view long_name;   ///< "PFC no-drop priorities": "... cannot be set on it"
};

/// The DCB state of `port`'s netdev (ctx.pfc) when it can be compared and set; otherwise the
/// port is out of sync and a problem says why (no netdev, no DCB, unreadable) and nullopt.
/// "no-dcb" is reported once per port whatever the settings that ask.
std::optional<PfcActual> usable_dcb_state(SettingPlanContext& ctx, const PortState& port,
                                          const DcbSettingNames& names);

/// True the first time an action of `kind` ("pfc", "dscp") takes `netdev` in this plan.
bool take_netdev(SettingPlanContext& ctx, const std::string& netdev, std::string_view kind);

/// Before a DCB write of `a`: false (and `o` says why) without a netlink socket or when the
/// netdev is contested (ContestGuard).
bool guarded_dcb_write(SettingExecContext& ctx, const Action& a, Outcome& o);

/// The client (guarded_dcb_write() returned true, so there is one).
dcb::DcbClient& dcb_client(SettingExecContext& ctx);

/// `r`, the result of a DCB write of `a`, into `o`: its read-back (the Inventory takes it) when
/// the driver answered, and the guard told of a success.
void take_dcb_result(SettingExecContext& ctx, const Action& a, dcb::DcbResult r, Outcome& o);

} // namespace rdmad
