// SPDX-License-Identifier: MIT
//
// The PCI functions that RDMA devices, netdevs and auxiliary devices hang below, read once per
// pass however many of those sit below one function: a PF's bridge and root port serve each of
// its VFs, and a function serves its RDMA device, its netdev and its auxiliary devices. Before,
// a 1,000-VF burst read every bridge's PCIe attributes once per VF and each function's
// `subsystem` link three times (bus issue: the burst's reads were 1.33x the bare read's opens).
#pragma once

#include "inventory/model.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace rdmad {

/// The PCI function a device hangs below.
struct PciFunction {
    std::string address; ///< "0000:3b:00.0"; "" when the device has no PCI ancestor
    std::string syspath; ///< its syspath, "" likewise
};

class PciReads {
  public:
    /// The nearest ancestor of `syspath` (itself excluded) that is a PCI device: named by a PCI
    /// address (the kernel names every PCI device "%04x:%02x:%02x.%d", drivers/pci/probe.c
    /// pci_setup_device()) with a `subsystem` link to the pci bus. This is libudev's
    /// udev_device_get_parent_with_subsystem_devtype(dev, "pci", NULL). Each ancestor's link is
    /// read at most once until clear().
    PciFunction function_of(const std::string& syspath);

    /// The syspath of the PF of the VF at `pci_syspath`: its `physfn` link resolved
    /// (sysfs::resolve_link()); "" for a PF, and for a link no kernel makes (the kernel links
    /// a VF to its PF alone: drivers/pci/iov.c pci_iov_add_virtfn()): one to the function
    /// itself, outside the VF's `devices` directory (nothing is read there), to what is no
    /// PCI function (a loop, a directory without a `subsystem` link to the pci bus), to a
    /// function without `sriov_totalvfs` (a bridge, a plain function: the kernel shows it on
    /// PFs alone, drivers/pci/iov.c sriov_pf_dev_attrs) or to a function with a `physfn` of
    /// its own (a VF is no PF). A PF that is absent (removed while its VF is read) is the PF
    /// still: its return reads its VFs again (Scanner::mark_pci_function()). Each PF is
    /// checked at most once until clear().
    std::string physical_function(const std::string& pci_syspath);

    /// The PCIe link attributes (`current_link_speed`, `current_link_width`, `max_link_speed`,
    /// `max_link_width`) of the PCI function at `pci_syspath` and of every PCI function whose
    /// directory contains it (its bridges, up to the root port), nearest first; absent files
    /// are "". Each function's four files are read at most once until clear().
    std::vector<PcieFunction> pcie_path(const std::string& pci_syspath);

    /// The index of the VF at `pci_syspath` (address `address`, its `physfn` resolving to
    /// `pf_syspath`, physical_function()'s answer) on its PF (read_vf_indexes()), -1 when
    /// none; each PF's `virtfn<n>` links are read at most once until clear() (again for a VF
    /// they did not name). Read per VF, the PF's links were a list and a readlink of each: a
    /// 1,000-VF burst read about a million links. Keyed by the PF's path, not its address:
    /// two functions of one address (only a hostile tree has them) keep their VFs apart.
    int32_t vf_index(const std::string& pci_syspath, const std::string& pf_syspath,
                     const std::string& address);
    /// Forget what was read: the scanner clears at the start and end of every pass, so a
    /// retrained link or a function that went is read again by the next one.
    void clear();

  private:
    /// Whether `dir` is a PCI function (function_of()'s test), cached in is_pci_.
    bool is_pci(const std::string& dir);
    std::unordered_map<std::string, bool> is_pci_;       ///< directory -> a PCI function
    std::unordered_map<std::string, bool> is_pf_;        ///< physfn's target -> a PF's
    std::unordered_map<std::string, PcieFunction> pcie_; ///< function directory -> its link
    /// PF syspath -> its VFs' addresses -> their index
    std::unordered_map<std::string, std::unordered_map<std::string, int32_t>> vfs_;
};

} // namespace rdmad
