// SPDX-License-Identifier: MIT
//
// "Driver packages present", reconciled: the package of a missing rdma-core provider
// (Device.ProviderPackage) installed through PackageKit (actuators/packagekit.hpp), at once
// (`[daemon] install_providers = "auto"`) or when Manager.InstallProviders() asks ("ask").
// One install per package at a time, and one attempt per package until forget() (a hotplug,
// a Reload): a failure is a problem with the command to run, never a retry loop.
#pragma once

#include "actuators/packagekit.hpp"
#include "config/desired.hpp"
#include "inventory/model.hpp"
#include "inventory/provider.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rdmad {

class ProviderInstalls {
  public:
    /// `ended(package)` is called on the loop when an install of `package` ends, whatever
    /// its outcome: the devices that need it are to be read again (their provider probed).
    /// `progressed(package)` when the install's percentage shown by problems() changed: at
    /// most once per tenth of the install (PackageKit may announce every percent).
    ProviderInstalls(packagekit::Client& client, std::function<void(const std::string&)> ended,
                     std::function<void(const std::string&)> progressed = {})
        : client_(client), ended_(std::move(ended)), progressed_(std::move(progressed)) {}

    void set_mode(InstallProviders mode) { mode_ = mode; }
    InstallProviders mode() const { return mode_; }

    /// Where a device's provider is missing (its problems hold "provider-missing", so a rule
    /// with require_provider = false leaves it alone): in "auto", start installing its package
    /// unless that was tried since forget(). Returns true when an install started.
    bool offer(const DeviceState& device);
    /// Manager.InstallProviders(): start installing the package of every device in `devices`
    /// whose provider is missing, tried before or not, except those installing now. Returns
    /// every package installing when it returns, sorted.
    std::vector<std::string> install(const std::vector<const DeviceState*>& devices);
    /// The packages of the devices in `devices` whose provider is missing, as install() would
    /// start them, sorted and each once; installs nothing (the refusal of "never" names them).
    static std::vector<std::string>
    missing_packages(const std::vector<const DeviceState*>& devices);
    /// A hotplug or Reload: every ended attempt may be made again.
    void forget();

    /// The device's problems about its provider's install (none unless its provider is
    /// missing): "provider-installing" (info) while PackageKit works (with its percentage
    /// once PackageKit gave one), "packagekit-missing"
    /// (warning) when PackageKit is not on the bus, "provider-install-failed" (error) with
    /// PackageKit's error text, or when the package installed and the provider is still
    /// missing. Each names the command that installs the package by hand (`family`).
    std::vector<Problem> problems(const DeviceState& device, DistroFamily family) const;

    /// The problem codes problems() gives, for taking them off a device before putting them
    /// again.
    static bool is_install_problem(const Problem& p);

  private:
    struct Attempt {
        enum class State { running, installed, failed, missing } state = State::running;
        std::string error;
        std::optional<uint32_t> percent; ///< running: the percentage shown, 0-100
    };
    static bool provider_missing(const DeviceState& d);
    void start(const std::string& package);

    packagekit::Client& client_;
    std::function<void(const std::string&)> ended_;
    std::function<void(const std::string&)> progressed_;
    InstallProviders mode_ = InstallProviders::ask;
    std::map<std::string, Attempt> attempts_; ///< by ProviderPackage, since forget()
};

} // namespace rdmad
