// SPDX-License-Identifier: MIT
//
// Profiles: one key that stands for several settings' values. `profile = "lossless-roce"` is
// the lossless RoCE chain as NVIDIA's RoCE guides and their scripts set it up by hand
// (`mlnx_qos -i X --trust dscp --pfc 0,0,0,1,0,0,0,0`, `cma_roce_tos -d mlx5_0 -t 106`,
// `cma_roce_mode -d mlx5_0 -p 1 -m 2`):
//   pfc_no_drop       = [3]                 no-drop priority 3 for RoCE
//   trust             = "dscp"              classify by DSCP, not by the VLAN tag's PCP
//   dscp_priority     = { 26 = 3, 48 = 6 }  RoCE data (DSCP 26) on priority 3; CNPs (DSCP 48,
//                                           mlx5's default ecn/roce_np/cnp_dscp, sent with
//                                           cnp_802p_prio 6) on priority 6
//   rdma_cm_roce_mode = "RoCE v2"           routable RoCE, the one DSCP marking applies to
//   rdma_cm_tos       = 106                 DSCP 26 << 2 | ECT(0) (RFC 3168 §5): marked for
//                                           priority 3 and ECN-capable, for DCQCN
// A rule's own keys override the profile's values (profiles resolve first, registry.cpp), and
// DeviceDesired::origin says which value came from the profile.
#include "reconcile/settings/setting.hpp"

#include "config/toml_read.hpp"

#include <fmt/format.h>

namespace rdmad {
namespace {

constexpr std::string_view kKeys[] = {"profile"};

/// The profiles rdmad knows, as the rule they stand for.
Rule lossless_roce() {
    Rule r;
    r.pfc_no_drop = std::vector<uint8_t>{3};
    r.trust = "dscp";
    r.dscp_priority = DscpMap{{26, 3}, {48, 6}};
    r.rdma_cm_roce_mode = "RoCE v2";
    r.rdma_cm_tos = 106;
    return r;
}

class ProfileSetting final : public Setting {
  public:
    using Keys = OptionalRuleKeys<&Rule::profile>;

    std::span<const std::string_view> keys() const override { return kKeys; }

    bool parse(std::string_view key, const ConfigValue& v, Rule& rule,
               ConfigProblems& problems) const override {
        const auto name = read_string(v.node, key, problems);
        if (name && *name != "lossless-roce")
            problems.add(v.node.source(),
                         "unknown profile " + quoted(*name) + " (expected \"lossless-roce\")");
        if (!name || *name != "lossless-roce")
            return false;
        rule.profile = *name;
        return true;
    }
    void format(const Rule& r, ConfigTableOut& out) const override {
        if (r.profile)
            out.table.insert("profile", *r.profile);
    }
    bool sets(const Rule& r) const override { return Keys::sets(r); }
    void merge(const Rule& from, Rule& into) const override { Keys::merge(from, into); }
    void clear_set_by(const Rule& newer, Rule& rule) const override {
        Keys::clear_set_by(newer, rule);
    }
    void resolve(const Rule& r, const std::string& origin, DeviceDesired& want) const override {
        if (!r.profile)
            return;
        const Rule values = lossless_roce();
        const std::string from = fmt::format("profile {} ({})", *r.profile, origin);
        for (const Setting* setting : all_settings())
            if (setting != this && setting->sets(values))
                setting->resolve(values, from, want);
    }
    bool asks(const DeviceDesired&) const override { return false; }
    void plan(SettingPlanContext&) const override {}
    bool owns(const Action&) const override { return false; }
    void execute(const Action&, SettingExecContext&, Outcome&) const override {}
};

} // namespace

const Setting& profile_setting() {
    static const ProfileSetting setting;
    return setting;
}

} // namespace rdmad
