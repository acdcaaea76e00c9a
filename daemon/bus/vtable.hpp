// SPDX-License-Identifier: MIT
//
// sd-bus vtables (sd_bus_add_object_vtable(3)) built from a property table: one entry per
// exported row, "const" rows with EmitsChangedSignal=const and every other row emitting
// PropertiesChanged, then the interface's methods; and the one getter all rows share.
#pragma once

#include "bus/errors.hpp"
#include "bus/message_writer.hpp"
#include "inventory/properties.hpp"

#include <initializer_list>
#include <systemd/sd-bus.h>
#include <vector>

namespace rdmad {

/// Every method rdmad exports does its own authorization (polkit): sd-bus must not demand
/// CAP_SYS_ADMIN of the caller (its default for methods of an untrusted bus).
inline constexpr uint64_t kMethodFlags = SD_BUS_VTABLE_UNPRIVILEGED;

template <typename State>
std::vector<sd_bus_vtable> make_vtable(PropertyTable<State> table, sd_bus_property_get_t get,
                                       std::initializer_list<sd_bus_vtable> methods) {
    std::vector<sd_bus_vtable> v;
    v.reserve(table.size() + methods.size() + 2);
    v.push_back(SD_BUS_VTABLE_START(0));
    for (const auto& row : table)
        if (row.exported())
            v.push_back(SD_BUS_PROPERTY(row.name, row.signature, get, 0,
                                        row.constant ? SD_BUS_VTABLE_PROPERTY_CONST
                                                     : SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE));
    v.insert(v.end(), methods.begin(), methods.end());
    v.push_back(SD_BUS_VTABLE_END);
    return v;
}

/// The value of `property` of `s` into `reply`, from its row of `table`.
template <typename State>
int write_property(PropertyTable<State> table, const char* property, sd_bus_message* reply,
                   const State& s, const PropertyContext& c, sd_bus_error* error) {
    return errors::guard(error, [&] {
        const Property<State>* row = find_property(table, property);
        if (!row || !row->write)
            return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY, "no property %s",
                                     property);
        MessageWriter w(reply);
        row->write(w, s, c);
        return 0;
    });
}

} // namespace rdmad
