// SPDX-License-Identifier: MIT
//
// From the inventory to what the bus shows: object paths and the references between objects.
// Pure, so the exporter and Describe() agree and tests can check paths without a bus.
#pragma once

#include "bus/views.hpp"
#include "inventory/model.hpp"

#include <map>
#include <string>

namespace rdmad {

inline constexpr const char* kManagerPath = "/org/rdmad1";
inline constexpr const char* kDevicePrefix = "/org/rdmad1/device";
inline constexpr const char* kLinkPrefix = "/org/rdmad1/link";

/// sd_bus_path_encode(prefix, id): "/org/rdmad1/link" + "1001" -> "/org/rdmad1/link/_31001".
std::string encode_path(const std::string& prefix, const std::string& id);

/// The device object's id: the node GUID's hex digits when non-zero and unique in
/// `inventory`, else the PCI address when unique, else the name. Node GUID and PCI address
/// survive a rename (`rocep59s0f0` for `mlx5_0`), so the path does too.
std::string device_object_id(const Inventory& inventory, const DeviceState& device);

/// Every object with its path and references. Devices sorted by name, links by ifindex.
/// With `sticky_ids` (syspath -> id), a device seen before keeps the id it had, whatever its
/// name, GUID or duplicates do since; new devices get device_object_id() (made unique) and are
/// added; devices gone are dropped from the map.
BusModel build_bus_model(const Inventory& inventory,
                         std::map<std::string, std::string>* sticky_ids = nullptr);

/// Make `view` show `device` (a re-read of the device it shows) without building the whole
/// model: its path, Links and PhysicalFunction stay, ports are rebuilt with their Link from
/// `link_path_by_name` (kernel name -> path). False, and `view` untouched, when the device
/// is another one or its ports are not the same numbers: then the model must be rebuilt.
bool refresh_device_view(DeviceView& view, const DeviceState& device,
                         const std::map<std::string, std::string>& link_path_by_name);

/// Make `view` show `link` (a re-read of the same netdev, classified as before): its path and
/// RdmaDevice stay.
void refresh_link_view(LinkView& view, const LinkState& link);

/// Kernel name -> object path of every link of `model`.
std::map<std::string, std::string> link_paths_by_name(const BusModel& model);

} // namespace rdmad
