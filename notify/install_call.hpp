// SPDX-License-Identifier: MIT
//
// rdmad-notify's one configuring call: org.rdmad1.Manager.InstallProviders() on the system bus,
// made when the user clicks a notification's "install-providers" action. Its header carries
// ALLOW_INTERACTIVE_AUTHORIZATION (D-Bus Specification, "Message Format": header flag 0x4),
// so that rdmad lets polkit's authentication agent ask the user for
// org.rdmad1.install-providers (auth_admin_keep) instead of refusing at once. sdbus-c++ 1.2
// cannot set that flag (cli/client.cpp says why), so the call goes through sd-bus on a
// connection of its own, opened for the call and closed with it; the agent polls its fd
// beside the others while the call is out.
#pragma once

#include <systemd/sd-bus.h>

#include <chrono>
#include <optional>
#include <poll.h>
#include <string>
#include <vector>

namespace rdmad::notify {

class InstallCall {
  public:
    /// How a call ended: the packages rdmad installs now (InstallProviders' reply, sorted) or
    /// the D-Bus error (error_name not ""), e.g. org.freedesktop.DBus.Error.AccessDenied,
    /// org.rdmad1.Error.NotSupported, org.freedesktop.DBus.Error.NoReply after `timeout`.
    struct Outcome {
        std::vector<std::string> packages;
        std::string error_name;
        std::string error_message;
    };

    /// Connects to the system bus and sends the call, which may take `timeout` (the user
    /// answering polkit's dialog included). Throws std::runtime_error (the errno's text) when
    /// the bus cannot be reached.
    explicit InstallCall(std::chrono::seconds timeout);
    ~InstallCall();
    InstallCall(const InstallCall&) = delete;
    InstallCall& operator=(const InstallCall&) = delete;

    /// What to poll(2) for, and the longest poll may wait in ms (-1: no deadline).
    pollfd poll_fd() const;
    int poll_timeout_ms() const;
    /// Processes what came on the connection; the outcome once the call ended (a lost
    /// connection ends it too, as an error).
    std::optional<Outcome> process();

  private:
    static int on_reply(sd_bus_message* reply, void* userdata, sd_bus_error* error);

    sd_bus* bus_ = nullptr;
    sd_bus_slot* slot_ = nullptr;
    std::optional<Outcome> outcome_;
};

} // namespace rdmad::notify
