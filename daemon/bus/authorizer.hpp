// SPDX-License-Identifier: MIT
//
// Authorization of mutating D-Bus methods: polkit's CheckAuthorization for the action
// org.rdmad1.configure, asked asynchronously on the daemon's own connection (the loop keeps
// running while polkit asks the user); uid 0 is allowed when polkit is not on the bus;
// everyone else is denied. Reads need no authorization.
#pragma once

#include <functional>
#include <memory>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace rdmad {

class Authorizer {
  public:
    /// The polkit action every mutating method checks (dbus/org.rdmad1.policy).
    static constexpr const char* kAction = "org.rdmad1.configure";

    explicit Authorizer(sdbus::IConnection& connection);

    /// Decide for the sender of the method call being handled now; `done(allowed, reason)` is
    /// called later on the loop, exactly once.
    void check(const std::string& sender, std::function<void(bool, std::string)> done);

  private:
    void fallback_to_uid(const std::string& sender,
                         std::shared_ptr<std::function<void(bool, std::string)>> done);

    std::unique_ptr<sdbus::IProxy> polkit_;
    std::unique_ptr<sdbus::IProxy> bus_driver_;
};

} // namespace rdmad
