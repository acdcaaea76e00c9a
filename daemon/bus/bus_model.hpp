// SPDX-License-Identifier: MIT
//
// From the Inventory to what the bus shows: object paths and the references between objects,
// one object at a time. Pure, so the exporter and Describe() agree and tests can check paths
// without a bus.
#pragma once

#include "bus/views.hpp"
#include "inventory/inventory.hpp"

#include <string>

namespace rdmad {

inline constexpr const char* kManagerPath = "/org/rdmad1";
inline constexpr const char* kDevicePrefix = "/org/rdmad1/device";
inline constexpr const char* kLinkPrefix = "/org/rdmad1/link";

/// sd_bus_path_encode(prefix, id): "/org/rdmad1/link" + "1001" -> "/org/rdmad1/link/_31001".
std::string encode_path(const std::string& prefix, const std::string& id);

/// The object path of the device with Inventory id `id`.
std::string device_path(const std::string& id);
/// The object path of the netdev with ifindex `ifindex`.
std::string link_path(int32_t ifindex);

/// What the object of `device` (a device of `inventory`) shows: its path from its id, its
/// ports with their Link, its Links and PhysicalFunction, every string valid UTF-8. Costs
/// the device's size, not the host's.
DeviceView device_view(const Inventory& inventory, const DeviceState& device);
/// What the object of `link` shows.
LinkView link_view(const Inventory& inventory, const LinkState& link);

/// Every object of `inventory` (start-up, tests).
BusModel build_bus_model(const Inventory& inventory);
/// The same for a state that was never in an Inventory: the ids a fresh start gives.
BusModel build_bus_model(const HostState& state);

} // namespace rdmad
