// SPDX-License-Identifier: MIT
//
// Building blocks of property-table rows (inventory/properties.hpp): a row that shows a member
// of a state struct as it is, and the D-Bus signature and writer of each member type. Used by
// properties.cpp and by the settings (reconcile/settings/), which declare the rows of the
// members they fill.
#pragma once

#include "inventory/properties.hpp"

#include <string>
#include <utility>
#include <vector>

namespace rdmad::rows {

template <typename T> struct Signature;
template <> struct Signature<std::string> { static constexpr const char* value = "s"; };
template <> struct Signature<bool> { static constexpr const char* value = "b"; };
template <> struct Signature<uint16_t> { static constexpr const char* value = "q"; };
template <> struct Signature<int32_t> { static constexpr const char* value = "i"; };
template <> struct Signature<uint32_t> { static constexpr const char* value = "u"; };
template <> struct Signature<double> { static constexpr const char* value = "d"; };
template <> struct Signature<std::vector<std::string>> {
    static constexpr const char* value = "as";
};
template <> struct Signature<std::vector<uint8_t>> { static constexpr const char* value = "ay"; };
template <> struct Signature<SharedText> { static constexpr const char* value = "s"; };

inline void put(ValueWriter& w, const std::string& s) {
    write_line(w, s);
}
inline void put(ValueWriter& w, const SharedText& s) {
    write_line(w, s.str());
}
inline void put(ValueWriter& w, bool b) {
    w.boolean(b);
}
inline void put(ValueWriter& w, uint16_t n) {
    w.u16(n);
}
inline void put(ValueWriter& w, int32_t n) {
    w.i32(n);
}
inline void put(ValueWriter& w, uint32_t n) {
    w.u32(n);
}
inline void put(ValueWriter& w, double d) {
    w.f64(d);
}
inline void put(ValueWriter& w, const std::vector<std::string>& v) {
    w.begin_array("s");
    for (const auto& s : v)
        write_line(w, s);
    w.end_array();
}
inline void put(ValueWriter& w, const std::vector<uint8_t>& v) {
    w.begin_array("y");
    for (const uint8_t n : v)
        w.byte(n);
    w.end_array();
}

template <> struct Signature<DscpMap> { static constexpr const char* value = "a(yy)"; };
/// A DscpMap as a(yy): (DSCP, priority) pairs.
inline void put(ValueWriter& w, const DscpMap& map) {
    w.begin_array("(yy)");
    for (const auto& [dscp, prio] : map) {
        w.begin_struct("yy");
        w.field("DSCP");
        w.byte(dscp);
        w.field("Priority");
        w.byte(prio);
        w.end_struct();
    }
    w.end_array();
}

// ---- rows from members --------------------------------------------------------------------

template <auto M> struct MemberOf;
template <typename O, typename T, T O::*M> struct MemberOf<M> {
    using Owner = O;
    using Type = T;
};
template <auto M> using Owner = typename MemberOf<M>::Owner;

template <auto M> bool same_member(const Owner<M>& a, const Owner<M>& b) {
    return a.*M == b.*M;
}

template <auto M> void write_member(ValueWriter& w, const Owner<M>& s, const PropertyContext&) {
    put(w, s.*M);
}

/// A property that shows member M as it is.
template <auto M> constexpr Property<Owner<M>> member(const char* name, bool constant = false) {
    return {name, Signature<typename MemberOf<M>::Type>::value, &same_member<M>, &write_member<M>,
            constant};
}

/// An internal fact: member M is compared (and named `name` in change sets), not shown.
template <auto M> constexpr Property<Owner<M>> internal(const char* name) {
    return {name, nullptr, &same_member<M>, nullptr};
}

} // namespace rdmad::rows
