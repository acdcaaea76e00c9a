// SPDX-License-Identifier: MIT
#include "sources/verbs_events.hpp"

#include "util/log.hpp"
#include "util/loop_edge.hpp"

#include <ctime>
#include <dlfcn.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/epoll.h>
#include <sys/stat.h>
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

/// The libibverbs functions rdmad calls, typed from <infiniband/verbs.h> so that a mismatch
/// fails to compile. ibv_get_async_event() and ibv_ack_async_event() are real exported
/// functions (verbs.h declares them, unlike the static inline ibv_query_port() wrappers).
struct VerbsLibrary {
    decltype(&ibv_get_device_list) get_device_list = nullptr;
    decltype(&ibv_free_device_list) free_device_list = nullptr;
    decltype(&ibv_get_device_name) get_device_name = nullptr;
    decltype(&ibv_open_device) open_device = nullptr;
    decltype(&ibv_close_device) close_device = nullptr;
    decltype(&ibv_get_async_event) get_async_event = nullptr;
    decltype(&ibv_ack_async_event) ack_async_event = nullptr;
};

template <typename F> bool bind(void* handle, F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(handle, name));
    return f != nullptr;
}

/// libibverbs, loaded at the first call for the whole process and never unloaded; null (and
/// said once in the log) when it cannot be loaded or lacks a function.
const VerbsLibrary* verbs_library() {
    static const VerbsLibrary* const loaded = []() -> const VerbsLibrary* {
        // The SONAME libibverbs has had since rdma-core 13 (libibverbs/CMakeLists.txt: "1").
        void* handle = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            log::info("verbs async events off: {}", dlerror());
            return nullptr;
        }
        static VerbsLibrary lib;
        if (bind(handle, lib.get_device_list, "ibv_get_device_list") &&
            bind(handle, lib.free_device_list, "ibv_free_device_list") &&
            bind(handle, lib.get_device_name, "ibv_get_device_name") &&
            bind(handle, lib.open_device, "ibv_open_device") &&
            bind(handle, lib.close_device, "ibv_close_device") &&
            bind(handle, lib.get_async_event, "ibv_get_async_event") &&
            bind(handle, lib.ack_async_event, "ibv_ack_async_event"))
            return &lib;
        log::info("verbs async events off: libibverbs.so.1 lacks a function rdmad calls");
        return nullptr;
    }();
    return loaded;
}

} // namespace

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

void VerbsEvents::track(const Devices& devices) {
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
    for (const auto& [name, node] : devices)
        if (!open_.count(name) && !unopenable_.count(name))
            wanted_.emplace(name, node);
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
    const Devices wanted = std::move(wanted_);
    wanted_.clear();
    // libibverbs lists only devices it can serve: a provider, an accessible uverbs node and a
    // matching ABI (DOMAIN.md §4.1). Without a char device there is nothing to ask it.
    std::vector<std::string> openable;
    for (const auto& [name, node] : wanted) {
        struct stat st {};
        if (stat(node.c_str(), &st) == 0)
            openable.push_back(name);
        else
            not_openable(name);
    }
    const VerbsLibrary* lib = openable.empty() ? nullptr : verbs_library();
    if (!lib) {
        for (const auto& name : openable)
            not_openable(name);
        return;
    }
    struct FreeList {
        decltype(&ibv_free_device_list) free;
        void operator()(ibv_device** l) const { free(l); }
    };
    int count = 0;
    const std::unique_ptr<ibv_device*[], FreeList> list(lib->get_device_list(&count),
                                                        FreeList{lib->free_device_list});
    for (const auto& name : openable) {
        ibv_device* match = nullptr;
        for (int i = 0; list && i < count; ++i)
            if (name == lib->get_device_name(list[i]))
                match = list[i];
        std::unique_ptr<ibv_context, CloseDevice> ctx(match ? lib->open_device(match) : nullptr,
                                                      CloseDevice{lib->close_device});
        if (!ctx) {
            not_openable(name);
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

void VerbsEvents::not_openable(const std::string& name) {
    unopenable_.insert(name);
    if (fallback_logged_)
        return;
    log::with(log::Level::info, log::about(name),
              "{}: libibverbs cannot open it (no provider, no access to its uverbs device, or "
              "emulated hardware): following its ports through change uevents and link "
              "changes only; said once, for the first device that cannot be opened "
              "(Device.VerbsDevice names each one's char device)",
              name);
    fallback_logged_ = true;
}

int VerbsEvents::on_io(sd_event_source*, int, uint32_t, void* userdata) {
    auto* c = static_cast<Context*>(userdata);
    const VerbsLibrary* lib = verbs_library(); // loaded: it opened this context
    bool fatal = false;
    ibv_async_event ev;
    while (c->context && lib->get_async_event(c->context.get(), &ev) == 0) {
        fatal = fatal || ev.event_type == IBV_EVENT_DEVICE_FATAL;
        lib->ack_async_event(&ev);
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
