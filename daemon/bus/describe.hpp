// SPDX-License-Identifier: MIT
//
// Manager.Describe(): the whole bus model as one JSON document. Keys are the D-Bus property
// names, so `rdmactl --json` and busctl agree. Shape documented in dbus/org.rdmad1.Manager.xml.
#pragma once

#include "bus/views.hpp"
#include "inventory/model.hpp"

#include <string>
#include <vector>

namespace rdmad {

/// {"Version", "State", "DesiredStateSource", "Problems", "Devices": [...], "Links": [...]}
/// as compact JSON text.
/// `sources` and `problems` are the Manager's DesiredStateSource and Problems.
std::string describe_json(const BusModel& model, const std::string& version,
                          const std::string& state, const std::vector<std::string>& sources = {},
                          const std::vector<Problem>& problems = {});

} // namespace rdmad
