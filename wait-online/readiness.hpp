// SPDX-License-Identifier: MIT
//
// When rdmad-wait-online's wait is over, on plain values: which ports the options select, and
// for each whether it is usable and, when not, why. The values are rdmad's own (org.rdmad1.Port
// and org.rdmad1.Device properties, bus_objects.hpp reads them off the bus); the reasons are the
// doctor's texts (Device.ProblemDetails) wherever the doctor has one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad::wait_online {

/// One entry of Device.ProblemDetails, as far as a port's readiness needs it.
struct Problem {
    std::string code;  ///< e.g. "port-not-active", "no-routable-gid"
    std::string text;  ///< the doctor's sentence, starting "port <n>" for a port's problem
    uint32_t port = 0; ///< the port it is about, 0 for the device
    bool operator==(const Problem&) const = default;
};

/// An org.rdmad1.Device object.
struct Device {
    std::string name;              ///< Name, e.g. "mlx5_0"
    std::vector<Problem> problems; ///< ProblemDetails
    bool operator==(const Device&) const = default;
};

/// An org.rdmad1.Port object.
struct Port {
    std::string device_path;     ///< its device's object path (the port's path before "/port/")
    uint32_t number = 0;         ///< Number
    std::string state;           ///< State: "ACTIVE", "DOWN", ...; "" when unreadable
    std::string phys_state;      ///< PhysicalState: "LinkUp", "Polling", ...
    std::string transport;       ///< Transport: "InfiniBand", "RoCE", "iWARP", "OPA", ...
    uint16_t lid = 0;            ///< LID
    uint16_t sm_lid = 0;         ///< SMLID
    std::string recommended_gid; ///< the GID of RecommendedGID, "" when there is none
    bool operator==(const Port&) const = default;
};

/// What rdmad has said, by object path.
struct Objects {
    std::map<std::string, Device> devices;
    std::map<std::string, Port> ports;
};

/// One -d DEVICE[:PORT].
struct Target {
    std::string device;
    uint32_t port = 0; ///< 0: every port of the device
    bool operator==(const Target&) const = default;
};

/// Parses "DEVICE" or "DEVICE:PORT" (PORT a number from 1; the last ':' splits, as RDMA
/// device names have none). On error returns nullopt and sets `error` to a sentence.
std::optional<Target> parse_target(std::string_view text, std::string& error);

/// The Transport value that --transport `name` selects: "ib" "InfiniBand", "roce" "RoCE",
/// "iwarp" "iWARP"; nullopt for another name.
std::optional<std::string> parse_transport(std::string_view name);

/// What the options select.
struct Selection {
    std::vector<Target> targets; ///< -d; empty: every port rdmad knows
    std::string transport;       ///< a Transport value, "" for every transport
    bool any = false;            ///< --any: one usable port is enough
};

/// Why `port` (of `device`, null when rdmad has not told the device) is not usable, as a
/// sentence starting "port <n>", or "" when it is usable: State "ACTIVE" and PhysicalState
/// "LinkUp"; on InfiniBand also a subnet manager (SMLID not 0) and a valid LID (neither 0 nor
/// the permissive LID 0xffff); on RoCE also a RecommendedGID. A port that is not ACTIVE gets
/// the doctor's "port-not-active" text, a RoCE port without a GID its "no-routable-gid" text,
/// when the device has them.
std::string why_not_usable(const Device* device, const Port& port);

/// The outcome for a selection.
struct Verdict {
    bool ready = false;
    std::vector<std::string> usable;  ///< "<device> port <n>" of every usable selected port
    std::vector<std::string> waiting; ///< "<device> <why>" of every other selected port, and
                                      ///< a sentence for each target or selection that
                                      ///< matches no port
};

/// Ready when every selected port is usable and at least one port is selected (with --any:
/// when one selected port is usable). A target that matches no port is waited for (its device
/// may come), unless --any finds a usable port elsewhere. Lists are in the order of device
/// name, then port number.
Verdict judge(const Objects& objects, const Selection& selection);

} // namespace rdmad::wait_online
