// SPDX-License-Identifier: MIT
//
// Parsers for one sysfs attribute each. Pure functions over the text the kernel printed: they
// accept values with or without the trailing newline, never throw, and return std::nullopt for
// text that does not have the kernel's format. Formats: kernel drivers/infiniband/core/sysfs.c
// (see DOMAIN.md §3).
#pragma once

#include "inventory/gid.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rdmad {

/// Strip one trailing "\n" (and any trailing whitespace) and leading whitespace.
std::string_view trim_attribute(std::string_view text);

/// Port `state` ("%d: %s", 0 NOP 1 DOWN 2 INIT 3 ARMED 4 ACTIVE 5 ACTIVE_DEFER): the name part,
/// e.g. "ACTIVE"; text without the "N: " prefix passes through trimmed. Empty input -> "".
std::string parse_port_state(std::string_view text);

/// Port `phys_state` ("%u: %s", 1 Sleep .. 7 Phy Test): the name part ("LinkUp"); text that
/// does not parse passes through trimmed ("0: <unknown>" -> "<unknown>").
std::string parse_phys_state(std::string_view text);

/// Device `node_type` ("%u: %s"): "CA", "switch", "router", "RNIC", "usNIC", "usNIC UDP",
/// "unspecified"; the number decides (1..7), the kernel's text otherwise.
std::string parse_node_type(std::string_view text);

/// True when `ports/<number>` can be a port of a device of `node_type` (parse_node_type()):
/// port 0 on a switch (its management port) and only there, ports from 1 on anything else.
/// Source: kernel include/rdma/ib_verbs.h rdma_start_port() / rdma_end_port(), which
/// drivers/infiniband/core/sysfs.c uses to create `ports/<n>`.
bool is_port_number(std::string_view node_type, uint32_t number);

/// Port `rate` ("%d%s Gb/sec (%dX%s)"): the leading number in Gb/s.
/// "100 Gb/sec (4X EDR)" -> 100, "2.5 Gb/sec (1X SDR)" -> 2.5, "0 GB/sec" -> 0,
/// "10 Gb/sec (4X)" -> 10; nullopt when there is no leading non-negative number.
std::optional<double> parse_rate_gbps(std::string_view text);

/// `lid`, `sm_lid` ("0x%x") -> 16-bit value; nullopt when not "0x"-prefixed hex (the kernel
/// always prints the prefix, so a bare "12" is refused rather than guessed) or > 0xffff.
std::optional<uint16_t> parse_lid(std::string_view text);

/// `node_guid`, `sys_image_guid` ("%04x:%04x:%04x:%04x") -> the normalised text (lower case,
/// groups zero-padded to 4 digits, so it re-parses to itself);
/// nullopt when not 4 groups of 1-4 hex digits.
std::optional<std::string> parse_guid(std::string_view text);

/// `gids/<i>` ("%pI6": 8 groups of 4 hex digits, Gid::parse()), trimmed. nullopt when
/// malformed; the all-zero Gid (empty()) for the all-zero GID, which the kernel prints for
/// empty entries.
std::optional<Gid> parse_gid(std::string_view text);

/// `gid_attrs/types/<i>`: exactly "IB/RoCE v1" or "RoCE v2" (libibverbs cmd_device.c
/// query_sysfs_gid_type); nullopt otherwise.
std::optional<std::string> parse_gid_type(std::string_view text);

/// `link_layer`: "InfiniBand", "Ethernet", "Unknown" pass through; other text trimmed.
std::string parse_link_layer(std::string_view text);

/// mlx4 `mlx4_port<n>`: "ib", "eth", "auto (ib)", "auto (eth)"; nullopt otherwise.
/// Source: kernel drivers/net/ethernet/mellanox/mlx4/main.c (show_port_type).
std::optional<std::string> parse_mlx4_port_type(std::string_view text);

/// A PCI address "DDDD:BB:DD.F" as pci_name() prints it: lower-case hex, slot <= 1f, function
/// 0-7; the domain may have 5-8 digits (no leading zero) for Intel VMD domains >= 0x10000.
/// Not trimmed: false for anything else.
bool is_pci_address(std::string_view text);

} // namespace rdmad
