// SPDX-License-Identifier: MIT
//
// Reads the hardware: every RDMA device, uverbs char device, netdev and auxiliary device,
// through libudev and sysfs. A full scan at start and on resync; after that, uevents mark
// single devices dirty and refresh() re-reads only those. derive_into() derives the exported
// view (providers, verbs devices, RDMA capability, problems) from what was read and puts it
// into the Inventory, so derived values never go stale. An RDMA device read is kept here only
// until the Inventory holds it; after that the scanner keeps its syspath in its indexes, and
// its read values (what the indexes are keyed by among them) are the Inventory's (as_read(),
// sources/device_reader.hpp).
#pragma once

#include "config/desired.hpp"
#include "doctor/facts.hpp"
#include "inventory/inventory.hpp"
#include "inventory/model.hpp"
#include "inventory/provider.hpp"
#include "inventory/rdma_capability.hpp"
#include "sources/modules.hpp"
#include "sources/pci_reads.hpp"
#include "sources/pfc_reader.hpp"
#include "sources/provider_probe.hpp"
#include "sources/udev.hpp"
#include "sources/udev_monitor.hpp"
#include "util/key_ref.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rdmad {

/// What one refresh() read: the objects to export again. `full` when anything beyond
/// re-reading existing devices and netdevs happened (an add, a remove, a rename, uverbs or
/// auxiliary devices, a retry, a full scan): then every object may have changed.
struct ScanChanges {
    std::set<std::string> devices; ///< RDMA devices re-read, by syspath
    std::set<int32_t> links;       ///< netdevs re-read, by ifindex
    bool full = true;
};

struct ScanOptions {
    ProviderPaths providers;
    std::string os_release_path = "/etc/os-release"; ///< os-release(5); /usr/lib/os-release
                                                     ///< is tried when it is absent
    KmodPaths kmod; ///< libkmod's module directory and modprobe.d (modalias lookups)
};

class Scanner {
  public:
    /// Reads os-release once; throws std::runtime_error when libudev is unusable.
    /// `inventory` is the one derive_into() fills, and must outlive the Scanner: what it holds
    /// of a device read before is read there, not kept here.
    Scanner(ScanOptions options, const Inventory& inventory);

    /// Enumerate and read everything again (start-up, monitor overflow, SIGHUP). Returns true
    /// when some device was incomplete (not exported yet): refresh() reads it again, so call
    /// that later, as after a refresh() that set its `incomplete`.
    bool full_scan();

    /// Note what `event` changes; the reading happens in refresh(). A "move" (rename) is
    /// returned as (old syspath, new syspath) when it renames an RDMA device, so its object
    /// keeps its path.
    std::optional<std::pair<std::string, std::string>> note(const Uevent& event);

    /// A link change from rtnetlink: re-read that netdev (0: every netdev) and the RDMA
    /// devices it serves.
    void note_link(int32_t ifindex);

    /// An address of netdev `ifindex` came or went (rtnetlink RTM_NEWADDR/RTM_DELADDR): the
    /// kernel changes the GID tables of the RoCE ports under it (its own, a VLAN's lower
    /// netdev, a bond's slaves) and sends no uevent for that. Those devices are held until
    /// take_address_devices(); returns true when there are any.
    bool note_address(int32_t ifindex);
    /// Re-read, at the next refresh(), the devices note_address() held.
    void take_address_devices();

    /// Read the locked-memory limits of the processes named `launchers` again
    /// (sources/memlock_reader.hpp; full_scan() reads the last list given) and derive every
    /// device again at the next refresh(). Processes come and go without an event rdmad
    /// follows: this runs on Reload and SIGHUP.
    void reread_memlock(const std::vector<std::string>& launchers);
    /// The list full_scan() reads with, without reading.
    void set_memlock_launchers(const std::vector<std::string>& launchers) {
        memlock_launchers_ = launchers;
    }

    /// `[daemon] provider_package`: the ProviderPackage of every device from the next read on
    /// ("": the one the distribution's family names).
    void set_provider_package(const std::string& package) { provider_package_ = package; }
    /// The distribution's family, from os-release (read at construction).
    DistroFamily family() const { return family_; }

    /// A verbs async event on the RDMA device `name`: re-read it.
    void note_device(const std::string& name);

    /// Where PFC is read (DCB netlink); null: every port's PFC reads as failed.
    void set_dcb_client(dcb::DcbClient* client) { pfc_.set_client(client); }
    /// A DCB notification (RTNLGRP_DCB). Returns true when it changed (or made unknown) the
    /// PFC of a netdev that serves an RDMA port: refresh() then names that port's device.
    bool note_pfc(const dcb::DcbNotification& n);
    /// DCB notifications were lost: read every port's PFC again at the next refresh().
    void note_pfc_lost();
    /// The verified read-back of rdmad's own PFC SET on `netdev`: taken into `inventory` at
    /// once (no read), on the ports on that netdev. Returns what it changed there.
    ChangeSet update_pfc(Inventory& inventory, const std::string& netdev, const dcb::DcbResult& r);
    /// Set each port's PFC (and pfc_no_drop) of `d` as the source has it: Ethernet ports with
    /// a netdev; other ports unknown.
    void fill_pfc(DeviceState& d) const;

    /// The RDMA devices that have a verbs char device (for verbs async events): device name
    /// -> the char device's path ("/dev/infiniband/uverbs0", from the uverbs device's DEVNAME).
    std::map<std::string, std::string> devices_with_verbs() const;

    /// Re-read everything noted since the last refresh. `incomplete` is set when some device
    /// was incomplete (an attribute not there yet right after "add"): call again later.
    ScanChanges refresh(bool* incomplete = nullptr);

    /// True when note() has queued work that refresh() has not done.
    bool dirty() const;

    /// Put what `changes` re-read into `inventory`, derived, and return the change set.
    /// Derived values (provider, verbs device, PFC, problems) are recomputed for those objects
    /// only, and the netdev classification is kept (as `inventory` has it), as long as
    /// nothing it depends on changed (names, PCI addresses, GID netdevs, drivers, uppers);
    /// otherwise, or when changes.full, everything is derived again, `inventory` replaced
    /// with it (only what differs is named) and `changes.full` set. Afterwards `inventory`
    /// holds every device read (but those still being retried), derived. `inventory` must be
    /// the one given at construction: the devices read before are taken from it.
    ChangeSet derive_into(Inventory& inventory, ScanChanges& changes);

    struct udev* udev_context() const {
        return udev_.get();
    }

  private:
    /// Read the device at `syspath` whole (read_device()); with `own_only`, only its own
    /// directory when a read of it is held (reread_device_own()).
    void read_device_at(const std::string& syspath, bool own_only = false);
    /// read_device_at() of each, whole (full_scan()); many are read on several threads
    /// (util/parallel_reads.hpp), then kept in the order given.
    void read_devices_at(const std::vector<std::string>& syspaths);
    /// What was read at `syspath` (nullopt: it is gone) held and indexed, or counted as
    /// incomplete to be read again.
    void keep_device_read(const std::string& syspath, std::optional<DeviceState> read);
    void read_link_at(const std::string& syspath);
    /// read_link_at() of each, as read_devices_at().
    void read_links_at(const std::vector<std::string>& syspaths);
    /// What was read at `syspath`: nullopt when it is gone, an empty read when it has no
    /// valid ifindex (yet).
    void keep_link_read(const std::string& syspath, std::optional<std::optional<LinkState>> read);
    void read_verbs();
    void read_verbs_at(const std::string& syspath);
    void read_aux();
    void read_aux_at(const std::string& syspath);
    void erase_aux(const std::string& syspath);
    /// Read again, at the next refresh(), the auxiliary devices of the PCI function there (as
    /// its directory lists them now).
    void note_aux_under(const std::string& pci_syspath);
    /// Add to `out` the RDMA devices of the PCI function `pf_address` ("" adds nothing): a
    /// VF's PF, whose sriov_numvfs a VF that comes or goes changes.
    void mark_physical_function(const std::string& pf_address, std::set<std::string>& out) const;
    void mark_pci_function(const std::string& pci_address);
    /// Syspaths, held as the device's own SharedText (known_ below).
    using KnownDevices = std::set<SharedText, SharedTextLess>;
    // What was read is changed through these only, so that the indexes below stay true.
    /// `d` read at `d.syspath`: held in pending_ until derived, indexed by its keys.
    void put_device_raw(DeviceState d);
    void erase_device_raw(const std::string& syspath);
    /// What an RDMA device read is indexed by (its read values, from device_read()).
    struct DeviceKeys {
        std::string name;
        std::string pci_address;
        std::string physical_function;
        std::string parent_netdev;
        std::vector<std::string> gid_netdevs; ///< the netdevs its GID entries name, distinct
    };
    static DeviceKeys keys_of(const DeviceState& d);
    /// The device read at `syspath` as last read: its read not yet derived (pending_), else the
    /// Inventory's; null when neither holds it.
    const DeviceState* device_read(const std::string& syspath) const;
    /// `key`: the syspath key of the device's entry in known_.
    void index_device_raw(KeyRef key, const DeviceKeys& keys, bool add);
    /// Take the device at `it` (in known_) out of the indexes, by the keys of device_read()
    /// (what it was indexed by), which are returned; when neither holds it, by a walk of each
    /// index.
    std::optional<DeviceKeys> unindex_device_raw(KnownDevices::iterator it);
    /// The whole host as exported: every device read (those pending taken from `pending_`,
    /// the others as_read() from `inventory`), every netdev, derived.
    HostState derive_all(const Inventory& inventory);
    void erase_link_raw(const std::string& syspath);
    void erase_verbs(const std::string& syspath);

    ScanOptions options_;
    const Inventory& inventory_; ///< holds the devices read and derived (derive_into())
    udev::Udev udev_;
    KernelModules modules_;
    DistroFamily family_ = DistroFamily::unknown;

    // What was read, before derivation.
    /// Every RDMA device read, by syspath: the same SharedText as the device's `syspath` and its
    /// key in the Inventory, so the text is held once (a heap block of about 100 bytes a copy
    /// at 1,024 devices). The indexes below point at its text, which stays where it is while
    /// held.
    KnownDevices known_;
    /// RDMA devices read and not yet derived into the Inventory (and those still retried);
    /// keyed as HostState::devices, so that derive_all() moves their entries over whole
    std::map<SharedText, DeviceState, SharedTextLess> pending_;
    /// by ifindex; each syspath is the SharedText the Inventory's copy holds (one text)
    std::map<int32_t, LinkState> links_;
    /// uverbs syspath -> (ibdev name, /dev path)
    std::map<std::string, std::pair<std::string, std::string>> verbs_;
    /// The auxiliary devices classify_links() reads (is_unbound_rdma_aux()), by syspath: at
    /// 1,024 bound mlx5 functions, keeping every one read was 0.26 MB for nothing.
    std::map<std::string, AuxDevice> aux_;
    // Indexes of what was read: an event looks its objects up instead of walking them all.
    // They point at the syspath keys of known_ (util/key_ref.hpp): a device leaves them
    // before it leaves known_.
    using SyspathIndex = SortedIndex<KeyRef, KeyRefLess>;
    SyspathIndex device_named_;   ///< name -> syspaths (several: swaps, as in Inventory)
    SyspathIndex devices_at_pci_; ///< PCI address -> syspaths
    /// netdev name -> syspaths of the devices whose GIDs (or rxe parent) name it
    SyspathIndex devices_on_netdev_;
    /// syspath -> ifindex; the keys point at the syspaths of links_ (erased before those)
    std::map<KeyRef, int32_t, KeyRefLess> link_at_;
    /// links_ by name, as doctor::index_links(links_) gives it (the lowest ifindex when two
    /// share a name while their renames are still being read), kept as links_ changes so that
    /// an event does not index every netdev of the host again.
    doctor::LinkIndex link_named_;
    std::set<std::pair<std::string, int32_t>> link_names_; ///< (name, ifindex) of links_
    std::string provider_package_; ///< `[daemon] provider_package`, "" for the family's
    HostFacts host_;               ///< read by full_scan() and every full refresh() (doctor checks)

    /// Point link_named_[name] at the link of links_ with that name and the lowest ifindex,
    /// or drop it when none has the name.
    void index_link_name(const std::string& name);
    /// `d` with its provider, verbs device and package filled (not its problems).
    void derive_device(DeviceState& d, std::map<std::string, bool>& installed,
                       const std::map<std::string, std::string>& verbs_by_ibdev) const;
    /// ibdev name -> /dev path of every uverbs device (the last read of verbs_, by syspath,
    /// when two name one device).
    std::map<std::string, std::string> verbs_by_ibdev() const;

    // Noted by uevents, done by refresh().
    bool structural_ = true; ///< since the last refresh: more than re-reads of known objects
    std::set<std::string> dirty_devices_; ///< RDMA devices to read whole
    /// RDMA devices whose own directory (node attributes, ports) is to be read again, the
    /// rest kept as read (reread_device_own()): a "change" uevent of the device, a netdev's
    /// carrier or addresses. One in dirty_devices_ too is read whole.
    std::set<std::string> dirty_own_;
    std::set<std::string> address_devices_; ///< note_address(), until take_address_devices()
    std::vector<std::string> memlock_launchers_ = DesiredConfig{}.memlock_launchers;
    std::set<std::string> dirty_links_;
    bool dirty_verbs_ = false;                ///< every uverbs device (RDMA device names moved)
    std::set<std::string> dirty_verbs_paths_; ///< these uverbs devices only
    std::set<std::string> dirty_aux_paths_;   ///< auxiliary devices to read again
    std::map<std::string, int> incomplete_;   ///< syspath -> retries so far

    PfcReader pfc_;
    PciReads pci_reads_; ///< within one pass (full_scan(), refresh()); empty between them
    /// netdev -> syspaths (keys of known_) of the devices with an Ethernet port on it (as of
    /// the last full derive; the fast path keeps port netdevs as they were)
    SyspathIndex pfc_ports_;
    std::set<std::string> pfc_devices_; ///< devices whose port PFC changed since refresh()
};

} // namespace rdmad
