// SPDX-License-Identifier: MIT
//
// InfiniBand partitions: the port's membership of the default partition.
#pragma once

#include "doctor/facts.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace rdmad::doctor {

/// `pkeys/<i>` ("0x%04x", drivers/infiniband/core/sysfs.c show_port_pkey) -> the P_Key;
/// nullopt when not "0x" and 1-4 hex digits.
std::optional<uint16_t> parse_pkey(std::string_view text);

/// For an InfiniBand port (not OPA, not Ethernet):
///  - "pkey-limited-member" (warning) when P_Key table entry 0 is 0x7fff: the port is a limited
///    member of the default partition (membership bit 0x8000 clear), and two limited members
///    cannot talk to each other (IBTA spec vol. 1 §10.9.1); usually the subnet manager's
///    partition configuration made it so;
///  - "pkey-unknown" (info) when entry 0 is absent or does not parse.
std::vector<Problem> check_partition(const DeviceState& d, const PortState& port);

} // namespace rdmad::doctor
