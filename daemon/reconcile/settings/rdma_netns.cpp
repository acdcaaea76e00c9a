// SPDX-License-Identifier: MIT
//
// The RDMA network namespace mode of the host (`[daemon] rdma_netns_mode = "shared" |
// "exclusive"`), a module option of ib_core:
// - Config: a [daemon] key (config/config_file.cpp), no [[rule]] key: the mode is host-wide.
// - Actual: what the loaded ib_core runs with and what rdmad's modprobe.d file asks
//   (sources/rdma_netns_reader.hpp), read by every full plan into HostState::rdma_netns with
//   the mode asked.
// - Write: rdmad's own file `<modprobe_dir>/rdmad-ib_core.conf` (`options ib_core
//   netns_mode=0|1`, actuators/modprobe.hpp), atomically, only when it does not already say the
//   mode asked; read back once. rdmad never unloads ib_core: the mode asked is pending
//   ("rdma-netns-pending", Manager.PendingRdmaNetnsMode) until ib_core is loaded again or the
//   host reboots. (sriov-network-operator issue 959: a reboot loop when the mode was already
//   the one asked; here a file that already says it is never written.) With the key removed,
//   rdmad removes its file when it carries rdmad's header (an admin's file of that name
//   stays), as it removes rdmad-mlx4.conf and modules-load.d's rdmad.conf once nothing asks
//   them; nothing is pending then.
// - Properties: Manager.RdmaNetnsMode, Manager.DesiredRdmaNetnsMode,
//   Manager.PendingRdmaNetnsMode (bus/manager_state.cpp).
#include "reconcile/settings/setting.hpp"

#include "actuators/modprobe.hpp"
#include "sources/rdma_netns_reader.hpp"

#include <cerrno>
#include <fmt/format.h>
#include <system_error>

namespace rdmad {
namespace {

class RdmaNetnsSetting final : public Setting {
  public:
    std::span<const std::string_view> keys() const override { return {}; }
    bool parse(std::string_view, const ConfigValue&, Rule&, ConfigProblems&) const override {
        return false; // no rule key
    }
    void format(const Rule&, ConfigTableOut&) const override {}
    bool sets(const Rule&) const override { return false; }
    void merge(const Rule&, Rule&) const override {}
    void clear_set_by(const Rule&, Rule&) const override {}
    void resolve(const Rule&, const std::string&, DeviceDesired&) const override {}
    bool asks(const DeviceDesired&) const override { return false; }
    void plan(SettingPlanContext&) const override {}

    void plan_host(const HostState& actual, const std::map<std::string, DeviceDesired>&,
                   const Mlx4ModuleState&, Plan& plan) const override {
        const RdmaNetnsState& n = actual.rdma_netns;
        if (n.desired.empty()) {
            if (n.own_file)
                plan.actions.push_back({Action::Kind::ib_core_modprobe_remove, "", "", 0, "", "",
                                        "", 0, "RdmaNetnsMode",
                                        n.next_load.empty() ? "(no option)" : n.next_load,
                                        "(removed)"});
            return;
        }
        if (n.next_load != n.desired) {
            Action a{Action::Kind::ib_core_modprobe,
                     "",
                     "",
                     0,
                     "",
                     "",
                     n.desired,
                     0,
                     "RdmaNetnsMode",
                     n.next_load.empty() ? "(no option)" : n.next_load,
                     n.desired + " (next load of ib_core)"};
            plan.actions.push_back(std::move(a));
            return; // pending once written and read back
        }
        if (n.pending().empty())
            return;
        plan.problems[""].push_back(
            {"rdma-netns-pending",
             "warning",
             fmt::format("the RDMA network namespace mode is {} and {} is asked: ib_core takes "
                         "it when it is loaded again or the host reboots",
                         n.now, n.desired),
             {fmt::format("/sys/module/ib_core/parameters/netns_mode = {}", n.now)},
             fmt::format("reboot (or unload every RDMA module and load them again); at run "
                         "time, while no other network namespace exists: rdma system set "
                         "netns {}",
                         n.desired)});
    }

    bool owns(const Action& a) const override {
        return a.kind == Action::Kind::ib_core_modprobe ||
               a.kind == Action::Kind::ib_core_modprobe_remove;
    }

    void execute(const Action& a, SettingExecContext& ctx, Outcome& o) const override {
        if (a.kind == Action::Kind::ib_core_modprobe_remove) {
            try {
                remove_ib_core_modprobe(ctx.modprobe_dir);
                o.ok = true;
            } catch (const std::system_error& e) {
                o.error = e.code().value();
                o.message = e.what();
            }
            return;
        }
        try {
            write_ib_core_modprobe(ctx.modprobe_dir, a.value == "shared");
        } catch (const std::system_error& e) {
            o.error = e.code().value();
            o.message = e.what();
            return;
        }
        const auto back = read_ib_core_modprobe(ctx.modprobe_dir);
        o.ok = back == a.value;
        if (!o.ok) {
            o.error = EIO;
            o.message = fmt::format("{} written, but it reads back {}",
                                    ib_core_modprobe_path(ctx.modprobe_dir),
                                    back ? *back : "no netns_mode");
        }
    }
};

} // namespace

const Setting& rdma_netns_setting() {
    static const RdmaNetnsSetting setting;
    return setting;
}

} // namespace rdmad
