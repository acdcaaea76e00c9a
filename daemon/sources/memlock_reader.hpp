// SPDX-License-Identifier: MIT
//
// The locked-memory limit RDMA applications will get. Every registered memory region is
// pinned and counts against RLIMIT_MEMLOCK (kernel drivers/infiniband/core/umem.c
// ib_umem_get()); processes inherit it from the launcher that starts them (slurmd, kubelet,
// containerd, ...), and services get it from systemd (DefaultLimitMEMLOCK=, LimitMEMLOCK=),
// not from /etc/security/limits.conf, which only PAM sessions read.
#pragma once

#include "inventory/model.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

/// The "Max locked memory" line of /proc/<pid>/limits (fs/proc/base.c proc_pid_limits():
/// "%-25s %-20s %-20s %-10s", "unlimited" for RLIM_INFINITY, else the value in bytes);
/// nullopt when the line is missing or malformed.
std::optional<MemlockLimit> parse_memlock_limit(std::string_view limits_text);

/// DefaultLimitMEMLOCK= of the [Manager] section of a systemd system.conf text
/// (systemd-system.conf(5)), the last one in the text; nullopt when it sets none.
std::optional<std::string> parse_default_limit_memlock(std::string_view conf_text);

/// The soft limit in bytes that a systemd rlimit value sets: "infinity", a size with an
/// optional K, M, G, T, P or E suffix (powers of 1024) or "soft:hard"; nullopt when it does
/// not parse.
std::optional<uint64_t> parse_systemd_memlock(std::string_view value);

/// Where read_memlock() looks; tests point them elsewhere.
struct MemlockPaths {
    std::string proc = "/proc";
    std::string systemd = "/etc/systemd"; ///< system.conf, system.conf.d/*.conf
};

/// Every running process named in `launchers` (by /proc/<pid>/comm: rdmad.conf [doctor]
/// memlock_launchers, batch schedulers' node daemons and container runtimes) owned by root (the
/// owner of /proc/<pid>: any user can name a process "slurmd") with its limit, PID 1's limit (when
/// PID 1 is systemd) and systemd's DefaultLimitMEMLOCK (system.conf, then system.conf.d/*.conf in
/// name order: the last wins). Processes whose files vanish or cannot be read are left out. At most
/// 256 processes.
MemlockFacts read_memlock(const std::vector<std::string>& launchers,
                          const MemlockPaths& paths = {});

} // namespace rdmad
