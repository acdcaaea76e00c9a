// SPDX-License-Identifier: MIT
//
// The reconciler's stateful part: the desired state in force (config files, the legacy
// mlx4.conf, D-Bus overrides and rdmad's own state file), the plan from the Inventory (which
// its sources fill; the mlx4 module options read on demand through
// ReconcilerOptions::read_mlx4_module), and running a plan's actions through the actuators. Bad config keeps
// the last good desired state in force.
#pragma once

#include "actuators/dcb_client.hpp"
#include "config/config_file.hpp"
#include "config/desired.hpp"
#include "config/file_read.hpp"
#include "reconcile/contest_guard.hpp"
#include "reconcile/plan.hpp"
#include "reconcile/settings/setting.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace rdmad {

struct ReconcilerOptions {
    std::string config_dir = "/etc/rdmad";               ///< rdmad.conf and conf.d/
    std::string state_dir = "/var/lib/rdmad";            ///< state.conf (persisted overrides)
    std::string legacy_mlx4_conf = "/etc/rdma/mlx4.conf"; ///< read at lowest precedence
    std::string modprobe_dir = "/etc/modprobe.d";        ///< rdmad-mlx4.conf goes here
    std::string configfs_dir = "/sys/kernel/config";     ///< rdma_cm/<dev>/ports/<n>/
    /// CLOCK_MONOTONIC in microseconds; tests inject their own.
    std::function<uint64_t()> now_usec;
    /// Reads mlx4_en's module options for a plan that can use them (`file`: rdmad's modprobe.d
    /// file, `loaded`: the loaded module's pfctx) and puts them into the Inventory: the Daemon's,
    /// through sources/mlx4_module_reader.hpp. Unset: nothing is read, both unknown.
    std::function<Mlx4ModuleActual(bool file, bool loaded)> read_mlx4_module;
    std::string modules_load_dir = "/etc/modules-load.d"; ///< rdmad.conf goes here
    /// Reads what a module plan needs ([daemon] load_modules): rdmad's modules-load.d file
    /// and, with `full`, which of `names` are loaded and the modprobe.d blacklist; the
    /// Daemon's, through sources/modules.hpp. Unset: no module plan.
    std::function<KernelModulesActual(const std::vector<std::string>& names, bool full)>
        read_kernel_modules;
    /// libkmod with its context, for a module load (opened on the first); null or unset: none.
    std::function<const KmodLibrary*()> kmod;
    /// Starts a query of the firmware port type of a ConnectX-4+ PCI function with `tool`
    /// (mstconfig): the Daemon's, through reconcile/mstconfig_jobs.hpp, which puts a
    /// Status::querying entry into the Inventory (HostState::firmware_port_types) at once and
    /// the reading when the tool answers (an entry it has stays until then). Called by a plan
    /// for a function whose port type is asked and that the Inventory has no reading of, or
    /// one to read again (FirmwarePortType::refresh). Unset: nothing is read, the port type
    /// is compared with the link layer.
    std::function<void(const std::string& tool, const std::string& pci, uint32_t card_port)>
        read_firmware_port_type;
    /// Starts a firmware port type write with `tool` and its one read-back (SettingExecContext
    /// ::write_firmware); the Daemon's, whose jobs hand the outcome to Reconciler::finish().
    /// Unset: the set runs synchronously, without a read-back.
    std::function<void(const std::string& tool, const Action& action)> write_firmware_port_type;
    /// Reads the RDMA network namespace mode (sources/rdma_netns_reader.hpp) with the mode
    /// `desired` asks and puts it into the Inventory (HostState::rdma_netns): every full plan
    /// (two small reads), and after rdmad wrote its file. Unset: nothing is read.
    std::function<RdmaNetnsState(const std::string& desired)> read_rdma_netns;
};


class Reconciler {
  public:
    /// `dcb` may be null (no netlink): PFC then cannot be set. It must outlive the reconciler.
    Reconciler(ReconcilerOptions options, dcb::DcbClient* dcb);

    /// Read every config file again: /etc (rdmad.conf, conf.d/*.conf, the legacy mlx4.conf) as
    /// one unit and <state_dir>/state.conf as another. A unit with an error keeps its last
    /// good rules in force; the other unit still loads. The first error (/etc first) is
    /// returned and kept in config_error(). Warnings about the legacy mlx4.conf go to
    /// legacy_warnings().
    std::optional<ConfigError> reload();
    /// What reload() reads: the files parsed, nothing taken yet.
    struct Loaded {
        FileRead::Status state_status = FileRead::Status::missing;
        std::optional<ConfigError> state_error;
        std::vector<Rule> persisted; ///< state.conf's rules, when it parsed
        std::string state_text;      ///< state.conf as read, when it parsed
        std::vector<ConfigError> legacy_warnings;
        std::vector<Rule> legacy;
        std::variant<DesiredConfig, ConfigError> etc;
    };
    /// reload()'s reading and parsing: reads the files `options` names and nothing else, so
    /// it may run on a thread of its own (a Reload of many megabytes of drop-ins must not hold
    /// the loop).
    static Loaded load(const ReconcilerOptions& options);
    /// reload()'s second half, on the loop: put in force what load() read, as reload()
    /// describes. Returns the first error.
    std::optional<ConfigError> take(Loaded loaded);
    const ReconcilerOptions& options() const { return options_; }
    const std::optional<ConfigError>& config_error() const { return config_error_; }
    /// Every standing error: /etc's, then state.conf's (at most one each).
    std::vector<ConfigError> config_errors() const {
        std::vector<ConfigError> out;
        for (const auto* e : {&etc_error_, &state_error_})
            if (*e)
                out.push_back(**e);
        return out;
    }
    /// The standing error of the /etc unit (rdmad.conf, conf.d), of state.conf; empty when none.
    const std::optional<ConfigError>& etc_error() const { return etc_error_; }
    const std::optional<ConfigError>& state_error() const { return state_error_; }
    const std::vector<ConfigError>& legacy_warnings() const { return legacy_warnings_; }
    /// `[export]` of the last good /etc files (defaults when none sets it).
    const ExportConfig& export_config() const { return config_.exports; }
    /// `[dispatcher]` of the last good /etc files (defaults when none sets it).
    const DispatcherConfig& dispatcher_config() const { return config_.dispatcher; }
    /// `[daemon]` load_modules, modules and persist_modules of the last good /etc files.
    const ModulesConfig& modules_config() const { return config_.modules; }
    /// The modules rdmad loaded since it started, in the order it loaded them
    /// (Manager.LoadedModules).
    const std::vector<std::string>& loaded_modules() const { return loaded_modules_; }
    /// `[doctor] memlock_launchers` of the last good /etc files (the default list when none).
    const std::vector<std::string>& memlock_launchers() const { return config_.memlock_launchers; }
    /// `[daemon] install_providers` and `provider_package` of the last good /etc files.
    InstallProviders install_providers() const { return config_.install_providers; }
    const std::string& provider_package() const { return config_.provider_package; }
    /// Files in effect, lowest precedence first (the legacy file, rdmad.conf, conf.d/*,
    /// the state file).
    std::vector<std::string> sources() const;
    /// True when no rule is in force (no file, legacy or state.conf rule, no D-Bus override)
    /// and no action failed: a plan then asks nothing of any device, and a pass need not
    /// plan (each device's desired-state properties are their defaults).
    bool idle() const {
        return config_.rules.empty() && persisted_.empty() && runtime_.empty() && failures_.empty();
    }

    /// The port types of `device` (of `inventory`) with port `port` (from 1) set to `type`:
    /// every other port keeps what the desired state asks of it (with this run's D-Bus
    /// requests when `with_runtime`, else only what files and state.conf ask), else its
    /// current type. Throws std::invalid_argument, naming port 2, for a pair mlx4 refuses.
    std::vector<std::string> port_types_with(const HostState& inventory, const DeviceState& device,
                                             uint32_t port, const std::string& type,
                                             bool with_runtime) const;

    /// D-Bus overrides (Port.SetPortType / Port.SetPFCNoDrop), highest precedence; the latest
    /// call wins. A port type request stores port_types_with(): for this run the effective
    /// list, persisted the list without this run's requests (so none of them is saved with
    /// it, and the saved pair is one mlx4 accepts after a restart). With `persist` they are
    /// written to `<state_dir>/state.conf` atomically first; throws std::invalid_argument
    /// (a pair mlx4 refuses), std::system_error when the file cannot be written,
    /// std::runtime_error when state.conf had an error at the last reload or changed since;
    /// then nothing changes.
    void override_port_type(const HostState& inventory, const DeviceState& device, uint32_t port,
                            const std::string& type, bool persist);
    void override_pfc(const DeviceState& device, const std::vector<uint8_t>& priorities,
                      bool persist);
    /// The same for any device-wide setting (Port.SetTrust, SetDSCPPriority, SetRDMACM):
    /// `request` sets the keys asked; its match is replaced by the device's.
    void override_settings(const DeviceState& device, Rule request, bool persist);
    /// Port.Revert: drop what D-Bus requests (this run's and those kept in state.conf) ask of
    /// `device`: everything when `port` is 0, else only port `port`'s type (its entry takes
    /// what /etc asks, else the port's type now; a list left asking nothing /etc does not is
    /// dropped). state.conf is rewritten when it changes, with override_pfc()'s checks and
    /// exceptions; nothing to drop is no error.
    void revert(const HostState& inventory, const DeviceState& device, uint32_t port);

    /// What each device of `inventory` should be, by syspath, plus legacy-file conflicts.
    /// With `only`, for those syspaths only.
    std::map<std::string, DeviceDesired>
    desired(const HostState& inventory,
            std::map<std::string, std::vector<Problem>>* conflicts = nullptr,
            const std::set<std::string>* only = nullptr) const;

    /// Make the plan from `inventory` (its ports' PFC included) and what only the reconciler
    /// reads (mlx4 module options, whether lldpad runs). Problems include legacy-file
    /// conflicts. With `only` (device syspaths, none of them mlx4), the plan covers those
    /// devices and leaves the host-wide mlx4_en module options alone: what one event costs.
    Plan plan(const HostState& inventory, const std::set<std::string>* only = nullptr);

    using Outcome = rdmad::Outcome;
    /// Run `plan`'s actions not tried since the last forget(); failures are remembered and
    /// not retried until forget(). Nothing runs when apply is off. An action that runs on
    /// (Outcome::deferred: a firmware write) is not among the outcomes; finish() takes it.
    std::vector<Outcome> execute(const Plan& plan);
    /// The outcome of an action execute() left running: remembered and logged as execute()
    /// does with its own.
    void finish(const Outcome& outcome);
    /// Allow every action to be tried again (Reload, Reconcile, a Set*, a device re-added),
    /// contested netdevs included.
    void forget();

    /// The DCB state of `netdev` changed (a DCB notification: another tool, an LLDP agent,
    /// or rdmad's own SET): its DCB actions (PFC, the DSCP APP table) may run again at the next
    /// plan. A netdev rdmad has set back more than kMaxPfcCorrections times within
    /// kPfcContestUsec is contested (ContestGuard): execute() no longer sets it and
    /// failure_problems() reports "pfc-contested", until forget().
    void pfc_changed(const std::string& netdev);

    /// mlx4 port type writes of `plan` that were made without an error since the last
    /// forget() but are still not read back, by device syspath, as "port-type-unconfirmed"
    /// problems (a write that sysfs took and the driver did not do).
    std::map<std::string, std::vector<Problem>> unconfirmed_problems(const Plan& plan) const;

    /// Host-wide problems of the last full plan (a mode asked that waits for ib_core to load
    /// again, a blacklisted module): the Manager's.
    const std::vector<Problem>& host_problems() const { return host_problems_; }
    /// Read the RDMA network namespace mode again (after a write of rdmad's file).
    void reread_rdma_netns() const {
        if (options_.read_rdma_netns)
            options_.read_rdma_netns(config_.rdma_netns_mode);
    }

    /// Failures of the last execute() still standing, by device syspath (host-wide ones under
    /// ""), as problems.
    std::map<std::string, std::vector<Problem>> failure_problems() const;

  private:
    /// Read (options_.read_firmware_port_type) the firmware port type of each function of
    /// `want` that asks one and that `inv` has no reading of.
    void read_firmware_port_types(const HostState& inv,
                                  const std::map<std::string, DeviceDesired>& want);
    /// Remember and log the outcome `o` of an action run (its failure until forget()).
    void record(const Outcome& o);
    Rule override_rule(const DeviceState& device) const;
    static void merge_rule(std::vector<Rule>& rules, const Rule& rule);
    void add_override(const Rule& rule, bool persist);
    /// Throws std::runtime_error when state.conf may not be rewritten from persisted_ (it
    /// had an error at the last reload, or changed on disk since).
    void check_state_file_writable() const;
    /// "dbus-override" problems (info): a D-Bus request of `device` that overrides what a
    /// rule of /etc asks, naming the request, where it is kept and how to drop it.
    std::vector<Problem> override_problems(const DeviceState& device,
                                           const std::vector<LinkState>& links) const;
    DesiredConfig rules(bool with_runtime) const;
    void write_state_file();

    ReconcilerOptions options_;
    dcb::DcbClient* dcb_;
    DesiredConfig config_;                 ///< last good: legacy + /etc files
    std::vector<Rule> legacy_rules_;
    std::vector<Rule> persisted_;          ///< state.conf
    std::vector<Rule> runtime_;            ///< D-Bus overrides without persist
    std::optional<ConfigError> config_error_; ///< etc_error_, else state_error_
    std::optional<ConfigError> etc_error_;    ///< rdmad.conf, conf.d
    std::optional<ConfigError> state_error_;  ///< state.conf
    std::optional<std::string> state_on_disk_; ///< state.conf's text as last read or written
    std::vector<ConfigError> legacy_warnings_;
    std::set<std::string> attempted_;
    std::map<std::string, Outcome> failures_; ///< by action key
    ContestGuard guard_;                      ///< DCB netdevs another writer fights over
    std::vector<std::string> loaded_modules_;
    std::vector<Problem> host_problems_; ///< the last full plan's, under ""
    /// rdmad's modules-load.d file was read since the last reload (with load_modules off, it
    /// is read once per reload, to remove a file left from when it was on).
    bool modules_file_checked_ = false;
};

} // namespace rdmad
