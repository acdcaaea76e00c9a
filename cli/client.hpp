// SPDX-License-Identifier: MIT
//
// The connection to rdmad: one system bus connection (local, or remote over ssh), the generated
// org.rdmad1.Manager proxy on it, synchronous calls, and D-Bus errors turned into messages.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sdbus {
class IConnection;
class Error;
} // namespace sdbus

namespace rdmactl {

/// A failure to report as "rdmactl: <what()>" with exit status 1. what() is already sanitized.
class Failure : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// A one-line, human message for a D-Bus error (the daemon's, the bus's, or sd-bus's own).
std::string error_message(const sdbus::Error& e);

/// DSCP (0-63) -> priority (0-7) entries, as Port.SetDSCPPriority takes them (a(yy)).
using DscpMap = std::vector<std::pair<std::uint8_t, std::uint8_t>>;

/// One difference Manager.Reconcile() found: (object path, setting, from, to).
struct Change {
    std::string path;
    std::string setting;
    std::string from;
    std::string to;
};

class Client {
  public:
    /// Connects to the system bus, or to `host`'s over ssh when `host` is not empty. The system
    /// bus address comes from DBUS_SYSTEM_BUS_ADDRESS when set (sd-bus reads it). Throws Failure.
    explicit Client(const std::string& host);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// Manager.Describe(), parsed. Throws Failure.
    nlohmann::json describe();
    /// Manager.GetDeviceByName(); nullopt when the daemon knows no such device (NoSuchObject or
    /// InvalidArgument: a name it rejects cannot name a device). Throws Failure otherwise.
    std::optional<std::string> device_by_name(const std::string& name);
    /// Manager.GetLinkByName(); as device_by_name().
    std::optional<std::string> link_by_name(const std::string& name);

    // The configuring calls (polkit action org.rdmad1.configure). They wait up to
    // kConfigureTimeout for the reply, since polkit may be asking the user for a password, and
    // throw Failure: "not authorized (polkit action org.rdmad1.configure): ..." for
    // AccessDenied, the daemon's own message for InvalidArgument and NotSupported.

    /// Port.SetPortType(type, persist) on the port object `port_path`.
    void set_port_type(const std::string& port_path, const std::string& type, bool persist);
    /// Port.SetPFCNoDrop(priorities, persist) on the port object `port_path`.
    void set_pfc_no_drop(const std::string& port_path, const std::vector<std::uint8_t>& priorities,
                         bool persist);
    /// Port.SetTrust(trust, persist): "dscp" or "pcp".
    void set_trust(const std::string& port_path, const std::string& trust, bool persist);
    /// Port.SetDSCPPriority(map, exclusive, persist).
    void set_dscp_priority(const std::string& port_path, const DscpMap& map, bool exclusive,
                           bool persist);
    /// Port.SetRDMACM(roce_mode, tos, persist): roce_mode "" and tos -1 leave that one alone.
    void set_rdma_cm(const std::string& port_path, const std::string& roce_mode, std::int32_t tos,
                     bool persist);
    /// Port.Revert(setting) on the port object `port_path`: "" drops every D-Bus setting of
    /// its device (every Set* request), "PortType" the port type of this port only.
    void revert(const std::string& port_path, const std::string& setting);
    /// Manager.Reconcile(dry_run). A dry run needs no authorization.
    std::vector<Change> reconcile(bool dry_run);
    /// Manager.Reload().
    void reload();
    /// Manager.InstallProviders(): the packages installing now.
    std::vector<std::string> install_providers();

    /// The bus connection, for verbs that subscribe to signals and drive it themselves
    /// (monitor: getEventLoopPollData() + processPendingRequest(), never an event loop thread).
    sdbus::IConnection& connection() { return *connection_; }

    /// The Failure to throw for `e`: for a bus that cannot be reached, "cannot reach the
    /// system bus at ADDRESS: REASON" or, with a host, "cannot reach HOST over ssh: REASON"
    /// (ssh's own last line); with a host, "rdmad is not running on HOST (org.rdmad1 has no
    /// owner on its system bus)"; else error_message(). `connecting`: `e` came from opening
    /// the connection, where AccessDenied is the socket's mode.
    Failure failure(const sdbus::Error& e, bool connecting = false) const;

  private:
    class ManagerProxy;
    /// Port.`method`(args...) on `port_path`, with the configuring calls' timeout and errors.
    template <typename... Args>
    void call_port(const std::string& port_path, const char* method, const Args&... args);
    /// DBUS_SYSTEM_BUS_ADDRESS, else sd-bus's default.
    std::string bus_address() const;
    /// The last line ssh wrote to its stderr, "ssh: " removed; "" when none.
    std::string ssh_reason() const;

    std::string host_;
    int ssh_stderr_ = -1; ///< memfd ssh writes its stderr to (with a host)
    std::unique_ptr<sdbus::IConnection> connection_;
    std::unique_ptr<ManagerProxy> manager_;
};

} // namespace rdmactl
