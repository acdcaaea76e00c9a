// SPDX-License-Identifier: MIT
//
// Dispatcher events from the Inventory's change sets: what a dispatcher script is told about
// (rdmad(8), DISPATCHER SCRIPTS). Pure: a change set and the Inventory after it, against what
// the dispatcher knew before (Known), give the events in a fixed order; nothing here runs a
// process or reads the system.
#pragma once

#include "inventory/inventory.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rdmad::dispatch {

/// One event for the scripts. `object` is their $1 (the RDMA device name, or the netdev name
/// for link events), `name` their $2 ("port-up", "port-down", "device-added",
/// "device-removed", "link-added", "link-removed", "reconciled", "problem"). `env` holds the
/// RDMAD_* variables (RDMAD_EVENT, RDMAD_DEVICE, RDMAD_PORT, RDMAD_NETDEV, RDMAD_PCI_ADDRESS,
/// RDMAD_TRANSPORT, RDMAD_OBJECT_PATH, RDMAD_PORT_STATE, RDMAD_PROBLEM,
/// RDMAD_PROBLEM_SEVERITY), only those that apply and are not empty. `key` names the object
/// for coalescing: two events with one key are about the same port, device, netdev or problem;
/// a device or netdev coming or going also under the same name (`object`).
struct Event {
    std::string name;
    std::string object;
    std::map<std::string, std::string> env;
    std::string key;
    bool operator==(const Event&) const = default;
};

/// What the dispatcher last told the scripts about a port.
struct KnownPort {
    bool active = false; ///< State "ACTIVE"
    bool in_sync = true;
    bool operator==(const KnownPort&) const = default;
};

/// A device's KnownPorts by port number, in ascending order: a device has a few ports, and a
/// std::map node each was about 50 bytes a device more (issue #24's memory figure).
class KnownPorts {
  public:
    /// The port `number`; throws std::out_of_range when it is not known.
    const KnownPort& at(uint32_t number) const;
    /// The port `number`, added (as KnownPort{}) when it is not known.
    KnownPort& operator[](uint32_t number);
    size_t size() const { return ports_.size(); }
    bool operator==(const KnownPorts&) const = default;

  private:
    std::vector<std::pair<uint32_t, KnownPort>> ports_; ///< by number, ascending
};

/// What the dispatcher knows of a device: the values of the properties its events are
/// transitions of, as the scripts were last told them. What names a device once it is gone
/// comes with the change set (ChangeSet::devices_gone).
struct KnownDevice {
    KnownPorts ports;
    /// (code, port) of its error- and warning-level problems (Device.Problems), sorted and
    /// distinct (a vector: a std::set node each was about 80 bytes; the code shared with the
    /// Problem's)
    std::vector<std::pair<SharedText, uint32_t>> problems;
    bool operator==(const KnownDevice&) const = default;
};

/// Devices by Inventory id. Netdevs are not kept: a change set names a removed one with its
/// last state (ChangeSet::links_gone), and a copy of each was about 150 bytes a netdev.
struct Known {
    std::map<std::string, KnownDevice> devices;
    bool operator==(const Known&) const = default;
};

/// Everything `inventory` holds, without events (start-up: the first scan is no burst of
/// device-added).
Known know_all(const Inventory& inventory);

/// The events `changes` (applied to `inventory`, which is the state after it) means, against
/// `known`, which is brought up to date. Only the properties the change set names are read
/// (a port's State and InSync, a device's Problems): `known` holds their values as last told. Order: removed devices, removed links, added links,
/// added devices, then per changed device (by id) its ports going down, up (by port number),
/// its new problems (by code) and, when a port became in sync, `reconciled`. A port that turns
/// ACTIVE is `port-up`, one that leaves ACTIVE `port-down`; a device that comes or goes says
/// `device-added`/`device-removed` only (its ports' states are in the inventory). `problem` is
/// a new error- or warning-level problem code (Device.Problems) on a known device, but not one
/// on a port that went down in the same change (port-down says it); `reconciled`
/// a port's InSync going from false to true (rdmad made the hardware as desired).
std::vector<Event> derive_events(const ChangeSet& changes, const Inventory& inventory,
                                 Known& known);

/// The latest event of each object (Event::key), in the order of those latest events: what an
/// overflowing queue keeps (a port that flapped ten times is told its last state once; a
/// device removed under one name and added under another is told both).
std::vector<Event> coalesce(const std::vector<Event>& events);

} // namespace rdmad::dispatch
