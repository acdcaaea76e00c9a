// SPDX-License-Identifier: MIT
//
// Every doctor check of one device, in one call.
#pragma once

#include "doctor/facts.hpp"

#include <vector>

namespace rdmad::doctor {

/// The problems every check (port_state, roce_mtu, gid_choice, lossless, port_rate, pcie,
/// partition, node_description, modules, memlock) finds on `d`, port by port in port order,
/// then the device's.
/// Ports of transport "unspecified" (EFA) get the port-state check only, without IB or RoCE
/// advice.
std::vector<Problem> run_checks(const DeviceState& d, const Facts& facts);

} // namespace rdmad::doctor
