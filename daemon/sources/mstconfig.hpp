// SPDX-License-Identifier: MIT
//
// The VPI port type of ConnectX-4 and later as a source: a firmware (NVM) setting,
// `LINK_TYPE_P<n>` = IB(1), ETH(2), VPI(3), read with mstflint's `mstconfig` (Debian package
// mstflint; NVIDIA MFT's mlxconfig is the same tool). DOMAIN.md §1.4 and its settings table.
//
//   mstconfig -e -d <pci> query LINK_TYPE_P<n>
//
// `-e` adds the Default and Current columns to Next Boot (nic-configuration-operator reads the
// same columns with `mlxconfig -e query`; its tools/mstconfig wrapper runs `mstconfig -d <dev>
// -e q`). The output, as recorded in Mellanox/nic-configuration-operator
// pkg/nvconfig/utils_test.go (a ConnectX4's `mlxconfig -d 0000:3b:00.0 q`):
//
//   Device #1:
//   ----------
//
//   Device type:    ConnectX4
//   Configurations:                              Default         Current         Next Boot
//   *        KEEP_IB_LINK_UP_P2                  False(0)        True(1)         True(1)
//            KEEP_LINK_UP_ON_BOOT_P2             False(0)        False(0)        False(0)
//   The '*' shows parameters with next value different from default/current value.
//
// A row is an optional '*' (the next value differs), the parameter and one token per column;
// LINK_TYPE values read `IB(1)`, `ETH(2)`, `VPI(3)` (mlxconfig outputs in the wild, e.g.
// "LINK_TYPE_P1  IB(1)  ETH(2)" under "Next Boot  New" after a set). Errors go to stderr as
// "-E- ..." lines with a nonzero exit ("-E- Failed to open device").
//
// A ConnectX-4+ PCI function drives one port of its card: function 0 is P1, function 1 is P2
// (each PF is its own RDMA device with port 1), so one function is asked for its own port only:
// a single-port card has no LINK_TYPE_P2 to ask about.
#pragma once

#include "inventory/model.hpp"
#include "util/run_tool.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

/// One row of a `mstconfig query` table: the parameter and its columns as printed ("" for a
/// column the header does not have).
struct MstconfigRow {
    std::string name;
    std::string default_value;
    std::string current;
    std::string next_boot;
    bool operator==(const MstconfigRow&) const = default;
};

/// The rows of a `mstconfig [-e] query` output: the columns are taken from the
/// "Configurations:" header (Default, Current, Next Boot, in the order it names them; without
/// -e only Next Boot). nullopt when there is no header (an error text, something else).
std::optional<std::vector<MstconfigRow>> parse_mstconfig_query(std::string_view text);

/// A LINK_TYPE value as rdmad names port types: "IB(1)" -> "ib", "ETH(2)" -> "eth", "VPI(3)"
/// -> "auto" (also the bare numbers); nullopt for anything else.
std::optional<std::string> link_type_name(std::string_view value);

/// The mstconfig value of a port type rdmad takes: "ib" 1, "eth" 2, "auto" 3.
int link_type_number(std::string_view port_type);

/// <n> of LINK_TYPE_P<n> for the PCI function `pci` ("0000:3b:00.1" -> 2): its function
/// number + 1 for functions 0 and 1, else 1.
uint32_t card_port_of(std::string_view pci);

/// What a query's output says of LINK_TYPE_P<card_port> (status ok, or failed naming why).
FirmwarePortType firmware_port_type_from(std::string_view out, uint32_t card_port);

/// The tool to run: `configured` when set, else "mstconfig" (looked up on PATH).
std::string mstconfig_tool(const std::string& configured);

/// How long one run of mstconfig may take before it is killed.
inline constexpr std::chrono::milliseconds kMstconfigTimeout{10'000};

/// How many mstconfig runs the daemon lets run at once (queries and sets of different
/// functions; the others wait): a host of 18 functions whose tool hangs then waits 5 time
/// limits, not 18, and never holds the loop (reconcile/mstconfig_jobs.hpp).
inline constexpr size_t kMstconfigAtOnce = 4;

/// The argv of `mstconfig -e -d <pci> query LINK_TYPE_P<card_port>`.
std::vector<std::string> mstconfig_query_argv(const std::string& tool, const std::string& pci,
                                              uint32_t card_port);

/// What the run `run` of mstconfig_query_argv() says, as query_firmware_port_type() reads it
/// (`timeout`: the limit it ran under, for the message). A failure's message starts with the
/// command run, as one types it ("mstconfig -e -d 0000:3b:00.0 query LINK_TYPE_P1 exited with
/// 1: -E- ..."); a missing tool's is "<tool>: <strerror>".
FirmwarePortType firmware_port_type_of(const ToolRun& run, const std::string& tool,
                                       const std::string& pci, uint32_t card_port,
                                       std::chrono::milliseconds timeout = kMstconfigTimeout);

/// Run `mstconfig -e -d <pci> query LINK_TYPE_P<card_port>` and read it: missing when the tool
/// cannot be run (ENOENT, EACCES), failed with its stderr when it exits nonzero, is killed at
/// `timeout` or prints no such row. Synchronous (tests, one-off reads).
FirmwarePortType query_firmware_port_type(const std::string& tool, const std::string& pci,
                                          uint32_t card_port,
                                          std::chrono::milliseconds timeout = kMstconfigTimeout);

} // namespace rdmad
