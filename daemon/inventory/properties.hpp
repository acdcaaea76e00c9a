// SPDX-License-Identifier: MIT
//
// The property tables: one per interface of org.rdmad1 (dbus/*.xml), one row per property
// ({D-Bus name, signature, compare, write}). They drive everything a property is: the
// Inventory's change sets (compare), the bus's getters, PropertiesChanged and
// InterfacesAdded (write into an sd-bus message), Describe() (write into JSON) and the
// consumers of change sets, which read property names from them. A new property is one row
// here and its <property> in the XML; tests/unit/test_properties.cpp and the introspection
// test keep the two equal.
//
// Rows without a signature are internal facts: the Inventory names them in change sets (a
// doctor check or an export reads them) but the bus does not show them.
#pragma once

#include "inventory/model.hpp"
#include "inventory/value_writer.hpp"

#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

class Inventory;

/// What a row's write() may look up besides the object itself: the Inventory it is in (for
/// the paths of the objects it refers to) and, for a device's or a port's row, the device.
struct PropertyContext {
    const Inventory& inventory;
    const DeviceState* device = nullptr;
};

template <typename State> struct Property {
    const char* name;
    /// The D-Bus signature; nullptr for an internal fact (in change sets, not on the bus).
    const char* signature;
    /// True when `a` and `b` show the same value; nullptr for a property that the Inventory
    /// changes through relatives only (a device's Links, which the netdevs decide).
    bool (*same)(const State& a, const State& b);
    /// Write the value of `s` (nullptr for an internal fact).
    void (*write)(ValueWriter& w, const State& s, const PropertyContext& c);
    /// org.freedesktop.DBus.Property.EmitsChangedSignal "const": fixed for the object's life.
    bool constant = false;
    /// Describe() writes the device's port objects here instead of their paths (Device.Ports).
    bool embeds_ports = false;

    bool exported() const { return signature != nullptr; }
};

template <typename State> using PropertyTable = std::span<const Property<State>>;

/// org.rdmad1.Device, in the XML's order, then the internal facts.
PropertyTable<DeviceState> device_properties();
/// org.rdmad1.Port.
PropertyTable<PortState> port_properties();
/// org.rdmad1.Link.
PropertyTable<LinkState> link_properties();

/// Add to `out` the names of the rows of `table` whose values differ between `a` and `b`.
template <typename State>
void add_differences(PropertyTable<State> table, const State& a, const State& b,
                     std::set<std::string>& out) {
    for (const auto& row : table)
        if (row.same && !row.same(a, b))
            out.insert(row.name);
}

/// The row of `table` named `name`, nullptr when none.
template <typename State>
const Property<State>* find_property(PropertyTable<State> table, std::string_view name) {
    for (const auto& row : table)
        if (name == row.name)
            return &row;
    return nullptr;
}

/// `s` as a string property shows it: one_line_text() (util/text.hpp), without a copy when
/// it is printable ASCII already (nearly always).
void write_line(ValueWriter& w, const std::string& s);

/// `problems` as a(sss) (code, severity, text), the doctor's info findings left out
/// (in_problems_property()): Device.Problems and Manager.Problems.
void write_problem_summaries(ValueWriter& w, const std::vector<Problem>& problems);

} // namespace rdmad
