// SPDX-License-Identifier: MIT
//
// Authorization of mutating D-Bus methods: polkit's CheckAuthorization for the action
// org.rdmad1.configure, asked asynchronously on the daemon's own connection (the loop keeps
// running while polkit asks the user); uid 0 is allowed when polkit is not on the bus;
// everyone else is denied. Reads need no authorization.
#pragma once

#include "rdmad_api.hpp"

#include <functional>
#include <map>
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

    /// Calls of one caller that may wait for polkit at once: the bus daemon allows a
    /// connection 128 pending replies (max_replies_per_connection), and one caller must not
    /// take them all from everyone else's checks.
    static constexpr size_t kMaxPendingPerCaller = 16;

    using Done = std::function<void(bool allowed, std::string why)>;
    /// Decide for the unique bus name `sender`; `done(allowed, reason)` is called later on
    /// the loop, at most once (never when the bus closes first). polkit may ask the caller's
    /// user whatever the call's ALLOW_INTERACTIVE_AUTHORIZATION flag says: rdmactl cannot set
    /// it (cli/client.cpp says why).
    /// `action`: the polkit action asked (dbus/org.rdmad1.policy), kAction unless a method
    /// has its own (org.rdmad1.install-providers).
    void check(const std::string& sender, Done done, const char* action = kAction);
    /// Checks of `sender` not decided yet.
    size_t pending(const std::string& sender) const;

  private:
    void fallback_to_uid(const std::string& sender, Done done, const char* action);
    /// `done`, counted as pending for `sender` until it is called.
    Done counted(const std::string& sender, Done done);
    sd_bus* bus_;
    std::map<std::string, size_t> pending_;
};

} // namespace rdmad
