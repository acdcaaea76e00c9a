// SPDX-License-Identifier: MIT
//
// libFuzzer target: $STATE_DIRECTORY/state.conf, the settings rdmad persists for D-Bus calls
// with persist = true. rdmad writes it (format_rules(), daemon/config/config_writer.hpp) and
// reads it back at every reload with parse_config_text() (daemon/config/config_file.hpp), the
// reconciler's only parser of it; but it lives on disk, so an admin or a broken disk may have
// changed any byte. The seed corpus is files as rdmad writes them.
// Invariants, besides no crash and no exception: a file that parses can be rewritten (a
// persist after it must not throw: format_rules() accepts every rule parse_config_text()
// accepted), the rewrite reads back as the same rules, and rewriting is a fixed point (rdmad
// writing the file it just read changes nothing, so its "changed since read" check holds).
#include "config/config_file.hpp"
#include "config/config_writer.hpp"
#include "fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

namespace {

bool same_settings(const rdmad::Rule& a, const rdmad::Rule& b) {
    return a.match == b.match && a.port_type == b.port_type && a.pfc_no_drop == b.pfc_no_drop &&
           a.require_provider == b.require_provider;
}

const char* const kPath = "/var/lib/rdmad/state.conf";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const auto parsed = rdmad::parse_config_text(text, kPath);
        if (const auto* e = std::get_if<rdmad::ConfigError>(&parsed)) {
            check(e->file == kPath && e->line >= 1 && e->column >= 1 && !e->reason.empty(),
                  "an error has a position and a reason");
            return 0;
        }
        const auto& rules = std::get<rdmad::ConfigFile>(parsed).rules;
        for (const auto& r : rules)
            check(r.file == kPath && r.line >= 1 && !r.match.empty(), "a rule is placed");

        std::string written;
        try {
            written = rdmad::format_rules(rules);
        } catch (const std::invalid_argument&) {
            check(false, "every rule read from state.conf can be written back");
        }
        const auto reread = rdmad::parse_config_text(written, kPath);
        const auto* file = std::get_if<rdmad::ConfigFile>(&reread);
        check(file != nullptr, "what rdmad writes it can read");
        check(file->rules.size() == rules.size(), "the rewrite keeps every rule");
        for (size_t i = 0; i < rules.size(); ++i)
            check(same_settings(file->rules[i], rules[i]), "the rewrite keeps every setting");
        check(!file->apply, "state.conf as written never sets [daemon] apply");
        check(rdmad::format_rules(file->rules) == written, "rewriting is a fixed point");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "exception: %s\n", e.what());
        std::abort(); // problems are values, never exceptions
    }
    return 0;
}
