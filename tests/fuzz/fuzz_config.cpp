// SPDX-License-Identifier: MIT
//
// libFuzzer target: rdmad.conf TOML (daemon/config/config_file.hpp parse_config_text) and the
// legacy mlx4.conf (daemon/config/mlx4_conf.hpp parse_mlx4_conf), both written by admins.
// Invariants: no crash, no exception escapes, every error and warning has a position (line >= 1,
// column >= 1), and every accepted rule is one the rest of the daemon can trust.
#include "config/config_file.hpp"
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
            for (const auto& rule : std::get<rdmad::ConfigFile>(parsed).rules)
                check_rule(rule);
        }

        std::vector<rdmad::ConfigError> warnings;
        for (const auto& rule : rdmad::parse_mlx4_conf(text, "mlx4.conf", &warnings))
            check_rule(rule);
        for (const auto& w : warnings)
            if (w.line < 1 || w.column < 1 || w.reason.empty())
                std::abort();
    } catch (...) {
        std::abort(); // the parsers report problems as values, never by throwing
    }
    return 0;
}
