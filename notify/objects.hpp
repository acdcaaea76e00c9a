// SPDX-License-Identifier: MIT
//
// rdmad's objects as D-Bus gives them (GetManagedObjects, InterfacesAdded, PropertiesChanged:
// property name -> variant) turned into the plain values of tracker.hpp. Types from
// dbus/org.rdmad1.*.xml; a property of another type than declared is skipped.
#pragma once

#include "tracker.hpp"

#include "rdmad_objects.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rdmad::notify {

using api::Interfaces;
using api::ManagedObjects;
using api::Properties;

/// org.rdmad1.Device's properties: Name, PCIAddress, ProviderInstalled, ProviderPackage, and
/// Problems or ProblemDetails (the latter when both are there: it has the remedies).
DeviceState device_from(const Properties& props);
/// org.rdmad1.Port's properties: Number, State. `path` is the port's object path; its device
/// is the path before "/port/" (org.rdmad1(5), OBJECT PATHS).
PortState port_from(const std::string& path, const Properties& props);
/// The problems in Problems (a(sss)) or ProblemDetails (a(sssassu)) of `props`, ProblemDetails
/// first; nullopt when neither is there with its declared type.
std::optional<std::vector<Problem>> problems_from(const Properties& props);
/// Takes the settings properties of org.rdmad1.Port found in `props` (InSync, LinkLayer,
/// PortType ... DesiredRDMACMToS) into `settings`, leaving the others as they are (a
/// PropertiesChanged names only what changed); whether `props` had one.
bool update_port_settings(const Properties& props, PortSettings& settings);
/// Device.DesiredOrigin (a(ss)) of `props` as key -> origin; nullopt when it is not there with
/// its declared type (an rdmad without this property).
std::optional<std::map<std::string, std::string>> origin_from(const Properties& props);
/// Takes Device.ProviderInstalled and Device.ProviderPackage found in `props` into `installed`
/// and `package`, leaving the others as they are; whether `props` had one.
bool update_provider(const Properties& props, bool& installed, std::string& package);
/// Manager.InstallProvidersMode of `props`; nullopt when it is not there as a string (an
/// rdmad without it: no notification then offers to install).
std::optional<std::string> install_mode_from(const Properties& props);
/// Everything GetManagedObjects on /org/rdmad1 returned.
Snapshot snapshot_from(const ManagedObjects& objects);

} // namespace rdmad::notify
