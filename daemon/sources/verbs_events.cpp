// SPDX-License-Identifier: MIT
#include "sources/verbs_events.hpp"

#include "util/log.hpp"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/epoll.h>
#include <vector>

namespace rdmad {

VerbsEvents::VerbsEvents(sd_event* event, Handler handler)
    : event_(event), handler_(std::move(handler)) {}

VerbsEvents::~VerbsEvents() {
    for (auto& [_, c] : open_)
        close(c);
}

void VerbsEvents::close(Context& c) {
    sd_event_source_disable_unref(c.source);
    c.source = nullptr;
    if (c.context)
        ibv_close_device(c.context);
    c.context = nullptr;
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

    std::vector<std::string> wanted;
    for (const auto& name : devices)
        if (!open_.count(name) && !unopenable_.count(name))
            wanted.push_back(name);
    if (wanted.empty())
        return;

    // libibverbs lists only devices it can serve: a provider, an accessible uverbs node and a
    // matching ABI (DOMAIN.md §4.1).
    int count = 0;
    ibv_device** list = ibv_get_device_list(&count);
    for (const auto& name : wanted) {
        ibv_device* match = nullptr;
        for (int i = 0; list && i < count; ++i)
            if (name == ibv_get_device_name(list[i]))
                match = list[i];
        ibv_context* ctx = match ? ibv_open_device(match) : nullptr;
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
        Context& c = open_[name];
        c.context = ctx;
        c.owner = this;
        c.name = name;
        int flags = fcntl(ctx->async_fd, F_GETFL);
        fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
        if (sd_event_add_io(event_, &c.source, ctx->async_fd, EPOLLIN, on_io, &c) < 0) {
            close(c);
            open_.erase(name);
            unopenable_.insert(name);
        }
    }
    if (list)
        ibv_free_device_list(list);
}

int VerbsEvents::on_io(sd_event_source*, int, uint32_t, void* userdata) {
    auto* c = static_cast<Context*>(userdata);
    bool fatal = false;
    ibv_async_event ev;
    while (c->context && ibv_get_async_event(c->context, &ev) == 0) {
        fatal = fatal || ev.event_type == IBV_EVENT_DEVICE_FATAL;
        ibv_ack_async_event(&ev);
    }
    std::string name = c->name;
    VerbsEvents* owner = c->owner;
    if (fatal) {
        // The device is going away; its remove uevent follows. Stop reading a dead context.
        owner->close(*c);
    }
    owner->handler_(name);
    return 0;
}

} // namespace rdmad
