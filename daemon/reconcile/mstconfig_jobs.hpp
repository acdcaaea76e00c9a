// SPDX-License-Identifier: MIT
//
// The ConnectX-4+ firmware port type's tool runs, on the loop (issue #26): mstconfig can hang
// (a wedged PCI config access, a card in recovery) for its whole time limit, and a host has
// one function per port, so the queries at start, add or Reload and a set with its read-back
// run as children the loop watches (util/tool_runner.hpp), at most kMstconfigAtOnce at a time,
// never holding D-Bus calls or events. What they read enters the Inventory through `read` as
// any other source's change; a set's outcome reaches the Reconciler through `written`.
#pragma once

#include "actuators/port_type.hpp"
#include "inventory/model.hpp"
#include "reconcile/plan.hpp"
#include "reconcile/settings/setting.hpp"
#include "sources/mstconfig.hpp"
#include "util/tool_runner.hpp"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace rdmad {

class MstconfigJobs {
  public:
    struct Handlers {
        /// A query's reading of `pci` (a function's first, or a set's read-back).
        std::function<void(const std::string& pci, const FirmwarePortType& read)> read;
        /// A set and its read-back ended: the outcome, as a synchronous execute() gives it.
        std::function<void(Outcome outcome)> written;
    };
    /// `event` must outlive the jobs.
    MstconfigJobs(sd_event* event, Handlers handlers, size_t at_once = kMstconfigAtOnce,
                  std::chrono::milliseconds timeout = kMstconfigTimeout);

    /// Query LINK_TYPE_P<card_port> of `pci` with `tool`, unless a query of it since the last
    /// forget() runs or waits.
    void query(const std::string& tool, const std::string& pci, uint32_t card_port);
    /// Run `a` (Action::Kind::firmware_port_type: `mstconfig -y -d <pci> set LINK_TYPE_P<n>=`)
    /// and, when it exits 0, one query back; false (nothing started) while a set of the same
    /// function runs or waits.
    bool write(const std::string& tool, const Action& a);
    /// The readings of `pci` (every function: "") asked before now are stale (its device was
    /// added again, a Reload): a query running for it is not reported, the next one runs.
    void forget(const std::string& pci = "");

  private:
    /// The outcome of the set `a` that ended as `w`, read back as `back` when it ran.
    static Outcome write_outcome(const Action& a, const WriteResult& w,
                                 const std::optional<FirmwarePortType>& back);

    Handlers handlers_;
    std::chrono::milliseconds timeout_;
    /// By PCI address: the generation of the query running or waiting (forget() bumps it).
    std::map<std::string, uint64_t> querying_;
    uint64_t generation_ = 0;
    std::set<std::string> writing_; ///< PCI addresses with a set running or waiting
    ToolRunner runner_; ///< last: its destructor kills the tools before the rest goes
};

} // namespace rdmad
