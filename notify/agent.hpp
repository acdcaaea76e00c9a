// SPDX-License-Identifier: MIT
//
// rdmad-notify's D-Bus side: follows org.rdmad1 on the system bus (ObjectManager signals,
// PropertiesChanged of devices, ports and the manager, NameOwnerChanged), feeds the Tracker,
// and at the end of each coalescing window posts its notifications with
// org.freedesktop.Notifications.Notify on the session bus. A notification about a missing verbs
// provider offers the action "install-providers" when rdmad's install_providers is "ask"; its
// ActionInvoked calls Manager.InstallProviders() (install_call.hpp) and the outcome replaces
// the notification. One thread: poll(2) on both buses' fds (and the install call's while it is
// out) and a signalfd for SIGINT/SIGTERM, with the window's deadline as poll's timeout.
#pragma once

#include <chrono>

namespace rdmad::notify {

struct AgentOptions {
    /// Signals are coalesced until none has come for this long...
    std::chrono::milliseconds quiet{1000};
    /// ...or this long after the first one.
    std::chrono::milliseconds longest{5000};
};

/// Runs until SIGINT or SIGTERM (returns 0) or until a bus fails (throws std::runtime_error
/// with a message for the user).
int run_agent(const AgentOptions& options);

} // namespace rdmad::notify
