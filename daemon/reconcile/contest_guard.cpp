// SPDX-License-Identifier: MIT
#include "reconcile/contest_guard.hpp"

#include <fmt/format.h>

namespace rdmad {

bool ContestGuard::may_write(const std::string& netdev) {
    const bool first_this_pass = this_pass_.insert(netdev).second;
    if (first_this_pass && set_.count(netdev) && !contested_.count(netdev)) {
        // rdmad set it before, so someone else changed it since: a correction.
        auto& times = corrections_[netdev];
        const uint64_t now = now_usec_();
        std::erase_if(times, [&](uint64_t t) { return now - t > kPfcContestUsec; });
        times.push_back(now);
        if (times.size() > kMaxPfcCorrections)
            contested_.insert(netdev);
    }
    return !contested_.count(netdev);
}

std::string ContestGuard::message(const std::string& netdev) {
    return fmt::format(
        "{} was changed back by another writer more than {} times within {} s (an LLDP agent "
        "such as lldpad, willing DCBX taking the switch's settings, dcb or mlnx_qos); rdmad "
        "stopped setting it: stop the other writer or drop the rule, then run rdmactl reconcile",
        netdev, kMaxPfcCorrections, kPfcContestUsec / 1'000'000);
}

void ContestGuard::forget() {
    set_.clear();
    this_pass_.clear();
    corrections_.clear();
    contested_.clear();
}

} // namespace rdmad
