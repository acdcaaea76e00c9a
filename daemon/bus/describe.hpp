// SPDX-License-Identifier: MIT
//
// Manager.Describe(): the whole bus model as one JSON document. Keys are the D-Bus property
// names, so `rdmactl --json` and busctl agree. Shape documented in dbus/org.rdmad1.Manager.xml.
#pragma once

#include "bus/views.hpp"

#include <string>

namespace rdmad {

/// {"Version", "State", "Devices": [...], "Links": [...]} as compact JSON text.
std::string describe_json(const BusModel& model, const std::string& version,
                          const std::string& state);

} // namespace rdmad
