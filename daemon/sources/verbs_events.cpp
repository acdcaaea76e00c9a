// SPDX-License-Identifier: MIT
#include "sources/verbs_events.hpp"

#include "util/log.hpp"
#include "util/loop_edge.hpp"

#include <ctime>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/epoll.h>
#include <system_error>
#include <vector>

namespace rdmad {

namespace {

constexpr uint64_t kMinIntervalUsec = 1'000'000;

uint64_t now_usec() {
    struct timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000 + uint64_t(ts.tv_nsec) / 1000;
}

} // namespace

void VerbsEvents::CloseDevice::operator()(ibv_context* c) const {
    ibv_close_device(c);
}

VerbsEvents::VerbsEvents(sd_event* event, Handler handler)
    : event_(event), handler_(std::move(handler)) {
    // Accuracy 1 ms (0 would be sd-event's default slack of 250 ms); after the pass's other
    // work (its D-Bus signals).
    int r = sd_event_add_time(event_, into(timer_), CLOCK_MONOTONIC, 0, 1000, on_timer, this);
    if (r >= 0)
        r = sd_event_source_set_enabled(timer_.get(), SD_EVENT_OFF);
    if (r >= 0)
        r = sd_event_source_set_priority(timer_.get(), SD_EVENT_PRIORITY_IDLE);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "verbs timer");
}

void VerbsEvents::close(Context& c) {
    c.source.reset();
    c.context.reset();
}

void VerbsEvents::track(const std::set<std::string>& devices) {
    for (auto it = open_.begin(); it != open_.end();) {
        if (devices.count(it->first)) {
            ++it;
            continue;
        }
        close(it->second);
        it = open_.erase(it);
    }
    for (auto it = unopenable_.begin(); it != unopenable_.end();)
        it = devices.count(*it) ? std::next(it) : unopenable_.erase(it);

    wanted_.clear();
    for (const auto& name : devices)
        if (!open_.count(name) && !unopenable_.count(name))
            wanted_.insert(name);
    if (wanted_.empty()) {
        sd_event_source_set_enabled(timer_.get(), SD_EVENT_OFF);
        return;
    }
    int enabled = SD_EVENT_OFF;
    sd_event_source_get_enabled(timer_.get(), &enabled);
    if (enabled != SD_EVENT_OFF)
        return; // due already: it opens the latest wanted_
    const uint64_t now = now_usec();
    if (!last_open_usec_ || now - last_open_usec_ >= kMinIntervalUsec) {
        open_wanted(); // the first since a quiet spell (start-up, an isolated hotplug): now
        return;
    }
    if (sd_event_source_set_time(timer_.get(), last_open_usec_ + kMinIntervalUsec) < 0 ||
        sd_event_source_set_enabled(timer_.get(), SD_EVENT_ONESHOT) < 0)
        open_wanted(); // no timer: open now rather than never
}

int VerbsEvents::on_timer(sd_event_source*, uint64_t, void* userdata) {
    return at_loop_edge("verbs events",
                        [&] { static_cast<VerbsEvents*>(userdata)->open_wanted(); });
}

void VerbsEvents::open_wanted() {
    last_open_usec_ = now_usec();
    const std::set<std::string> wanted = std::move(wanted_);
    wanted_.clear();
    if (wanted.empty())
        return;
    // libibverbs lists only devices it can serve: a provider, an accessible uverbs node and a
    // matching ABI (DOMAIN.md §4.1).
    struct FreeList {
        void operator()(ibv_device** l) const { ibv_free_device_list(l); }
    };
    int count = 0;
    const std::unique_ptr<ibv_device*[], FreeList> list(ibv_get_device_list(&count));
    for (const auto& name : wanted) {
        ibv_device* match = nullptr;
        for (int i = 0; list && i < count; ++i)
            if (name == ibv_get_device_name(list[i]))
                match = list[i];
        std::unique_ptr<ibv_context, CloseDevice> ctx(match ? ibv_open_device(match) : nullptr);
        if (!ctx) {
            unopenable_.insert(name);
            if (!fallback_logged_) {
                log::with(log::Level::info, log::about(name),
                          "{}: libibverbs cannot open it (no provider, no access to its uverbs "
                          "device, or emulated hardware): following its ports through change "
                          "uevents and link changes only",
                          name);
                fallback_logged_ = true;
            }
            continue;
        }
        const int fd = ctx->async_fd;
        Context& c = open_[name];
        c.context = std::move(ctx);
        c.owner = this;
        c.name = name;
        int flags = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, flags | O_NONBLOCK);
        if (sd_event_add_io(event_, into(c.source), fd, EPOLLIN, on_io, &c) < 0) {
            close(c);
            open_.erase(name);
            unopenable_.insert(name);
        }
    }
}

int VerbsEvents::on_io(sd_event_source*, int, uint32_t, void* userdata) {
    auto* c = static_cast<Context*>(userdata);
    bool fatal = false;
    ibv_async_event ev;
    while (c->context && ibv_get_async_event(c->context.get(), &ev) == 0) {
        fatal = fatal || ev.event_type == IBV_EVENT_DEVICE_FATAL;
        ibv_ack_async_event(&ev);
    }
    std::string name = c->name;
    VerbsEvents* owner = c->owner;
    if (fatal) {
        // The device is going away; its remove uevent follows. Stop reading a dead context.
        owner->close(*c);
    }
    return at_loop_edge("verbs event", [&] { owner->handler_(name); });
}

} // namespace rdmad
