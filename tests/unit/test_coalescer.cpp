// SPDX-License-Identifier: MIT
//
// Coalescer and SettleWindow (daemon/sources/coalescer.hpp): when the sources' changes get
// their pass, on a clock the test advances. The figures are the daemon's defaults
// (DESIGN.md, rdmad(8)): a 50 ms window, a burst's pass at most 500 ms after its first event.
#include "sources/coalescer.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <vector>

using namespace rdmad;

namespace {

constexpr uint64_t kMs = 1000;

/// A loop in miniature: a clock, the alarm the coalescer sets, the passes it ran.
struct Loop {
    uint64_t now = 1'000'000 * kMs; // CLOCK_MONOTONIC is far from 0 on a running host
    std::optional<uint64_t> alarm;
    std::vector<uint64_t> passes; ///< when each pass started
    Coalescer c{CoalescerTiming{}, [this] { return now; },
                [this](std::optional<uint64_t> due) { alarm = due; }};

    /// Advance to `t`, running every pass that falls due on the way (each takes no time).
    void run_until(uint64_t t) {
        while (alarm && *alarm <= t) {
            now = std::max(now, *alarm);
            auto draining = c.begin_pass();
            passes.push_back(now);
            c.end_pass();
        }
        now = t;
    }
};

} // namespace

TEST_CASE("an isolated event is handled at once, not at the end of the window", "[coalescer]") {
    Loop loop;
    CHECK_FALSE(loop.c.deadline());
    loop.c.note(false); // a carrier change, long after any pass
    REQUIRE(loop.alarm == loop.now);
    const uint64_t t0 = loop.now;
    loop.run_until(t0 + 200 * kMs);
    CHECK(loop.passes == std::vector<uint64_t>{t0});
    CHECK_FALSE(loop.alarm); // nothing more is due: no polling
}

TEST_CASE("an isolated change right after a pass waits for the window that pass opened",
          "[coalescer]") {
    Loop loop;
    const uint64_t t0 = loop.now;
    loop.c.note(false);
    loop.run_until(t0 + 10 * kMs); // the pass at t0 ended at t0
    loop.c.note(false);            // a carrier flap 10 ms later
    CHECK(loop.alarm == t0 + 50 * kMs);
    loop.c.note(false); // and another: it joins the pass due
    loop.run_until(t0 + 200 * kMs);
    CHECK(loop.passes == std::vector<uint64_t>{t0, t0 + 50 * kMs});
}

TEST_CASE("a burst is one pass, a window after its last event", "[coalescer]") {
    Loop loop;
    const uint64_t t0 = loop.now;
    // An SR-IOV resize: 30 add events 5 ms apart (150 ms, under the 500 ms bound).
    for (int i = 0; i < 30; ++i) {
        loop.run_until(t0 + uint64_t(i) * 5 * kMs);
        loop.c.note(true);
    }
    const uint64_t last = t0 + 29 * 5 * kMs;
    CHECK(loop.alarm == last + 50 * kMs);
    loop.run_until(t0 + 2000 * kMs);
    CHECK(loop.passes == std::vector<uint64_t>{last + 50 * kMs});
}

TEST_CASE("a burst event moves an isolated change's pass to the end of the burst's window",
          "[coalescer]") {
    Loop loop;
    const uint64_t t0 = loop.now;
    loop.c.note(false); // due at once...
    loop.c.note(true);  // ...but an add arrives in the same moment: gather its relatives
    CHECK(loop.alarm == t0 + 50 * kMs);
    loop.run_until(t0 + 1000 * kMs);
    CHECK(loop.passes == std::vector<uint64_t>{t0 + 50 * kMs});
}

TEST_CASE("a flood cannot hold a pass off longer than its bound", "[coalescer]") {
    Loop loop;
    const uint64_t t0 = loop.now;
    // Burst events every 10 ms for 2 s: they never pause for the 50 ms window.
    for (uint64_t t = t0; t < t0 + 2000 * kMs; t += 10 * kMs) {
        loop.run_until(t);
        loop.c.note(true);
    }
    loop.run_until(t0 + 3000 * kMs);
    // A pass every 500 ms, counted from the first event of each burst (the event that comes
    // with a pass, after it, starts the next burst); the flood's last event (t0 + 1990 ms) is
    // then within 500 ms of its burst's first (t0 + 1500 ms), so that bound ends it too.
    CHECK(loop.passes ==
          std::vector<uint64_t>{t0 + 500 * kMs, t0 + 1000 * kMs, t0 + 1500 * kMs, t0 + 2000 * kMs});
}

TEST_CASE("changes noted while a pass drains the queued uevents join that pass", "[coalescer]") {
    Loop loop;
    loop.c.note(true);
    loop.now = *loop.alarm;
    {
        auto draining = loop.c.begin_pass();
        loop.c.note(true);  // the rest of the burst, read by the drain
        loop.c.note(false); // a change uevent in the same queue
        CHECK_FALSE(loop.alarm);
    }
    loop.c.end_pass();
    CHECK_FALSE(loop.c.deadline());
    loop.c.note(false); // after the drain a change counts again
    CHECK(loop.alarm == loop.now + 50 * kMs);
}

TEST_CASE("schedule() asks for a pass by a time, keeping one due earlier", "[coalescer]") {
    Loop loop;
    const uint64_t t0 = loop.now;
    loop.c.schedule(100 * kMs); // an incomplete device's retry
    CHECK(loop.alarm == t0 + 100 * kMs);
    loop.c.schedule(0); // SIGHUP: at once
    CHECK(loop.alarm == t0);
    loop.c.schedule(50 * kMs); // an action's read-back: the pass due sooner takes it
    CHECK(loop.alarm == t0);
    loop.c.note(false); // a pass is due: this joins it
    CHECK(loop.alarm == t0);
}

TEST_CASE("the address settle window: due after the latest event, bounded by the first",
          "[coalescer]") {
    // daemon.hpp: RoCE GID tables are read 100 ms after the latest address event, at most
    // 1 s after the first of a flood.
    SettleWindow w(100 * kMs, 1000 * kMs);
    const uint64_t t0 = 5'000 * kMs;
    CHECK_FALSE(w.open());
    CHECK(w.event(t0) == t0 + 100 * kMs);
    CHECK(w.event(t0 + 60 * kMs) == t0 + 160 * kMs);
    CHECK(w.event(t0 + 950 * kMs) == t0 + 1000 * kMs);
    w.close();
    CHECK(w.event(t0 + 2000 * kMs) == t0 + 2100 * kMs); // a new window
    // A bound below the settle time is the settle time (a window is never cut short).
    SettleWindow tight(50 * kMs, 10 * kMs);
    CHECK(tight.event(t0) == t0 + 50 * kMs);
}
