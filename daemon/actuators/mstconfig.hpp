// SPDX-License-Identifier: MIT
//
// The one write of a ConnectX-4+ port type: its firmware's next-boot value,
//
//   mstconfig -y -d <pci> set LINK_TYPE_P<n>=<1|2|3>
//
// (mstflint; `-y` answers the tool's "Apply new Configuration? (y/n)"). The firmware takes it at
// its next reset: the tool then prints "-I- Please reboot machine to load new configurations."
// (DOMAIN.md §1.4). rdmad never resets the firmware nor reboots; the caller reads the value back
// with one query (sources/mstconfig.hpp).
#pragma once

#include "actuators/port_type.hpp"

#include "util/run_tool.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rdmad {

/// Set LINK_TYPE_P<card_port> of the PCI function `pci` to `type` ("ib", "eth", "auto") for
/// the next boot with the tool `tool`. error 0 when it exited 0; ENOENT when the tool is not
/// there, ETIMEDOUT when it was killed at the time limit, EIO when it exited nonzero (the
/// message then carries its stderr).
/// Synchronous (tests, one-off writes); the daemon runs mstconfig_set_argv() on its loop.
WriteResult set_firmware_port_type(const std::string& tool, const std::string& pci,
                                   uint32_t card_port, const std::string& type);

/// The argv of that set: {tool, "-y", "-d", pci, "set", "LINK_TYPE_P<card_port>=<1|2|3>"}.
std::vector<std::string> mstconfig_set_argv(const std::string& tool, const std::string& pci,
                                            uint32_t card_port, const std::string& type);

/// What the run `run` of `argv` (mstconfig_set_argv()) did, as set_firmware_port_type() says.
WriteResult firmware_write_result(const ToolRun& run, const std::vector<std::string>& argv);

} // namespace rdmad
