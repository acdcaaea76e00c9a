// SPDX-License-Identifier: MIT
#include "client.hpp"

#include "org.rdmad1.Manager.proxy.h"
#include "table.hpp"

#include <sdbus-c++/sdbus-c++.h>

#include <string_view>

namespace rdmactl {

namespace {

constexpr const char* kBusName = "org.rdmad1";
constexpr const char* kManagerPath = "/org/rdmad1";

// The daemon's named errors (dbus/org.rdmad1.Manager.xml, daemon/bus/errors.hpp).
constexpr std::string_view kNoSuchObject = "org.rdmad1.Error.NoSuchObject";
constexpr std::string_view kInvalidArgument = "org.rdmad1.Error.InvalidArgument";
constexpr std::string_view kFailed = "org.rdmad1.Error.Failed";

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

} // namespace rdmactl
