// SPDX-License-Identifier: MIT
#include "inventory/properties.hpp"
#include "util/text.hpp"

#include <algorithm>

// write_line() is on its own, apart from the property tables (properties.cpp): the rows a
// setting declares (reconcile/settings/) use it, and so do the parsers' fuzz targets that link
// the settings without the Inventory.

namespace rdmad {

void write_line(ValueWriter& w, const std::string& s) {
    if (std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; }))
        w.string(s);
    else
        w.string(one_line_text(s));
}

} // namespace rdmad
