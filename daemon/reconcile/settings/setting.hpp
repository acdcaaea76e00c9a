// SPDX-License-Identifier: MIT
//
// The settings contract (issue #25): a setting of the desired state is one file under
// reconcile/settings/ implementing this interface, and nothing else in reconcile/ knows it by
// name. A setting owns
//   - its `[[rule]]` keys: parse and validate them (file:line:column errors through
//     ConfigProblems), write them back into rdmad's state.conf, and resolve them (a later rule
//     wins key by key);
//   - the compare: desired (DeviceDesired) against actual (the Inventory's DeviceState, filled
//     by a source in sources/; a setting never reads the system), giving each port its desired
//     value and whether it is in sync, the problems found, and the actions that would fix it;
//   - the write: execute() runs one of its actions through an actuator, which verifies it by one
//     read-back; the read-back goes back into the Inventory (Outcome::read_back, or a re-read
//     of the device the action names);
//   - its property rows: the PortState/PortDesired members it fills are rows of the Port
//     property table (inventory/properties.cpp), which drive D-Bus, Describe(), rdmad.prom and
//     the dispatcher; a setting of a whole device (a PF's VF count) fills DeviceState members,
//     rows of the Device table (device_rows()), and puts its desired value there (show()).
// The registry (registry.cpp) lists them in resolution order.
#pragma once

#include "actuators/dcb_client.hpp"
#include "config/desired.hpp"
#include "inventory/properties.hpp"
#include "reconcile/plan.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

// config/toml_read.hpp: a TOML value of a rule, where it stands in its file, and a table being
// written; kept opaque here so that only the files that parse include toml++.
class ConfigProblems;
struct ConfigValue;
struct ConfigTableOut;
class ContestGuard;
struct KmodLibrary;

/// What a setting's plan() sees of one device and where it writes its findings.
struct SettingPlanContext {
    const HostState& host;
    const std::string& syspath;
    const DeviceState& device;
    const DeviceDesired& want;
    /// DCB state as the Inventory holds it, by netdev (sources/pfc_reader.hpp)
    const std::map<std::string, PfcActual>& pfc;
    std::map<uint32_t, PortPlan>& ports; ///< this device's ports, by number
    std::vector<Problem>& problems;      ///< this device's
    std::vector<Action>& actions;        ///< the whole plan's, in the order to run them
    /// "kind|netdev" of the DCB writes this plan already has (a netdev that two RDMA devices
    /// share is written once).
    std::set<std::string>& netdevs_taken;
};

/// What a setting's execute() may use: the actuators and the guard against another writer.
struct SettingExecContext {
    dcb::DcbClient* dcb = nullptr; ///< null: no netlink socket
    std::string modprobe_dir;      ///< /etc/modprobe.d
    std::string configfs_dir;      ///< /sys/kernel/config
    std::string modules_load_dir;  ///< /etc/modules-load.d
    const KmodLibrary* kmod = nullptr; ///< null: no module can be loaded
    std::string mstconfig;         ///< the mstconfig to run (`[daemon] mstconfig`)
    /// Start a firmware port type write (Action::Kind::firmware_port_type) and its one
    /// read-back off the loop (reconcile/mstconfig_jobs.hpp); its outcome comes later, through
    /// Reconciler::finish(). Unset: the set runs here, without a read-back.
    std::function<void(const Action&)> write_firmware;
    ContestGuard* guard = nullptr;
    const Plan* plan = nullptr; ///< the plan the action comes from
    /// Devices (syspaths) an earlier action of this run failed on: the next write of a card
    /// could otherwise make a pair the card refuses.
    std::set<std::string> failed_devices;
    /// Netdevs (ifindex) whose rtnetlink request of this run got no answer in its time limit
    /// (vf_guids): rtnetlink answers within the sender's sendmsg(), so the next would not get
    /// one either, and each would hold the loop as long.
    std::set<int32_t> unanswered_ifindexes;
};

/// The outcome of running one action.
struct Outcome {
    Action action;
    bool ok = false;
    int error = 0;
    std::string message;
    /// The DCB state read back after a DCB write (PFC, APP table), when there was one: the
    /// netdev's actual state now, for the Inventory.
    std::optional<dcb::DcbResult> read_back;
    /// The write runs on (ctx.write_firmware): neither done nor failed yet; its outcome comes
    /// through Reconciler::finish().
    bool deferred = false;
};

class Setting {
  public:
    virtual ~Setting() = default;

    /// The `[[rule]]` keys this setting owns ("pfc_no_drop"), in the order the manual lists them.
    virtual std::span<const std::string_view> keys() const = 0;
    /// Parse `value`, the value of one of keys() in a rule, into `rule`. A bad value adds a
    /// problem at its position and returns false.
    virtual bool parse(std::string_view key, const ConfigValue& value, Rule& rule,
                       ConfigProblems& problems) const = 0;
    /// Checks across keys once the whole rule is read (a key that contradicts another); adds a
    /// problem and returns false when it fails.
    virtual bool check(const Rule&, const ConfigValue& /*rule table*/, ConfigProblems&) const {
        return true;
    }
    /// Put what `rule` sets of this setting into `table` (state.conf, rdmad.conf(5) syntax).
    virtual void format(const Rule& rule, ConfigTableOut& table) const = 0;
    /// True when `rule` sets any of this setting's keys.
    virtual bool sets(const Rule& rule) const = 0;
    /// Copy what `from` sets over `into` (a later D-Bus request updating an earlier one).
    virtual void merge(const Rule& from, Rule& into) const = 0;
    /// Forget in `rule` what `newer` sets (a persisted request stepping over a runtime one).
    virtual void clear_set_by(const Rule& newer, Rule& rule) const = 0;
    /// Apply what `rule` sets to `want` (rules are applied in precedence order, so a later rule
    /// wins key by key); record each key taken in want.origin as `origin`.
    virtual void resolve(const Rule& rule, const std::string& origin,
                         DeviceDesired& want) const = 0;
    /// True when `want` asks anything of this setting.
    virtual bool asks(const DeviceDesired& want) const = 0;

    /// Compare and plan for one device that asks something (asks(ctx.want)).
    virtual void plan(SettingPlanContext& ctx) const = 0;
    /// After every device: host-wide steps (one module option for every card).
    virtual void plan_host(const HostState&, const std::map<std::string, DeviceDesired>&,
                           const Mlx4ModuleState&, Plan&) const {}
    /// After every device: the host's kernel modules ([daemon] load_modules).
    virtual void plan_modules(const HostState&, const ModulePlanInput&, Plan&) const {}

    /// True when `action` is one of this setting's.
    virtual bool owns(const Action& action) const = 0;
    /// Run `action` (one write, verified by one read-back); fills `out`.
    virtual void execute(const Action& action, SettingExecContext& ctx, Outcome& out) const = 0;
    /// The Port property-table rows of the PortState members this setting fills (actual and
    /// desired values): D-Bus properties, Describe() keys, change-set names.
    virtual std::span<const Property<PortState>> port_rows() const { return {}; }
    /// The Device property-table rows of the DeviceState members this setting fills, likewise.
    virtual std::span<const Property<DeviceState>> device_rows() const { return {}; }
    /// Put what `want` asks of this setting into `device`'s desired members (nullptr: nothing
    /// is asked of the device, so their "nothing asked" values); called for every device on
    /// every plan the reconciler puts into the Inventory.
    virtual void show(const DeviceDesired* /*want*/, DeviceState& /*device*/) const {}

    /// The problem code for a failed action of this setting ("apply-failed" by default).
    virtual std::string failure_code(const Outcome&) const { return "apply-failed"; }
};

/// sets(), merge() and clear_set_by() of a setting whose keys are the std::optional members
/// `M...` of Rule.
template <auto... M> struct OptionalRuleKeys {
    static bool sets(const Rule& r) { return (static_cast<bool>(r.*M) || ...); }
    static void merge(const Rule& from, Rule& into) {
        ((from.*M ? void(into.*M = from.*M) : void()), ...);
    }
    static void clear_set_by(const Rule& newer, Rule& rule) {
        ((newer.*M ? (rule.*M).reset() : void()), ...);
    }
};

/// Every setting, in resolution order (a profile first, so a rule's own keys override it).
std::span<const Setting* const> all_settings();
/// The setting that owns `key` of a rule, nullptr when none.
const Setting* setting_for_key(std::string_view key);
/// The setting that owns `action`; throws std::logic_error when none (a programming error).
const Setting& setting_for(const Action& action);

} // namespace rdmad
