// SPDX-License-Identifier: MIT
//
// libFuzzer target: the legacy /etc/rdma/mlx4.conf (daemon/config/mlx4_conf.hpp parse_mlx4_conf;
// format: rdma-core redhat/rdma.mlx4.conf, read by redhat/rdma.mlx4-setup.sh with
// `read device port1 port2`). The file belongs to the admin, so every byte is outside input.
// Invariants: no crash, no exception; at most kMaxMlx4Warnings + 1 warnings, each short and
// without control characters whatever the line held (they become Manager.Problems); every rule
// is a valid card line, in line order, and written back as "<pci> <type>..." parses to itself.
#include "config/mlx4_conf.hpp"
#include "fuzz_check.hpp"

#include "inventory/attributes.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

// The longest warning: a fixed sentence of ~100 bytes around one field quoted in at most 64
// bytes plus "...".
constexpr size_t kMaxWarningBytes = 256;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        std::vector<rdmad::ConfigError> warnings;
        const auto rules = rdmad::parse_mlx4_conf(text, "mlx4.conf", &warnings);

        check(warnings.size() <= rdmad::kMaxMlx4Warnings + 1, "warnings are bounded");
        int last_line = 0;
        for (const auto& w : warnings) {
            check(w.file == "mlx4.conf" && !w.reason.empty(), "a warning names file and reason");
            check(w.reason.size() <= kMaxWarningBytes, "a warning is short");
            for (unsigned char c : w.reason)
                check(c >= 0x20 && c != 0x7f, "a warning has no control characters");
            if (w.line == 0) {
                check(&w == &warnings.back() && warnings.size() == rdmad::kMaxMlx4Warnings + 1,
                      "only the last warning, past the limit, counts the rest");
                continue;
            }
            check(w.line > last_line && w.column >= 1, "warnings are in line order, positioned");
            last_line = w.line;
        }

        std::string again;
        last_line = 0;
        for (const auto& r : rules) {
            check(r.line > last_line, "rules are in line order, one per line");
            last_line = r.line;
            check(rdmad::is_pci_address(r.match.pci_address), "a rule matches a PCI address");
            check(r.match == rdmad::Match{.pci_address = r.match.pci_address},
                  "a rule matches by PCI address only");
            check(r.port_type && !r.port_type->empty() && r.port_type->size() <= 2,
                  "a rule sets one or two port types");
            for (const auto& t : *r.port_type)
                check(t == "ib" || t == "eth" || t == "auto", "port types are ib, eth, auto");
            check(r.port_type->size() < 2 || (*r.port_type)[0] != "eth" ||
                      (*r.port_type)[1] == "eth",
                  "port 1 eth comes with port 2 eth");
            check(!r.pfc_no_drop && !r.require_provider, "mlx4.conf sets port types only");
            again += r.match.pci_address;
            for (const auto& t : *r.port_type)
                again += " " + t;
            again += "\n";
        }

        std::vector<rdmad::ConfigError> none;
        const auto reread = rdmad::parse_mlx4_conf(again, "mlx4.conf", &none);
        check(none.empty() && reread.size() == rules.size(), "rules written back re-parse");
        for (size_t i = 0; i < rules.size(); ++i)
            check(reread[i].match == rules[i].match && reread[i].port_type == rules[i].port_type,
                  "rules written back re-parse to themselves");

        // Warnings are optional: without them the same rules come out.
        check(rdmad::parse_mlx4_conf(text, "mlx4.conf", nullptr) == rules,
              "the rules do not depend on whether warnings are collected");
    } catch (...) {
        std::abort(); // a bad line is a warning, never an exception
    }
    return 0;
}
