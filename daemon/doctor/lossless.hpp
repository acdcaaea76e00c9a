// SPDX-License-Identifier: MIT
//
// Lossless RoCE: whether a RoCE port's netdev has PFC (802.1Qbb) on a priority its RoCE traffic
// can be classified into, from the DCB facts the inventory keeps (PortState::pfc: the IEEE PFC
// state and the DSCP entries of the IEEE APP table, read with DCB IEEE_GET and kept current by
// RTNLGRP_DCB notifications; net/dcb/dcbnl.c dcbnl_ieee_fill()).
#pragma once

#include "doctor/facts.hpp"

#include <string>
#include <vector>

namespace rdmad::doctor {

/// The no-drop priorities as `dcb pfc show dev X prio-pfc` (iproute2 6.1) prints them: "prio-pfc
/// 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off" for priorities {3}.
std::string prio_pfc_text(const std::vector<uint8_t>& no_drop);

/// The DSCP map as `dcb -N app show dev X dscp-prio` (iproute2 6.1, numeric DSCPs) prints it:
/// "dscp-prio 26:3 46:5"; "none" when the APP table has no DSCP entry (dcb prints nothing).
std::string dscp_prio_text(const std::vector<std::pair<uint8_t, uint8_t>>& dscp_map);

/// The DSCP map for a sentence: runs of consecutive DSCPs on one priority joined, "0-7 -> 0,
/// 26 -> 3, 46 -> 5" (the mlx5 default DSCP trust map, DSCP / 8, is eight runs); "" when empty.
std::string dscp_map_summary(const std::vector<std::pair<uint8_t, uint8_t>>& dscp_map);

/// For a RoCE port (nothing for other transports):
/// - PFC not read (port.pfc.status not ok): "lossless-unknown" (info) with the reason.
/// - PFC read: "lossless-config" (info, always): the no-drop priorities, the trust mode and the
///   DSCP -> priority map, with the evidence; under PCP trust (no DSCP entry) its text says
///   that RoCE traffic is lossless only when it carries a VLAN tag whose PCP is a no-drop
///   priority (untagged frames get priority 0): rdmad cannot see the traffic's tags, so this is
///   information, not a warning.
/// - PFC off on every priority: "pfc-off" (warning) when the desired state asks nothing,
///   "pfc-off-desired" (error) when a rule or request asks no-drop priorities
///   (port.desired_pfc_no_drop).
/// - PFC on, DSCP trust, and no DSCP entry maps to a no-drop priority: "pfc-dscp-unmapped"
///   (warning): RoCE v2 traffic (classified by its DSCP) never reaches the lossless priority.
/// When the reply carried no APP table (trust ""), the trust mode is reported unknown and no
/// DSCP finding is made.
std::vector<Problem> check_lossless(const DeviceState& d, const PortState& port);

/// True for the codes check_lossless() reports.
bool is_lossless_code(const std::string& code);

/// Check every port of `d` again, in place, once the desired state (desired_pfc_no_drop) is
/// merged into its ports: the scanner diagnoses a device without it. Each port's findings
/// take the place of its old ones in `d.problems` (appended when it had none); "info" ones
/// are details_only, as inventory/problems.cpp device_problems() marks them.
void refresh_lossless(DeviceState& d);

} // namespace rdmad::doctor
