// SPDX-License-Identifier: MIT
//
// What one bus object shows: the inventory's state plus the object paths it refers to.
#pragma once

#include "inventory/model.hpp"

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

/// The whole exported model, sorted: devices by name, links by ifindex.
struct BusModel {
    std::vector<DeviceView> devices;
    std::vector<LinkView> links;
};

} // namespace rdmad
