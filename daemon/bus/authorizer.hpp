// SPDX-License-Identifier: MIT
//
// Authorization of mutating D-Bus methods: polkit's CheckAuthorization for the action
// org.rdmad1.configure, asked asynchronously on the daemon's own connection (the loop keeps
// running while polkit asks the user); uid 0 is allowed when polkit is not on the bus;
// everyone else is denied. Reads need no authorization.
#pragma once

#include "rdmad_api.hpp"

#include <functional>
#include <string>
#include <systemd/sd-bus.h>

namespace rdmad {

class Authorizer {
  public:
    /// The polkit action every mutating method checks (dbus/org.rdmad1.policy).
    static constexpr const char* kAction = api::kConfigureAction;

    /// Ask on `bus`, which must outlive the authorizer; calls still pending when the bus
    /// closes are dropped with it, unanswered.
    explicit Authorizer(sd_bus* bus) : bus_(bus) {}

    using Done = std::function<void(bool allowed, std::string why)>;
    /// Decide for the unique bus name `sender`; `done(allowed, reason)` is called later on
    /// the loop, at most once (never when the bus closes first).
    void check(const std::string& sender, Done done);

  private:
    void fallback_to_uid(const std::string& sender, Done done);
    sd_bus* bus_;
};

} // namespace rdmad
