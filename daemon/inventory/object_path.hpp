// SPDX-License-Identifier: MIT
//
// The object paths of org.rdmad1 (org.rdmad1(5)): each object's path from its Inventory id,
// escaped as sd_bus_path_encode(3) does, and back. Pure; the bus, Describe(), the dispatcher
// and the exports agree on them through this file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rdmad {

/// sd_bus_path_encode(prefix, id): "/org/rdmad1/link" + "1001" -> "/org/rdmad1/link/_31001".
std::string encode_path(const std::string& prefix, const std::string& id);

/// The object path of the device with Inventory id `id`.
std::string device_path(const std::string& id);
/// The object path of port `number` of the device with id `id`: device_path(id) + "/port/N".
std::string port_path(const std::string& id, uint32_t number);
/// The object path of the netdev with ifindex `ifindex`.
std::string link_path(int32_t ifindex);

/// The device id of a device object's path, nullopt for any other path (a port's included).
std::optional<std::string> device_id_of_path(const char* path);
/// (device id, port number) of a port object's path, nullopt for any other path. Numbers are
/// decimal without sign or leading zero, 0 (a switch's management port) to 2^32 - 1 (the
/// kernel's port numbers are u32 in rdma netlink). Only the spelling encode_path() and
/// port_path() give is accepted: one path per object.
std::optional<std::pair<std::string, uint32_t>> port_of_path(const char* path);
/// The ifindex of a link object's path, nullopt for any other path.
std::optional<int32_t> ifindex_of_path(const char* path);

} // namespace rdmad
