// SPDX-License-Identifier: MIT
//
// rdmad's side of the system bus, as the daemon sees it: connect on the sd-event loop, show
// the Inventory (change sets applied to the objects), the Manager's own state, and take the
// name. Everything D-Bus (sd-bus, polkit, the objects) stays behind this class.
#pragma once

#include "bus/controller.hpp"
#include "inventory/inventory.hpp"

#include <memory>
#include <string>
#include <systemd/sd-event.h>
#include <vector>

namespace rdmad {

class Bus {
  public:
    /// Connect to the system bus (DBUS_SYSTEM_BUS_ADDRESS when set) on `event`; mutating
    /// methods go to `controller`, authorized through polkit. Throws on failure to connect.
    Bus(sd_event* event, Controller& controller);
    ~Bus();
    Bus(const Bus&) = delete;
    Bus& operator=(const Bus&) = delete;

    /// Make the objects show `inventory` where `changes` says it changed.
    void apply(const Inventory& inventory, const ChangeSet& changes);
    /// Manager.DesiredStateSource.
    void set_sources(const std::vector<std::string>& sources);
    /// Manager.Problems: the daemon's own (configuration errors, host-wide failures).
    void set_problems(const std::vector<Problem>& problems);
    /// Manager.LoadedModules: the kernel modules rdmad loaded.
    void set_loaded_modules(const std::vector<std::string>& modules);
    /// Manager.RdmaNetnsMode, DesiredRdmaNetnsMode, PendingRdmaNetnsMode.
    void set_rdma_netns(const RdmaNetnsState& netns);
    /// Manager.InstallProvidersMode: `[daemon] install_providers` in force.
    void set_install_providers_mode(const std::string& mode);
    /// Manager.State: "starting", "running" or "degraded".
    void set_state(const std::string& state);
    const std::string& state() const;
    /// Take the name org.rdmad1 (once the first inventory is shown). Objects shown before
    /// are not announced with InterfacesAdded (Exporter::start_announcing()); those shown
    /// after are. Throws on failure.
    void request_name();

  private:
    struct Parts;
    static int on_idle(sd_event_source* source, uint64_t usec, void* userdata);
    std::unique_ptr<Parts> parts_;
};

} // namespace rdmad
