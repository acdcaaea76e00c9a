// SPDX-License-Identifier: MIT
//
// A port's `rate` as its parts: Gb/s, width and speed name.
#pragma once

#include "doctor/facts.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad::doctor {

/// A parsed `rate`: "100 Gb/sec (2X HDR)" -> {100, 2, "HDR"} (a legitimate HDR100 port);
/// "2.5 Gb/sec (1X SDR)" -> {2.5, 1, "SDR"}; "10 Gb/sec (4X)" -> {10, 4, ""} (speed without a
/// name on old kernels).
struct PortRate {
    double gbps = 0;
    uint32_t width = 0; ///< lanes: 1, 2, 4, 8 or 12
    std::string speed;  ///< "SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR", ""
    bool operator==(const PortRate&) const = default;
};

/// Parse `rate` ("%d%s Gb/sec (%dX%s)", kernel drivers/infiniband/core/sysfs.c rate_show();
/// speeds of include/rdma/ib_verbs.h enum ib_port_speed, DOMAIN.md §3.2). nullopt when the text
/// does not have that form or the width is not 1, 2, 4, 8 or 12.
std::optional<PortRate> parse_port_rate(std::string_view text);

/// "port-rate-unknown" (info) for an ACTIVE port whose `rate` is absent or does not parse:
/// its speed cannot be judged. Nothing otherwise.
std::vector<Problem> check_port_rate(const DeviceState& d, const PortState& port);

} // namespace rdmad::doctor
