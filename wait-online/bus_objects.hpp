// SPDX-License-Identifier: MIT
//
// rdmad's objects as D-Bus gives them (GetManagedObjects, InterfacesAdded, InterfacesRemoved,
// PropertiesChanged) kept as the plain values of readiness.hpp. Names and types from
// dbus/org.rdmad1.Device.xml and Port.xml; a property of another type than declared is left
// as it was.
#pragma once

#include "readiness.hpp"

#include "rdmad_objects.hpp"

#include <map>
#include <string>
#include <vector>

namespace rdmad::wait_online {

using api::Interfaces;
using api::ManagedObjects;
using api::Properties;

/// Everything GetManagedObjects on /org/rdmad1 returned.
Objects objects_from(const ManagedObjects& managed);

/// InterfacesAdded(path, interfaces): the org.rdmad1.Device or org.rdmad1.Port at `path`.
void add_interfaces(Objects& objects, const std::string& path, const Interfaces& interfaces);

/// InterfacesRemoved(path, interfaces).
void remove_interfaces(Objects& objects, const std::string& path,
                       const std::vector<std::string>& interfaces);

/// PropertiesChanged(interface, changed, invalidated) of the object at `path`; an object not
/// known is left alone (its InterfacesAdded brings all of it).
void change_properties(Objects& objects, const std::string& path, const std::string& interface,
                       const Properties& changed);

} // namespace rdmad::wait_online
