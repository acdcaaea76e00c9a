// SPDX-License-Identifier: MIT
#include "daemon.hpp"

#include "doctor/lossless.hpp"
#include "inventory/attributes.hpp"
#include "inventory/driver_capabilities.hpp"
#include "inventory/object_path.hpp"
#include "inventory/provider.hpp"
#include "rdmad_api.hpp"
#include "sources/mlx4_module_reader.hpp"
#include "sources/rdma_netns_reader.hpp"
#include "util/log.hpp"
#include "util/loop_edge.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <csignal>
#include <ctime>
#include <stdexcept>
#include <systemd/sd-daemon.h>

namespace rdmad {

namespace {

/// The coalescer's clock: CLOCK_MONOTONIC now, not the loop's wake-up time (sd_event_now()),
/// so that the window after a pass counts from the pass's end.
uint64_t monotonic_usec() {
    struct timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000 + uint64_t(ts.tv_nsec) / 1000;
}

/// The coalescing and address timers' accuracy for a time still ahead: 1 ms (0 would mean
/// sd-event's default slack of 250 ms).
constexpr uint64_t kTimerAccuracyUsec = 1000;

/// The PCI function a device's syspath is under ("/sys/devices/pci0000:00/0000:00:02.0/
/// 0000:03:00.0/infiniband/mlx5_0" -> "0000:03:00.0", also through an auxiliary device): the
/// last path element that is a PCI address; "" when none is.
std::string pci_address_in(const std::string& syspath) {
    std::string found;
    size_t at = 0;
    while (at <= syspath.size()) {
        size_t end = syspath.find('/', at);
        if (end == std::string::npos)
            end = syspath.size();
        std::string part = syspath.substr(at, end - at);
        if (is_pci_address(part))
            found = std::move(part);
        at = end + 1;
    }
    return found;
}

/// Ring the oneshot timer `s` at `due`, or never. A time already reached (an isolated change's
/// pass, lead 0) rings at once: with the timers' 1 ms accuracy, sd-event moves the wake-up to
/// its next per-host 1 ms boundary (sd_event_add_time(3), "accuracy"), which delayed every
/// isolated change by 0.5 ms on average and 1 ms at worst, before anything was read.
void arm(const EventSource& s, std::optional<uint64_t> due) {
    if (due) {
        sd_event_source_set_time_accuracy(s.get(),
                                          *due <= monotonic_usec() ? 1 : kTimerAccuracyUsec);
        sd_event_source_set_time(s.get(), *due);
    }
    sd_event_source_set_enabled(s.get(), due ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
}

/// A oneshot CLOCK_MONOTONIC timer on `event`, off until armed. Accuracy 1 ms: 0 would mean
/// sd-event's default slack of 250 ms (sd_event_add_time(3)), which turned the 50 ms
/// coalescing window into ~250 ms.
EventSource add_timer(sd_event* event, sd_event_time_handler_t handler, void* userdata,
                      const char* what) {
    EventSource timer;
    if (sd_event_add_time(event, into(timer), CLOCK_MONOTONIC, UINT64_MAX, kTimerAccuracyUsec,
                          handler, userdata) < 0)
        throw std::runtime_error(std::string("cannot add the ") + what);
    sd_event_source_set_enabled(timer.get(), SD_EVENT_OFF);
    return timer;
}

/// `put(device)` for each device `only` names (every device when null). `put` may replace the
/// device it is given (Inventory::put_device replaces the map's value in place: the pointers
/// taken first stay valid).
template <typename Put>
void each_device(const Inventory& inventory, const std::set<std::string>* only, Put& put) {
    if (only) {
        for (const auto& syspath : *only)
            if (const DeviceState* d = inventory.device(syspath))
                put(*d);
        return;
    }
    std::vector<const DeviceState*> all;
    for (const auto& [_, d] : inventory.state().devices)
        all.push_back(&d);
    for (const DeviceState* d : all)
        put(*d);
}

} // namespace

Daemon::Daemon(DaemonOptions options)
    : options_(std::move(options)),
      coalescer_(options_.coalesce, monotonic_usec,
                 [this](std::optional<uint64_t> due) { arm(timer_, due); }) {
    sd_event* event = nullptr;
    if (sd_event_default(&event) < 0)
        throw std::runtime_error("cannot create the sd-event loop");
    event_.reset(event);
    scanner_ = std::make_unique<Scanner>(options_.scan, inventory_);
    // Monitor before enumerate: an add racing the first scan is then seen by the rescan it
    // triggers, and the rescan's result is the same inventory (no duplicate objects).
    monitor_ = std::make_unique<UdevMonitor>(
        scanner_->udev_context(), event, [this](const Uevent* ev, bool overflow) {
            if (overflow || !ev) {
                full_resync_ = true; // events were lost: the next pass reads everything
            } else {
                log::debug("uevent {} {} {}", ev->action, ev->subsystem, ev->syspath);
                // A device that comes (back) gets the desired state applied again, even an
                // action that failed or was done before (a driver reload re-creates it).
                if (ev->subsystem == "infiniband" && ev->action == "add" && reconciler_) {
                    reconciler_->forget();
                    // Its firmware is read again too (a firmware reset re-creates the device).
                    if (auto pci = pci_address_in(ev->syspath); !pci.empty()) {
                        inventory_.forget_firmware_port_types(pci);
                        mstconfig_->forget(pci);
                    }
                }
                // So is a provider install that ended (issue #27: no second attempt until
                // the next hotplug or Reload).
                if (ev->subsystem == "infiniband" && ev->action == "add" && installs_)
                    installs_->forget();
                // A rename is a key update: the device keeps its id, hence its object path.
                if (auto renamed = scanner_->note(*ev))
                    inventory_.rename_device(renamed->first, renamed->second);
            }
            // A "change" is complete in itself; every other action starts a burst.
            coalescer_.note(overflow || !ev || ev->action != "change");
        });
    try {
        dcb_transport_ = std::make_unique<dcb::MnlTransport>();
        dcb_ = std::make_unique<dcb::DcbClient>(*dcb_transport_);
    } catch (const std::exception& e) {
        log::warning("{}: PFC cannot be read or set", e.what());
    }
    scanner_->set_dcb_client(dcb_.get());
    try {
        RtnlMonitor::Handlers on;
        on.link = [this](int32_t ifindex) {
            scanner_->note_link(ifindex);
            coalescer_.note(false);
        };
        on.address = [this](int32_t ifindex) {
            // The kernel sends RTM_NEWADDR before its RoCE GID work runs (net/ipv4/devinet.c
            // __inet_insert_ifa(): rtmsg_ifa(), then the inetaddr notifier that queues
            // drivers/infiniband/core/roce_gid_mgmt.c's update): read the GID tables once it
            // has settled. A device whose verbs context is open also gets IBV_EVENT_GID_CHANGE.
            // The read is due kAddressSettleUsec after the latest event (each one has its own
            // GID work to wait for), but at most kAddressMaxDelayUsec after the first of a
            // flood, so a steady stream of address changes cannot hold it off.
            if (scanner_->note_address(ifindex))
                arm(address_timer_, address_window_.event(monotonic_usec()));
        };
        on.dcb = [this](const dcb::DcbNotification& n) {
            // Another tool (dcb, mlnx_qos, an LLDP agent) or the firmware changed a netdev's
            // DCB, or the echo of rdmad's own SET (no change: nothing to do).
            if (!scanner_->note_pfc(n))
                return;
            log::with(log::Level::info, log::about("", n.ifname, "", 0), "{}: DCB changed (PFC {})",
                      n.ifname, n.pfc ? fmt::format("{:#04x}", n.pfc->pfc_en) : "to be read");
            if (reconciler_)
                reconciler_->pfc_changed(n.ifname);
            coalescer_.note(false);
        };
        on.overflow = [this] {
            scanner_->note_link(0);
            scanner_->note_pfc_lost();
            coalescer_.note(true);
        };
        rtnl_ = std::make_unique<RtnlMonitor>(event, std::move(on));
    } catch (const std::exception& e) {
        log::warning("{}: netdev carrier changes are seen through uevents only", e.what());
    }
    verbs_ = std::make_unique<VerbsEvents>(event, [this](const std::string& device) {
        scanner_->note_device(device);
        coalescer_.note(false);
    });
    ReconcilerOptions reconcile = options_.reconcile;
    reconcile.read_mlx4_module = [this](bool file, bool loaded) {
        Mlx4ModuleActual read =
            read_mlx4_module(options_.reconcile.modprobe_dir, Mlx4ModuleReads{file, loaded});
        inventory_.set_mlx4_module(read);
        return read;
    };
    kmod_ = std::make_unique<KernelModules>(options_.scan.kmod);
    reconcile.read_kernel_modules = [this](const std::vector<std::string>& names, bool full) {
        return read_kernel_modules(*kmod_, names, options_.reconcile.modules_load_dir, full);
    };
    reconcile.kmod = [this]() -> const KmodLibrary* {
        const KmodLibrary& lib = kmod_->library();
        return lib.ctx ? &lib : nullptr;
    };
    // mstconfig runs off the loop (issue #26): its reading enters the Inventory as a source's
    // change and the functions' devices are planned again.
    MstconfigJobs::Handlers fw;
    fw.read = [this](const std::string& pci, const FirmwarePortType& read) {
        const auto level = read.status == FirmwarePortType::Status::ok ? log::Level::info
                                                                        : log::Level::warning;
        log::with(level, log::about("", "", pci, 0), "{}: LINK_TYPE_P{} {}", pci, read.card_port,
                  read.status == FirmwarePortType::Status::ok
                      ? fmt::format("current {}, next boot {}", read.current, read.next_boot)
                      : read.message);
        inventory_.set_firmware_port_type(pci, read);
        note_pci(pci);
    };
    fw.written = [this](const Outcome& outcome) {
        reconciler_->finish(outcome);
        note_pci(outcome.action.pci_address);
    };
    mstconfig_ = std::make_unique<MstconfigJobs>(event, std::move(fw));
    reconcile.read_firmware_port_type = [this](const std::string& tool, const std::string& pci,
                                               uint32_t card_port) {
        // A function read before keeps its reading shown until the new one comes.
        if (!inventory_.state().firmware_port_types.count(pci)) {
            FirmwarePortType querying;
            querying.status = FirmwarePortType::Status::querying;
            querying.card_port = card_port;
            inventory_.set_firmware_port_type(pci, querying);
        }
        mstconfig_->query(tool, pci, card_port);
    };
    reconcile.write_firmware_port_type = [this](const std::string& tool, const Action& a) {
        mstconfig_->write(tool, a);
    };
    reconcile.read_rdma_netns = [this](const std::string& desired) {
        RdmaNetnsState read = read_rdma_netns(options_.reconcile.modprobe_dir, desired);
        inventory_.set_rdma_netns(read);
        return read;
    };
    reconciler_ = std::make_unique<Reconciler>(std::move(reconcile), dcb_.get());
    bus_ = std::make_unique<Bus>(event, *this);
    packagekit_ = std::make_unique<packagekit::Client>(event, options_.packagekit_timeout_usec);
    installs_ = std::make_unique<ProviderInstalls>(
        *packagekit_,
        [this](const std::string& package) {
            // Read the devices that need `package` again: their provider is probed anew, and
            // the pass puts the outcome (ProviderInstalled, the install problems) on the bus.
            for (const auto& [_, d] : inventory_.state().devices)
                if (d.provider_package == package)
                    scanner_->note_device(d.name);
            coalescer_.note(false);
        },
        [this](const std::string&) { show_provider_installs(); });
    exports::WriterOptions export_options;
    export_options.on_error = [this](const std::string& error) {
        export_error_ = error;
        bus_->set_problems(manager_problems());
    };
    exports_ = std::make_unique<exports::ExportWriter>(
        event, [this] { return reconciler_->export_config(); }, export_options);
    dispatcher_ = std::make_unique<dispatch::Dispatcher>(
        event, [this] { return reconciler_->dispatcher_config(); });

    config_loader_ =
        std::make_unique<ConfigLoader>(event, [this](std::optional<Reconciler::Loaded> loaded) {
            take_config(std::move(loaded));
        });
    timer_ = add_timer(event, on_timer, this, "coalescing timer");
    address_timer_ = add_timer(event, on_address_timer, this, "address timer");

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGCHLD); // sd_event_add_child(3): the dispatcher's scripts
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    const int sigs[3] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; ++i)
        if (sd_event_add_signal(event, into(signals_[i]), sigs[i], on_signal, this) < 0)
            throw std::runtime_error("cannot add signal handlers");
    // WATCHDOG=1 at half of WATCHDOG_USEC when systemd asks for it, sent like every other
    // notification without blocking (util/notify.hpp): sd_event_set_watchdog() would send it
    // with libsystemd's blocking sd_notify(). The one timer that runs while nothing changes.
    uint64_t watchdog_usec = 0;
    if (sd_watchdog_enabled(false, &watchdog_usec) > 0 && watchdog_usec > 0) {
        watchdog_period_usec_ = watchdog_usec / 2;
        if (sd_event_add_time_relative(event, into(watchdog_), CLOCK_MONOTONIC,
                                       watchdog_period_usec_, watchdog_period_usec_ / 10,
                                       on_watchdog, this) < 0)
            throw std::runtime_error("cannot add the watchdog timer");
    }
}

void Daemon::pass() {
    {
        // Uevents queued since the timer was set join this pass rather than start the next one.
        auto draining = coalescer_.begin_pass();
        monitor_->drain();
    }
    bool incomplete = false;
    ScanChanges changes;
    if (full_resync_) {
        full_resync_ = false;
        incomplete = scanner_->full_scan();
    } else {
        changes = scanner_->refresh(&incomplete);
    }
    publish(std::move(changes));
    coalescer_.end_pass();
    if (incomplete)
        coalescer_.schedule(options_.retry_usec);
}

ChangeList Daemon::publish(ScanChanges changes) {
    // The read and the plan put a device in turn: the change set names what the pass as a
    // whole changed (Inventory::end_pass()), also when it ends by an exception.
    struct Pass {
        Inventory& inventory;
        explicit Pass(Inventory& i) : inventory(i) { inventory.begin_pass(); }
        ~Pass() {
            ChangeSet unused;
            inventory.end_pass(unused);
        }
        Pass(const Pass&) = delete;
        Pass& operator=(const Pass&) = delete;
    } pass(inventory_);
    ChangeSet cs = scanner_->derive_into(inventory_, changes);
    log::debug("pass: {} RDMA devices and {} netdevs re-read{}{}; {} objects changed",
               changes.devices.size(), changes.links.size(),
               changes.full ? ", everything derived again" : "",
               reconciler_->idle() ? "" : ", rules in force", cs.size());
    // Re-reads of known objects cost what the event changed: the plan (when rules are in
    // force) covers the devices re-read, unless one is mlx4, whose module options are
    // host-wide.
    // A netdev re-read that needs its RDMA module, or is gone (its NIC's failed load may be
    // tried again when it comes back), is the host-wide plan's with [daemon] load_modules.
    const bool module_link =
        reconciler_->modules_config().load &&
        std::any_of(changes.links.begin(), changes.links.end(), [&](int32_t ifindex) {
            const LinkState* l = inventory_.link(ifindex);
            return !l || !l->rdma_module.empty();
        });
    const bool local =
        !changes.full && !module_link &&
        std::none_of(changes.devices.begin(), changes.devices.end(),
                     [&](const std::string& syspath) {
                         const DeviceState* d = inventory_.device(syspath);
                         return d && driver_capabilities(d->kernel_driver).host_wide_pfc_option;
                     });
    if (local) {
        if (!reconciler_->idle() && !changes.devices.empty())
            reconcile_into(&cs, false, &changes.devices);
        if (!changes.devices.empty())
            cs.merge(provider_installs(&changes.devices));
        inventory_.end_pass(cs);
        bus_->apply(inventory_, cs);
        dispatcher_->changed(inventory_, cs);
        notify_status(cs);
        return {};
    }
    ChangeList planned = reconcile_into(&cs, false);
    cs.merge(provider_installs(nullptr));
    inventory_.end_pass(cs);
    bus_->apply(inventory_, cs);
    dispatcher_->changed(inventory_, cs);
    verbs_->track(scanner_->devices_with_verbs());
    bus_->set_sources(reconciler_->sources());
    bus_->set_rdma_netns(inventory_.state().rdma_netns);
    bus_->set_problems(manager_problems());
    bus_->set_loaded_modules(reconciler_->loaded_modules());
    bus_->set_install_providers_mode(install_providers_name(installs_->mode()));
    if (bus_->state() != "starting")
        bus_->set_state(reconciler_->config_error() ? "degraded" : "running");
    notify_status(cs);
    return planned;
}

std::vector<Problem> Daemon::manager_problems() const {
    std::vector<Problem> problems;
    // rdmad.conf(5), ERRORS: /etc/rdmad is refused as a whole, state.conf apart from it.
    if (const auto& err = reconciler_->etc_error())
        problems.push_back({"config-error", "error",
                            err->to_string() + " (rdmad keeps the desired state it last read "
                                               "from rdmad.conf and conf.d, none if it never "
                                               "read them)"});
    if (const auto& err = reconciler_->state_error())
        problems.push_back({"config-error", "error",
                            err->to_string() + " (rdmad keeps the settings it last read from "
                                               "this file, none if it never read it)"});
    for (const auto& w : reconciler_->legacy_warnings())
        problems.push_back({"legacy-config", "warning", w.to_string()});
    // Host-wide findings (the RDMA netns mode pending, a blacklisted module) and actions (the
    // mlx4_en and ib_core module options files, module loads) belong to no device.
    const auto& host = reconciler_->host_problems();
    problems.insert(problems.end(), host.begin(), host.end());
    auto failures = reconciler_->failure_problems();
    if (auto it = failures.find(""); it != failures.end())
        problems.insert(problems.end(), it->second.begin(), it->second.end());
    if (!export_error_.empty())
        problems.push_back({"export-failed", "warning",
                            "the exports for node-exporter or NFD cannot be written: " +
                                export_error_ + " (see [export] in rdmad.conf(5))"});
    return problems;
}

void Daemon::export_changed(const ChangeSet& published) {
    exports_->changed(inventory_, published, bus_->state(), reconciler_->config_errors().size(),
                      !reconciler_->config_error() && reconciler_->failure_problems().empty(),
                      manager_problems());
}

void Daemon::notify_status(const ChangeSet& published) {
    export_changed(published);
    notifier_.send(fmt::format("STATUS={} RDMA devices, {} netdevs{}",
                               inventory_.state().devices.size(), inventory_.state().links.size(),
                               reconciler_->config_error() ? ", config error" : ""));
}

ChangeList Daemon::reconcile_into(ChangeSet* cs, bool dry_run, const std::set<std::string>* only) {
    Plan plan = reconciler_->plan(inventory_.state(), only);
    const std::vector<Action> actions = plan.actions; // what Reconcile() reports
    // Before execute(): writes made by earlier passes that still do not read back.
    auto unconfirmed = reconciler_->unconfirmed_problems(plan);
    if (!dry_run) {
        bool acted = false;
        bool read_back = false; // the executor read a netdev's PFC back
        for (const auto& o : reconciler_->execute(plan)) {
            if (o.read_back) {
                // Verified by the executor's IEEE_GET: the netdev's state now, no re-read.
                ChangeSet taken = scanner_->update_pfc(inventory_, o.action.netdev, *o.read_back);
                read_back = read_back || !taken.empty();
                if (cs)
                    cs->merge(taken);
                continue;
            }
            acted = true;
            // Verify through the read path; a failed write too, which may have done part of
            // its work (an RDMA-CM group made, one of its two files written).
            if (!o.action.device.empty())
                scanner_->note_device(o.action.device);
            // An action on another device than the one that planned it (a VF's GUIDs, planned
            // on its PF): that one is read and planned again too, with what the action did.
            if (auto planner = inventory_.state().devices.find(o.action.syspath);
                planner != inventory_.state().devices.end() &&
                planner->second.name != o.action.device)
                scanner_->note_device(planner->second.name);
            // A host-wide file (ib_core's options): its state read again, planned again below.
            if (o.action.device.empty() &&
                (o.action.kind == Action::Kind::ib_core_modprobe ||
                 o.action.kind == Action::Kind::ib_core_modprobe_remove)) {
                reconciler_->reread_rdma_netns();
                read_back = true;
            }
        }
        // Plan again from the state read back, so PFCNoDrop and InSync go on the bus once,
        // with the verified value (no false, then true, a pass later).
        if (read_back)
            plan = reconciler_->plan(inventory_.state(), only);
        if (acted)
            coalescer_.schedule(options_.coalesce.window_usec);
    }
    // (object, setting, from, to) of every difference, for Manager.Reconcile().
    ChangeList changes;
    for (const auto& a : actions) {
        std::string path = api::kManagerPath;
        if (const std::string& id = inventory_.id_of(a.syspath); !id.empty())
            path = a.port ? port_path(id, a.port) : device_path(id);
        changes.emplace_back(path, a.setting, valid_utf8(a.from), valid_utf8(a.to));
    }
    if (dry_run)
        return changes;
    auto failures = reconciler_->failure_problems();
    const auto& want = plan.desired;
    auto put = [&](const DeviceState& current) {
        DeviceState d = current;
        auto w = want.find(d.syspath);
        d.desired_origin.clear();
        if (w != want.end())
            d.desired_origin.assign(w->second.origin.begin(), w->second.origin.end());
        if (w != want.end() && !w->second.require_provider)
            std::erase_if(d.problems, [](const Problem& p) {
                return p.code == "provider-missing" || p.code == "no-provider";
            });
        for (const Setting* setting : all_settings())
            setting->show(w != want.end() ? &w->second : nullptr, d);
        for (auto* extra : {&plan.problems, &failures, &unconfirmed})
            if (auto it = extra->find(d.syspath); it != extra->end())
                d.problems.insert(d.problems.end(), it->second.begin(), it->second.end());
        if (auto ports = plan.ports.find(d.syspath); ports != plan.ports.end())
            for (auto& port : d.ports) {
                auto pp = ports->second.find(port.number);
                if (pp == ports->second.end())
                    continue;
                const PortPlan& planned = pp->second;
                port.desired_port_type = planned.desired_port_type;
                port.desired_pfc_no_drop = planned.desired_pfc;
                // PFCNoDrop as the PFC setting read it, on a port it planned (a port only the
                // trust, DSCP, RDMA-CM or SR-IOV settings planned keeps what the Inventory has).
                if (!planned.desired_pfc.empty())
                    port.pfc_no_drop = planned.pfc_now;
                port.desired_trust = planned.desired_trust;
                port.desired_dscp_priority = planned.desired_dscp_priority;
                port.desired_rdma_cm_roce_mode = planned.desired_rdma_cm_roce_mode;
                port.desired_rdma_cm_tos = planned.desired_rdma_cm_tos;
                if (!planned.firmware_port_type.empty())
                    port.port_type = planned.firmware_port_type;
                port.next_boot_port_type = planned.next_boot_port_type;
                port.pending_port_type = planned.pending_port_type;
                port.in_sync = planned.in_sync;
            }
        // The lossless RoCE check reads the desired PFC, merged just above.
        doctor::refresh_lossless(d);
        if (d == current)
            return;
        ChangeSet done = inventory_.put_device(std::move(d));
        if (cs)
            cs->merge(done);
    };
    each_device(inventory_, only, put);
    return changes;
}

void Daemon::note_pci(const std::string& pci) {
    for (const auto& [_, d] : inventory_.state().devices)
        if (d.pci_address == pci)
            scanner_->note_device(d.name);
    coalescer_.note(false);
}

ChangeSet Daemon::provider_installs(const std::set<std::string>* only) {
    ChangeSet cs;
    auto put = [&](const DeviceState& current) {
        installs_->offer(current);
        DeviceState d = current;
        std::erase_if(d.problems, ProviderInstalls::is_install_problem);
        for (auto& p : installs_->problems(d, scanner_->family()))
            d.problems.push_back(std::move(p));
        if (d == current)
            return;
        cs.merge(inventory_.put_device(std::move(d)));
    };
    each_device(inventory_, only, put);
    return cs;
}

void Daemon::show_provider_installs() {
    ChangeSet cs = provider_installs(nullptr);
    bus_->apply(inventory_, cs);
    notify_status(cs);
}

void Daemon::take_install_config() {
    installs_->set_mode(reconciler_->install_providers());
    if (reconciler_->provider_package() != provider_package_) {
        // Every device's ProviderPackage changes: derive them all again (not at start-up,
        // where the first scan does).
        provider_package_ = reconciler_->provider_package();
        scanner_->set_provider_package(provider_package_);
        if (!inventory_.state().devices.empty()) {
            full_resync_ = true;
            coalescer_.schedule(0);
        }
    }
    installs_->forget();
}

std::vector<const DeviceState*> Daemon::all_devices() const {
    std::vector<const DeviceState*> all;
    for (const auto& [_, d] : inventory_.state().devices)
        all.push_back(&d);
    return all;
}

void Daemon::check_install_providers() {
    if (installs_->mode() != InstallProviders::never)
        return;
    // The refusal names the file, the setting that allows it and the command by hand.
    std::string text = "install_providers is \"never\" (rdmad.conf): set \"ask\" or \"auto\" to "
                       "allow this";
    const auto packages = ProviderInstalls::missing_packages(all_devices());
    if (packages.empty())
        text += "; no verbs provider is missing now";
    else
        text += ", or run " +
                install_command(scanner_->family(), fmt::format("{}", fmt::join(packages, " ")));
    throw MethodError(api::kNotSupported, text);
}

std::vector<std::string> Daemon::install_providers() {
    check_install_providers(); // the configuration may have changed while polkit was asked
    const auto all = all_devices();
    auto installing = installs_->install(all);
    show_provider_installs(); // the reply comes after the bus shows "provider-installing"
    return installing;
}

void Daemon::publish_now() {
    try {
        publish();
    } catch (const std::exception& e) {
        log::error("publish failed: {}", e.what());
        full_resync_ = true;
        coalescer_.schedule(0);
    }
}

void Daemon::reload_config() {
    // reload() logs its own errors; anything else (std::bad_alloc) must not end the daemon.
    try {
        reconciler_->reload();
        kmod_ = std::make_unique<KernelModules>(options_.scan.kmod); // modprobe.d read again
        take_install_config();
        // The list [doctor] names; the read itself is SIGHUP's full resync (or, at start-up,
        // the first scan).
        scanner_->set_memlock_launchers(reconciler_->memlock_launchers());
    } catch (const std::exception& e) {
        log::error("reading the configuration failed: {}", e.what());
    }
}

void Daemon::reload_config_off_loop() {
    rescan_after_read_ = true;
    config_loader_->start(reconciler_->options());
}

void Daemon::take_config(std::optional<Reconciler::Loaded> loaded) {
    const bool read = loaded.has_value();
    std::optional<ConfigError> err;
    if (read) {
        // A Reload reads each adapter's firmware port type again (rdmad.conf(5), mstconfig).
        inventory_.forget_firmware_port_types();
        mstconfig_->forget();
        err = reconciler_->take(std::move(*loaded));
        kmod_ = std::make_unique<KernelModules>(options_.scan.kmod); // modprobe.d read again
        scanner_->set_memlock_launchers(reconciler_->memlock_launchers());
        take_install_config();
        // "auto" tries again what failed before the Reload (or SIGHUP).
        show_provider_installs();
    }
    // The Manager.Reload calls this read began after are answered by it.
    std::vector<ReloadDone> answered;
    for (auto it = pending_reloads_.begin(); it != pending_reloads_.end();) {
        if (it->skip > 0) {
            --it->skip;
            ++it;
            continue;
        }
        answered.push_back(std::move(it->done));
        it = pending_reloads_.erase(it);
    }
    if (!answered.empty()) {
        // Launchers come and go without an event rdmad follows: Reload reads them again.
        // The callers are answered once the bus shows the new desired state.
        scanner_->reread_memlock(reconciler_->memlock_launchers());
        coalescer_.note(false);
        publish_now();
        std::optional<MethodError> result;
        if (!read)
            result.emplace(api::kFailed, "the configuration could not be read (see rdmad's log)");
        else if (err)
            result.emplace(api::kInvalidArgument, err->to_string());
        for (auto& done : answered)
            done(result);
    }
    // SIGHUP reads the hardware again too, with the rules now in force.
    if (!rescan_after_read_)
        return;
    rescan_after_read_ = false;
    full_resync_ = true;
    coalescer_.schedule(0);
}

const DeviceState& Daemon::device_for_call(const std::string& syspath) const {
    const DeviceState* d = inventory_.device(syspath);
    if (!d)
        throw MethodError(api::kNoSuchObject, "the device is gone");
    return *d;
}

void Daemon::check_port_type(const std::string& syspath, uint32_t port, const std::string& type,
                             bool persist) {
    const DeviceState& d = device_for_call(syspath);
    // mlx4 (ConnectX-3 VPI) switches in sysfs; ConnectX-4 and later in firmware, where rdmad
    // reports the remedy. Others have no port type.
    if (!driver_capabilities(d.kernel_driver).vpi())
        throw MethodError(api::kNotSupported,
                          d.name + " (" + d.kernel_driver + ") has no port type switch");
    try { // refuse a bad pair before asking polkit
        reconciler_->port_types_with(inventory_.state(), d, port, type, true);
        if (persist)
            reconciler_->port_types_with(inventory_.state(), d, port, type, false);
    } catch (const std::invalid_argument& e) {
        throw MethodError(api::kInvalidArgument, e.what());
    }
}

void Daemon::set_port_type(const std::string& syspath, uint32_t port, const std::string& type,
                           bool persist) {
    // Again from the state now: another call may have changed the other port while polkit
    // was asked.
    try {
        reconciler_->override_port_type(inventory_.state(), device_for_call(syspath), port, type,
                                        persist);
    } catch (const std::invalid_argument& e) {
        throw MethodError(api::kInvalidArgument, e.what());
    }
    publish_now(); // the reply comes after the bus shows the new state
}

void Daemon::check_pfc(const std::string& syspath, const std::string& setting) {
    const DeviceState& d = device_for_call(syspath);
    // PFC is an Ethernet (802.1Qbb) setting. A VPI adapter (mlx4, mlx5) may get Ethernet
    // ports later; an InfiniBand- or OPA-only one (hfi1, qib) never does.
    const bool vpi = driver_capabilities(d.kernel_driver).vpi();
    const bool ethernet = std::any_of(d.ports.begin(), d.ports.end(), [](const PortState& p) {
        return p.link_layer == "Ethernet";
    });
    if (!vpi && !ethernet)
        throw MethodError(api::kNotSupported, d.name + " (" + d.kernel_driver +
                                                  ") has no Ethernet port: " + setting +
                                                  " is an Ethernet setting");
}

void Daemon::set_pfc(const std::string& syspath, const std::vector<uint8_t>& priorities,
                     bool persist) {
    try {
        reconciler_->override_pfc(device_for_call(syspath), priorities, persist);
    } catch (const std::invalid_argument& e) {
        throw MethodError(api::kInvalidArgument, e.what());
    }
    publish_now(); // the reply comes after the bus shows the new state
}

void Daemon::check_rdma_cm(const std::string& syspath) {
    const DeviceState& d = device_for_call(syspath);
    // default_roce_mode and default_roce_tos are RoCE's (settings/rdma_cm.cpp); a VPI adapter
    // may get RoCE ports later.
    const bool roce = std::any_of(d.ports.begin(), d.ports.end(),
                                  [](const PortState& p) { return p.transport == "RoCE"; });
    if (!roce && !driver_capabilities(d.kernel_driver).vpi())
        throw MethodError(api::kNotSupported,
                          d.name + " has no RoCE port: the RDMA-CM defaults are RoCE settings");
}

void Daemon::set_settings(const std::string& syspath, const Rule& request, bool persist) {
    try {
        reconciler_->override_settings(device_for_call(syspath), request, persist);
    } catch (const std::invalid_argument& e) {
        throw MethodError(api::kInvalidArgument, e.what());
    }
    publish_now(); // the reply comes after the bus shows the new state
}

void Daemon::revert(const std::string& syspath, uint32_t port, const std::string& setting) {
    reconciler_->revert(inventory_.state(), device_for_call(syspath), setting.empty() ? 0 : port);
    publish_now(); // the reply comes after the bus shows the new state
}

ChangeList Daemon::reconcile(bool dry_run) {
    if (dry_run)
        return reconcile_into(nullptr, true);
    reconciler_->forget();
    return publish(ScanChanges{}); // everything, planned and on the bus
}

void Daemon::reload(ReloadDone done) {
    // A read running now began before this call and may miss what the caller just wrote:
    // the call is answered by the next one, which start() queues.
    pending_reloads_.push_back({std::move(done), config_loader_->running() ? 1 : 0});
    // As SIGHUP (rdmactl(1), org.rdmad1(5)): the hardware is read again too, so that what
    // changed without an event rdmad follows (a PCIe link that retrained) shows.
    rescan_after_read_ = true;
    config_loader_->start(reconciler_->options());
}

int Daemon::on_timer(sd_event_source*, uint64_t, void* userdata) {
    auto* self = static_cast<Daemon*>(userdata);
    try {
        self->pass();
    } catch (const std::exception& e) {
        // Keep the last good state on the bus; read everything next time.
        log::error("pass failed: {}", e.what());
        self->full_resync_ = true;
    }
    return 0;
}

int Daemon::on_address_timer(sd_event_source*, uint64_t, void* userdata) {
    auto* self = static_cast<Daemon*>(userdata);
    self->address_window_.close();
    return at_loop_edge("reading the GID tables after address changes", [&] {
        self->scanner_->take_address_devices();
        self->coalescer_.note(false);
    });
}

int Daemon::on_watchdog(sd_event_source* s, uint64_t, void* userdata) {
    auto* self = static_cast<Daemon*>(userdata);
    // Rearmed first: a failed send must not stop the keep-alives.
    sd_event_source_set_time_relative(s, self->watchdog_period_usec_);
    sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
    return at_loop_edge("watchdog", [&] { self->notifier_.send("WATCHDOG=1"); });
}

int Daemon::on_signal(sd_event_source*, const struct signalfd_siginfo* si, void* userdata) {
    auto* self = static_cast<Daemon*>(userdata);
    if (si->ssi_signo == SIGHUP)
        return at_loop_edge("SIGHUP", [&] {
            log::info("SIGHUP: rereading the configuration and the hardware");
            self->reload_config_off_loop();
        });
    self->notifier_.send("STOPPING=1");
    sd_event_exit(self->event_.get(), 0);
    return 0;
}

int Daemon::run() {
    reload_config();
    // A device incomplete now is read again once the loop runs, as after its "add" (it was
    // hidden until an unrelated uevent came).
    if (scanner_->full_scan())
        coalescer_.schedule(options_.retry_usec);
    publish();
    // Take the name only once the first inventory is on the bus.
    bus_->request_name();
    bus_->set_state(reconciler_->config_error() ? "degraded" : "running");
    export_changed({}); // the state is now "running" or "degraded": the Manager's facts
    log::info("ready: {} RDMA devices, {} netdevs", inventory_.state().devices.size(),
              inventory_.state().links.size());
    if (!notifier_.send("READY=1"))
        sd_notify(false, "READY=1"); // a full queue: READY=1 must not be lost, so wait
    // The first inventory is no burst of device-added: scripts run for what changes from now.
    dispatcher_->start(inventory_);
    int r = sd_event_loop(event_.get());
    return r < 0 ? 1 : r;
}

} // namespace rdmad
