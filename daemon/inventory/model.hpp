// SPDX-License-Identifier: MIT
//
// The inventory's value types: the actual state of RDMA devices, their ports and every netdev,
// as plain values. Readers fill them, the bus exporter and Describe() read them; nothing here
// touches the system.
//
// Memory: at 1,024 RDMA devices the Inventory holds a few thousand objects, so a value's size
// counts. A text many objects repeat (a port state, a driver, a GID type, a PCIe speed, a
// doctor finding about the host) is a SharedText, one copy per distinct text (8 bytes where a
// std::string is 32, and longer ones were a heap block each); a GID is its 16 bytes
// (inventory/gid.hpp). A syspath is one too, though one object's: a device's was held thrice
// (HostState::devices's key, DeviceState::syspath, the scanner's `known_`), a netdev's twice (its
// LinkState in the Inventory and the scanner's), a heap block of about 100 bytes a copy; each is
// now held once, 8 bytes a holder. Other texts of one object (names, addresses): std::string.
#pragma once

#include "inventory/gid.hpp"
#include "util/shared_text.hpp"

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rdmad {

/// One non-empty GID table entry of a port.
/// Source: kernel drivers/infiniband/core/sysfs.c (`gids/<i>`, `gid_attrs/types/<i>`,
/// `gid_attrs/ndevs/<i>`).
/// Memory: 40 bytes. At 1,024 RoCE devices of 32 GIDs each the entries are 32,768 values, so
/// the netdev name is shared (every GID of a port names one netdev or a few VLANs): as a
/// std::string it was 24 bytes more an entry, 0.75 MiB (issue #24's memory figure).
struct GidEntry {
    uint32_t index = 0;
    Gid gid;           ///< never all zeros (empty entries are not kept); text(): as the kernel
                       ///< prints it, 8 groups of 4 hex digits, uncompressed
    SharedText type;   ///< "IB/RoCE v1", "RoCE v2", or "" when gid_attrs is absent or unreadable
    SharedText netdev; ///< "" when the entry has no netdev (IB ports, EINVAL on read)
    auto operator<=>(const GidEntry&) const = default;
};

/// The GID a RoCE application should use on a port (doctor/gid_choice.hpp recommend_gid()):
/// its table index, the GID, its type, its netdev and the IP address the GID carries ("" for a
/// GID that carries none). `gid` is all zeros (text() "") when there is nothing to recommend.
struct RecommendedGid {
    uint32_t index = 0;
    Gid gid;
    SharedText type;
    SharedText netdev;
    std::string ip; ///< "192.0.2.1" for an IPv4-mapped GID, RFC 5952 text for IPv6
    bool operator==(const RecommendedGid&) const = default;
};

/// A problem found on a device: a stable code, a severity ("error", "warning", "info") and
/// a sentence for a human that names the cause; the evidence it rests on (one "path = value"
/// string per file or attribute read, the value as rdmad parsed it) and the remedy (a command
/// or a configuration change, "" when there is none to give). `port` is the port number the
/// problem is about, 0 for the whole device. A check whose facts are missing reports severity
/// "info" with a code ending in "-unknown" and the reason, never a guess.
/// The texts are shared (util/shared_text.hpp): a finding about the host, such as a module
/// every device needs, is on every device and held once.
struct Problem {
    SharedText code;
    SharedText severity;
    SharedText text;
    std::vector<SharedText> evidence = {};
    SharedText remedy = {};
    uint32_t port = 0;
    /// A doctor finding of severity "info" (a fact it could not read, a hint): shown in
    /// Device.ProblemDetails only, so that Device.Problems keeps what needs attention.
    bool details_only = false;
    auto operator<=>(const Problem&) const = default;
};

/// DSCP -> 802.1p priority entries of a DCB IEEE APP table (selector DSCP), as (DSCP 0-63,
/// priority 0-7) pairs sorted by DSCP, then priority.
using DscpMap = std::vector<std::pair<uint8_t, uint8_t>>;

/// The IEEE PFC state of a port's netdev, as DCB netlink reported it (an IEEE_GET reply, the
/// read-back after rdmad's SET, or an RTNLGRP_DCB notification). Source: uapi linux/dcbnl.h
/// struct ieee_pfc; net/dcb/dcbnl.c dcbnl_ieee_fill().
struct PfcActual {
    enum class Status { unknown, ok, not_supported, failed } status = Status::unknown;
    std::vector<uint8_t> priorities; ///< pfc_en as priorities 0-7, ascending, when ok
    uint8_t pfc_cap = 0;             ///< ieee_pfc.pfc_cap, kept by a SET (read-modify-write)
    uint8_t mbc = 0;                 ///< ieee_pfc.mbc, kept by a SET
    uint16_t delay = 0;              ///< ieee_pfc.delay (bit times), kept by a SET
    bool willing = false;            ///< firmware DCBX in willing mode: the switch may override
    bool lldpad = false;             ///< lldpad runs, so it owns DCB (pfc_reader.hpp)
    /// The trust mode the netdev's IEEE APP table (DCB_ATTR_IEEE_APP_TABLE) implies, when ok:
    /// "dscp" when it has a DSCP entry (selector IEEE_8021QAZ_APP_SEL_DSCP), "pcp" when it has
    /// none (802.1p priority from the VLAN tag), "" when the reply carried no APP table.
    /// Drivers (mlx5 en_dcbnl.c, ice) switch to DSCP trust with the first DSCP entry.
    std::string trust;
    /// The DSCP entries of the APP table as (DSCP 0-63, priority 0-7), sorted; a DSCP may map
    /// to several priorities (net/dcb/dcbnl.c dcb_ieee_setapp() keeps each distinct entry).
    DscpMap dscp_map;
    SharedText message; ///< why not ok, for the admin (shared: often one per host)
    bool operator==(const PfcActual&) const = default;
};

/// The PCIe link attributes of one PCI function (`/sys/bus/pci/devices/<bdf>/`), as the kernel
/// prints them (drivers/pci/pci-sysfs.c: `current_link_speed` "%s" from pci_speed_string(),
/// e.g. "8.0 GT/s PCIe" on kernels >= 5.x, "8 GT/s" before; `current_link_width` "%u";
/// `max_link_speed`, `max_link_width` likewise). "" when the file is absent or unreadable.
struct PcieFunction {
    std::string address; ///< "0000:3b:00.0"
    SharedText current_link_speed;
    SharedText current_link_width;
    SharedText max_link_speed;
    SharedText max_link_width;
    bool operator==(const PcieFunction&) const = default;
};

/// The RDMA-CM defaults of one port as configfs shows them
/// (`/sys/kernel/config/rdma_cm/<dev>/ports/<n>/default_roce_mode`, `default_roce_tos`; kernel
/// drivers/infiniband/core/cma_configfs.c), read by sources/rdma_cm_reader.hpp.
/// How far a port's RDMA-CM defaults could be read.
enum class RdmaCmStatus {
    ok,          ///< read: roce_mode set; tos set unless the kernel predates default_roce_tos
    no_group,    ///< no `rdma_cm/<dev>` group: the values cannot be seen without creating it.
                 ///< Not "the kernel defaults": a tool may have set them and removed its group
                 ///< (mlnx-tools sbin/cma_roce_mode does mkdir, echo, rmdir)
    no_configfs, ///< `<root>` is absent (no configfs in the kernel, or its module not loaded)
                 ///< or is the bare mount point (configfs not mounted)
    unsupported, ///< configfs is mounted but has no `rdma_cm`: the rdma_cm module is not loaded,
                 ///< or the kernel is built without CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS
    failed,      ///< the group is there but the port's files did not read: `error` says why
                 ///< (ENOENT: no such port; ENODEV: the device of the group went away)
};

/// One port's RDMA-CM defaults as read.
struct RdmaCmActual {
    uint32_t port = 0;
    RdmaCmStatus status = RdmaCmStatus::failed;
    std::string roce_mode;      ///< "IB/RoCE v1" or "RoCE v2" when ok, else ""
    std::optional<uint8_t> tos; ///< when ok and the kernel has default_roce_tos
    int error = 0;              ///< errno of what failed, else 0; with ok, of default_roce_tos
    /// for the admin, naming the path; "" when ok with both values. Shared: a status of the
    /// host (configfs not mounted) gives every RoCE port the same text.
    SharedText message;
    bool operator==(const RdmaCmActual&) const = default;
};

/// One port of an RDMA device (`/sys/class/infiniband/<dev>/ports/<n>/`).
struct PortState {
    uint32_t number = 0;
    SharedText state;      ///< "ACTIVE", "DOWN", ...; the kernel's text when unknown
    SharedText phys_state; ///< "LinkUp", "Polling", ...; the kernel's text when unknown
    SharedText link_layer; ///< "InfiniBand", "Ethernet", "Unknown", or the kernel's text
    SharedText transport;  ///< "InfiniBand", "RoCE", "iWARP", "OPA", "usNIC", "unknown"
    std::vector<std::string> roce_versions; ///< subset of {"v1", "v2"}, sorted
    double rate_gbps = -1;                  ///< -1 when unknown
    SharedText rate;                        ///< as the kernel prints it, "" when unreadable
    uint16_t lid = 0;
    uint16_t sm_lid = 0;
    SharedText pkey0; ///< `pkeys/0` as printed ("0xffff"), "" when absent/unreadable
    std::vector<GidEntry> gids;
    std::string netdev;   ///< the port's netdev name, "" when none is known
    SharedText port_type; ///< mlx4 `mlx4_port<n>`: "ib", "eth", "auto (ib)", "auto (eth)"; ""
                          ///< (ConnectX-4+: the firmware's current LINK_TYPE, set by the
                          ///< reconciler where a port type is asked)
    /// DCB PFC of its netdev, read for every Ethernet port with a netdev (unknown otherwise)
    PfcActual pfc;
    std::vector<uint8_t> pfc_no_drop; ///< pfc.priorities when pfc is ok, else empty
    /// RDMA-CM defaults from configfs, read for RoCE ports (sources/rdma_cm_reader.hpp);
    /// status failed with no message for other ports
    RdmaCmActual rdma_cm;
    // Derived from the port's netdev (doctor/roce_mtu.hpp derive_mtus()):
    uint32_t netdev_mtu = 0; ///< the netdev's `mtu`, 0 when no netdev or unreadable
    uint32_t active_mtu = 0; ///< RoCE: iboe_get_mtu(netdev_mtu); 0 otherwise or when unknown
    /// Derived from `gids` and the netdevs they name (doctor/gid_choice.hpp); RoCE ports only.
    RecommendedGid recommended_gid;
    /// Filled by the Inventory, not read: the ifindex of the netdev named `netdev`, 0 when
    /// none is known (Port.Link). Kept across puts; resolved when names settle.
    int32_t link_index = 0;
    // Filled by the reconciler, not read from sysfs:
    SharedText desired_port_type;             ///< "ib", "eth", "auto", "" when nothing asked
    std::vector<uint8_t> desired_pfc_no_drop; ///< empty when nothing asked
    SharedText desired_trust;                 ///< "dscp", "pcp", "" when nothing asked
    DscpMap desired_dscp_priority;            ///< empty when nothing asked
    SharedText desired_rdma_cm_roce_mode;     ///< "RoCE v2", "IB/RoCE v1", "" when nothing asked
    int32_t desired_rdma_cm_tos = -1;         ///< 0-255, -1 when nothing asked
    /// ConnectX-4+ where a port type is asked: the firmware's next-boot LINK_TYPE ("ib",
    /// "eth", "auto"; "" unknown), and the type that waits for a firmware reset or reboot
    /// ("" when none does)
    SharedText next_boot_port_type;
    SharedText pending_port_type;
    bool in_sync = true; ///< actual equals desired (true when nothing asked)
    bool operator==(const PortState&) const = default;
};

/// The SR-IOV state of a device's PCI function (`/sys/bus/pci/devices/<bdf>/sriov_numvfs` and
/// `sriov_totalvfs`, kernel drivers/pci/iov.c; read by sources/sriov_reader.hpp). Both nullopt
/// for a function without SR-IOV (a VF, a card without the capability) or unreadable.
struct SriovActual {
    std::optional<uint32_t> numvfs;   ///< VFs enabled now
    std::optional<uint32_t> totalvfs; ///< the most the PF can enable
    /// When a PF's files do not both read as counts: the first that does not, as a problem's
    /// evidence shows it ("sriov_totalvfs = \"abc\"", "sriov_numvfs = (absent)"); else "".
    std::string unreadable;
    bool operator==(const SriovActual&) const = default;
};

/// The node and port GUID of one SR-IOV VF of an InfiniBand PF (reconcile/settings/vf_guids.cpp),
/// as host-order u64: the first byte of the text most significant, as iproute2's get_guid()
/// and the kernel's `struct ifla_vf_guid` (include/uapi/linux/if_link.h) hold it.
struct VfGuid {
    uint32_t vf = 0; ///< the VF's index on its PF (`virtfn<vf>`)
    uint64_t node = 0;
    uint64_t port = 0;
    bool operator==(const VfGuid&) const = default;
};

/// One RDMA device (`/sys/class/infiniband/<dev>`).
struct DeviceState {
    std::string name;
    SharedText syspath;    ///< where it was read, for diagnostics; the key of HostState::devices
    SharedText node_type;  ///< "CA", "switch", "router", "RNIC", "usNIC", "usNIC UDP",
                           ///< "unspecified", or the kernel's text
    std::string node_guid; ///< "0002:c903:0031:78f0" form, "" when unreadable
    std::string sys_image_guid;
    SharedText firmware_version;
    SharedText hca_type;
    SharedText board_id;
    std::string node_description;
    std::string pci_address;   ///< "0000:3b:00.0", "" when not on PCI (rxe, siw)
    SharedText kernel_driver;  ///< basename of `device/driver` ("mlx5_core"), or the
                               ///< software driver ("rdma_rxe", "siw") for parent-less devices
    std::string parent_netdev; ///< rxe `parent` file, "" otherwise
    SharedText provider;       ///< rdma-core provider ("mlx5"), "" when none is known
    bool provider_installed = false;
    SharedText provider_package;   ///< this distribution's package that ships `provider`
    std::string verbs_device;      ///< "/dev/infiniband/uverbsN", "" when ib_uverbs has none
    std::string physical_function; ///< PCI address of the SR-IOV PF, "" unless a VF
    /// The PCI function and every bridge above it up to the root port, in that order
    /// (empty when not on PCI).
    std::vector<PcieFunction> pcie_path;
    std::vector<PortState> ports; ///< sorted by number
    std::vector<Problem> problems;
    SriovActual sriov; ///< of its PCI function when it is an SR-IOV PF
    /// Filled by the reconciler, not read (reconcile/settings/sriov_numvfs.cpp): the VF count
    /// asked, -1 when nothing asked
    int32_t desired_sriov_numvfs = -1;
    /// A VF's index on its PF: the n of the PF's `virtfn<n>` link that names its PCI function
    /// (sources/vf_guid_reader.hpp), -1 unless a VF
    int32_t vf_index = -1;
    /// Filled by the reconciler, not read (reconcile/settings/vf_guids.cpp): on a PF, the GUIDs
    /// `vf_guids` asks of its VFs (a range: each VF it has now), by VF; empty when none asked
    std::vector<VfGuid> desired_vf_guids;
    /// Filled by the reconciler, not read: each setting key the desired state asks of the
    /// device and where its value comes from ("pfc_no_drop", "/etc/rdmad/rdmad.conf:3" or
    /// "profile lossless-roce (/etc/rdmad/rdmad.conf:3)"), sorted by key
    std::vector<std::pair<std::string, std::string>> desired_origin;
    // Filled by the Inventory, not read (kept across puts, resolved when names settle):
    std::vector<int32_t> link_indexes; ///< the netdevs whose rdma_device is this device, ascending
    std::string pf_id;                 ///< the Inventory id of the SR-IOV PF's device, "" when none
    bool operator==(const DeviceState&) const = default;
};

/// One netdev (`/sys/class/net/<if>`), RDMA-capable or not.
struct LinkState {
    int32_t index = 0; ///< ifindex
    std::string name;
    SharedText syspath;      ///< one copy for the Inventory's and the scanner's (model.hpp top)
    std::string pci_address; ///< "" when not on PCI
    SharedText driver;       ///< the netdev's device driver ("mlx5_core"), "" if virtual
    SharedText operstate;    ///< sysfs `operstate`: "up", "down", "unknown", ...
    SharedText carrier;      ///< sysfs `carrier`: "1", "0"; "" when unreadable (the
                             ///< kernel fails the read with EINVAL while the netdev is
                             ///< administratively down)
    int64_t flags = -1;      ///< sysfs `flags` ("0x%x", IFF_* of uapi linux/if.h), -1
                             ///< when unreadable
    uint32_t mtu = 0;        ///< sysfs `mtu`, 0 when unreadable
    std::string master;      ///< upper device (bond, bridge) name, "" when none
    /// `DEVTYPE` of the netdev's uevent: "vlan", "bond", "vxlan", "bridge", ...; "" for a
    /// physical port (drivers set it with SET_NETDEV_DEVTYPE(), include/linux/netdevice.h)
    SharedText kind;
    /// The netdev it sits on (sysfs `iflink`: a VLAN's, macvlan's or tunnel's lower netdev),
    /// 0 when it is its own (a physical port)
    int32_t lower_ifindex = 0;
    uint32_t dev_port = 0;   ///< sysfs `dev_port`: the port of a multi-port function, from 0
    uint32_t type = 1;       ///< sysfs `type` (ARPHRD_*): 1 Ethernet, 32 InfiniBand (IPoIB)
    SharedText rdma_capable; ///< "yes", "no", "module-not-loaded", "unknown"
    std::string rdma_device; ///< name of the RDMA device that serves it, "" when none
    SharedText hint;         ///< what to do, e.g. "load mlx5_ib"; "" when nothing
    /// The RDMA module that would serve it when RdmaCapable is "module-not-loaded" and the
    /// module is known ("irdma"), else "" (the plan of [daemon] load_modules reads it)
    std::string rdma_module;
    /// Filled by the Inventory, not read: the id of the device named `rdma_device`, "" when
    /// none (Link.RdmaDevice). Kept across puts; resolved when names settle.
    std::string rdma_device_id;
    bool operator==(const LinkState&) const = default;
};

/// A kernel module an RDMA consumer needs, as the host has it.
struct ModuleState {
    std::string name;                  ///< "ib_uverbs", "rdma_ucm", "ib_umad", "ib_ipoib"
    std::string state;                 ///< "loaded", "built-in", "absent", "unknown"
    std::vector<std::string> evidence; ///< "path = present" / "path = absent" strings
    bool operator==(const ModuleState&) const = default;
};

/// RLIMIT_MEMLOCK as /proc/<pid>/limits shows it ("Max locked memory"), in bytes.
struct MemlockLimit {
    static constexpr uint64_t kUnlimited = UINT64_MAX; ///< "unlimited"
    uint64_t soft = 0;
    uint64_t hard = 0;
    bool operator==(const MemlockLimit&) const = default;
};

/// A running process that starts RDMA applications (a batch or container launcher): they
/// inherit its locked-memory limit.
struct MemlockProcess {
    std::string comm; ///< /proc/<pid>/comm: "slurmd", "kubelet", ...
    int32_t pid = 0;
    MemlockLimit limit;
    bool operator==(const MemlockProcess&) const = default;
};

/// The locked-memory limits RDMA applications will get (sources/memlock_reader.hpp).
struct MemlockFacts {
    bool read = false;                     ///< /proc was scanned
    std::vector<MemlockProcess> processes; ///< launchers found, by pid
    std::string default_limit;             ///< systemd DefaultLimitMEMLOCK= text, "" unset
    std::string default_limit_file;        ///< the file that set it
    std::optional<uint64_t> default_soft;  ///< its soft limit in bytes, when it parses
    std::optional<MemlockLimit> manager;   ///< PID 1's own limit, when PID 1 is systemd
    bool operator==(const MemlockFacts&) const = default;
};

/// Facts about the host rather than one device (the doctor's checks read them), read on a
/// full scan.
struct HostFacts {
    std::string hostname; ///< uname(2) nodename, "" when unknown
    std::vector<ModuleState> modules;
    MemlockFacts memlock;
    bool operator==(const HostFacts&) const = default;
};

/// Kernel modules as a module plan ([daemon] load_modules) sees them
/// (sources/modules.hpp: read_kernel_modules()), read only when that plan is made.
struct KernelModulesActual {
    bool read = false;                 ///< false: nothing was read, and the plan does nothing
    std::set<std::string> loaded;      ///< of the modules asked about, those /sys/module names
    std::set<std::string> blacklisted; ///< modules a modprobe.d `blacklist` line names
    /// of the modules asked about, those not loaded that the module directory's index does
    /// not know (libkmod's lookup finds nothing): never listed in the modules-load.d file,
    /// where systemd-modules-load would fail on them at boot
    std::set<std::string> absent;
    /// rdmad's modules-load.d file, its module names; nullopt when there is no such file
    std::optional<std::vector<std::string>> file;
    bool operator==(const KernelModulesActual&) const = default;
};

/// Everything discovery found, keyed by what the kernel keeps stable for one scan:
/// devices by syspath, links by ifindex.
/// mlx4_en's PFC module options (sources/mlx4_module_reader.hpp), host-wide: read only when a
/// plan can use them, so nullopt may also mean "not read".
struct Mlx4ModuleActual {
    std::optional<uint8_t> loaded_pfctx; ///< /sys/module/mlx4_en/parameters/pfctx, if loaded
    std::optional<uint8_t> file_pfctx;   ///< what rdmad's modprobe.d file says now, if any
    bool operator==(const Mlx4ModuleActual&) const = default;
};

/// The VPI port type of one ConnectX-4+ PCI function as its firmware holds it
/// (`LINK_TYPE_P<n>`, read with mstflint's `mstconfig -e -d <pci> query`:
/// sources/mstconfig.hpp).
struct FirmwarePortType {
    /// ok: read; missing: no mstconfig to run; failed: the tool refused or said nothing usable;
    /// querying: a query runs (reconcile/mstconfig_jobs.hpp), its reading comes later
    enum class Status { ok, missing, failed, querying } status = Status::failed;
    uint32_t card_port = 1; ///< <n> of LINK_TYPE_P<n>: the card's port this function drives
    std::string current;    ///< "ib", "eth", "auto" (VPI(3)) when ok
    std::string next_boot;  ///< likewise, what the firmware takes at its next reset
    std::string message;    ///< why not ok: the tool's stderr, or what is missing
    /// Asked again (its device added again, a Reload): shown as last read, no write planned
    /// from it, until the new reading replaces it.
    bool refresh = false;
    bool operator==(const FirmwarePortType&) const = default;
};

/// The RDMA network namespace mode of the host (ib_core netns_mode, sources/rdma_netns_reader
/// .hpp): each "shared", "exclusive", or "" (ib_core not loaded, no file, nothing asked).
struct RdmaNetnsState {
    std::string now;       ///< /sys/module/ib_core/parameters/netns_mode
    std::string next_load; ///< rdmad's modprobe.d file, taken when ib_core loads
    std::string desired;   ///< `[daemon] rdma_netns_mode`
    bool own_file = false; ///< rdmad's file is there with rdmad's header (written_by_rdmad())
    /// The mode asked that the file holds and the loaded ib_core does not run, else "" (also
    /// while ib_core is not loaded: nothing runs a mode then).
    std::string pending() const {
        return !desired.empty() && next_load == desired && !now.empty() && now != desired
                   ? desired
                   : std::string();
    }
    bool operator==(const RdmaNetnsState&) const = default;
};

struct HostState {
    /// Keyed by DeviceState::syspath, the same SharedText (no second copy of the text); finds
    /// by a std::string as well.
    std::map<SharedText, DeviceState, SharedTextLess> devices;
    std::map<int32_t, LinkState> links;
    Mlx4ModuleActual mlx4_module; ///< as last read for a plan; not exported
    /// By PCI address: as a plan last read them (once per function at start, add or Reload,
    /// and after a write); shown through PortState::port_type, next_boot_port_type and
    /// pending_port_type.
    std::map<std::string, FirmwarePortType> firmware_port_types;
    RdmaNetnsState rdma_netns; ///< as the last full plan read it; Manager properties
    bool operator==(const HostState&) const = default;
};

} // namespace rdmad
