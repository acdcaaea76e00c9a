// SPDX-License-Identifier: MIT
//
// Whether the PCIe links between an RDMA device and its root port run as fast as they can.
#pragma once

#include "doctor/facts.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace rdmad::doctor {

/// A PCIe link speed in GT/s from `current_link_speed` / `max_link_speed`: "8 GT/s" (kernels
/// before 5.x) and "8.0 GT/s PCIe" (drivers/pci/probe.c pci_speed_string()) -> 8.0;
/// "2.5 GT/s" -> 2.5. nullopt for "Unknown", "Unknown speed" or anything else.
std::optional<double> parse_pcie_speed(std::string_view text);

/// A link width from `current_link_width` / `max_link_width` ("%u"): lanes; nullopt when not
/// a positive number (the kernel prints 0 when the link is down or the width unknown).
std::optional<uint32_t> parse_pcie_width(std::string_view text);

/// The links of `d.pcie_path` (the function first, then each bridge up to the root port).
/// Each link joins a function that has it as its upstream link (the endpoint, a switch's
/// upstream port) to the bridge above it (a switch's downstream port, a root port): entries
/// 0-1, 2-3, ... (a PCIe switch shows as an upstream port with downstream ports below it).
/// Per link the achievable speed and width are the lower of both ends' `max_link_speed` and
/// `max_link_width`, and the current ones are the lower end's `current_link_*`:
///  - "pcie-degraded" (warning) when a link's current speed or width is below its achievable
///    one, naming the link (both PCI addresses);
///  - "pcie-slot-limited" (info) when the device's own maximum is above its slot's (a card
///    faster or wider than the slot it sits in);
///  - "pcie-unknown" (info) when a file a link needs is absent or does not parse.
/// Nothing when the device is not on PCI. A VF's path is its PF's (a VF has no link of its
/// own), its texts say "PCIe link of physical function <PF> - <bridge>", and its
/// "pcie-degraded" is info: the PF's device has the warning.
std::vector<Problem> check_pcie(const DeviceState& d);

} // namespace rdmad::doctor
