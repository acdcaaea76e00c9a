// SPDX-License-Identifier: MIT
#include "reconcile/settings/dcb_state.hpp"

#include "reconcile/contest_guard.hpp"

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>

namespace rdmad {

std::optional<PfcActual> usable_dcb_state(SettingPlanContext& ctx, const PortState& port,
                                          const DcbSettingNames& names) {
    PortPlan& pp = ctx.ports[port.number];
    const auto report = [&](std::string code, std::string text, std::string remedy = {}) {
        pp.in_sync = false;
        const bool known = std::any_of(ctx.problems.begin(), ctx.problems.end(), [&](auto& p) {
            return p.code == code && p.port == port.number;
        });
        if (known)
            return;
        ctx.problems.push_back({std::move(code), "warning", std::move(text)});
        ctx.problems.back().port = port.number;
        ctx.problems.back().remedy = std::move(remedy);
    };
    if (port.netdev.empty()) {
        report(
            fmt::format("{}-no-netdev", names.code_prefix),
            fmt::format("port {} has no netdev: {} cannot be set", port.number, names.short_name));
        return std::nullopt;
    }
    const auto it = ctx.pfc.find(port.netdev);
    const PfcActual now = it == ctx.pfc.end() ? PfcActual{} : it->second;
    if (now.status == PfcActual::Status::not_supported) {
        report("no-dcb", fmt::format("{} has no DCB (EOPNOTSUPP): {} cannot be set on it",
                                     port.netdev, names.long_name));
        return std::nullopt;
    }
    if (now.status != PfcActual::Status::ok) {
        // iproute2's dcb(8) asks the kernel the same (DCB_CMD_IEEE_GET over rtnetlink).
        report(fmt::format("{}-unreadable", names.code_prefix),
               fmt::format("{}: {} cannot be read: {}", port.netdev, names.short_name, now.message),
               fmt::format("run dcb {} show dev {} (iproute2) to see the kernel's answer; rdmad "
                           "reads it again at the netdev's next change or rdmactl reload",
                           names.code_prefix == "pfc" ? "pfc" : "app", port.netdev));
        return std::nullopt;
    }
    return now;
}

bool take_netdev(SettingPlanContext& ctx, const std::string& netdev, std::string_view kind) {
    return ctx.netdevs_taken.insert(std::string(kind) + "|" + netdev).second;
}

bool guarded_dcb_write(SettingExecContext& ctx, const Action& a, Outcome& o) {
    if (!ctx.dcb) {
        o.message = "no netlink socket";
        return false;
    }
    if (ctx.guard && !ctx.guard->may_write(a.netdev)) {
        o.error = EBUSY;
        o.message = ContestGuard::message(a.netdev);
        return false;
    }
    return true;
}

dcb::DcbClient& dcb_client(SettingExecContext& ctx) {
    return *ctx.dcb;
}

void take_dcb_result(SettingExecContext& ctx, const Action& a, dcb::DcbResult r, Outcome& o) {
    o.ok = r.ok();
    o.error = r.error;
    o.message = r.message;
    if (r.ok() || r.status == dcb::DcbResult::Status::not_applied)
        o.read_back = std::move(r); // verified: the Inventory takes it
    if (o.ok && ctx.guard)
        ctx.guard->written(a.netdev);
}

} // namespace rdmad
