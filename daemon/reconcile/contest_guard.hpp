// SPDX-License-Identifier: MIT
//
// The contested-netdev guard of the DCB settings (PFC no-drop, the DSCP APP table): when
// another writer (lldpad, willing DCBX taking the switch's settings, dcb, mlnx_qos) keeps
// changing back what rdmad set, rdmad stops after kMaxDcbCorrections corrections within
// kDcbContestUsec instead of flapping the port with it (mlx5 flaps the link on every pfc_en
// change), until forget() (Reload, Reconcile, a Set*, the device re-added).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace rdmad {

inline constexpr size_t kMaxPfcCorrections = 3;
inline constexpr uint64_t kPfcContestUsec = 60'000'000;

class ContestGuard {
  public:
    /// `now_usec`: CLOCK_MONOTONIC in microseconds (tests inject their own).
    explicit ContestGuard(std::function<uint64_t()> now_usec) : now_usec_(std::move(now_usec)) {}

    /// A reconcile pass starts executing its plan: what it writes next is counted afresh.
    void begin_pass() { this_pass_.clear(); }
    /// Before rdmad writes `netdev` again: a write to a netdev rdmad already set since forget()
    /// is a correction of another writer's change, counted once per pass however many DCB
    /// settings the pass writes to it (PFC and the APP table after a re-add are one
    /// correction, not two). Returns false when the netdev is (now) contested: more than
    /// kMaxPfcCorrections corrections within kPfcContestUsec.
    bool may_write(const std::string& netdev);
    /// rdmad's write to `netdev` succeeded.
    void written(const std::string& netdev) { set_.insert(netdev); }
    bool contested(const std::string& netdev) const { return contested_.count(netdev) > 0; }
    /// The sentence for a contested netdev's problem.
    static std::string message(const std::string& netdev);
    void forget();

  private:
    std::function<uint64_t()> now_usec_;
    std::set<std::string> set_;                                ///< netdevs rdmad set
    std::map<std::string, std::vector<uint64_t>> corrections_; ///< netdev -> times (µs)
    std::set<std::string> contested_;                          ///< netdevs rdmad stopped setting
    std::set<std::string> this_pass_; ///< netdevs this pass has already counted or written
};

} // namespace rdmad
