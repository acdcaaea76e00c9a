// SPDX-License-Identifier: MIT
//
// libFuzzer target: rdmad.conf TOML (daemon/config/config_file.hpp parse_config_text) and the
// legacy mlx4.conf (daemon/config/mlx4_conf.hpp parse_mlx4_conf), both written by admins.
// Invariants: no crash, no exception escapes, every error and warning has a position (line >= 1,
// column >= 1; the one "N more invalid lines skipped" summary has none), every accepted rule is
// one the rest of the daemon can trust, and accepted rules written back by format_rules()
// (daemon/config/config_writer.hpp, how rdmad writes state.conf) parse to the same rules.
#include "config/config_file.hpp"
#include "config/config_writer.hpp"
#include "config/mlx4_conf.hpp"
#include "config/pfc.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <variant>

namespace {

void check_rule(const rdmad::Rule& rule) {
    if (rule.line < 1 || rule.match.empty())
        std::abort();
    if (rule.port_type) {
        if (rule.port_type->empty())
            std::abort();
        for (const auto& t : *rule.port_type)
            if (t != "ib" && t != "eth" && t != "auto")
                std::abort();
    }
    if (rule.pfc_no_drop) {
        if (rule.pfc_no_drop->empty() || !rdmad::pfc_mask(*rule.pfc_no_drop))
            std::abort();
        for (size_t i = 1; i < rule.pfc_no_drop->size(); ++i)
            if ((*rule.pfc_no_drop)[i - 1] >= (*rule.pfc_no_drop)[i]) // sorted, unique
                std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        auto parsed = rdmad::parse_config_text(text, "fuzz.conf");
        if (const auto* e = std::get_if<rdmad::ConfigError>(&parsed)) {
            if (e->line < 1 || e->column < 1 || e->reason.empty() || e->file != "fuzz.conf")
                std::abort();
        } else {
            const auto& rules = std::get<rdmad::ConfigFile>(parsed).rules;
            for (const auto& rule : rules)
                check_rule(rule);
            auto again = rdmad::parse_config_text(rdmad::format_rules(rules), "again.conf");
            const auto* file = std::get_if<rdmad::ConfigFile>(&again);
            if (!file || file->rules.size() != rules.size())
                std::abort();
            for (size_t i = 0; i < rules.size(); ++i) {
                const auto& a = rules[i];
                const auto& b = file->rules[i];
                if (!(a.match == b.match) || a.port_type != b.port_type ||
                    a.pfc_no_drop != b.pfc_no_drop || a.require_provider != b.require_provider)
                    std::abort();
            }
        }

        std::vector<rdmad::ConfigError> warnings;
        for (const auto& rule : rdmad::parse_mlx4_conf(text, "mlx4.conf", &warnings))
            check_rule(rule);
        for (const auto& w : warnings)
            if (w.reason.empty() || ((w.line < 1 || w.column < 1) &&
                                     w.reason.find("more invalid lines skipped") ==
                                         std::string::npos))
                std::abort();
    } catch (...) {
        std::abort(); // the parsers report problems as values, never by throwing
    }
    return 0;
}
