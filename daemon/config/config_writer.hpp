// SPDX-License-Identifier: MIT
//
// Rules back to rdmad.conf(5) text, for the state file rdmad owns. toml++ does the quoting, so
// every value (a device name with '"' or '\' in it, say) reads back as it was.
#pragma once

#include "config/desired.hpp"

#include <string>
#include <vector>

namespace rdmad {

/// `rules` as `[[rule]]` tables in rdmad.conf(5) syntax: every match key and setting that is
/// set, strings double-quoted with TOML escapes (toml++'s formatter, keys in byte order within
/// a table), rules in the order given. parse_config_text() of the result gives the same rules
/// (file and line aside). Throws std::invalid_argument for a value parse_config_text() would
/// refuse (a control or non-ASCII character), so rdmad never writes a file it cannot read.
std::string format_rules(const std::vector<Rule>& rules);

} // namespace rdmad
