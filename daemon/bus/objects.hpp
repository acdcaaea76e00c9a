// SPDX-License-Identifier: MIT
//
// The device, port and netdev objects of org.rdmad1, served as systemd-networkd serves its
// links: one sd-bus fallback vtable per interface under its path prefix, an object finder
// that looks the path up in the Inventory, and a node enumerator. No object is registered one
// by one and nothing is copied: getters write the Inventory's values through the property
// tables (inventory/properties.hpp). apply() sends what a change set says, as it says it:
// InterfacesAdded and InterfacesRemoved for the objects that came and went, PropertiesChanged
// with the changed properties' names.
#pragma once

#include "config/desired.hpp"
#include "bus/describe.hpp"
#include "bus/method_call.hpp"
#include "bus/sd_bus_ptr.hpp"
#include "inventory/inventory.hpp"

#include <map>
#include <string>
#include <systemd/sd-bus.h>
#include <vector>

namespace rdmad {

class Objects {
  public:
    /// Register the Device, Port and Link interfaces on `bus`, which must outlive the
    /// objects; mutating methods go to `methods`. Throws std::system_error when sd-bus refuses.
    Objects(sd_bus* bus, const Methods& methods);
    Objects(const Objects&) = delete;
    Objects& operator=(const Objects&) = delete;

    /// The objects now show `inventory` (which must outlive them, or the next apply());
    /// send the signals `changes` means. A signal that cannot be sent is logged; the others
    /// still go.
    void apply(const Inventory& inventory, const ChangeSet& changes);

    /// From now on, new objects are announced with InterfacesAdded. Until then (rdmad does
    /// not own org.rdmad1 yet) they are not: a client matches rdmad's signals by that name,
    /// so no client could receive them, and each would cost its properties marshalled and
    /// relayed (at 1,024 devices, 3,000 signals). Clients read the first objects with
    /// GetManagedObjects() or Describe() when NameOwnerChanged says rdmad took the name.
    void start_announcing() { announcing_ = true; }

    /// The Inventory shown, nullptr before the first apply().
    const Inventory* inventory() const { return inventory_; }
    const DescribeRenderer& describe() const { return describe_; }
    /// Describe()'s sizes of the objects changed since they were last measured, rendered now
    /// (DescribeRenderer::measure()); the Bus calls it when the loop is idle, Describe()
    /// before it answers. Returns how many objects it rendered.
    size_t measure_describe() { return inventory_ ? describe_.measure(*inventory_) : 0; }

  private:
    /// What a finder found for a path: the getters and methods of that path read it.
    struct Found {
        Objects* self = nullptr;
        std::string path;
        std::string id; ///< the device's Inventory id
        const DeviceState* device = nullptr;
        const PortState* port = nullptr;
        const LinkState* link = nullptr;
    };

    bool resolve_device(const char* path, Found& f) const;
    bool resolve_port(const char* path, Found& f) const;
    bool resolve_link(const char* path, Found& f) const;

    static int find_device(sd_bus*, const char* path, const char* iface, void* userdata,
                           void** found, sd_bus_error*);
    static int find_port(sd_bus*, const char* path, const char* iface, void* userdata,
                         void** found, sd_bus_error*);
    static int find_link(sd_bus*, const char* path, const char* iface, void* userdata,
                         void** found, sd_bus_error*);
    static int enumerate_devices(sd_bus*, const char* prefix, void* userdata, char*** nodes,
                                 sd_bus_error*);
    static int enumerate_links(sd_bus*, const char* prefix, void* userdata, char*** nodes,
                               sd_bus_error*);
    static int get_device(sd_bus*, const char* path, const char* iface, const char* property,
                          sd_bus_message* reply, void* userdata, sd_bus_error*);
    static int get_port(sd_bus*, const char* path, const char* iface, const char* property,
                        sd_bus_message* reply, void* userdata, sd_bus_error*);
    static int get_link(sd_bus*, const char* path, const char* iface, const char* property,
                        sd_bus_message* reply, void* userdata, sd_bus_error*);
    static int set_port_type(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int set_pfc_no_drop(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int set_trust(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int set_dscp_priority(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int set_rdma_cm(sd_bus_message* m, void* userdata, sd_bus_error* error);
    /// The end of every Set* of a device-wide setting: check the device (`rdma_cm`: it needs
    /// a RoCE port, else an Ethernet one), ask polkit, then Controller::set_settings().
    static int set_settings(sd_bus_message* m, void* userdata, sd_bus_error* error,
                            std::string invalid, Rule request, bool persist, bool rdma_cm);
    static int revert(sd_bus_message* m, void* userdata, sd_bus_error* error);

    void announce(const std::string& path);
    void retract(const std::string& path, const char* interface);
    void retract_device(const std::string& id);
    void announce_device(const std::string& id, const DeviceState& d);
    void emit_changed(const std::string& path, const char* interface,
                      const std::vector<const char*>& names);

    sd_bus* bus_;
    Methods methods_;
    const Inventory* inventory_ = nullptr;
    bool announcing_ = false;
    /// The port numbers of every device object on the bus, by Inventory id: what
    /// InterfacesRemoved must name once the Inventory has forgotten the device.
    std::map<std::string, std::vector<uint32_t>> shown_;
    DescribeRenderer describe_;
    Found found_device_, found_port_, found_link_;
    std::vector<sd_bus_vtable> device_vtable_, port_vtable_, link_vtable_;
    // Registrations last: they go first.
    SlotPtr device_slot_, port_slot_, link_slot_, device_nodes_, link_nodes_;
};

} // namespace rdmad
