// SPDX-License-Identifier: MIT
//
// Reading the Manager.Describe() document (daemon/bus/describe.cpp): keys are the D-Bus
// property names, object paths are strings, "/" for none. The accessors never throw on a
// missing key or an unexpected type, so a daemon of another version still prints.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rdmactl::doc {

using nlohmann::json;

std::string str(const json& obj, const char* key);
bool boolean(const json& obj, const char* key);
std::int64_t integer(const json& obj, const char* key, std::int64_t fallback = 0);
double number(const json& obj, const char* key, double fallback = -1);
std::vector<std::string> strings(const json& obj, const char* key);
/// obj[key] when it is an array, else an empty array.
const json& array(const json& obj, const char* key);

/// Devices sorted by Name (digits compared as numbers: mlx5_2 before mlx5_10).
std::vector<const json*> devices(const json& doc);
/// Links sorted by Index.
std::vector<const json*> links(const json& doc);
/// A device's ports sorted by Number.
std::vector<const json*> ports(const json& device);

/// The element of `items` whose Path is `path`; nullptr when none (or path is "/" or "").
const json* find_by_path(const json& items, const std::string& path);
/// The Name of the device or link at `path`; "" for "/" or an unknown path.
std::string name_of(const json& doc, const std::string& path);

// Values shown the same way by several verbs.
/// "mlx5", "mlx5 (missing)" when ProviderInstalled is false, "" when the device needs none.
std::string provider_text(const json& device);
/// Transport, with the RoCE versions: "RoCE v1,v2".
std::string transport_text(const json& port);
/// "100 Gb/s", "2.5 Gb/s"; "" when RateGbps is unknown (negative).
std::string rate_text(const json& port);
/// One problem (a Problems or ProblemDetails entry in the Describe() shape: {"Code",
/// "Severity", "Text", ...}) on one line: "warning: port 1 is DOWN (Disabled): ...
/// (port-not-active)". A ProblemDetails entry's evidence and remedy are left to rdmactl
/// doctor: they made lines of kilobytes in show and monitor.
std::string problem_text(const json& problem);
/// A list of PFC priorities (PFCNoDrop, DesiredPFCNoDrop) as "3,4"; "" when empty.
std::string priorities_text(const json& obj, const char* key);

/// A DSCP map (DSCPPriority, DesiredDSCPPriority: [{"DSCP", "Priority"}]) as "26:3,48:6";
/// "" when empty.
std::string dscp_map_text(const json& obj, const char* key);

/// The port type a port has now: PortType when rdmad reads one (mlx4's sysfs switch), else
/// what its LinkLayer is ("ib" for InfiniBand, "eth" for Ethernet; ConnectX-4 and later set
/// the type in firmware), else "".
std::string actual_port_type(const json& port);

/// For a port whose InSync is false: "not in sync: PortType ib, desired eth" (and/or
/// "PFCNoDrop -, desired 3,4", "Trust pcp, desired dscp", "DSCPPriority -, desired 26:3",
/// "RDMACMRoCEMode -, desired RoCE v2", "RDMACMToS -, desired 106" for what is asked;
/// "PortType ib, eth pending a firmware reset or reboot" where PendingPortType is set), the
/// type from actual_port_type(); "" when InSync is true or
/// absent (an older daemon). With `skip_port_type` (a problem already tells the port type
/// story, e.g. the firmware remedy), the port type is left out, and "" is returned when
/// nothing else differs. With `device` (the port's Device), an SR-IOV VF count asked and not
/// held is named too: "SRIOVNumVFs 0, desired 8" (Device.SRIOVNumVFs, DesiredSRIOVNumVFs).
std::string sync_text(const json& port, bool skip_port_type = false,
                      const json* device = nullptr);

/// True when `device` has a "port-type-firmware" problem about port `number` ("port 1 is
/// InfiniBand but eth is asked: ... run mstconfig ..."): the one line that tells the port's
/// type, what is asked and the remedy.
bool has_firmware_port_type_problem(const json& device, std::int64_t number);

/// The device that has the port object `path`, and that port; {nullptr, nullptr} when none.
std::pair<const json*, const json*> find_port(const json& doc, const std::string& path);
/// An object path as the verbs name it: "mlx4_0 port 2", "mlx4_0", "ens1f0np0", "rdmad" for
/// /org/rdmad1; the path itself when the document does not know it.
std::string object_label(const json& doc, const std::string& path);

} // namespace rdmactl::doc
