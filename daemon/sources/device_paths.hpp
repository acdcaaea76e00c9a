// SPDX-License-Identifier: MIT
//
// Where devices sit in /sys: the devices of a subsystem, a device's name, its PCI function and
// its uevent properties. This is what libudev's enumerate and udev_device gave the readers,
// done with the few reads rdmad needs through util/sysfs (libudev builds a whole device, with
// a realpath(3) and a uevent parse, for every entry it lists).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad::device_paths {

/// The syspaths (`/sys/devices/...`) of every device of `subsystem` ("infiniband",
/// "infiniband_verbs", "net", "auxiliary"), sorted: the links in `/sys/class/<subsystem>/`
/// and in `/sys/bus/<subsystem>/devices/`, where libudev looks too (a class subsystem has the
/// first, a bus such as auxiliary the second; umockdev testbeds put every non-PCI subsystem
/// under class/). Empty when neither exists.
std::vector<std::string> subsystem_devices(std::string_view subsystem);

/// The kernel name of the device at `syspath`: its last path component ("mlx5_0").
std::string sysname(std::string_view syspath);

/// The PCI function a device hangs below.
struct PciFunction {
    std::string address; ///< "0000:3b:00.0"; "" when the device has no PCI ancestor
    std::string syspath; ///< its syspath, "" likewise
};

/// The nearest ancestor of `syspath` (itself excluded) that is a PCI device: named by a PCI
/// address (the kernel names every PCI device "%04x:%02x:%02x.%d", drivers/pci/probe.c
/// pci_setup_device()) with a `subsystem` link to the pci bus. This is libudev's
/// udev_device_get_parent_with_subsystem_devtype(dev, "pci", NULL).
PciFunction pci_function(const std::string& syspath);

/// The value of `key` in the device's `uevent` file (KEY=value lines, written by the kernel's
/// dev_uevent(), drivers/base/core.c), std::nullopt when the file or the key is absent.
std::optional<std::string> uevent_property(const std::string& syspath, std::string_view key);

} // namespace rdmad::device_paths
