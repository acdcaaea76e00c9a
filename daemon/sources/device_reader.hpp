// SPDX-License-Identifier: MIT
//
// Reads one RDMA device and its ports from sysfs. Tolerant: an unreadable or odd attribute
// leaves that value empty, never the device. Never opens counters/ or hw_counters/.
#pragma once

#include "inventory/model.hpp"
#include "sources/pci_reads.hpp"

#include <string>
#include <vector>

namespace rdmad {

/// Read the device at `syspath` (`/sys/devices/.../infiniband/<name>`): identity, node attributes,
/// PCI address and kernel driver (from the `device/driver` link, or the PCI parent's when `device`
/// is an auxiliary device), SR-IOV physical function (`physfn`), rxe `parent`, and every port.
/// Leaves provider, verbs device and problems for the scanner.
/// `pci` holds what this pass has read of the PCI functions above it.
DeviceState read_device(const std::string& syspath, PciReads& pci);

/// `before` (what read_device() gave for the device at before.syspath, as_read()) with what
/// its own directory holds read again: the node attributes and every port, as read_device()
/// reads them. What its parent gave (PCI address, kernel driver, PCIe link path, SR-IOV PF,
/// VF index and PF counts, rxe parent) is kept. For the news of the RDMA device itself (a
/// "change" uevent of it) and of its ports (a netdev's carrier or address change), not of the
/// PCI function above it, which has uevents of its own (and whose PCIe link, retrained, says
/// so by none: the next whole read sees it: an add, SIGHUP). A one-port RoCE
/// function of bench/make-tree.py: 64 file system calls instead of 77.
DeviceState reread_device_own(DeviceState before, PciReads& pci);

/// What read_device() gave for a device that `exported` now holds derived (the Inventory's
/// copy): every value derived after the read back at its default (verbs device, provider and
/// package, problems, each port's PFC, MTUs, recommended GID, desired values and InSync, the
/// Inventory's links and PF id), and each port's netdev back to what the read sets, the
/// netdev of its first GID entry that names one. The scanner keeps no read copy of a device
/// once the Inventory holds it (bus issue: the copy was a third of the daemon's heap).
DeviceState as_read(DeviceState exported);

/// Read port `number` below `device_syspath` (`ports/<n>/`): state, physical state, link
/// layer, rate, LID, SM LID, P_Key entry 0 and the non-empty GID entries with their types and
/// netdevs. `has_gid_attrs` is set when the port has a `gid_attrs` directory.
PortState read_port(const std::string& device_syspath, uint32_t number, bool* has_gid_attrs);

} // namespace rdmad
