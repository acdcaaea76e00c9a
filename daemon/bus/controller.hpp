// SPDX-License-Identifier: MIT
//
// What the mutating D-Bus methods do, in the daemon's terms. bus/ owns the methods' semantics
// (argument checks, error names, polkit) and calls these once the arguments are valid and,
// for a change, the caller is authorized. No D-Bus type crosses this line.
#pragma once

#include "config/desired.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace rdmad {

/// One difference between desired and actual state, as Manager.Reconcile() returns it:
/// (object path, setting, from, to).
using Change = std::tuple<std::string, std::string, std::string, std::string>;
using ChangeList = std::vector<Change>;

/// A method refused: `name` is one of the error names of dbus/rdmad_api.hpp; `message` is
/// kept whole, NUL bytes included (what() is a C string and would end at the first one).
class MethodError : public std::runtime_error {
  public:
    MethodError(const char* name, const std::string& message)
        : std::runtime_error(message), name_(name), message_(message) {}
    const char* name() const { return name_; }
    const std::string& message() const { return message_; }

  private:
    const char* name_;
    std::string message_;
};

class Controller {
  public:
    virtual ~Controller() = default;
    /// Before polkit is asked: can port `port` of the device at `device_syspath` take
    /// `type` (already one of "ib", "eth", "auto")? Throws MethodError (NoSuchObject when the
    /// device is gone, NotSupported when it has no port type switch, InvalidArgument for a
    /// pair the hardware refuses).
    virtual void check_port_type(const std::string& device_syspath, uint32_t port,
                                 const std::string& type, bool persist) = 0;
    /// Port.SetPortType, authorized: returns once the bus shows the new desired state.
    virtual void set_port_type(const std::string& device_syspath, uint32_t port,
                               const std::string& type, bool persist) = 0;
    /// Before polkit is asked: can the device at `device_syspath` take a DCB setting (PFC, the
    /// DSCP trust and map: Ethernet's)? Throws MethodError (NoSuchObject, NotSupported for a
    /// device without Ethernet ports, naming `setting`: "PFC", "the DCB APP table (DSCP trust and map)").
    virtual void check_pfc(const std::string& device_syspath, const std::string& setting) = 0;
    /// Port.SetPFCNoDrop, authorized; `priorities` valid (api::pfc_priorities_error) and
    /// ascending.
    virtual void set_pfc(const std::string& device_syspath, const std::vector<uint8_t>& priorities,
                         bool persist) = 0;
    /// Before polkit is asked: can the device at `device_syspath` take RDMA-CM defaults?
    /// Throws MethodError (NoSuchObject, NotSupported for a device without a RoCE port).
    virtual void check_rdma_cm(const std::string& device_syspath) = 0;
    /// Port.SetTrust, SetDSCPPriority, SetRDMACM, authorized: `request` sets the keys asked
    /// (valid values); returns once the bus shows the new desired state. Throws MethodError
    /// (NoSuchObject, Failed when the state file cannot be written).
    virtual void set_settings(const std::string& device_syspath, const Rule& request,
                              bool persist) = 0;
    /// Manager.Reconcile: the differences planned (and, unless `dry_run`, acted on).
    virtual ChangeList reconcile(bool dry_run) = 0;
    /// How Manager.Reload ends: nullopt once what was read is in force, else the error
    /// (InvalidArgument naming file:line:column when the configuration is bad, the last good
    /// rules staying in force; Failed when it could not be read at all).
    using ReloadDone = std::function<void(std::optional<MethodError>)>;
    /// Manager.Reload, authorized: read the configuration again off the loop (megabytes of
    /// drop-ins must not hold other calls) with a read that starts after this call; `done` is
    /// called once, on the loop, when it is in force (the bus shows the new desired state).
    virtual void reload(ReloadDone done) = 0;
    /// Before polkit is asked: may providers be installed? Throws MethodError(NotSupported)
    /// when `[daemon] install_providers` is "never".
    virtual void check_install_providers() = 0;
    /// Manager.InstallProviders, authorized: start installing (through PackageKit) the package
    /// of every missing rdma-core provider, failed before or not; returns at once with every
    /// package installing now, sorted (empty when no provider is missing). The outcome shows
    /// in each device's ProviderInstalled and Problems.
    virtual std::vector<std::string> install_providers() = 0;
    /// Port.Revert, authorized: drop what SetPortType and SetPFCNoDrop asked of the device at
    /// `device_syspath` (`setting` "", already checked) or only the type of its port `port`
    /// ("PortType"); returns once the bus shows the new desired state. Throws MethodError
    /// (NoSuchObject when the device is gone, Failed when the state file cannot be written).
    virtual void revert(const std::string& device_syspath, uint32_t port,
                        const std::string& setting) = 0;
};

} // namespace rdmad
