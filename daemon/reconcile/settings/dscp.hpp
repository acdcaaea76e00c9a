// SPDX-License-Identifier: MIT
//
// The DSCP setting's (dscp.cpp) conversions between its values and the APP table's.
#pragma once

#include "actuators/dcb_app.hpp"
#include "inventory/model.hpp"

#include <string>

namespace rdmad {

/// The highest DSCP: 6 bits (RFC 2474 §3).
inline constexpr uint8_t kMaxDscp = 63;

/// What `trust` ("dscp", "pcp", "" for not asked), `map` and `exclusive` ask, as the DSCP
/// APP-table actuator takes it (actuators/dcb_app.hpp plan_dscp_app(), which is the compare).
dcb::DscpAppGoal dscp_goal(const std::string& trust, const DscpMap& map, bool exclusive);

/// `map` as APP table entries (selector IEEE_8021QAZ_APP_SEL_DSCP, protocol the DSCP), and
/// back (entries of other selectors left out, sorted).
std::vector<dcb::AppEntry> app_entries(const DscpMap& map);
DscpMap dscp_map_of(const std::vector<dcb::AppEntry>& entries);

/// "26:3,48:6", "(none)" for an empty map: for Reconcile() and messages.
std::string dscp_map_text(const DscpMap& map);

} // namespace rdmad
