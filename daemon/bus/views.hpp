// SPDX-License-Identifier: MIT
//
// What one bus object shows: the inventory's state plus the object paths it refers to.
#pragma once

#include "inventory/model.hpp"

#include <map>
#include <string>
#include <vector>

namespace rdmad {

struct PortView {
    PortState state;
    std::string path;
    std::string device_syspath; ///< the device's identity for the controller
    std::string link_path = "/"; ///< the port's netdev object, "/" when none
    bool operator==(const PortView&) const = default;
};

struct DeviceView {
    DeviceState state;       ///< every string made valid UTF-8 for the bus
    std::string kernel_name; ///< the name as the kernel has it (bytes), for GetDeviceByName
    std::string path;
    std::vector<PortView> ports;
    std::vector<std::string> link_paths;
    std::string pf_path = "/"; ///< the SR-IOV PF's device object, "/" unless a VF
    bool operator==(const DeviceView&) const = default;
};

struct LinkView {
    LinkState state;         ///< every string made valid UTF-8 for the bus
    std::string kernel_name; ///< the name as the kernel has it (bytes), for GetLinkByName
    std::string path;
    std::string device_path = "/";
    bool operator==(const LinkView&) const = default;
};

/// The whole exported model: what every object shows, and the names the Manager looks up.
struct BusModel {
    std::map<std::string, DeviceView> devices;              ///< by object path
    std::map<int32_t, LinkView> links;                      ///< by ifindex
    std::map<std::string, std::string> device_path_by_name; ///< kernel name (bytes) -> path
    std::map<std::string, std::string> link_path_by_name;   ///< kernel name (bytes) -> path
    /// The devices sorted by name, as ListDevices() and Describe() give them.
    std::vector<const DeviceView*> devices_by_name() const;
};

} // namespace rdmad
