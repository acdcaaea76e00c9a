// SPDX-License-Identifier: MIT
//
// The GUIDs of an SR-IOV VF's RDMA device as a source (reconcile/settings/vf_guids.cpp): GUID
// text in the two forms admins meet, which VF of its PF a function is, and the port GUID a port
// shows. Sources: kernel Documentation/ABI/stable/sysfs-class-infiniband (`node_guid`, 64-bit
// node GUID; drivers/infiniband/core/sysfs.c node_guid_show(): "%04x:%04x:%04x:%04x\n" of the
// big-endian value), iproute2 lib/utils.c get_guid() (what `ip link set DEV vf N node_guid G`
// takes: 8 bytes as 2 hex digits each, ':' between, the first byte most significant), kernel
// Documentation/ABI/testing/sysfs-bus-pci (`virtfnN` links of a PF, `physfn` of a VF).
#pragma once

#include "inventory/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <string_view>

namespace rdmad {

/// A GUID as `ip link` writes it ("00:11:22:33:44:55:66:77", exactly 2 hex digits a byte) or
/// as sysfs `node_guid` prints it ("0011:2233:4455:6677", exactly 4 hex digits a group), either
/// case; the value with the first byte most significant. nullopt for anything else (no
/// surrounding whitespace, no newline).
std::optional<uint64_t> parse_guid_text(std::string_view text);

/// `guid` as sysfs `node_guid` prints it, newline aside: "0011:2233:4455:6677".
std::string guid_text(uint64_t guid);

/// Every VF of the PF of the VF whose PCI function is `pci_syspath`, by PCI address: the n of
/// the PF's `virtfn<n>` link that names it (read through the VF's `physfn` link). Empty when
/// none (not a VF, or the PF's links not there yet).
std::unordered_map<std::string, int32_t> read_vf_indexes(const std::string& pci_syspath);

/// The port GUID an InfiniBand port shows: the interface ID (low 8 bytes) of GID 0, the port's
/// default GID (IBTA: subnet prefix + port GUID); nullopt when the port has no GID 0.
std::optional<uint64_t> port_guid_of(const PortState& port);

} // namespace rdmad
