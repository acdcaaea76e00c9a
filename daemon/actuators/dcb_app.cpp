// SPDX-License-Identifier: MIT
//
// DSCP APP entry planning (actuators/dcb_app.hpp). Facts: <linux/dcbnl.h> (struct dcb_app,
// IEEE_8021QAZ_APP_SEL_DSCP, IEEE_8021QAZ_MAX_TCS), net/dcb/dcbnl.c, mlx5 en_dcbnl.c,
// mlnx-tools python/mlnx_qos and python/dcbnetlink.py, iproute2 dcb/dcb_app.c.
#include "actuators/dcb_app.hpp"

#include <algorithm>
#include <string>
#include <tuple>

#include <linux/dcbnl.h>

namespace rdmad::dcb {

namespace {

/// RFC 2474: a DSCP is 6 bits.
constexpr int max_dscp = 63;

/// DSCP entries in DSCP order, then priority (all have the same selector).
bool by_dscp(const AppEntry& a, const AppEntry& b) {
    return std::tie(a.protocol, a.priority) < std::tie(b.protocol, b.priority);
}

} // namespace

std::vector<AppEntry> default_dscp_map() {
    std::vector<AppEntry> out;
    for (int d = 0; d <= max_dscp; ++d)
        out.push_back(
            AppEntry{app_sel_dscp, static_cast<uint8_t>(d >> 3), static_cast<uint16_t>(d)});
    return out;
}

Parsed<AppPlan> plan_dscp_app(std::span<const AppEntry> current, const DscpAppGoal& goal) {
    using R = Parsed<AppPlan>;
    for (const auto& [dscp, prio] : goal.dscp_priority) {
        if (dscp < 0 || dscp > max_dscp)
            return R::fail("DSCP " + std::to_string(dscp) + " is outside 0-63");
        // IEEE 802.1Q priorities 0-7 (IEEE_8021QAZ_MAX_TCS); iproute2 dcb_app.c refuses others.
        if (prio < 0 || prio >= IEEE_8021QAZ_MAX_TCS)
            return R::fail("priority " + std::to_string(prio) + " for DSCP " +
                           std::to_string(dscp) + " is outside 0-7");
    }
    if (goal.trust == Trust::pcp && !goal.dscp_priority.empty())
        return R::fail("trust \"pcp\" with a dscp_priority map: any DSCP entry makes the port "
                       "trust DSCP");

    // The table's DSCP entries, sorted by DSCP then priority, each once.
    std::vector<AppEntry> have;
    for (const AppEntry& e : current)
        if (e.selector == app_sel_dscp)
            have.push_back(AppEntry{app_sel_dscp, e.priority, e.protocol});
    std::sort(have.begin(), have.end(), by_dscp);
    have.erase(std::unique(have.begin(), have.end()), have.end());

    AppPlan plan;
    if (goal.trust == Trust::pcp) {
        plan.remove = have;
        return R{std::move(plan), {}};
    }

    // DSCP -> the one priority asked for it.
    std::map<uint16_t, uint8_t> want;
    for (const auto& [dscp, prio] : goal.dscp_priority)
        want[static_cast<uint16_t>(dscp)] = static_cast<uint8_t>(prio);
    if (want.empty() && goal.trust == Trust::dscp) {
        if (!have.empty())
            return R{std::move(plan), {}}; // DSCP trust already; its map is someone else's
        for (const AppEntry& e : default_dscp_map())
            want[e.protocol] = e.priority;
    }

    for (const auto& [dscp, prio] : want) {
        const AppEntry e{app_sel_dscp, prio, dscp};
        if (!std::binary_search(have.begin(), have.end(), e, by_dscp))
            plan.add.push_back(e);
    }
    std::vector<AppEntry> replaced;
    for (const AppEntry& e : have) {
        auto it = want.find(e.protocol);
        if (it == want.end()) {
            if (goal.exclusive && !goal.dscp_priority.empty())
                plan.remove.push_back(e); // not asked
        } else if (it->second != e.priority) {
            replaced.push_back(e);
        }
    }
    // AppPlan::remove: what the adds cannot have touched first, the replaced entries last.
    plan.remove.insert(plan.remove.end(), replaced.begin(), replaced.end());
    return R{std::move(plan), {}};
}

} // namespace rdmad::dcb
