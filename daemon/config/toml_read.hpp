// SPDX-License-Identifier: MIT
//
// Reading TOML values of rdmad.conf(5) with errors at file:line:column: the problems of one
// file (the earliest in the text is the one reported) and the readers of the value types the
// keys use. config_file.cpp reads the file's structure with them and every setting
// (reconcile/settings/) reads its own keys.
#pragma once

#include "config/config_file.hpp"
#include "config/toml.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace rdmad {

/// Collects the problems of one file; the earliest in the text is reported, so the admin sees
/// the same "first error" whatever order toml++ keeps its tables in (it sorts keys by name).
class ConfigProblems {
  public:
    explicit ConfigProblems(const std::string& file) : file_(file) {}

    void add(const toml::source_region& at, std::string reason) {
        add(static_cast<int>(at.begin.line), static_cast<int>(at.begin.column), std::move(reason));
    }
    void add(int line, int column, std::string reason);
    const std::optional<ConfigError>& first() const { return first_; }

  private:
    std::string file_;
    std::optional<ConfigError> first_;
};

/// One value of a rule as toml++ parsed it (settings see it through this, so that the settings
/// contract does not include toml++).
struct ConfigValue {
    const toml::node& node;
};

/// The table a setting writes its keys into (state.conf).
struct ConfigTableOut {
    toml::table& table;
};

/// "a string", "an integer", ...: what a node is, for a message.
std::string type_name(const toml::node& node);

/// `whole` in double quotes for a message: shown_token() of it, with '"' and '\\' escaped.
std::string quoted(std::string_view whole);

/// A boolean; a problem when `value` is something else.
std::optional<bool> read_bool(const toml::node& value, std::string_view key,
                              ConfigProblems& problems);

/// A number (an integer or a float; TOML `100` and `100.0` alike) above `min` (or equal to it
/// when `min_allowed`) and at most `max`; `range` says that in words for the message.
std::optional<double> read_number(const toml::node& value, std::string_view key, double min,
                                  bool min_allowed, double max, std::string_view range,
                                  ConfigProblems& problems);

/// An integer from `min` to `max` (both included); a problem naming the range otherwise.
std::optional<int64_t> read_integer(const toml::node& value, std::string_view key, int64_t min,
                                    int64_t max, ConfigProblems& problems);

/// False (a problem added) when `text`, the value of `key`, has a control or non-ASCII
/// character: the raw text is checked for ASCII before parsing; this catches what TOML escapes
/// (\u00e9, \u0000) turn into.
bool printable_ascii(const toml::node& value, const std::string& text, std::string_view key,
                     ConfigProblems& problems);

/// A non-empty string of printable ASCII.
std::optional<std::string> read_string(const toml::node& value, std::string_view key,
                                       ConfigProblems& problems);

/// A non-empty array; `of` names its elements for the message ("priorities 0-7").
const toml::array* read_list(const toml::node& value, std::string_view key, std::string_view of,
                             ConfigProblems& problems);

} // namespace rdmad
