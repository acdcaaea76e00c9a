// SPDX-License-Identifier: MIT
#include "client.hpp"

#include "org.rdmad1.Manager.proxy.h"
#include "table.hpp"

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <string_view>

namespace rdmactl {

namespace {

constexpr const char* kBusName = "org.rdmad1";
constexpr const char* kManagerPath = "/org/rdmad1";

// The daemon's named errors (dbus/org.rdmad1.Manager.xml, daemon/bus/errors.hpp).
constexpr std::string_view kNoSuchObject = "org.rdmad1.Error.NoSuchObject";
constexpr std::string_view kInvalidArgument = "org.rdmad1.Error.InvalidArgument";
constexpr std::string_view kFailed = "org.rdmad1.Error.Failed";
constexpr std::string_view kNotSupported = "org.rdmad1.Error.NotSupported";
constexpr std::string_view kAccessDenied = "org.freedesktop.DBus.Error.AccessDenied";

constexpr const char* kManagerInterface = "org.rdmad1.Manager";
constexpr const char* kPortInterface = "org.rdmad1.Port";
constexpr const char* kConfigureAction = "org.rdmad1.configure";

// How long a configuring call may take: polkit may be asking the user for a password
// (auth_admin_keep), and an mlx4 port type change re-creates the device. Well above
// sd-bus's default of 25 s.
constexpr auto kConfigureTimeout = std::chrono::seconds(150);

constexpr const char* kNotRunning =
    "rdmad is not running (org.rdmad1 has no owner on the system bus)";

bool is_not_running(const std::string& name) {
    // ServiceUnknown: the bus has no owner and cannot activate one; NameHasNoOwner: the owner
    // left between resolution and delivery. FileNotFound / ECONNREFUSED (sd-bus's names for
    // ENOENT / ECONNREFUSED on connect): there is no system bus socket to find rdmad on.
    return name == "org.freedesktop.DBus.Error.ServiceUnknown" ||
           name == "org.freedesktop.DBus.Error.NameHasNoOwner" ||
           name == "org.freedesktop.DBus.Error.FileNotFound" || name == "System.Error.ENOENT" ||
           name == "System.Error.ECONNREFUSED";
}

// What the daemon (or the bus) said, without the "[name] " prefix sdbus-c++ puts in what().
std::string detail(const sdbus::Error& e) {
    std::string m = sanitize(e.getMessage());
    return m.empty() ? sanitize(e.getName()) : m;
}

bool is_lookup_miss(const sdbus::Error& e) {
    return e.getName() == kNoSuchObject || e.getName() == kInvalidArgument;
}

// A configuring call's error: polkit's refusal names the action; the daemon's InvalidArgument
// and NotSupported messages are for the admin as they are ("port 2 is InfiniBand...",
// "file:line:column: reason").
Failure configure_failure(const sdbus::Error& e) {
    const std::string& name = e.getName();
    if (name == kAccessDenied)
        return Failure(std::string("not authorized (polkit action ") + kConfigureAction +
                       "): " + detail(e));
    if (name == kInvalidArgument || name == kNotSupported)
        return Failure(detail(e));
    return Failure(error_message(e));
}

} // namespace

std::string error_message(const sdbus::Error& e) {
    const std::string& name = e.getName();
    if (is_not_running(name))
        return kNotRunning;
    if (name == "org.freedesktop.DBus.Error.AccessDenied")
        return "access denied by the bus or rdmad: " + detail(e);
    if (name == "org.freedesktop.DBus.Error.NoReply" ||
        name == "org.freedesktop.DBus.Error.Timeout" || name == "System.Error.ETIMEDOUT")
        return "rdmad did not reply: " + detail(e);
    if (name == "org.freedesktop.DBus.Error.Disconnected" || name == "System.Error.ECONNRESET" ||
        name == "System.Error.ENOTCONN")
        return "lost the connection to the system bus: " + detail(e);
    if (name == "org.freedesktop.DBus.Error.UnknownMethod" ||
        name == "org.freedesktop.DBus.Error.UnknownObject" ||
        name == "org.freedesktop.DBus.Error.UnknownInterface" ||
        name == "org.freedesktop.DBus.Error.InvalidArgs")
        return "rdmad does not speak this version of org.rdmad1: " + detail(e);
    if (name == kNoSuchObject)
        return "no such object: " + detail(e);
    if (name == kInvalidArgument)
        return "invalid argument: " + detail(e);
    if (name == kFailed)
        return "rdmad failed: " + detail(e);
    if (name == kNotSupported)
        return "not supported: " + detail(e);
    return detail(e) + " (" + sanitize(name) + ")";
}

// The generated proxy on a connection we own: no proxy-owned connection, hence no thread
// (ARCHITECTURE-NOTES §5.8); every call is synchronous.
class Client::ManagerProxy final : public sdbus::ProxyInterfaces<org::rdmad1::Manager_proxy> {
  public:
    explicit ManagerProxy(sdbus::IConnection& connection)
        : ProxyInterfaces(connection, kBusName, kManagerPath) {
        registerProxy();
    }
    ~ManagerProxy() { unregisterProxy(); }
};

Client::Client(const std::string& host) {
    try {
        connection_ = host.empty() ? sdbus::createSystemBusConnection()
                                   : sdbus::createRemoteSystemBusConnection(host);
        manager_ = std::make_unique<ManagerProxy>(*connection_);
    } catch (const sdbus::Error& e) {
        if (is_not_running(e.getName()))
            throw Failure(kNotRunning);
        throw Failure("cannot connect to the system bus" +
                      (host.empty() ? std::string() : " of " + sanitize(host)) + ": " + detail(e));
    }
}

Client::~Client() = default;

nlohmann::json Client::describe() {
    std::string text;
    try {
        text = manager_->Describe();
    } catch (const sdbus::Error& e) {
        throw Failure(error_message(e));
    }
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw Failure(std::string("rdmad sent malformed JSON from Describe(): ") +
                      sanitize(e.what()));
    }
}

std::optional<std::string> Client::device_by_name(const std::string& name) {
    try {
        return manager_->GetDeviceByName(name);
    } catch (const sdbus::Error& e) {
        if (is_lookup_miss(e))
            return std::nullopt;
        throw Failure(error_message(e));
    }
}

std::optional<std::string> Client::link_by_name(const std::string& name) {
    try {
        return manager_->GetLinkByName(name);
    } catch (const sdbus::Error& e) {
        if (is_lookup_miss(e))
            return std::nullopt;
        throw Failure(error_message(e));
    }
}

// The configuring calls go through a plain IProxy on our connection rather than the generated
// proxies, for the timeout (the generated methods use sd-bus's default of 25 s).
//
// Interactive authorization: a client should set ALLOW_INTERACTIVE_AUTHORIZATION in the header
// of these calls (sd_bus_message_set_allow_interactive_authorization(), or bus-wide
// sd_bus_set_allow_interactive_authorization()) so that the daemon lets polkit ask the user.
// sdbus-c++ 1.2 offers neither: its Message and IConnection do not expose the sd_bus_message /
// sd_bus underneath (createBusConnection(sd_bus*) came only in sdbus-c++ 1.3). rdmad passes
// AllowUserInteraction to polkit's CheckAuthorization on every call anyway
// (daemon/bus/authorizer.cpp), so an authentication agent of the caller's session (e.g. the
// desktop's, or pkttyagent) is asked regardless of the flag. rdmactl does not start a
// pkttyagent itself, as systemctl does.
void Client::set_port_type(const std::string& port_path, const std::string& type, bool persist) {
    try {
        auto proxy = sdbus::createProxy(*connection_, kBusName, port_path);
        proxy->callMethod("SetPortType")
            .onInterface(kPortInterface)
            .withTimeout(kConfigureTimeout)
            .withArguments(type, persist);
    } catch (const sdbus::Error& e) {
        throw configure_failure(e);
    }
}

void Client::set_pfc_no_drop(const std::string& port_path,
                             const std::vector<std::uint8_t>& priorities, bool persist) {
    try {
        auto proxy = sdbus::createProxy(*connection_, kBusName, port_path);
        proxy->callMethod("SetPFCNoDrop")
            .onInterface(kPortInterface)
            .withTimeout(kConfigureTimeout)
            .withArguments(priorities, persist);
    } catch (const sdbus::Error& e) {
        throw configure_failure(e);
    }
}

std::vector<Change> Client::reconcile(bool dry_run) {
    std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> result;
    try {
        auto proxy = sdbus::createProxy(*connection_, kBusName, kManagerPath);
        proxy->callMethod("Reconcile")
            .onInterface(kManagerInterface)
            .withTimeout(kConfigureTimeout)
            .withArguments(dry_run)
            .storeResultsTo(result);
    } catch (const sdbus::Error& e) {
        throw configure_failure(e);
    }
    std::vector<Change> changes;
    for (const auto& r : result)
        changes.push_back({std::get<0>(r), std::get<1>(r), std::get<2>(r), std::get<3>(r)});
    return changes;
}

void Client::reload() {
    try {
        auto proxy = sdbus::createProxy(*connection_, kBusName, kManagerPath);
        proxy->callMethod("Reload").onInterface(kManagerInterface).withTimeout(kConfigureTimeout);
    } catch (const sdbus::Error& e) {
        throw configure_failure(e);
    }
}

} // namespace rdmactl
