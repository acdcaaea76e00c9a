// SPDX-License-Identifier: MIT
//
// What the exports (Prometheus textfile, Kubernetes NFD feature file) say besides the
// inventory, and the derived port values both of them use. Pure: plain values in, plain values
// out.
#pragma once

#include "inventory/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rdmad::exports {

/// The daemon's own facts, as org.rdmad1.Manager has them.
struct ManagerFacts {
    std::string state = "starting"; ///< Manager State: "starting", "running" or "degraded"
    size_t config_errors = 0;       ///< configuration files rdmad cannot use (Manager Problems)
    /// CLOCK_REALTIME in microseconds of the last pass that left no action failed and no
    /// configuration error; nullopt before the first.
    std::optional<uint64_t> last_reconcile_usec;
    /// Manager Problems: configuration errors, legacy warnings, host-wide findings and action
    /// failures, the exports' own failure.
    std::vector<Problem> problems;
    bool operator==(const ManagerFacts&) const = default;
};

/// True when the port has a "RoCE v2" GID that is routable (doctor::routable_gid()).
bool has_routable_roce_v2_gid(const PortState& port);

/// How a port can be used from this host, for schedulers: "infiniband", "roce-v2" or "iwarp"
/// when the port is ACTIVE, its device's rdma-core provider is installed and it has a uverbs
/// device (what libibverbs needs to list it, DOMAIN.md §4.1); "" otherwise (and for RoCE
/// ports without RoCE v2, OPA, usNIC).
std::string usable_transport(const DeviceState& device, const PortState& port);

} // namespace rdmad::exports
