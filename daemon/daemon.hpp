// SPDX-License-Identifier: MIT
//
// The daemon: one sd-event loop holding the udev monitor, rtnetlink, verbs async events, the
// bus connection, signals, the coalescing timer and the watchdog; it wires
// scanner -> inventory -> exporter.
#pragma once

#include "actuators/packagekit.hpp"
#include "bus/bus.hpp"
#include "bus/controller.hpp"
#include "dispatch/dispatcher.hpp"
#include "export/export_writer.hpp"
#include "inventory/inventory.hpp"
#include "reconcile/config_loader.hpp"
#include "reconcile/mstconfig_jobs.hpp"
#include "reconcile/provider_installs.hpp"
#include "reconcile/reconciler.hpp"
#include "sources/coalescer.hpp"
#include "sources/modules.hpp"
#include "sources/rtnl_monitor.hpp"
#include "sources/scanner.hpp"
#include "sources/udev_monitor.hpp"
#include "sources/verbs_events.hpp"
#include "util/event_source.hpp"
#include "util/notify.hpp"

#include <memory>
#include <set>
#include <systemd/sd-event.h>

namespace rdmad {

struct DaemonOptions {
    ScanOptions scan;
    ReconcilerOptions reconcile;
    CoalescerTiming coalesce;      ///< when changes get their pass (sources/coalescer.hpp)
    uint64_t retry_usec = 100'000; ///< wait before re-reading an incomplete device
    /// How long a provider install through PackageKit may take (`--packagekit-timeout`).
    uint64_t packagekit_timeout_usec = 30ull * 60 * 1'000'000;
};

class Daemon final : public Controller {
  public:
    /// Opens the udev monitor, then the system bus (DBUS_SYSTEM_BUS_ADDRESS when set).
    /// Throws on failure to get either.
    explicit Daemon(DaemonOptions options);
    ~Daemon() override = default;
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    /// Scan, export, take the bus name, send READY=1, and run until SIGTERM/SIGINT.
    /// Returns the exit status.
    int run();

    // Controller: what the mutating D-Bus methods do (bus/controller.hpp).
    void check_port_type(const std::string& device_syspath, uint32_t port, const std::string& type,
                         bool persist) override;
    void set_port_type(const std::string& device_syspath, uint32_t port, const std::string& type,
                       bool persist) override;
    void check_pfc(const std::string& device_syspath, const std::string& setting) override;
    void check_rdma_cm(const std::string& device_syspath) override;
    void set_settings(const std::string& device_syspath, const Rule& request,
                      bool persist) override;
    void set_pfc(const std::string& device_syspath, const std::vector<uint8_t>& priorities,
                 bool persist) override;
    ChangeList reconcile(bool dry_run) override;
    void reload(ReloadDone done) override;
    void revert(const std::string& device_syspath, uint32_t port,
                const std::string& setting) override;
    void check_install_providers() override;
    std::vector<std::string> install_providers() override;

  private:
    /// Every RDMA device the Inventory holds now.
    std::vector<const DeviceState*> all_devices() const;
    /// Plan against the Inventory, run the plan (unless `dry_run`), take the executor's
    /// verified read-backs into the Inventory and put the desired-state parts of each device
    /// there (port Desired*, PFCNoDrop, InSync, problems), merging what that changed into
    /// `changes`. With `only`, for those device syspaths (none mlx4) and nothing else. A dry
    /// run changes nothing (`changes` may be null). Returns the plan's actions as
    /// (object, setting, from, to).
    ChangeList reconcile_into(ChangeSet* changes, bool dry_run,
                              const std::set<std::string>* only = nullptr);
    /// At start-up: read the configuration, on the loop (nothing waits for it yet).
    void reload_config();
    /// SIGHUP: read the configuration on config_loader_'s worker; the result is taken on the
    /// loop by take_config(), then everything is read again.
    void reload_config_off_loop();
    void take_config(std::optional<Reconciler::Loaded> loaded);
    /// Offer the devices `only` names (every device when null) to installs_ (which starts
    /// what "auto" asks) and put their install problems into the Inventory; returns the change.
    ChangeSet provider_installs(const std::set<std::string>* only);
    /// provider_installs() for every device, shown on the bus at once.
    void show_provider_installs();
    /// `[daemon] install_providers` and `provider_package` from the configuration in force;
    /// ended attempts may be made again.
    void take_install_config();
    /// publish() at once (after a D-Bus call changed the desired state), errors logged.
    void publish_now();
    /// The device a method call names; MethodError(NoSuchObject) when it is gone.
    const DeviceState& device_for_call(const std::string& syspath) const;
    void pass();
    /// Export what `changes` names, planning (when rules are in force) for the devices it
    /// names; everything, planned for the whole host with the Manager updated, when
    /// changes.full or a named device is mlx4 (host-wide module options). Returns what the
    /// whole-host plan changed (Reconcile()'s list), empty otherwise.
    ChangeList publish(ScanChanges changes = {});
    /// STATUS= for systemctl status; one per pass (bench/ counts passes by it), never waiting
    /// for room in the notify socket (util/notify.hpp).
    void notify_status(const ChangeSet& published);
    /// Tell the export writer (Prometheus, NFD) what was published: `published` names the
    /// objects that changed; notify_status() does.
    void export_changed(const ChangeSet& published);
    /// Manager.Problems: configuration errors, legacy warnings, host-wide action failures and
    /// an export that cannot be written ("export-failed").
    std::vector<Problem> manager_problems() const;
    /// A source read something of the PCI function `pci` (its firmware port type): its
    /// devices get a pass.
    void note_pci(const std::string& pci);
    static int on_timer(sd_event_source* s, uint64_t usec, void* userdata);
    static int on_address_timer(sd_event_source* s, uint64_t usec, void* userdata);
    static int on_watchdog(sd_event_source* s, uint64_t usec, void* userdata);
    static int on_signal(sd_event_source* s, const struct signalfd_siginfo* si, void* userdata);

    // Teardown runs up this list: the export writer and the dispatcher first, then the
    // daemon's own sources (their callbacks use everything above them), the bus, the sources
    // that feed the inventory, the inventory, and the loop last.
    DaemonOptions options_;
    Notifier notifier_;
    EventLoop event_;
    Inventory inventory_; ///< the actual state (and desired-state results), as on the bus
    std::unique_ptr<Scanner> scanner_;
    std::unique_ptr<UdevMonitor> monitor_;
    std::unique_ptr<dcb::NetlinkTransport> dcb_transport_; ///< null without netlink
    std::unique_ptr<dcb::DcbClient> dcb_;                  ///< PFC reads (scanner), SETs
    std::unique_ptr<RtnlMonitor> rtnl_;
    std::unique_ptr<VerbsEvents> verbs_;
    std::unique_ptr<Reconciler> reconciler_;
    /// libkmod for [daemon] load_modules: the blacklist and the loads; made again at each
    /// reload, so that a modprobe.d edit is read (sources/modules.hpp).
    std::unique_ptr<KernelModules> kmod_;
    std::unique_ptr<Bus> bus_;
    EventSource timer_; ///< rings when coalescer_'s pass is due
    Coalescer coalescer_;
    std::string export_error_; ///< the export writer's last error, "" when it writes
    /// Armed by an address event; when it fires, the GID tables under that netdev are read.
    EventSource address_timer_;
    /// How long after an address event the kernel's RoCE GID update is taken as done.
    static constexpr uint64_t kAddressSettleUsec = 100'000;
    /// The longest a flood of address events delays the read, from its first event.
    static constexpr uint64_t kAddressMaxDelayUsec = 1'000'000;
    /// The address events the timer waits for: it rings kAddressSettleUsec after the latest,
    /// at most kAddressMaxDelayUsec after the first.
    SettleWindow address_window_{kAddressSettleUsec, kAddressMaxDelayUsec};
    EventSource watchdog_; ///< WATCHDOG=1, only when systemd asks for it
    uint64_t watchdog_period_usec_ = 0;
    EventSource signals_[3];
    bool full_resync_ = false;
    std::unique_ptr<ConfigLoader> config_loader_; ///< reads of the configuration (SIGHUP, Reload)
    /// Manager.Reload calls waiting for their read: `skip` reads that began before the call
    /// are taken first.
    struct PendingReload {
        ReloadDone done;
        int skip = 0;
    };
    std::vector<PendingReload> pending_reloads_;
    bool rescan_after_read_ = false; ///< a SIGHUP asked: the hardware is read again after
    std::unique_ptr<packagekit::Client> packagekit_; ///< connects when first asked
    std::unique_ptr<ProviderInstalls> installs_;
    std::string provider_package_; ///< `[daemon] provider_package` in force
    std::unique_ptr<exports::ExportWriter> exports_;
    std::unique_ptr<dispatch::Dispatcher> dispatcher_; ///< dispatcher scripts, after READY=1
    /// mstconfig's queries and sets (ConnectX-4+ port type), run off the loop; first to go.
    std::unique_ptr<MstconfigJobs> mstconfig_;
};

} // namespace rdmad
