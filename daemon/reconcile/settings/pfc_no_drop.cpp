// SPDX-License-Identifier: MIT
//
// PFC no-drop priorities (`pfc_no_drop = [3]`, per device: every port's netdev).
// - Config: priorities 0-7 (802.1p priorities are 3 bits, DOMAIN.md §2), sorted, each once.
// - Actual: the netdev's IEEE PFC from DCB netlink (sources/pfc_reader.hpp: PortState::pfc).
// - Write: one IEEE_SET of pfc_en keeping pfc_cap/mbc/delay as read, verified by one IEEE_GET
//   (actuators/dcb_client.hpp); the read-back goes into the Inventory. Guarded against another
//   writer (reconcile/contest_guard.hpp). On mlx4 also the host-wide mlx4_en pfctx/pfcrx
//   module options (actuators/modprobe.hpp), effective when mlx4_en is reloaded.
// - Properties: Port.PFCNoDrop, Port.DesiredPFCNoDrop, Port.InSync.
#include "reconcile/settings/setting.hpp"

#include "actuators/dcb_client.hpp"
#include "actuators/modprobe.hpp"
#include "config/pfc.hpp"
#include "config/toml_read.hpp"
#include "inventory/driver_capabilities.hpp"
#include "inventory/property_rows.hpp"
#include "rdmad_api.hpp"
#include "reconcile/contest_guard.hpp"
#include "reconcile/settings/dcb_state.hpp"

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>

namespace rdmad {
namespace {

std::string join(const std::vector<uint8_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}

constexpr std::string_view kKeys[] = {"pfc_no_drop"};

const Property<PortState> kRows[] = {
    rows::member<&PortState::pfc_no_drop>("PFCNoDrop"),
    rows::member<&PortState::desired_pfc_no_drop>("DesiredPFCNoDrop"),
};

class PfcNoDropSetting final : public Setting {
  public:
    using Keys = OptionalRuleKeys<&Rule::pfc_no_drop>;

    std::span<const std::string_view> keys() const override { return kKeys; }

    bool parse(std::string_view, const ConfigValue& v, Rule& rule,
               ConfigProblems& problems) const override {
        const auto* array = read_list(v.node, "pfc_no_drop", "priorities 0-7", problems);
        if (!array)
            return false;
        std::vector<uint8_t> out;
        bool ok = true;
        for (const auto& element : *array) {
            const auto* i = element.as_integer();
            if (!i) {
                problems.add(element.source(),
                             "pfc_no_drop entries must be integers 0-7, not " + type_name(element));
                ok = false;
                continue;
            }
            const int64_t p = i->get();
            if (p < 0 || p > api::kMaxPriority) { // 802.1p priorities are 3 bits (DOMAIN.md §2)
                problems.add(element.source(), "priority " + std::to_string(p) + " is outside 0-7");
                ok = false;
                continue;
            }
            if (std::find(out.begin(), out.end(), p) != out.end()) {
                problems.add(element.source(),
                             "priority " + std::to_string(p) + " is listed twice in pfc_no_drop");
                ok = false;
                continue;
            }
            out.push_back(static_cast<uint8_t>(p));
        }
        if (!ok)
            return false;
        std::sort(out.begin(), out.end());
        rule.pfc_no_drop = std::move(out);
        return true;
    }

    void format(const Rule& r, ConfigTableOut& out) const override {
        if (!r.pfc_no_drop)
            return;
        toml::array a;
        for (const uint8_t prio : *r.pfc_no_drop)
            a.push_back(static_cast<int64_t>(prio));
        out.table.insert("pfc_no_drop", std::move(a));
    }
    bool sets(const Rule& r) const override { return Keys::sets(r); }
    void merge(const Rule& from, Rule& into) const override { Keys::merge(from, into); }
    void clear_set_by(const Rule& newer, Rule& rule) const override {
        Keys::clear_set_by(newer, rule);
    }
    void resolve(const Rule& r, const std::string& origin, DeviceDesired& want) const override {
        if (!r.pfc_no_drop)
            return;
        want.pfc_no_drop = *r.pfc_no_drop;
        want.origin["pfc_no_drop"] = origin;
    }
    bool asks(const DeviceDesired& want) const override { return !want.pfc_no_drop.empty(); }

    void plan(SettingPlanContext& ctx) const override;
    void plan_host(const HostState& actual, const std::map<std::string, DeviceDesired>& desired,
                   const Mlx4ModuleState& mlx4, Plan& plan) const override;

    std::span<const Property<PortState>> port_rows() const override { return kRows; }

    bool owns(const Action& a) const override {
        return a.kind == Action::Kind::pfc || a.kind == Action::Kind::mlx4_modprobe ||
               a.kind == Action::Kind::mlx4_modprobe_remove;
    }
    void execute(const Action& a, SettingExecContext& ctx, Outcome& o) const override;
    std::string failure_code(const Outcome& o) const override {
        if (o.action.kind == Action::Kind::pfc && o.error == EBUSY)
            return "pfc-contested";
        return o.error == EOPNOTSUPP ? "not-supported" : "apply-failed";
    }
};

void PfcNoDropSetting::plan(SettingPlanContext& ctx) const {
    const DeviceState& dev = ctx.device;
    const DeviceDesired& want = ctx.want;
    if (!pfc_mask(want.pfc_no_drop))
        return; // the config layer refuses these; nothing to do here
    const uint8_t mask = *pfc_mask(want.pfc_no_drop);
    for (const auto& port : dev.ports) {
        PortPlan& pp = ctx.ports[port.number];
        pp.desired_pfc = want.pfc_no_drop;
        auto now = usable_dcb_state(ctx, port, {"pfc", "PFC", "PFC no-drop priorities"});
        if (!now)
            continue;
        pp.pfc_now = now->priorities;
        if (now->priorities == want.pfc_no_drop)
            continue;
        pp.in_sync = false;
        if (now->lldpad || now->willing) {
            ctx.problems.push_back(
                {"pfc-owned-elsewhere", "warning",
                 fmt::format("{}: PFC is {} but {} is asked; {} owns DCB here, so rdmad does not "
                             "fight it",
                             port.netdev, join(now->priorities), join(want.pfc_no_drop),
                             now->lldpad ? "lldpad" : "firmware DCBX in willing mode")});
            ctx.problems.back().port = port.number;
            continue;
        }
        if (take_netdev(ctx, port.netdev, "pfc"))
            ctx.actions.push_back({Action::Kind::pfc, dev.name, ctx.syspath, port.number, "",
                                   port.netdev, "", mask, "PFCNoDrop", join(now->priorities),
                                   join(want.pfc_no_drop)});
    }
}

void PfcNoDropSetting::plan_host(const HostState& actual,
                                 const std::map<std::string, DeviceDesired>& desired,
                                 const Mlx4ModuleState& mlx4, Plan& plan) const {
    // mlx4 PFC is also a module option (mlx4_en pfctx/pfcrx), applied at module load, one
    // value for every mlx4 card of the host: the last device (by syspath) decides, and the
    // others that ask a different mask are told.
    std::map<std::string, uint8_t> masks; // by syspath
    for (const auto& [syspath, want] : desired) {
        const auto dev = actual.devices.find(syspath);
        if (dev == actual.devices.end() || want.pfc_no_drop.empty() ||
            !driver_capabilities(dev->second.kernel_driver).host_wide_pfc_option)
            continue;
        if (const auto mask = pfc_mask(want.pfc_no_drop))
            masks[syspath] = *mask;
    }
    std::optional<uint8_t> mlx4_mask;
    if (!masks.empty())
        mlx4_mask = masks.rbegin()->second;
    for (const auto& [syspath, mask] : masks)
        if (mask != *mlx4_mask)
            plan.problems[syspath].push_back(
                {"pfc-module-conflict", "warning",
                 fmt::format("mlx4_en takes one pfctx/pfcrx for the whole host: {:#04x} for "
                             "another mlx4 device wins over {:#04x} asked here",
                             *mlx4_mask, mask)});
    // rdmad's file with nothing asking for it any more (a request without persist, a rule
    // removed): remove it, but only where mlx4 is present, since a card or driver that is not
    // there yet (rdmad started first) will read it when it loads, and not while a rule might
    // still ask it (Mlx4ModuleState::keep_file).
    const bool mlx4_present =
        std::any_of(actual.devices.begin(), actual.devices.end(), [](const auto& d) {
            return driver_capabilities(d.second.kernel_driver).host_wide_pfc_option;
        });
    if (!mlx4_mask && mlx4_present && mlx4.file_pfctx && !mlx4.keep_file)
        plan.actions.push_back({Action::Kind::mlx4_modprobe_remove, "", "", 0, "", "", "", 0,
                                "mlx4_en pfctx/pfcrx", fmt::format("{:#04x}", *mlx4.file_pfctx),
                                "(removed)"});
    if (!mlx4_mask)
        return;
    if (mlx4.file_pfctx != mlx4_mask)
        plan.actions.push_back({Action::Kind::mlx4_modprobe, "", "", 0, "", "", "", *mlx4_mask,
                                "mlx4_en pfctx/pfcrx",
                                mlx4.file_pfctx ? fmt::format("{:#04x}", *mlx4.file_pfctx) : "",
                                fmt::format("{:#04x}", *mlx4_mask)});
    if (mlx4.loaded_pfctx && mlx4.loaded_pfctx != mlx4_mask)
        for (const auto& [syspath, dev] : actual.devices)
            if (driver_capabilities(dev.kernel_driver).host_wide_pfc_option &&
                desired.count(syspath))
                plan.problems[syspath].push_back(
                    {"pending-reload", "warning",
                     fmt::format("mlx4_en runs with pfctx {:#04x}; {:#04x} takes effect when "
                                 "mlx4_en is reloaded",
                                 *mlx4.loaded_pfctx, *mlx4_mask)});
}

void PfcNoDropSetting::execute(const Action& a, SettingExecContext& ctx, Outcome& o) const {
    try {
        if (a.kind == Action::Kind::mlx4_modprobe) {
            write_mlx4_modprobe(ctx.modprobe_dir, a.mask);
            o.ok = true;
            return;
        }
        if (a.kind == Action::Kind::mlx4_modprobe_remove) {
            remove_mlx4_modprobe(ctx.modprobe_dir);
            o.ok = true;
            return;
        }
    } catch (const std::system_error& e) {
        o.error = e.code().value();
        o.message = e.what();
        return;
    }
    if (!guarded_dcb_write(ctx, a, o))
        return;
    // The state the plan read keeps pfc_cap, mbc and delay for the SET: one SET, one
    // read-back.
    std::optional<dcb::PfcState> known;
    if (auto it = ctx.plan->pfc.find(a.netdev);
        it != ctx.plan->pfc.end() && it->second.status == PfcActual::Status::ok) {
        known = dcb::PfcState{};
        known->pfc_cap = it->second.pfc_cap;
        known->pfc_en = pfc_mask(it->second.priorities).value_or(0);
        known->mbc = it->second.mbc;
        known->delay = it->second.delay;
    }
    take_dcb_result(ctx, a, dcb_client(ctx).set_pfc(a.netdev, a.mask, known), o);
}

} // namespace

const Setting& pfc_no_drop_setting() {
    static const PfcNoDropSetting setting;
    return setting;
}

} // namespace rdmad
