// SPDX-License-Identifier: MIT
#include "client.hpp"

#include "rdmad_api.hpp"

#include "org.rdmad1.Manager.proxy.h"
#include "table.hpp"

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <cstdlib>
#include <string_view>
#include <sys/mman.h>
#include <unistd.h>

namespace rdmactl {

namespace {

// The bus name, the root path and the daemon's named errors: dbus/rdmad_api.hpp.
using rdmad::api::kBusName;
using rdmad::api::kManagerPath;
constexpr std::string_view kNoSuchObject = rdmad::api::kNoSuchObject;
constexpr std::string_view kInvalidArgument = rdmad::api::kInvalidArgument;
constexpr std::string_view kFailed = rdmad::api::kFailed;
constexpr std::string_view kNotSupported = rdmad::api::kNotSupported;
constexpr std::string_view kAccessDenied = rdmad::api::kAccessDenied;

using rdmad::api::kConfigureAction;
using rdmad::api::kInstallProvidersAction;
using rdmad::api::kManagerInterface;
using rdmad::api::kPortInterface;

// How long a configuring call may take: polkit may be asking the user for a password
// (auth_admin_keep), and an mlx4 port type change re-creates the device. Well above
// sd-bus's default of 25 s.
constexpr auto kConfigureTimeout = std::chrono::seconds(150);

constexpr const char* kNotRunning =
    "rdmad is not running (org.rdmad1 has no owner on the system bus)";

// sd-bus's address of the system bus when DBUS_SYSTEM_BUS_ADDRESS is unset
// (systemd src/libsystemd/sd-bus/bus-internal.h DEFAULT_SYSTEM_BUS_ADDRESS).
constexpr const char* kDefaultSystemBus = "unix:path=/run/dbus/system_bus_socket";

bool is_not_running(const std::string& name) {
    // ServiceUnknown: the bus has no owner and cannot activate one; NameHasNoOwner: the owner
    // left between resolution and delivery. A bus that cannot be reached at all is another
    // story (connection_lost(), Client::Client()).
    return name == "org.freedesktop.DBus.Error.ServiceUnknown" ||
           name == "org.freedesktop.DBus.Error.NameHasNoOwner";
}

// The connection itself failed or went away: sd-bus's names for the errno values of
// connect(2), read(2) and write(2) on the bus socket (or on the pipe to ssh).
bool is_connection_error(const std::string& name) {
    return name == "org.freedesktop.DBus.Error.Disconnected" ||
           name == "org.freedesktop.DBus.Error.FileNotFound" ||
           name == "org.freedesktop.DBus.Error.NoServer" || name == "System.Error.ENOENT" ||
           name == "System.Error.ECONNREFUSED" || name == "System.Error.ECONNRESET" ||
           name == "System.Error.ENOTCONN" || name == "System.Error.EPIPE" ||
           name == "System.Error.EACCES";
}

// The errno text sdbus-c++ appends to its own message: "Failed to open system bus (No such
// file or directory)" -> "No such file or directory".
std::string reason_of(const sdbus::Error& e) {
    const std::string m = sanitize(e.getMessage());
    const auto open = m.rfind(" (");
    if (open != std::string::npos && !m.empty() && m.back() == ')')
        return m.substr(open + 2, m.size() - open - 3);
    return m.empty() ? sanitize(e.getName()) : m;
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
Failure configure_failure(const sdbus::Error& e, const char* action = kConfigureAction) {
    const std::string& name = e.getName();
    if (name == kAccessDenied)
        return Failure(std::string("not authorized (polkit action ") + action + "): " + detail(e));
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

Client::Client(const std::string& host) : host_(host) {
    try {
        if (host.empty()) {
            connection_ = sdbus::createSystemBusConnection();
        } else {
            // sd-bus runs "ssh -xT -- HOST systemd-stdio-bridge" (unixexec), which inherits
            // our stderr: give it a file instead, so that its complaint can be told in one
            // line naming the host (ssh_reason()) rather than spilled before ours.
            ssh_stderr_ = ::memfd_create("rdmactl-ssh-stderr", MFD_CLOEXEC);
            const int saved = ssh_stderr_ >= 0 ? ::dup(STDERR_FILENO) : -1;
            if (saved >= 0)
                ::dup2(ssh_stderr_, STDERR_FILENO); // dup2 clears CLOEXEC on fd 2
            try {
                connection_ = sdbus::createRemoteSystemBusConnection(host);
            } catch (...) {
                if (saved >= 0) {
                    ::dup2(saved, STDERR_FILENO);
                    ::close(saved);
                }
                throw;
            }
            if (saved >= 0) {
                ::dup2(saved, STDERR_FILENO);
                ::close(saved);
            }
        }
        manager_ = std::make_unique<ManagerProxy>(*connection_);
    } catch (const sdbus::Error& e) {
        // EACCES on connect(2) (sd-bus names it AccessDenied) is the socket's mode, not polkit.
        throw failure(e, /*connecting=*/true);
    }
}

std::string Client::bus_address() const {
    const char* address = std::getenv("DBUS_SYSTEM_BUS_ADDRESS");
    return sanitize(address && *address ? address : kDefaultSystemBus);
}

std::string Client::ssh_reason() const {
    if (ssh_stderr_ < 0)
        return {};
    std::string text;
    char buf[4096];
    ssize_t n;
    off_t at = 0;
    while ((n = ::pread(ssh_stderr_, buf, sizeof buf, at)) > 0 && text.size() < 65536) {
        text.append(buf, static_cast<std::size_t>(n));
        at += n;
    }
    // ssh's last line says why: "ssh: Could not resolve hostname x: Name or service not
    // known", "ssh: connect to host x port 22: Connection refused", "Permission denied
    // (publickey).", or the remote shell's "systemd-stdio-bridge: command not found".
    std::string last;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        std::string line = text.substr(start, end - start);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.pop_back();
        if (!line.empty())
            last = line;
        start = end + 1;
    }
    if (last.rfind("ssh: ", 0) == 0)
        last.erase(0, 5);
    return sanitize(last);
}

Failure Client::failure(const sdbus::Error& e, bool connecting) const {
    if (is_connection_error(e.getName()) ||
        (connecting && e.getName() == "org.freedesktop.DBus.Error.AccessDenied")) {
        if (!host_.empty()) {
            const std::string why = ssh_reason();
            return Failure("cannot reach " + sanitize(host_) +
                           " over ssh: " + (why.empty() ? reason_of(e) : why));
        }
        return Failure("cannot reach the system bus at " + bus_address() + ": " + reason_of(e));
    }
    if (!host_.empty() && is_not_running(e.getName()))
        return Failure("rdmad is not running on " + sanitize(host_) +
                       " (org.rdmad1 has no owner on its system bus)");
    return Failure(error_message(e));
}

Client::~Client() {
    manager_.reset();
    connection_.reset();
    if (ssh_stderr_ >= 0) {
        ::close(ssh_stderr_);
    }
}

nlohmann::json Client::describe() {
    std::string text;
    try {
        text = manager_->Describe();
    } catch (const sdbus::Error& e) {
        throw failure(e);
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
        throw failure(e);
    }
}

std::optional<std::string> Client::link_by_name(const std::string& name) {
    try {
        return manager_->GetLinkByName(name);
    } catch (const sdbus::Error& e) {
        if (is_lookup_miss(e))
            return std::nullopt;
        throw failure(e);
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
template <typename... Args>
void Client::call_port(const std::string& port_path, const char* method, const Args&... args) {
    try {
        auto proxy = sdbus::createProxy(*connection_, kBusName, port_path);
        proxy->callMethod(method)
            .onInterface(kPortInterface)
            .withTimeout(kConfigureTimeout)
            .withArguments(args...);
    } catch (const sdbus::Error& e) {
        throw is_connection_error(e.getName()) ? failure(e) : configure_failure(e);
    }
}

void Client::set_port_type(const std::string& port_path, const std::string& type, bool persist) {
    call_port(port_path, "SetPortType", type, persist);
}

void Client::set_pfc_no_drop(const std::string& port_path,
                             const std::vector<std::uint8_t>& priorities, bool persist) {
    call_port(port_path, "SetPFCNoDrop", priorities, persist);
}

void Client::set_trust(const std::string& port_path, const std::string& trust, bool persist) {
    call_port(port_path, "SetTrust", trust, persist);
}

void Client::set_dscp_priority(const std::string& port_path, const DscpMap& map, bool exclusive,
                               bool persist) {
    std::vector<sdbus::Struct<std::uint8_t, std::uint8_t>> entries; // a(yy)
    for (const auto& [dscp, prio] : map)
        entries.emplace_back(dscp, prio);
    call_port(port_path, "SetDSCPPriority", entries, exclusive, persist);
}

void Client::set_rdma_cm(const std::string& port_path, const std::string& roce_mode,
                         std::int32_t tos, bool persist) {
    call_port(port_path, "SetRDMACM", roce_mode, tos, persist);
}

void Client::revert(const std::string& port_path, const std::string& setting) {
    call_port(port_path, "Revert", setting);
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
        throw is_connection_error(e.getName()) ? failure(e) : configure_failure(e);
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
        throw is_connection_error(e.getName()) ? failure(e) : configure_failure(e);
    }
}

std::vector<std::string> Client::install_providers() {
    std::vector<std::string> packages;
    try {
        auto proxy = sdbus::createProxy(*connection_, kBusName, kManagerPath);
        proxy->callMethod("InstallProviders")
            .onInterface(kManagerInterface)
            .withTimeout(kConfigureTimeout)
            .storeResultsTo(packages);
    } catch (const sdbus::Error& e) {
        throw is_connection_error(e.getName()) ? failure(e)
                                               : configure_failure(e, kInstallProvidersAction);
    }
    return packages;
}

} // namespace rdmactl
