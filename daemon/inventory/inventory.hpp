// SPDX-License-Identifier: MIT
//
// The Inventory: the one owner of the host's actual state (RDMA devices, their ports, netdevs)
// and of each object's stable identity. Sources and the reconciler's executor put one object
// at a time; each update returns a ChangeSet that names only what it changed: the objects that
// came and went, the properties that changed, and the direct relatives whose references moved
// (a device's Links, a port's Link, a link's RdmaDevice, a VF's PhysicalFunction). The bus
// applies change sets to the objects they name; nothing is rebuilt.
#pragma once

#include "inventory/model.hpp"
#include "util/key_ref.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace rdmad {

/// What one or more updates of the Inventory changed. Devices are named by their id
/// (Inventory::id_of()), ports by (device id, port number), links by ifindex. Property names
/// are those of org.rdmad1.Device, .Port and .Link (dbus/*.xml): a change of PortState::netdev
/// is "Link", of LinkState::rdma_device "RdmaDevice".
struct ChangeSet {
    std::set<std::string> devices_added;   ///< with all their ports
    std::set<std::string> devices_removed; ///< with all their ports
    std::map<std::string, std::set<std::string>> devices_changed;
    std::map<std::pair<std::string, uint32_t>, std::set<std::string>> ports_changed;
    std::set<int32_t> links_added;
    std::set<int32_t> links_removed;
    std::map<int32_t, std::set<std::string>> links_changed;
    /// The objects of `devices_removed` (by id) and `links_removed` (by ifindex) as they were
    /// last: what names a device or netdev once the Inventory has forgotten it or moved it to
    /// another path (the dispatcher's device-removed and link-removed), so that no consumer
    /// keeps a copy of every object for the day it goes. A removal moves the object here; a
    /// device retracted to be announced again (other ports, a new id) is copied.
    std::map<std::string, DeviceState> devices_gone;
    std::map<int32_t, LinkState> links_gone;

    bool empty() const;
    /// Add `other`'s changes: an object added then removed is neither; removed then added
    /// (a new id for the same path cannot happen) is both.
    void merge(const ChangeSet& other);
    /// Objects named, all kinds together (for logs and benchmarks).
    size_t size() const;
};

class Inventory {
  public:
    /// Everything, as plain values: devices by syspath, links by ifindex.
    const HostState& state() const { return state_; }
    const DeviceState* device(const std::string& syspath) const;
    const DeviceState* device_named(const std::string& name) const;
    /// The first device (by syspath) whose PCI address is `pci_address`; null for "".
    const DeviceState* device_at_pci(const std::string& pci_address) const;
    const LinkState* link(int32_t ifindex) const;
    const LinkState* link_named(const std::string& name) const;
    /// Ifindexes of the links whose rdma_device is `device_name`, ascending.
    std::set<int32_t> links_of(const std::string& device_name) const;

    /// The device's stable id, "" when `syspath` is not known. Chosen when the device is first
    /// put: the node GUID's 16 hex digits when non-zero and unique, else the PCI address when
    /// unique, else the name, with "_N" added when taken. Kept for life: a rename keeps it; an
    /// id taken while the node GUID was unreadable (EIO at hotplug) or shared gives way to the
    /// GUID once it reads and is unique, as a fresh start would choose.
    const std::string& id_of(const std::string& syspath) const;
    /// The syspath of the device with id `id`, "" when none.
    const std::string& syspath_of(const std::string& id) const;

    /// Add or replace the device at `device.syspath`.
    ChangeSet put_device(DeviceState device);
    /// The device at `syspath` is gone, with its ports; links that named it lose it.
    /// `syspath` is taken by value: a caller may pass the device's own `syspath` member.
    ChangeSet remove_device(std::string syspath);
    /// The device at `old_syspath` is now at `new_syspath` (a "move"): the key changes, the id
    /// stays; nothing else changes until the device is put again.
    /// Both by value, for the reason remove_device() gives.
    void rename_device(std::string old_syspath, std::string new_syspath);
    /// Add or replace the netdev with ifindex `link.index`.
    /// mlx4_en's module options as a plan last read them (sources/mlx4_module_reader.hpp):
    /// host-wide and not exported, so no change set.
    void set_mlx4_module(Mlx4ModuleActual module) { state_.mlx4_module = std::move(module); }
    /// The firmware port type of the PCI function `pci` as a plan or a write's read-back last
    /// read it (sources/mstconfig.hpp); the ports show it once planned, as set_mlx4_module().
    void set_firmware_port_type(const std::string& pci, FirmwarePortType read) {
        state_.firmware_port_types[pci] = std::move(read);
    }
    /// The RDMA network namespace mode as a full plan last read it (Manager properties).
    void set_rdma_netns(RdmaNetnsState read) { state_.rdma_netns = std::move(read); }
    /// Mark the reading of `pci` (its device was added again), or every one ("": a Reload),
    /// to be read again by the next plan; it stays shown until then (FirmwarePortType::refresh).
    void forget_firmware_port_types(const std::string& pci = "") {
        for (auto& [at, read] : state_.firmware_port_types)
            if (pci.empty() || at == pci)
                read.refresh = true;
    }
    ChangeSet put_link(LinkState link);
    ChangeSet remove_link(int32_t ifindex);
    /// Make the whole state `next` (a full scan): objects gone are removed, new ones added
    /// (ids chosen in name order, as at start-up), the rest put. The change set names only
    /// what differs.
    ChangeSet replace(HostState next);

    /// Updates until the matching end_batch() resolve the references between objects
    /// (Port.Link, Device.Links and PhysicalFunction, Link.RdmaDevice: objects name each
    /// other by name and PCI address) once, at end_batch(), whose change set names a
    /// reference only when its value then differs from its value before the batch. A pass
    /// that renames a device and the netdev naming it shows no reference change; outside a
    /// batch every update settles its own. Batches nest; replace() is one.
    void begin_batch();
    ChangeSet end_batch();

    /// A pass puts a device more than once: its read (values the plan fills back at their
    /// defaults), then its plan (the desired values, InSync, the plan's problems). Each put
    /// names what it changed, so the two together named every desired value of a device that
    /// has one, unchanged, in every pass that read it. Between begin_pass() and end_pass(), the
    /// Inventory keeps each device as it was before its first put that changed it, and
    /// end_pass() takes out of `cs` (the pass's change sets merged) the device and port
    /// properties whose value is what it was then: the change set says what the pass changed.
    /// Objects added or removed are left as they are. A begin_pass() drops what an unfinished
    /// pass kept.
    void begin_pass();
    void end_pass(ChangeSet& cs);

    /// Properties derived again by put_device()/put_link() since construction (their diffs
    /// computed): what an update cost, for tests and benchmarks.
    uint64_t objects_compared() const { return objects_compared_; }
    /// Counts the calls that may have changed, added, removed or moved a device or a netdev
    /// state() holds (a put, a remove, a rename, a replace, a batch's references settled):
    /// a reader that walks them across several turns of the event loop (the export writer's
    /// slices of rdmad.prom) knows by it whether the pointers it took still hold.
    uint64_t version() const { return version_; }

  private:
    /// A device's syspath as the key of its entry in state_.devices (util/key_ref.hpp): the
    /// indexes below point at the text of that key (a SharedText's, which stays where it is
    /// while the key holds it). An entry leaves every index before it is erased.
    using SyspathRef = KeyRef;
    /// (syspath, port number), by syspath, then number.
    struct PortRefLess {
        bool operator()(const std::pair<SyspathRef, uint32_t>& a,
                        const std::pair<SyspathRef, uint32_t>& b) const {
            const int c = a.first->compare(*b.first);
            return c < 0 || (c == 0 && a.second < b.second);
        }
    };

    std::string choose_id(const DeviceState& d) const;
    /// `key`: the syspath key of `d`'s entry in state_.devices.
    void index_device(SyspathRef key, const DeviceState& d, bool add);
    void index_link(const LinkState& l, bool add);
    /// Mark for resolution a device whose name or PCI address appeared or went, and the
    /// objects that refer to it by them.
    void mark_device_relatives(const DeviceState& d);
    /// The same for a link whose name or RDMA device appeared or went.
    void mark_link_relatives(const LinkState& l);
    /// Resolve the references of the marked objects; the change set names those that moved.
    ChangeSet settle();
    /// `cs`, with settle()'s changes outside a batch.
    ChangeSet settled(ChangeSet cs);
    /// When `syspath`'s id is not the GUID but could now be, move it.
    bool upgrade_id(const std::string& syspath, ChangeSet& cs);

    HostState state_;
    std::map<SyspathRef, std::string, KeyRefLess> ids_; ///< syspath -> id
    std::map<std::string, SyspathRef> syspath_by_id_;
    /// device name -> syspaths. Kernel names are unique, but a pass that sees two devices swap
    /// names (mlx5_0 <-> mlx5_1) puts one under its new name while the other still holds it:
    /// several per name, so that neither put loses the other's entry.
    // One node per (key, value) (util/key_ref.hpp SortedIndex), values in order.
    SortedIndex<SyspathRef, KeyRefLess> by_name_;
    SortedIndex<SyspathRef, KeyRefLess> by_pci_; ///< PCI address -> syspaths
    std::map<std::string, size_t> guid_count_;   ///< node GUID digits -> devices
    SortedIndex<SyspathRef, KeyRefLess> vfs_of_; ///< PF PCI address -> VF syspaths
    SortedIndex<int32_t> link_by_name_;          ///< netdev name -> ifindexes (as by_name_)
    SortedIndex<int32_t> links_of_;              ///< rdma_device -> ifindexes
    /// netdev name -> (syspath, port number) of the ports on it
    SortedIndex<std::pair<SyspathRef, uint32_t>, PortRefLess> ports_on_;
    uint64_t objects_compared_ = 0;
    uint64_t version_ = 0;
    bool in_pass_ = false;
    /// syspath -> the device before its first put that changed it in this pass
    std::map<std::string, DeviceState> pass_before_;
    /// Devices added in this pass: no copy (their objects are announced whole; at start-up,
    /// 1,024 copies were 1.2 MiB of peak RSS for nothing). The keys' shared texts.
    std::set<SharedText, SharedTextLess> pass_added_;
    std::set<std::string> unresolved_devices_; ///< syspaths whose references may have moved
    std::set<int32_t> unresolved_links_;       ///< likewise, ifindexes
    int batch_ = 0;
};

/// The node GUID as the 16 hex digits of a device id ("0002:c903:0031:78f0" ->
/// "0002c903003178f0"); "" when empty or zero.
std::string guid_digits(const std::string& guid);

} // namespace rdmad
