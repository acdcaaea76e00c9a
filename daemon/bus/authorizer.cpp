// SPDX-License-Identifier: MIT
#include "bus/authorizer.hpp"

#include "bus/sd_bus_ptr.hpp"
#include "util/log.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

namespace rdmad {
namespace {

struct Pending {
    Authorizer* self;
    std::string sender;
    Authorizer::Done done;
    const char* action; ///< a string constant of rdmad_api.hpp
};

/// A call whose reply goes to `handler` with `pending` (freed with the call, answered or
/// not): the slot floats, owned by the bus.
template <typename... Args>
int call_async(sd_bus* bus, sd_bus_message_handler_t handler, std::unique_ptr<Pending>& pending,
               const char* destination, const char* path, const char* interface,
               const char* member, const char* types, Args... args) {
    sd_bus_slot* slot = nullptr;
    int r = sd_bus_call_method_async(bus, &slot, destination, path, interface, member, handler,
                                     pending.get(), types, args...);
    if (r < 0)
        return r;
    sd_bus_slot_set_destroy_callback(slot, [](void* p) { delete static_cast<Pending*>(p); });
    sd_bus_slot_set_floating(slot, 1);
    sd_bus_slot_unref(slot);
    pending.release();
    return 0;
}

std::string error_text(const sd_bus_error* e) {
    return e && e->message ? e->message : (e && e->name ? e->name : "unknown error");
}

} // namespace

size_t Authorizer::pending(const std::string& sender) const {
    auto it = pending_.find(sender);
    return it == pending_.end() ? 0 : it->second;
}

Authorizer::Done Authorizer::counted(const std::string& sender, Done done) {
    ++pending_[sender];
    return [this, sender, done = std::move(done)](bool allowed, std::string why) {
        if (auto it = pending_.find(sender); it != pending_.end() && --it->second == 0)
            pending_.erase(it);
        done(allowed, std::move(why));
    };
}

void Authorizer::check(const std::string& sender, Done done, const char* action) {
    auto pending =
        std::make_unique<Pending>(Pending{this, sender, counted(sender, std::move(done)), action});
    // polkit's CheckAuthorization((sa{sv}) subject, s action_id, a{ss} details, u flags,
    // s cancellation_id) -> (bba{ss}); subject kind "system-bus-name" with the unique name, so
    // polkit resolves the caller itself (polkit's org.freedesktop.PolicyKit1.Authority docs).
    const uint32_t flags = 1; // AllowUserInteraction: polkit may ask the user (auth_admin_keep)
    auto on_reply = [](sd_bus_message* m, void* userdata, sd_bus_error*) -> int {
        auto* p = static_cast<Pending*>(userdata);
        try {
            if (const sd_bus_error* e = sd_bus_message_get_error(m)) {
                if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                           SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
                    p->self->fallback_to_uid(p->sender, std::move(p->done), p->action);
                    return 0;
                }
                log::warning("polkit: {}: {}", e->name ? e->name : "", error_text(e));
                p->done(false, "polkit failed: " + error_text(e));
                return 0;
            }
            int authorized = 0, challenge = 0;
            int r = sd_bus_message_enter_container(m, 'r', "bba{ss}");
            if (r >= 0)
                r = sd_bus_message_read(m, "bb", &authorized, &challenge);
            if (r < 0) {
                p->done(false, std::string("polkit's reply cannot be read: ") + std::strerror(-r));
                return 0;
            }
            p->done(authorized != 0,
                    authorized ? "" : std::string("not authorized by polkit for ") + p->action);
        } catch (const std::exception& e) {
            log::error("authorization: {}", e.what());
        }
        return 0;
    };
    int r =
        call_async(bus_, on_reply, pending, "org.freedesktop.PolicyKit1",
                   "/org/freedesktop/PolicyKit1/Authority", "org.freedesktop.PolicyKit1.Authority",
                   "CheckAuthorization", "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s",
                   sender.c_str(), action, 0, flags, "");
    if (r < 0)
        fallback_to_uid(sender, std::move(pending->done), action);
}

void Authorizer::fallback_to_uid(const std::string& sender, Done done, const char* action) {
    // Without polkit only root may configure. The uid comes from the bus daemon, never /proc.
    auto pending = std::make_unique<Pending>(Pending{this, sender, std::move(done), action});
    auto on_reply = [](sd_bus_message* m, void* userdata, sd_bus_error*) -> int {
        auto* p = static_cast<Pending*>(userdata);
        try {
            if (const sd_bus_error* e = sd_bus_message_get_error(m)) {
                p->done(false, "cannot identify the caller: " + error_text(e));
                return 0;
            }
            uint32_t uid = UINT32_MAX;
            if (int r = sd_bus_message_read(m, "u", &uid); r < 0) {
                p->done(false, std::string("cannot identify the caller: ") + std::strerror(-r));
                return 0;
            }
            p->done(uid == 0, uid == 0 ? "" : "polkit is not running and the caller is not root");
        } catch (const std::exception& e) {
            log::error("authorization: {}", e.what());
        }
        return 0;
    };
    int r = call_async(bus_, on_reply, pending, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                       "org.freedesktop.DBus", "GetConnectionUnixUser", "s", sender.c_str());
    if (r < 0)
        pending->done(false, std::string("cannot identify the caller: ") + std::strerror(-r));
}

} // namespace rdmad
