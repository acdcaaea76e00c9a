// SPDX-License-Identifier: MIT
//
// The rules of the org.rdmad1 API that the daemon and its clients share, defined once: the
// bus name, the error names, and what a port type and a PFC priority may be. The XML next to
// this file declares the members; org.rdmad1(5) documents both.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad::api {

inline constexpr const char* kBusName = "org.rdmad1";

// Interfaces (dbus/*.xml) and where their objects live. Device and link ids are escaped into
// the last path element as sd_bus_path_encode(3) does.
inline constexpr const char* kManagerInterface = "org.rdmad1.Manager";
inline constexpr const char* kDeviceInterface = "org.rdmad1.Device";
inline constexpr const char* kPortInterface = "org.rdmad1.Port";
inline constexpr const char* kLinkInterface = "org.rdmad1.Link";
/// What every rdmad interface name starts with.
inline constexpr std::string_view kInterfacePrefix = "org.rdmad1.";
inline constexpr const char* kManagerPath = "/org/rdmad1";
/// /org/rdmad1/device/<id>; its ports are /org/rdmad1/device/<id>/port/<n>.
inline constexpr const char* kDevicePrefix = "/org/rdmad1/device";
/// /org/rdmad1/link/<ifindex>.
inline constexpr const char* kLinkPrefix = "/org/rdmad1/link";
/// The path element between a device object and its port number.
inline constexpr const char* kPortElement = "port";

/// The polkit action of every mutating method (dbus/org.rdmad1.policy).
inline constexpr const char* kConfigureAction = "org.rdmad1.configure";
/// The polkit action of Manager.InstallProviders (packages installed through PackageKit).
inline constexpr const char* kInstallProvidersAction = "org.rdmad1.install-providers";

/// The match rule for the bus's NameOwnerChanged about org.rdmad1 (rdmad starting, stopping
/// or restarting), as clients add it (dbus-specification "Match Rules").
inline constexpr const char* kNameOwnerChangedMatch =
    "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
    "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.rdmad1'";

// Error names (org.rdmad1(5), ERRORS).
inline constexpr const char* kNoSuchObject = "org.rdmad1.Error.NoSuchObject";
inline constexpr const char* kInvalidArgument = "org.rdmad1.Error.InvalidArgument";
inline constexpr const char* kFailed = "org.rdmad1.Error.Failed";
inline constexpr const char* kNotSupported = "org.rdmad1.Error.NotSupported";
inline constexpr const char* kBusy = "org.rdmad1.Error.Busy";
inline constexpr const char* kAccessDenied = "org.freedesktop.DBus.Error.AccessDenied";

/// A VPI port type as Port.SetPortType and rdmad.conf take it: "ib", "eth" or "auto" (the
/// values of mlx4's `mlx4_port<n>`, drivers/net/ethernet/mellanox/mlx4/main.c).
inline bool valid_port_type(std::string_view type) {
    return type == "ib" || type == "eth" || type == "auto";
}

/// What Port.Revert drops: "" every request SetPortType and SetPFCNoDrop made for the
/// device, "PortType" the port type of this port only.
inline bool valid_revert_setting(std::string_view setting) {
    return setting.empty() || setting == "PortType";
}

/// 802.1p priorities have 3 bits (IEEE 802.1Q): 0-7.
inline constexpr int kMaxPriority = 7;

/// Why `priorities` is not a PFC no-drop set (at least one, each 0-7, none twice), or "" when
/// it is one. Order does not matter.
inline std::string pfc_priorities_error(std::vector<uint8_t> priorities) {
    if (priorities.empty())
        return "give at least one priority (0-7)";
    std::sort(priorities.begin(), priorities.end());
    for (size_t i = 0; i < priorities.size(); ++i) {
        if (priorities[i] > kMaxPriority)
            return "priority " + std::to_string(priorities[i]) + " is not 0-7";
        if (i && priorities[i] == priorities[i - 1])
            return "priority " + std::to_string(priorities[i]) + " is given twice";
    }
    return {};
}

} // namespace rdmad::api
