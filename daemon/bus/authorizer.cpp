// SPDX-License-Identifier: MIT
#include "bus/authorizer.hpp"

#include "util/log.hpp"

#include <map>
#include <tuple>

namespace rdmad {

Authorizer::Authorizer(sdbus::IConnection& connection)
    // Proxies on the daemon's connection: no thread of their own, replies arrive on the loop.
    : polkit_(sdbus::createProxy(connection, "org.freedesktop.PolicyKit1",
                                 "/org/freedesktop/PolicyKit1/Authority")),
      bus_driver_(sdbus::createProxy(connection, "org.freedesktop.DBus", "/org/freedesktop/DBus")) {
    polkit_->finishRegistration();
    bus_driver_->finishRegistration();
}

void Authorizer::check(const std::string& sender, std::function<void(bool, std::string)> done) {
    auto callback = std::make_shared<std::function<void(bool, std::string)>>(std::move(done));
    // polkit's CheckAuthorization((sa{sv}) subject, s action_id, a{ss} details, u flags,
    // s cancellation_id) -> (bba{ss}); subject kind "system-bus-name" with the unique name, so
    // polkit resolves the caller itself (polkit's org.freedesktop.PolicyKit1.Authority docs).
    sdbus::Struct<std::string, std::map<std::string, sdbus::Variant>> subject{
        "system-bus-name", {{"name", sdbus::Variant(sender)}}};
    std::map<std::string, std::string> details;
    const uint32_t flags = 1; // AllowUserInteraction: polkit may ask the user (auth_admin_keep)
    try {
        polkit_->callMethodAsync("CheckAuthorization")
            .onInterface("org.freedesktop.PolicyKit1.Authority")
            .withArguments(subject, std::string(kAction), details, flags, std::string())
            .uponReplyInvoke(
                [this, sender, callback](const sdbus::Error* error,
                                         sdbus::Struct<bool, bool, std::map<std::string, std::string>>
                                             result) {
                    if (error) {
                        const std::string& name = error->getName();
                        if (name == "org.freedesktop.DBus.Error.ServiceUnknown" ||
                            name == "org.freedesktop.DBus.Error.NameHasNoOwner") {
                            fallback_to_uid(sender, callback);
                            return;
                        }
                        log::warning("polkit: {}: {}", name, error->getMessage());
                        (*callback)(false, "polkit failed: " + error->getMessage());
                        return;
                    }
                    const bool allowed = std::get<0>(result);
                    (*callback)(allowed, allowed ? "" : "not authorized by polkit for " +
                                                            std::string(kAction));
                });
    } catch (const sdbus::Error& e) {
        fallback_to_uid(sender, callback);
    }
}

void Authorizer::fallback_to_uid(const std::string& sender,
                                 std::shared_ptr<std::function<void(bool, std::string)>> done) {
    // Without polkit only root may configure. The uid comes from the bus daemon, never /proc.
    try {
        bus_driver_->callMethodAsync("GetConnectionUnixUser")
            .onInterface("org.freedesktop.DBus")
            .withArguments(sender)
            .uponReplyInvoke([done](const sdbus::Error* error, uint32_t uid) {
                if (error) {
                    (*done)(false, "cannot identify the caller: " + error->getMessage());
                    return;
                }
                (*done)(uid == 0, uid == 0 ? "" : "polkit is not running and the caller is not root");
            });
    } catch (const sdbus::Error& e) {
        (*done)(false, "cannot identify the caller: " + e.getMessage());
    }
}

} // namespace rdmad
