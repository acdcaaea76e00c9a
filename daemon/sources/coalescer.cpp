// SPDX-License-Identifier: MIT
#include "sources/coalescer.hpp"

namespace rdmad {

Coalescer::Coalescer(CoalescerTiming timing, Clock clock, Alarm alarm)
    : timing_(timing), clock_(std::move(clock)), alarm_(std::move(alarm)),
      burst_(timing.window_usec, timing.burst_max_usec) {}

void Coalescer::set_due(uint64_t at) {
    due_ = at;
    alarm_(due_);
}

void Coalescer::schedule(uint64_t delay_usec) {
    const uint64_t at = clock_() + delay_usec;
    if (due_ && *due_ <= at)
        return; // a pass is already due by then; this joins it
    set_due(at);
}

void Coalescer::note(bool starts_burst) {
    if (draining_)
        return; // the pass being run takes it
    const uint64_t now = clock_();
    if (starts_burst) {
        // An add, remove, move or (un)bind comes with its relatives (a PCI function's
        // auxiliary device, netdev, RDMA device, uverbs device): gather them for a window,
        // even when an isolated change had its pass due sooner.
        // The window is counted from the burst's latest event, not its first: the relatives
        // of a device come within milliseconds of each other on a real host, but a busy
        // machine may deliver the tail of a burst later (a split burst announces a netdev
        // before the RDMA device that serves it). A burst that never pauses still gets a
        // pass every burst_max_usec.
        if (!due_ || lead_pending_)
            burst_.close();
        lead_pending_ = false;
        set_due(burst_.event(now));
        return;
    }
    if (due_)
        return; // a pass is due: this joins it
    if (last_pass_ && now < *last_pass_ + timing_.window_usec) {
        // Changes in quick succession (a storm of carrier flaps): one pass per window.
        set_due(*last_pass_ + timing_.window_usec);
        return;
    }
    set_due(now + timing_.lead_usec); // an isolated change: at once
    lead_pending_ = true;
}

Coalescer::Draining Coalescer::begin_pass() {
    lead_pending_ = false;
    burst_.close();
    if (due_) {
        due_.reset();
        alarm_(due_);
    }
    return Draining(*this);
}

void Coalescer::end_pass() {
    last_pass_ = clock_();
}

} // namespace rdmad
