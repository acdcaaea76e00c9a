// SPDX-License-Identifier: MIT
//
// When the sources' changes get their pass (DESIGN.md: "An isolated event is handled at once;
// a burst is coalesced"). Plain timing on an injected clock: the daemon wires the deadline to
// an sd-event timer, the unit tests to a number they advance.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

namespace rdmad {

/// A window that waits for events to pause: due `settle_usec` after the latest event, but no
/// later than `max_usec` after the first, so a flood that never pauses cannot hold it off.
/// Times are CLOCK_MONOTONIC microseconds.
class SettleWindow {
  public:
    SettleWindow(uint64_t settle_usec, uint64_t max_usec)
        : settle_usec_(settle_usec), max_usec_(max_usec < settle_usec ? settle_usec : max_usec) {}

    /// An event at `now`; opens the window when it is closed. Returns the new due time.
    uint64_t event(uint64_t now) {
        if (!first_)
            first_ = now;
        const uint64_t settled = now + settle_usec_;
        const uint64_t bound = *first_ + max_usec_;
        return settled < bound ? settled : bound;
    }
    /// The window's events were handled: the next event opens a new one.
    void close() { first_.reset(); }
    bool open() const { return first_.has_value(); }

  private:
    uint64_t settle_usec_;
    uint64_t max_usec_;
    std::optional<uint64_t> first_; ///< the first event of the open window
};

struct CoalescerTiming {
    uint64_t window_usec = 50'000;     ///< turns an event burst into one pass
    uint64_t burst_max_usec = 500'000; ///< the longest a burst that never pauses waits
    uint64_t lead_usec = 0;            ///< wait before the pass of an isolated change
};

/// Turns the changes the sources note into passes. An isolated change (a "change" uevent, a
/// carrier change, a verbs event) gets its pass at once (lead_usec); changes in quick
/// succession get one pass when the window the last pass opened ends (window_usec after that
/// pass ended). A change that starts a burst (add, remove, move, bind, unbind, an overflow)
/// gets its pass a window after the last event of its burst, at most burst_max_usec after the
/// first.
class Coalescer {
  public:
    /// CLOCK_MONOTONIC in microseconds.
    using Clock = std::function<uint64_t()>;
    /// Called whenever the deadline changes: the time the next pass is due, nullopt for none.
    using Alarm = std::function<void(std::optional<uint64_t> due)>;

    Coalescer(CoalescerTiming timing, Clock clock, Alarm alarm);

    /// A source noted a change; `starts_burst` for one that comes with relatives.
    void note(bool starts_burst);
    /// A pass `delay_usec` from now, or earlier if one is due earlier (a retry, the read-back
    /// of an action, SIGHUP).
    void schedule(uint64_t delay_usec);
    /// When the next pass is due; nullopt when none is.
    std::optional<uint64_t> deadline() const { return due_; }

    /// While it lives, the pass has started and takes the changes noted (the uevents queued
    /// since the alarm rang): they schedule nothing.
    class [[nodiscard]] Draining {
      public:
        explicit Draining(Coalescer& c) : c_(c) { c_.draining_ = true; }
        ~Draining() { c_.draining_ = false; }
        Draining(const Draining&) = delete;
        Draining& operator=(const Draining&) = delete;

      private:
        Coalescer& c_;
    };
    /// The pass due starts: nothing is due until a change or schedule() asks again.
    Draining begin_pass();
    /// The pass ended (now, by the clock): the quick-succession window opens.
    void end_pass();

  private:
    void set_due(uint64_t at);

    CoalescerTiming timing_;
    Clock clock_;
    Alarm alarm_;
    std::optional<uint64_t> due_;
    bool lead_pending_ = false; ///< the pass due is an isolated change's (lead_usec)
    SettleWindow burst_;        ///< the burst whose pass is due
    bool draining_ = false;
    std::optional<uint64_t> last_pass_; ///< the end of the last pass
};

} // namespace rdmad
