// SPDX-License-Identifier: MIT
//
// DSCP trust and the DSCP -> priority map of a port's netdev: the DSCP entries (selector
// IEEE_8021QAZ_APP_SEL_DSCP) of its DCB IEEE APP table.
// - Config: `trust = "dscp" | "pcp"`, `dscp_priority = { 26 = 3, 48 = 6 }` (DSCP 0-63 ->
//   priority 0-7), `exclusive = true` (dscp_priority: remove the DSCP entries not listed;
//   without it entries rdmad did not ask for are left alone).
// - Actual: the APP table from DCB netlink (sources/pfc_reader.hpp: PfcActual::trust and
//   dscp_map, also from RTNLGRP_DCB notifications, so another tool's change is seen).
//   On an upstream kernel the trust state *is* the APP table: a netdev trusts DSCP while it has
//   a DSCP entry (drivers/net/ethernet/mellanox/mlx5/core/en/en_dcbnl.c
//   mlx5e_dcbnl_ieee_setapp() switches to DSCP trust with the first entry, delapp() back to PCP
//   with the last; iproute2 `dcb app` and mlnx_qos set trust this way).
// - Write: the missing entries added, then the replaced or unwanted ones deleted, so the port
//   never passes through "no DSCP entry" (PCP trust) on the way; one IEEE_GET read-back that
//   the Inventory takes (actuators/dcb_client.hpp set_dscp_app()). Guarded against another
//   writer like PFC (reconcile/contest_guard.hpp).
// - Properties: Port.Trust, Port.DesiredTrust, Port.DSCPPriority, Port.DesiredDSCPPriority,
//   Port.InSync.
#include "reconcile/settings/dscp.hpp"

#include "actuators/dcb_app.hpp"
#include "config/toml_read.hpp"
#include "inventory/property_rows.hpp"
#include "reconcile/settings/dcb_state.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fmt/format.h>

namespace rdmad {

dcb::DscpAppGoal dscp_goal(const std::string& trust, const DscpMap& map, bool exclusive) {
    dcb::DscpAppGoal goal;
    for (const auto& [dscp, prio] : map)
        goal.dscp_priority[dscp] = prio;
    goal.exclusive = exclusive;
    if (trust == "dscp")
        goal.trust = dcb::Trust::dscp;
    else if (trust == "pcp")
        goal.trust = dcb::Trust::pcp;
    return goal;
}

std::vector<dcb::AppEntry> app_entries(const DscpMap& map) {
    std::vector<dcb::AppEntry> out;
    for (const auto& [dscp, prio] : map)
        out.push_back({dcb::app_sel_dscp, prio, dscp});
    return out;
}

DscpMap dscp_map_of(const std::vector<dcb::AppEntry>& entries) {
    DscpMap out;
    for (const auto& e : entries)
        if (e.selector == dcb::app_sel_dscp)
            out.emplace_back(static_cast<uint8_t>(e.protocol), e.priority);
    std::sort(out.begin(), out.end());
    return out;
}

std::string dscp_map_text(const DscpMap& map) {
    std::string s;
    for (const auto& [dscp, prio] : map)
        s += fmt::format("{}{}:{}", s.empty() ? "" : ",", dscp, prio);
    return s.empty() ? "(none)" : s;
}

namespace {

constexpr std::string_view kKeys[] = {"trust", "dscp_priority", "exclusive"};

/// The APP table as DCB read it, empty unless the read succeeded.
const PfcActual& read_ok(const PortState& p) {
    static const PfcActual none;
    return p.pfc.status == PfcActual::Status::ok ? p.pfc : none;
}

const Property<PortState> kRows[] = {
    // "dscp" or "pcp" as the APP table shows it now, "" when DCB cannot be read.
    {"Trust", "s",
     [](const PortState& a, const PortState& b) { return read_ok(a).trust == read_ok(b).trust; },
     [](ValueWriter& w, const PortState& p, const PropertyContext&) {
         rows::put(w, read_ok(p).trust);
     }},
    rows::member<&PortState::desired_trust>("DesiredTrust"),
    {"DSCPPriority", "a(yy)",
     [](const PortState& a, const PortState& b) {
         return read_ok(a).dscp_map == read_ok(b).dscp_map;
     },
     [](ValueWriter& w, const PortState& p, const PropertyContext&) {
         rows::put(w, read_ok(p).dscp_map);
     }},
    rows::member<&PortState::desired_dscp_priority>("DesiredDSCPPriority"),
};

std::optional<DscpMap> read_dscp_map(const toml::node& value, ConfigProblems& problems) {
    const auto* table = value.as_table();
    if (!table) {
        problems.add(value.source(), "dscp_priority must be a table of DSCP = priority "
                                     "(e.g. { 26 = 3, 48 = 6 }), not " +
                                         type_name(value));
        return std::nullopt;
    }
    if (table->empty()) {
        problems.add(value.source(), "dscp_priority must not be empty");
        return std::nullopt;
    }
    DscpMap map;
    bool ok = true;
    for (auto&& [key, prio] : *table) {
        const std::string_view k = key.str();
        unsigned dscp = 0;
        const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), dscp);
        if (ec != std::errc() || end != k.data() + k.size() || dscp > kMaxDscp || k.empty()) {
            problems.add(key.source(), "DSCP " + quoted(k) + " is not a number from 0 to 63");
            ok = false;
            continue;
        }
        const auto p =
            read_integer(prio, fmt::format("the priority of DSCP {}", dscp), 0, 7, problems);
        if (!p) {
            ok = false;
            continue;
        }
        map.emplace_back(static_cast<uint8_t>(dscp), static_cast<uint8_t>(*p));
    }
    if (!ok)
        return std::nullopt;
    std::sort(map.begin(), map.end());
    // "026" and "26" are two TOML keys and one DSCP.
    for (size_t i = 1; i < map.size(); ++i)
        if (map[i].first == map[i - 1].first) {
            problems.add(value.source(),
                         fmt::format("DSCP {} is listed twice in dscp_priority", map[i].first));
            return std::nullopt;
        }
    return map;
}

/// Forget in `rule` what `newer` contradicts: trust "pcp" and a DSCP map cannot both hold.
void drop_contradicted(const Rule& newer, Rule& rule) {
    if (newer.trust == "pcp") {
        rule.dscp_priority.reset();
        rule.exclusive.reset();
    }
    if (newer.dscp_priority && rule.trust == "pcp")
        rule.trust.reset();
}

class DscpSetting final : public Setting {
  public:
    using Keys = OptionalRuleKeys<&Rule::trust, &Rule::dscp_priority, &Rule::exclusive>;

    std::span<const std::string_view> keys() const override { return kKeys; }

    bool parse(std::string_view key, const ConfigValue& v, Rule& rule,
               ConfigProblems& problems) const override {
        if (key == "trust") {
            const auto s = read_string(v.node, key, problems);
            if (s && *s != "dscp" && *s != "pcp")
                problems.add(v.node.source(),
                             "unknown trust " + quoted(*s) + " (expected \"dscp\" or \"pcp\")");
            if (!s || (*s != "dscp" && *s != "pcp"))
                return false;
            rule.trust = *s;
            return true;
        }
        if (key == "exclusive") {
            rule.exclusive = read_bool(v.node, key, problems);
            return rule.exclusive.has_value();
        }
        rule.dscp_priority = read_dscp_map(v.node, problems);
        return rule.dscp_priority.has_value();
    }

    bool check(const Rule& rule, const ConfigValue& table,
               ConfigProblems& problems) const override {
        if (rule.trust == "pcp" && rule.dscp_priority) {
            const auto* t = table.node.as_table();
            const toml::node* at = t ? t->get("trust") : nullptr;
            problems.add(at ? at->source() : table.node.source(),
                         "trust = \"pcp\" removes every DSCP entry, so it cannot go with "
                         "dscp_priority in one rule");
            return false;
        }
        return true;
    }

    void format(const Rule& r, ConfigTableOut& out) const override {
        if (r.trust)
            out.table.insert("trust", *r.trust);
        if (r.dscp_priority) {
            toml::table map;
            for (const auto& [dscp, prio] : *r.dscp_priority)
                map.insert(std::to_string(dscp), static_cast<int64_t>(prio));
            map.is_inline(true);
            out.table.insert("dscp_priority", std::move(map));
        }
        if (r.exclusive)
            out.table.insert("exclusive", *r.exclusive);
    }
    bool sets(const Rule& r) const override { return Keys::sets(r); }
    // A later request replaces what contradicts it, as check() refuses in one rule: trust
    // "pcp" drops an earlier map (and its exclusive), a map drops an earlier trust "pcp". Else
    // SetTrust("pcp") then SetDSCPPriority() made one rule that is a dscp-conflict, and, kept
    // in state.conf, a file rdmad refuses at the next start.
    void merge(const Rule& from, Rule& into) const override {
        drop_contradicted(from, into);
        Keys::merge(from, into);
    }
    void clear_set_by(const Rule& newer, Rule& rule) const override {
        drop_contradicted(newer, rule);
        Keys::clear_set_by(newer, rule);
    }
    /// A later rule (or layer: /etc, then state.conf, then D-Bus) wins over an earlier one
    /// as a whole: trust "pcp" drops a DSCP map (and its exclusive) that came from before, as
    /// from a profile, and a map drops an earlier "pcp" (a map is DSCP trust). check() refuses
    /// both in one rule, so no rule's own keys are ever dropped.
    void resolve(const Rule& r, const std::string& origin, DeviceDesired& want) const override {
        if (r.trust) {
            want.trust = *r.trust;
            want.origin["trust"] = origin;
            if (*r.trust == "pcp" && !r.dscp_priority) {
                want.dscp_priority.clear();
                want.exclusive = false;
                want.origin.erase("dscp_priority");
                want.origin.erase("exclusive");
            }
        }
        if (r.dscp_priority) {
            want.dscp_priority = *r.dscp_priority;
            want.origin["dscp_priority"] = origin;
            if (!r.trust && want.trust == "pcp") {
                want.trust.clear();
                want.origin.erase("trust");
            }
        }
        if (r.exclusive) {
            want.exclusive = *r.exclusive;
            want.origin["exclusive"] = origin;
        }
    }
    bool asks(const DeviceDesired& want) const override {
        return !want.trust.empty() || !want.dscp_priority.empty();
    }

    void plan(SettingPlanContext& ctx) const override;

    std::span<const Property<PortState>> port_rows() const override { return kRows; }

    bool owns(const Action& a) const override { return a.kind == Action::Kind::dscp_app; }

    void execute(const Action& a, SettingExecContext& ctx, Outcome& o) const override {
        if (!guarded_dcb_write(ctx, a, o))
            return;
        // The table the plan compared with: one IEEE_SET, one IEEE_DEL, one read-back.
        std::optional<std::vector<dcb::AppEntry>> known;
        if (auto it = ctx.plan->pfc.find(a.netdev);
            it != ctx.plan->pfc.end() && it->second.status == PfcActual::Status::ok)
            known = app_entries(it->second.dscp_map);
        dcb::DcbResult r = dcb_client(ctx).set_dscp_app(
            a.netdev, dscp_goal(a.value, a.dscp_map, a.exclusive), known);
        const bool read_back = r.app.has_value(); // nothing sent: nothing read back
        take_dcb_result(ctx, a, std::move(r), o);
        if (!read_back)
            o.read_back.reset();
    }
    std::string failure_code(const Outcome& o) const override {
        if (o.error == EBUSY)
            return "pfc-contested";
        return o.error == EOPNOTSUPP ? "not-supported" : "apply-failed";
    }
};

void DscpSetting::plan(SettingPlanContext& ctx) const {
    const DeviceDesired& want = ctx.want;
    if (want.trust == "pcp" && !want.dscp_priority.empty()) {
        ctx.problems.push_back(
            {"dscp-conflict", "error",
             fmt::format("trust \"pcp\" ({}) removes every DSCP entry but dscp_priority ({}) "
                         "asks some: DSCP settings left as they are",
                         want.origin.count("trust") ? want.origin.at("trust") : "",
                         want.origin.count("dscp_priority") ? want.origin.at("dscp_priority")
                                                            : "")});
        // The ports still show what is asked (org.rdmad1(5): DesiredTrust, DesiredDSCPPriority),
        // and that they cannot be in sync with it.
        for (const auto& port : ctx.device.ports) {
            PortPlan& pp = ctx.ports[port.number];
            pp.desired_trust = want.trust;
            pp.desired_dscp_priority = want.dscp_priority;
            pp.in_sync = false;
        }
        return;
    }
    const DcbSettingNames names{"dscp", "DSCP trust", "DSCP trust and the DSCP map"};
    for (const auto& port : ctx.device.ports) {
        PortPlan& pp = ctx.ports[port.number];
        pp.desired_trust = want.trust;
        pp.desired_dscp_priority = want.dscp_priority;
        const auto now = usable_dcb_state(ctx, port, names);
        if (!now)
            continue;
        const auto changes = dcb::plan_dscp_app(
            app_entries(now->dscp_map), dscp_goal(want.trust, want.dscp_priority, want.exclusive));
        if (!changes.ok()) { // the config layer refuses these; a conflict across rules is above
            pp.in_sync = false;
            continue;
        }
        if (changes.value->empty())
            continue;
        pp.in_sync = false;
        if (now->lldpad || now->willing) {
            ctx.problems.push_back(
                {"dscp-owned-elsewhere", "warning",
                 fmt::format("{}: the DSCP map is {} but {} is asked; {} owns DCB here, so rdmad "
                             "does not fight it",
                             port.netdev, dscp_map_text(now->dscp_map),
                             want.trust == "pcp" ? "PCP trust" : dscp_map_text(want.dscp_priority),
                             now->lldpad ? "lldpad" : "firmware DCBX in willing mode")});
            ctx.problems.back().port = port.number;
            continue;
        }
        if (!take_netdev(ctx, port.netdev, "dscp"))
            continue;
        Action a{Action::Kind::dscp_app,
                 ctx.device.name,
                 ctx.syspath,
                 port.number,
                 "",
                 port.netdev,
                 "",
                 0,
                 want.dscp_priority.empty() ? "Trust" : "DSCPPriority",
                 "",
                 ""};
        if (want.dscp_priority.empty()) {
            a.from = now->trust;
            a.to = want.trust;
        } else {
            a.from = dscp_map_text(now->dscp_map);
            a.to = dscp_map_text(want.dscp_priority);
        }
        a.dscp_add = dscp_map_of(changes.value->add);
        a.dscp_remove = dscp_map_of(changes.value->remove);
        a.value = want.trust;
        a.dscp_map = want.dscp_priority;
        a.exclusive = want.exclusive;
        ctx.actions.push_back(std::move(a));
    }
}

} // namespace

const Setting& dscp_setting() {
    static const DscpSetting setting;
    return setting;
}

} // namespace rdmad
