// SPDX-License-Identifier: MIT
//
// rdmactl's help: the verb table (name, arguments, one paragraph each), `rdmactl --help` /
// `rdmactl help`, `rdmactl help VERB`, and the closest verb for a mistyped one.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace rdmactl {

struct VerbHelp {
    const char* name;      ///< "set-port-type"
    const char* arguments; ///< "DEVICE PORT TYPE", "" when none
    const char* text;      ///< what it does, lines of at most 50 columns separated by '\n'
};

/// Every verb, in the order --help lists them.
const std::vector<VerbHelp>& verb_table();
/// The verb named `name`; nullptr when there is none.
const VerbHelp* find_verb(std::string_view name);

/// `rdmactl --help` and `rdmactl help`: usage, every verb, every option, exit status.
void print_help(std::FILE* out);
/// `rdmactl help VERB`: that verb's usage line and paragraph. `verb` must be in verb_table().
void print_verb_help(std::FILE* out, const VerbHelp& verb);

/// Damerau-Levenshtein distance (optimal string alignment: insertions, deletions,
/// substitutions and transpositions of two adjacent characters each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The verb closest to `typed` when it is close enough to be a typo (distance at most 2, and
/// less than half the typed length rounded up), else "". Ties go to the first in verb_table().
std::string closest_verb(std::string_view typed);

} // namespace rdmactl
