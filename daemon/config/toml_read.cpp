// SPDX-License-Identifier: MIT
#include "config/toml_read.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <sstream>

namespace rdmad {

void ConfigProblems::add(int line, int column, std::string reason) {
    line = std::max(line, 1);
    column = std::max(column, 1);
    if (!first_ || std::pair(line, column) < std::pair(first_->line, first_->column))
        first_ = ConfigError{file_, line, column, std::move(reason)};
}

std::string type_name(const toml::node& node) {
    switch (node.type()) {
    case toml::node_type::table:
        return "a table";
    case toml::node_type::array:
        return "an array";
    case toml::node_type::string:
        return "a string";
    case toml::node_type::integer:
        return "an integer";
    case toml::node_type::floating_point:
        return "a float";
    case toml::node_type::boolean:
        return "a boolean";
    case toml::node_type::date:
        return "a date";
    case toml::node_type::time:
        return "a time";
    case toml::node_type::date_time:
        return "a date-time";
    case toml::node_type::none:
        break;
    }
    return "nothing";
}

/// `whole` in double quotes for a message: shown_token() of it, with '"' and '\\' escaped.
std::string quoted(std::string_view whole) {
    std::string out = "\"";
    for (char c : shown_token(whole)) {
        if (c == '"' || c == '\\')
            out.push_back('\\');
        out.push_back(c);
    }
    return out + "\"";
}

std::optional<bool> read_bool(const toml::node& value, std::string_view key,
                              ConfigProblems& problems) {
    if (const auto* b = value.as_boolean())
        return b->get();
    problems.add(value.source(),
                 std::string(key) + " must be true or false, not " + type_name(value));
    return std::nullopt;
}

/// A number (an integer or a float; TOML `100` and `100.0` alike) above `min` (or equal to it
/// when `min_allowed`) and at most `max`; `range` says that in words for the message.
std::optional<double> read_number(const toml::node& value, std::string_view key, double min,
                                  bool min_allowed, double max, std::string_view range,
                                  ConfigProblems& problems) {
    std::optional<double> v;
    if (const auto* i = value.as_integer())
        v = static_cast<double>(i->get());
    else if (const auto* f = value.as_floating_point())
        v = f->get();
    if (!v) {
        problems.add(value.source(),
                     std::string(key) + " must be a number, not " + type_name(value));
        return std::nullopt;
    }
    if (!((min_allowed ? *v >= min : *v > min) && *v <= max)) { // also refuses nan
        // The value as written: {:g} would print 10000.000000000001 as "10000".
        std::ostringstream text;
        value.visit([&](const auto& n) {
            if constexpr (toml::is_number<decltype(n)>)
                text << n;
        });
        problems.add(value.source(), fmt::format("{} must be {}, not {}", key, range, text.str()));
        return std::nullopt;
    }
    return v;
}

/// The raw text is checked for ASCII before parsing; this catches what TOML escapes
/// (\u00e9, \u0000) turn into. False (a problem added) for a control or non-ASCII character.
bool printable_ascii(const toml::node& value, const std::string& text, std::string_view key,
                     ConfigProblems& problems) {
    for (const char c : text)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
            problems.add(value.source(),
                         std::string(key) + " must be printable ASCII (no control characters)");
            return false;
        }
    return true;
}

std::optional<std::string> read_string(const toml::node& value, std::string_view key,
                                       ConfigProblems& problems) {
    const auto* s = value.as_string();
    if (!s) {
        problems.add(value.source(),
                     std::string(key) + " must be a string, not " + type_name(value));
        return std::nullopt;
    }
    if (s->get().empty()) {
        problems.add(value.source(), std::string(key) + " must not be empty");
        return std::nullopt;
    }
    // Every match value is an ASCII name, address or glob.
    if (!printable_ascii(value, s->get(), key, problems))
        return std::nullopt;
    return s->get();
}

const toml::array* read_list(const toml::node& value, std::string_view key, std::string_view of,
                             ConfigProblems& problems) {
    const auto* array = value.as_array();
    if (!array) {
        problems.add(value.source(), std::string(key) + " must be a list of " + std::string(of) +
                                         ", not " + type_name(value));
        return nullptr;
    }
    if (array->empty()) {
        problems.add(value.source(), std::string(key) + " must not be an empty list");
        return nullptr;
    }
    return array;
}

std::optional<int64_t> read_integer(const toml::node& value, std::string_view key, int64_t min,
                                    int64_t max, ConfigProblems& problems) {
    const auto* i = value.as_integer();
    if (!i) {
        problems.add(value.source(), fmt::format("{} must be an integer from {} to {}, not {}", key,
                                                 min, max, type_name(value)));
        return std::nullopt;
    }
    if (i->get() < min || i->get() > max) {
        problems.add(value.source(),
                     fmt::format("{} must be from {} to {}, not {}", key, min, max, i->get()));
        return std::nullopt;
    }
    return i->get();
}

} // namespace rdmad
