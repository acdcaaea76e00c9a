// SPDX-License-Identifier: MIT
//
// /org/rdmad1: org.rdmad1.Manager (its properties from bus/manager_state.hpp's table) and the
// org.freedesktop.DBus.ObjectManager of every object below it.
#pragma once

#include "bus/manager_state.hpp"
#include "bus/method_call.hpp"
#include "bus/objects.hpp"
#include "bus/sd_bus_ptr.hpp"

#include <string>
#include <systemd/sd-bus.h>
#include <vector>

namespace rdmad {

class ManagerObject {
  public:
    /// Register on `bus`; `objects` (which the manager answers from) must outlive it. Throws
    /// std::system_error when sd-bus refuses.
    ManagerObject(sd_bus* bus, Objects& objects, const Methods& methods);
    ManagerObject(const ManagerObject&) = delete;
    ManagerObject& operator=(const ManagerObject&) = delete;

    /// DesiredStateSource (file names are bytes: made valid UTF-8 here); emits
    /// PropertiesChanged when it changes.
    void set_sources(const std::vector<std::string>& sources);
    /// The daemon's own problems (config errors); emits PropertiesChanged when they change.
    void set_problems(const std::vector<Problem>& problems);
    /// LoadedModules (module names, ASCII); emits PropertiesChanged when they change.
    void set_loaded_modules(const std::vector<std::string>& modules);
    /// The RDMA netns mode properties; PropertiesChanged names those that changed.
    void set_rdma_netns(const RdmaNetnsState& netns);
    /// InstallProvidersMode ("never", "ask", "auto"); emits PropertiesChanged when it changes.
    void set_install_providers_mode(const std::string& mode);
    /// State ("starting", "running", "degraded"); emits PropertiesChanged when it changes.
    void set_state(const std::string& state);
    const std::string& state() const { return state_.state; }

  private:
    void emit(const char* property);

    static int get(sd_bus*, const char* path, const char* iface, const char* property,
                   sd_bus_message* reply, void* userdata, sd_bus_error* error);
    static int list_devices(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int get_device_by_name(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int get_link_by_name(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int describe(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int reconcile(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int reload(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int install_providers(sd_bus_message* m, void* userdata, sd_bus_error* error);

    sd_bus* bus_;
    Objects& objects_;
    Methods methods_;
    ManagerState state_;
    std::vector<sd_bus_vtable> vtable_;
    // Registrations last: they go first.
    SlotPtr object_manager_, vtable_slot_;
};

} // namespace rdmad
