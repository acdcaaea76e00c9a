// SPDX-License-Identifier: MIT
//
// Where devices sit in /sys: the devices of a subsystem, a device's name and its uevent
// properties (its PCI function: sources/pci_reads.hpp). This is what libudev's enumerate and udev_device gave the readers,
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

/// The value of `key` in the device's `uevent` file (KEY=value lines, written by the kernel's
/// dev_uevent(), drivers/base/core.c), std::nullopt when the file or the key is absent.
std::optional<std::string> uevent_property(const std::string& syspath, std::string_view key);

} // namespace rdmad::device_paths
