// SPDX-License-Identifier: MIT
//
// A client of PackageKit (org.freedesktop.PackageKit on the system bus), the distribution's
// own installer service: rdmad asks it to install packages and never runs apt, dnf or rpm
// itself. Asynchronous on the daemon's sd-event loop, on a connection of its own opened when
// first needed. The API: PackageKit's src/org.freedesktop.PackageKit.xml (CreateTransaction)
// and src/org.freedesktop.PackageKit.Transaction.xml (Resolve, InstallPackages; the signals
// Package, ErrorCode, Finished; the property Percentage), PackageKit 1.2.6 as Debian 12 ships it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <systemd/sd-event.h>
#include <vector>

namespace rdmad::packagekit {

/// How one install ended.
struct Outcome {
    enum class Kind {
        installed, ///< InstallPackages finished with exit "success"
        missing,   ///< PackageKit is not on the bus (not installed, no activation file)
        failed,    ///< PackageKit answered with an error, resolved nothing, left the bus
                   ///< mid-transaction, sent a Finished that cannot be read, or never finished
    };
    Kind kind = Kind::failed;
    /// missing, failed: what went wrong, with the backend's own ErrorCode text when it sent one.
    std::string error;
    /// installed: the package ids InstallPackages was given ("name;version;arch;data").
    std::vector<std::string> package_ids;
};

class Client {
  public:
    using Done = std::function<void(const Outcome&)>;
    /// The install's progress, 0-100 (percent of InstallPackages' transaction), each time
    /// PackageKit announces a new value. PackageKit's "unknown" (101) is not passed on.
    using Progress = std::function<void(uint32_t percent)>;

    /// On `event`, which must outlive the client. `timeout_usec` bounds a whole install
    /// (Resolve and InstallPackages): a PackageKit that stops answering ends it as failed, and
    /// the transaction running then is cancelled (Transaction.Cancel).
    explicit Client(sd_event* event, uint64_t timeout_usec = 30ull * 60 * 1'000'000);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    /// Resolve `names` (PackageKit filters not-installed, newest, arch, not-source) to one
    /// package id each, then InstallPackages with only-trusted. `done` is called once, later,
    /// on the loop (never from within this call, never after the client is gone). `progress`,
    /// when given, is called on the loop while InstallPackages runs, never after `done`.
    void install(const std::vector<std::string>& names, Done done, Progress progress = {});

    /// Installs started and not ended.
    size_t running() const { return jobs_.size(); }

    struct Job;

  private:
    friend struct Job;
    bool connect(std::string& why);
    void create_transaction(uint64_t id);
    void finish(uint64_t id, Outcome outcome);
    void on_signal(const std::string& path, const std::string& member, void* message);
    /// org.freedesktop.DBus.Properties.PropertiesChanged of a transaction: its Percentage.
    void on_properties_changed(void* message);
    /// NameOwnerChanged: `old_owner` lost org.freedesktop.PackageKit; its transactions failed.
    void on_owner_gone(const std::string& old_owner);
    /// Transaction.Cancel() of the transaction at `path`, when the job's time bound ends it.
    void cancel(const std::string& path);

    sd_event* event_;
    uint64_t timeout_usec_;
    struct Connection;
    std::unique_ptr<Connection> connection_; ///< null until the first install
    std::map<uint64_t, std::unique_ptr<Job>> jobs_;
    uint64_t next_id_ = 1;
};

} // namespace rdmad::packagekit
