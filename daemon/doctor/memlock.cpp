// SPDX-License-Identifier: MIT
#include "doctor/memlock.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace rdmad::doctor {
namespace {

std::string limit_field(uint64_t v) {
    return v == MemlockLimit::kUnlimited ? std::string("unlimited") : std::to_string(v);
}

/// The systemd unit a launcher runs in, as the distributions ship them.
std::string unit_of(const std::string& comm) {
    if (comm == "slurmstepd")
        return "slurmd.service"; // slurmd forks it for every job step
    if (comm == "dockerd")
        return "docker.service";
    if (comm == "pbs_mom")
        return "pbs.service";
    return comm + ".service";
}

} // namespace

std::string memlock_text(uint64_t bytes) {
    if (bytes == MemlockLimit::kUnlimited)
        return "unlimited";
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    size_t u = 0;
    while (u + 1 < std::size(units) && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        ++u;
    }
    return fmt::format("{} {}", bytes, units[u]);
}

std::vector<Problem> check_memlock(const HostFacts* host) {
    if (!host || !host->memlock.read)
        return {};
    const MemlockFacts& m = host->memlock;
    std::vector<Problem> out;
    // One finding per launcher name, whatever the number of its processes (a busy node runs
    // one slurmstepd per job step): the lowest limit, the first 3 pids as evidence.
    std::vector<std::string> names;
    for (const auto& p : m.processes)
        if (p.limit.soft < kMemlockFloor &&
            std::find(names.begin(), names.end(), p.comm) == names.end())
            names.push_back(p.comm);
    for (const auto& name : names) {
        const MemlockProcess* low = nullptr;
        size_t count = 0;
        Problem pr;
        for (const auto& p : m.processes) {
            if (p.comm != name || p.limit.soft >= kMemlockFloor)
                continue;
            if (!low || p.limit.soft < low->limit.soft)
                low = &p;
            if (++count <= 3)
                pr.evidence.push_back(
                    evidence(fmt::format("/proc/{}/limits", p.pid),
                             fmt::format("Max locked memory {} {} bytes", limit_field(p.limit.soft),
                                         limit_field(p.limit.hard))));
        }
        const std::string unit = unit_of(name);
        pr.code = "memlock-low";
        pr.severity = "warning";
        pr.text = count == 1
                      ? fmt::format("{} (pid {}) has a locked-memory limit of {}: the RDMA "
                                    "applications it starts inherit it and cannot register "
                                    "more (ibv_reg_mr: Cannot allocate memory)",
                                    name, low->pid, memlock_text(low->limit.soft))
                      : fmt::format("{} processes of {} have a locked-memory limit as low as "
                                    "{}: the RDMA applications they start inherit it and "
                                    "cannot register more (ibv_reg_mr: Cannot allocate memory)",
                                    count, name, memlock_text(low->limit.soft));
        pr.remedy = fmt::format("systemctl edit {} and add \"[Service]\" "
                                "\"LimitMEMLOCK=infinity\", then systemctl restart {} and "
                                "rdmactl reload (limits.conf is not read for services)",
                                unit, unit);
        out.push_back(std::move(pr));
    }
    std::optional<uint64_t> def;
    std::string evidence_text;
    if (!m.default_limit.empty()) {
        def = m.default_soft;
        evidence_text = evidence(m.default_limit_file, "DefaultLimitMEMLOCK=" + m.default_limit);
    } else if (m.manager) {
        def = m.manager->soft;
        evidence_text = evidence("/proc/1/limits", fmt::format("Max locked memory {} {} bytes",
                                                               limit_field(m.manager->soft),
                                                               limit_field(m.manager->hard)));
    }
    if (def && *def < kMemlockFloor) {
        Problem pr;
        pr.code = "memlock-default-low";
        pr.severity = "info";
        pr.text = fmt::format("services get a locked-memory limit of {} unless their unit sets "
                              "LimitMEMLOCK=: too little for RDMA applications run as services",
                              memlock_text(*def));
        pr.evidence.push_back(evidence_text);
        pr.remedy = "set LimitMEMLOCK=infinity in the units of services that use RDMA, or "
                    "DefaultLimitMEMLOCK=infinity in /etc/systemd/system.conf.d/";
        out.push_back(std::move(pr));
    }
    return out;
}

} // namespace rdmad::doctor
