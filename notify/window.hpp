// SPDX-License-Identifier: MIT
//
// The coalescing window of rdmad-notify: a burst of signals becomes one flush. The flush comes
// once the signals have stopped for `quiet`, and at the latest `longest` after the first one
// (a steady trickle of changes still gets told). Times are plain values, so tests need no clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>

namespace rdmad::notify {

class Window {
  public:
    using Clock = std::chrono::steady_clock;
    using Duration = Clock::duration;
    using TimePoint = Clock::time_point;

    Window(Duration quiet, Duration longest) : quiet_(quiet), longest_(std::max(quiet, longest)) {}

    /// A signal changed something at `now`.
    void event(TimePoint now) {
        if (!first_)
            first_ = now;
        last_ = now;
    }
    /// When to flush; nullopt when nothing waits.
    std::optional<TimePoint> deadline() const {
        if (!first_)
            return std::nullopt;
        return std::min(last_ + quiet_, *first_ + longest_);
    }
    /// Whether the flush is due at `now`; when it is, the window closes.
    bool due(TimePoint now) {
        auto d = deadline();
        if (!d || now < *d)
            return false;
        first_.reset();
        return true;
    }

  private:
    Duration quiet_;
    Duration longest_;
    std::optional<TimePoint> first_;
    TimePoint last_{};
};

} // namespace rdmad::notify
