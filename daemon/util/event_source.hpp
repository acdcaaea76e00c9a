// SPDX-License-Identifier: MIT
//
// RAII for sd-event loops and sources. A class that keeps them as members tears them down in
// reverse member order, so its destructor has nothing to do.
#pragma once

#include <memory>
#include <systemd/sd-event.h>

namespace rdmad {

struct EventUnref {
    void operator()(sd_event* e) const { sd_event_unref(e); }
};
struct EventSourceDisableUnref {
    // Disabled first: a source whose callback holds a reference elsewhere (sd-event keeps
    // floating ones) must not fire once its owner is gone (sd_event_source_unref(3)).
    void operator()(sd_event_source* s) const { sd_event_source_disable_unref(s); }
};

using EventLoop = std::unique_ptr<sd_event, EventUnref>;
using EventSource = std::unique_ptr<sd_event_source, EventSourceDisableUnref>;

/// Adds through sd-event's out-parameter into an EventSource:
/// `sd_event_add_io(event, into(source_), ...)`; the source is taken at the end of the call's
/// full expression, only when the call gave one.
class EventSourceOut {
  public:
    explicit EventSourceOut(EventSource& into) : into_(into) {}
    ~EventSourceOut() {
        if (raw_)
            into_.reset(raw_);
    }
    EventSourceOut(const EventSourceOut&) = delete;
    EventSourceOut& operator=(const EventSourceOut&) = delete;
    operator sd_event_source**() { return &raw_; }

  private:
    EventSource& into_;
    sd_event_source* raw_ = nullptr;
};
inline EventSourceOut into(EventSource& source) {
    return EventSourceOut(source);
}

} // namespace rdmad
