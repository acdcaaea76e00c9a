// SPDX-License-Identifier: MIT
//
// rdmad's objects as sdbus-c++ gives them to a client: GetManagedObjects of the ObjectManager
// at /org/rdmad1, InterfacesAdded and PropertiesChanged carry these shapes (dbus-specification,
// "org.freedesktop.DBus.ObjectManager" and "org.freedesktop.DBus.Properties"). Shared by the
// clients that follow rdmad's objects (rdmad-notify, rdmad-wait-online).
#pragma once

#include <sdbus-c++/Types.h>

#include <map>
#include <string>

namespace rdmad::api {

/// a{sv}: property name -> value.
using Properties = std::map<std::string, sdbus::Variant>;
/// a{sa{sv}}: interface name -> its properties.
using Interfaces = std::map<std::string, Properties>;
/// a{oa{sa{sv}}}: object path -> its interfaces (GetManagedObjects).
using ManagedObjects = std::map<sdbus::ObjectPath, Interfaces>;

} // namespace rdmad::api
