// SPDX-License-Identifier: MIT
//
// The host's RDMA kernel modules (`[daemon] load_modules`, `modules`, `persist_modules`;
// rdmad.conf(5)). Not a `[[rule]]` key: a NIC whose RDMA driver is not loaded has no RDMA
// device for a rule to match, so the plan is host-wide.
// - Actual: the links' RdmaCapable "module-not-loaded" with the module that would serve them
//   (inventory/rdma_capability.cpp), and, read for this plan only (sources/modules.hpp
//   .hpp): which of those modules /sys/module lists, the modprobe.d blacklist, rdmad's
//   modules-load.d file.
// - Plan: load each such NIC's RDMA module (irdma, bnxt_re, qedr, efa, mana_ib, ...) and each
//   module of `modules` (ib_uverbs, rdma_ucm, ib_umad, ib_ipoib: the user-space access modules
//   the doctor names, doctor/modules.hpp) not loaded while an RDMA device is present, except
//   a blacklisted one, which is a problem saying so; with persist_modules, rdmad's
//   modules-load.d file lists them.
// - Write: actuators/kmod_loader.hpp (libkmod's probe, the blacklist honoured; the NIC's RDMA
//   device then arrives by uevent as any other), and the file, written atomically and only
//   when it would say something else.
// - Properties: Manager.LoadedModules; failures and blacklisted modules in Manager.Problems.
#include "reconcile/settings/setting.hpp"

#include "actuators/kmod_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <system_error>

namespace rdmad {
namespace {

/// Outcome::error of a module that a blacklist line named when libkmod probed it (no errno).
constexpr int kBlacklisted = -1;

std::string joined(const std::vector<std::string>& v) {
    return fmt::format("{}", fmt::join(v, ","));
}

class KernelModulesSetting final : public Setting {
  public:
    std::span<const std::string_view> keys() const override { return {}; }
    bool parse(std::string_view, const ConfigValue&, Rule&, ConfigProblems&) const override {
        return false; // owns no rule key
    }
    void format(const Rule&, ConfigTableOut&) const override {}
    bool sets(const Rule&) const override { return false; }
    void merge(const Rule&, Rule&) const override {}
    void clear_set_by(const Rule&, Rule&) const override {}
    void resolve(const Rule&, const std::string&, DeviceDesired&) const override {}
    bool asks(const DeviceDesired&) const override { return false; }
    void plan(SettingPlanContext&) const override {}

    void plan_modules(const HostState& host, const ModulePlanInput& in, Plan& plan) const override;

    bool owns(const Action& a) const override { return is_module_action(a); }

    void execute(const Action& a, SettingExecContext& ctx, Outcome& o) const override {
        if (a.kind == Action::Kind::module_load) {
            if (!ctx.kmod) {
                o.error = ENOPKG;
                o.message = "libkmod is not available";
                return;
            }
            const ModuleLoad l = load_kernel_module(*ctx.kmod, a.value);
            o.ok = l.status == ModuleLoad::Status::loaded;
            if (l.status == ModuleLoad::Status::blacklisted) {
                o.error = kBlacklisted;
                o.message = "a blacklist line of modprobe.d names it; rdmad does not load it";
            } else if (!o.ok) {
                o.error = l.error;
                o.message = std::strerror(l.error); // the kernel's refusal, as modprobe says it
                if (l.error == ENOENT) { // not in the index, or a sandbox that hides it
                    const char* dir = ctx.kmod->get_dirname(ctx.kmod->ctx);
                    o.message += fmt::format(
                        " (not in the index of the module directory {}: is the package of "
                        "this kernel's modules installed? Under rdmad.service, /usr/lib/modules "
                        "is hidden unless load_modules' drop-in in rdmad.conf(5) is added)",
                        dir ? dir : "(unknown)");
                }
                if (l.error == EPERM) // no CAP_SYS_MODULE: rdmad.service's sandbox by default
                    o.message += " (rdmad needs CAP_SYS_MODULE: see load_modules in "
                                 "rdmad.conf(5) for the unit's drop-in)";
            }
            return;
        }
        try {
            if (a.kind == Action::Kind::modules_load_file)
                write_modules_load(ctx.modules_load_dir, a.modules);
            else
                remove_modules_load(ctx.modules_load_dir);
            o.ok = true;
        } catch (const std::system_error& e) {
            o.error = e.code().value();
            o.message = e.what();
        }
    }

    std::string failure_code(const Outcome& o) const override {
        if (o.action.kind != Action::Kind::module_load)
            return "modules-load-file-failed";
        if (o.error == kBlacklisted)
            return "module-blacklisted";
        return o.error == ENOENT ? "module-not-found" : "module-load-failed";
    }
};

void KernelModulesSetting::plan_modules(const HostState& host, const ModulePlanInput& in,
                                        Plan& plan) const {
    const KernelModulesActual& actual = in.actual;
    if (!actual.read)
        return;
    std::vector<std::string> wanted; // to be loaded now, or kept in the file: not blacklisted
    std::vector<Problem> problems;
    const auto blacklisted = [&](const std::string& module, const std::string& what) {
        if (!actual.blacklisted.count(module))
            return false;
        problems.push_back(
            {"module-blacklisted",
             "warning",
             fmt::format("{} ({}) is not loaded: a blacklist line of modprobe.d names it, and "
                         "rdmad honours it",
                         module, what),
             {},
             fmt::format("remove 'blacklist {}' from modprobe.d (modprobe -c | grep {} finds "
                         "it) to let rdmad load it",
                         module, module)});
        return true;
    };
    if (in.load) {
        // Each NIC driver's RDMA module, once for all the netdevs it would serve.
        std::map<std::string, std::vector<std::string>> netdevs_of;
        for (const auto& [_, link] : host.links)
            if (link.rdma_capable == "module-not-loaded" && !link.rdma_module.empty())
                netdevs_of[link.rdma_module].push_back(link.name);
        for (const auto& [module, netdevs] : netdevs_of) {
            const std::string what = "the RDMA driver of " + joined(netdevs);
            if (blacklisted(module, what))
                continue;
            wanted.push_back(module);
            if (actual.loaded.count(module))
                continue; // loaded but not bound: the hint says so, loading again does nothing
            Action a{};
            a.kind = Action::Kind::module_load;
            a.netdev = joined(netdevs);
            a.value = module;
            a.setting = fmt::format("kernel module {} ({})", module, a.netdev);
            a.from = "not loaded";
            a.to = "loaded";
            plan.actions.push_back(std::move(a));
        }
        // The access modules asked, while there is an RDMA device to use them on.
        if (!host.devices.empty())
            for (const auto& module : in.modules) {
                if (blacklisted(module, "[daemon] modules"))
                    continue;
                wanted.push_back(module);
                if (actual.loaded.count(module))
                    continue;
                Action a{};
                a.kind = Action::Kind::module_load;
                a.value = module;
                a.setting = fmt::format("kernel module {}", module);
                a.from = "not loaded";
                a.to = "loaded";
                plan.actions.push_back(std::move(a));
            }
    }
    if (!problems.empty()) {
        auto& host_problems = plan.problems[""];
        host_problems.insert(host_problems.end(), problems.begin(), problems.end());
    }
    // rdmad's modules-load.d file: what is wanted now, and what it already lists while that
    // stays loaded (the NIC's module, once loaded, serves it and is no longer "wanted").
    std::vector<std::string> listed;
    if (in.load && in.persist) {
        for (const auto& m : wanted)
            if (!actual.absent.count(m)) // module-not-found already says why it is not there
                listed.push_back(m);
        if (actual.file)
            for (const auto& m : *actual.file)
                if (actual.loaded.count(m) && !actual.blacklisted.count(m))
                    listed.push_back(m);
        std::sort(listed.begin(), listed.end());
        listed.erase(std::unique(listed.begin(), listed.end()), listed.end());
    }
    const std::vector<std::string> now = actual.file.value_or(std::vector<std::string>{});
    if (listed.empty() && actual.file) {
        Action a{};
        a.kind = Action::Kind::modules_load_file_remove;
        a.setting = "modules-load.d";
        a.from = joined(now);
        a.to = "(no file)";
        plan.actions.push_back(std::move(a));
    } else if (!listed.empty() && (!actual.file || now != listed)) {
        Action a{};
        a.kind = Action::Kind::modules_load_file;
        a.setting = "modules-load.d";
        a.from = actual.file ? joined(now) : "(no file)";
        a.to = joined(listed);
        a.modules = listed;
        plan.actions.push_back(std::move(a));
    }
}

} // namespace

const Setting& kernel_modules_setting() {
    static const KernelModulesSetting setting;
    return setting;
}

} // namespace rdmad
