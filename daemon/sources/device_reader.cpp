// SPDX-License-Identifier: MIT
#include "sources/device_reader.hpp"

#include "inventory/attributes.hpp"
#include "inventory/driver_capabilities.hpp"
#include "inventory/transport.hpp"
#include "sources/device_paths.hpp"
#include "sources/rdma_cm_reader.hpp"
#include "sources/sriov_reader.hpp"
#include "sources/vf_guid_reader.hpp"
#include "util/sysfs.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>

namespace rdmad {
namespace {

std::string text_or_empty(const std::string& dir, std::string_view attr) {
    auto t = sysfs::read_text(dir, attr);
    return t ? std::string(trim_attribute(*t)) : std::string();
}

std::optional<uint32_t> to_index(const std::string& name) {
    // The kernel names ports and GID entries "%d": no sign, no leading zeros ("01" would read
    // the same port twice).
    if (name.empty() || (name.size() > 1 && name.front() == '0'))
        return std::nullopt;
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
    if (ec != std::errc() || p != name.data() + name.size())
        return std::nullopt;
    return v;
}

/// An unused GID table entry that older kernels print as the link-local subnet prefix with a
/// zero interface ID ("fe80:0000:0000:0000:0000:0000:0000:0000", seen in the hwloc mlx4
/// capture). rdma-core's ibv_devinfo hides every GID whose interface ID is zero
/// (libibverbs/examples/devinfo.c: null_gid()); we hide only this form, since iWARP GIDs
/// (the MAC, zero-padded) have a zero interface ID too.
bool unused_link_local(const Gid& gid) {
    static const Gid kUnused = *Gid::parse("fe80:0000:0000:0000:0000:0000:0000:0000");
    return gid == kUnused;
}

} // namespace

PortState read_port(const std::string& device_syspath, uint32_t number, bool* has_gid_attrs) {
    PortState port;
    port.number = number;
    const std::string dir = device_syspath + "/ports/" + std::to_string(number);
    if (auto t = sysfs::read_text(dir, "state"))
        port.state = parse_port_state(*t);
    if (auto t = sysfs::read_text(dir, "phys_state"))
        port.phys_state = parse_phys_state(*t);
    if (auto t = sysfs::read_text(dir, "link_layer"))
        port.link_layer = parse_link_layer(*t);
    // A rate that fails to read (EINVAL on some drivers) leaves the port listed, rate unknown.
    if (auto t = sysfs::read_text(dir, "rate")) {
        port.rate = std::string(trim_attribute(*t));
        port.rate_gbps = parse_rate_gbps(*t).value_or(-1);
    }
    if (auto t = sysfs::read_text(dir, "lid"))
        port.lid = parse_lid(*t).value_or(0);
    if (auto t = sysfs::read_text(dir, "sm_lid"))
        port.sm_lid = parse_lid(*t).value_or(0);
    // P_Key table entry 0 ("0x%04x"); only ports with a P_Key table have `pkeys/`.
    if (auto t = sysfs::read_text(dir, "pkeys/0"))
        port.pkey0 = std::string(trim_attribute(*t));

    const bool gid_attrs = sysfs::exists(dir + "/gid_attrs");
    if (has_gid_attrs)
        *has_gid_attrs = gid_attrs;
    std::vector<std::pair<uint32_t, std::string>> indices;
    for (const auto& name : sysfs::list_dir(dir, "gids"))
        if (auto i = to_index(name))
            indices.emplace_back(*i, name);
    std::sort(indices.begin(), indices.end());
    // Real GID tables have at most a few hundred entries (mlx5: 256); past this many the
    // directory is not a GID table we can serve.
    constexpr size_t kMaxGids = 4096;
    if (indices.size() > kMaxGids)
        indices.resize(kMaxGids);
    for (const auto& [index, name] : indices) {
        auto t = sysfs::read_text(dir + "/gids", name);
        if (!t)
            continue;
        auto gid = parse_gid(*t);
        if (!gid || gid->empty() || unused_link_local(*gid)) // malformed or empty entry
            continue;
        GidEntry entry;
        entry.index = index;
        entry.gid = *gid;
        if (gid_attrs) {
            // An empty slot fails read() with EINVAL (DOMAIN.md §3.2; drivers/infiniband/core/
            // sysfs.c print_gid_type() -> rdma_get_gid_attr() -EINVAL): a GID read as non-zero
            // whose slot is empty by now was deleted in between, so the slot is empty.
            // IB ports have no ndevs.
            const auto type = sysfs::read_attribute(dir, "gid_attrs/types/" + name);
            if (type.error == EINVAL)
                continue;
            if (type.ok())
                entry.type = parse_gid_type(type.text).value_or("");
            if (auto ndev = sysfs::read_text(dir, "gid_attrs/ndevs/" + name)) {
                // A netdev name has at most IFNAMSIZ - 1 = 15 bytes (uapi linux/if.h).
                std::string_view n = trim_attribute(*ndev);
                if (n.size() <= 15)
                    entry.netdev = std::string(n);
            }
        }
        if (port.netdev.empty() && !entry.netdev.empty())
            port.netdev = entry.netdev;
        port.gids.push_back(std::move(entry));
    }
    return port;
}

DeviceState as_read(DeviceState d) {
    const DeviceState read; // the defaults of what the read does not fill
    d.provider = read.provider;
    d.provider_installed = read.provider_installed;
    d.provider_package = read.provider_package;
    d.verbs_device = read.verbs_device;
    d.problems.clear();
    d.desired_origin.clear();
    d.link_indexes.clear();
    d.pf_id = read.pf_id;
    d.desired_sriov_numvfs = read.desired_sriov_numvfs;
    d.desired_vf_guids = read.desired_vf_guids;
    const PortState port_read;
    for (auto& port : d.ports) {
        port.netdev.clear();
        for (const auto& entry : port.gids)
            if (!entry.netdev.empty()) {
                port.netdev = entry.netdev; // as read_port() sets it
                break;
            }
        port.pfc = port_read.pfc;
        port.pfc_no_drop.clear();
        port.netdev_mtu = port_read.netdev_mtu;
        port.active_mtu = port_read.active_mtu;
        port.recommended_gid = port_read.recommended_gid;
        port.link_index = port_read.link_index;
        port.desired_port_type = port_read.desired_port_type;
        port.desired_pfc_no_drop.clear();
        port.desired_trust = port_read.desired_trust;
        port.desired_dscp_priority.clear();
        port.desired_rdma_cm_roce_mode = port_read.desired_rdma_cm_roce_mode;
        port.desired_rdma_cm_tos = port_read.desired_rdma_cm_tos;
        // ConnectX-4+: the firmware's port type is the reconciler's to show, not read here
        if (driver_capabilities(d.kernel_driver).port_type != PortTypeSwitch::sysfs)
            port.port_type = port_read.port_type;
        port.next_boot_port_type = port_read.next_boot_port_type;
        port.pending_port_type = port_read.pending_port_type;
        port.in_sync = port_read.in_sync;
    }
    return d;
}

namespace {

/// The node attributes of the RDMA device's own directory (Documentation/ABI/stable/
/// sysfs-class-infiniband).
void read_node_attributes(DeviceState& d) {
    const std::string& sp = d.syspath;
    if (auto t = sysfs::read_text(sp, "node_type"))
        d.node_type = parse_node_type(*t);
    if (auto t = sysfs::read_text(sp, "node_guid"))
        d.node_guid = parse_guid(*t).value_or("");
    if (auto t = sysfs::read_text(sp, "sys_image_guid"))
        d.sys_image_guid = parse_guid(*t).value_or("");
    d.firmware_version = text_or_empty(sp, "fw_ver");
    d.hca_type = text_or_empty(sp, "hca_type");
    d.board_id = text_or_empty(sp, "board_id");
    d.node_description = text_or_empty(sp, "node_desc");
}

/// Every port of `d` (`ports/<n>/`), read again; `pci_syspath` is the PCI function's
/// directory ("" for none), for the mlx4 port type.
void read_ports(DeviceState& d, const std::string& pci_syspath) {
    std::vector<uint32_t> numbers;
    for (const auto& name : sysfs::list_dir(d.syspath, "ports"))
        if (auto n = to_index(name); n && is_port_number(d.node_type, *n))
            numbers.push_back(*n);
    std::sort(numbers.begin(), numbers.end());
    d.ports.clear();
    for (uint32_t n : numbers) {
        bool has_gid_attrs = false;
        PortState port = read_port(d.syspath, n, &has_gid_attrs);
        port.transport = classify_transport(d.node_type, port.link_layer, d.kernel_driver);
        port.roce_versions = roce_versions(port.transport, port.gids, has_gid_attrs);
        // RDMA-CM's defaults are RoCE's (reconcile/settings/rdma_cm.cpp).
        if (port.transport == "RoCE")
            port.rdma_cm = read_rdma_cm_port(std::string(kConfigfsRoot), d.name, n);
        // A VPI port type that sysfs shows (and switches): mlx4_port<n>.
        if (driver_capabilities(d.kernel_driver).port_type == PortTypeSwitch::sysfs &&
            !pci_syspath.empty())
            if (auto t = sysfs::read_text(pci_syspath, "mlx4_port" + std::to_string(n)))
                port.port_type = parse_mlx4_port_type(*t).value_or("");
        d.ports.push_back(std::move(port));
    }
}

} // namespace

DeviceState read_device(const std::string& syspath, PciReads& pci_reads) {
    DeviceState d;
    d.syspath = syspath;
    d.name = device_paths::sysname(syspath);
    const std::string& sp = d.syspath;
    read_node_attributes(d);

    // The parent: normally the PCI function; an auxiliary device on kernels that hang the
    // ibdev there; none for rxe/siw (rxe names its netdev in `parent`).
    auto pci = pci_reads.function_of(sp);
    d.pci_address = std::move(pci.address);
    const std::string pci_syspath = std::move(pci.syspath);
    const std::string parent_name = sysfs::link_basename(sp, "device");
    if (!parent_name.empty() && parent_name == d.pci_address)
        d.kernel_driver = sysfs::link_basename(sp, "device/driver");
    else if (!pci_syspath.empty())
        d.kernel_driver = sysfs::link_basename(pci_syspath, "driver");
    if (!pci_syspath.empty()) {
        const std::string pf_syspath = pci_reads.physical_function(pci_syspath);
        if (!pf_syspath.empty()) {
            std::string pf = device_paths::sysname(pf_syspath);
            // A VF has no PCIe link of its own: its traffic takes its PF's, the link the
            // doctor checks for it (the kernel reports a link's status on function 0 only,
            // never on a VF: drivers/pci/probe.c pcie_report_downtraining(), "Multi-function
            // PCIe devices share the same link/status"). Read once a pass for all the VFs.
            d.pcie_path = pci_reads.pcie_path(pf_syspath);
            // Its index on the PF, for vf_guids.cpp.
            d.vf_index = pci_reads.vf_index(pci_syspath, pf_syspath, d.pci_address);
            d.physical_function = std::move(pf);
        } else {
            d.pcie_path = pci_reads.pcie_path(pci_syspath);
            d.sriov = read_sriov(pci_syspath); // a PF's (reconcile/settings/sriov_numvfs.cpp)
        }
    }
    if (parent_name.empty() && d.pci_address.empty()) {
        // Software RDMA: rxe has a `parent` attribute naming its netdev; siw is an RNIC.
        // Source: DOMAIN.md §3.1 and rdma-core kernel-boot/rdma-description.rules.
        if (auto parent = sysfs::read_text(sp, "parent")) {
            d.parent_netdev = std::string(trim_attribute(*parent));
            d.kernel_driver = "rdma_rxe";
        } else if (d.node_type == "RNIC") {
            d.kernel_driver = "siw";
        }
    }
    read_ports(d, pci_syspath);
    return d;
}

DeviceState reread_device_own(DeviceState before, PciReads& pci_reads) {
    read_node_attributes(before);
    // The mlx4 port type is the PCI function's file: its directory is looked up for mlx4 only.
    std::string pci_syspath;
    if (driver_capabilities(before.kernel_driver).port_type == PortTypeSwitch::sysfs)
        pci_syspath = pci_reads.function_of(before.syspath).syspath;
    read_ports(before, pci_syspath);
    return before;
}

} // namespace rdmad
