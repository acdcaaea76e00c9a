// SPDX-License-Identifier: MIT
//
// Unit tests for the legacy /etc/rdma/mlx4.conf reader (daemon/config/mlx4_conf.hpp). Format:
// rdma-core redhat/rdma.mlx4.conf and redhat/rdma.mlx4-setup.sh, DOMAIN.md §1.1-1.2.
#include "config/mlx4_conf.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;

namespace {

using Strings = std::vector<std::string>;

std::vector<std::string> warning_texts(const std::vector<ConfigError>& warnings) {
    std::vector<std::string> out;
    for (const auto& w : warnings)
        out.push_back(w.to_string());
    return out;
}

} // namespace

TEST_CASE("DOMAIN.md's example line sets both ports of that card to eth") {
    std::vector<ConfigError> warnings;
    const auto rules = parse_mlx4_conf("0000:0b:00.0 eth eth\n", "/etc/rdma/mlx4.conf", &warnings);
    CHECK(warnings.empty());
    REQUIRE(rules.size() == 1);
    CHECK(rules[0].file == "/etc/rdma/mlx4.conf");
    CHECK(rules[0].line == 1);
    CHECK(rules[0].match == Match{.pci_address = "0000:0b:00.0"});
    CHECK(rules[0].port_type == Strings{"eth", "eth"});
    CHECK_FALSE(rules[0].pfc_no_drop);
    CHECK_FALSE(rules[0].require_provider);
}

TEST_CASE("the shipped header comments and blank lines are skipped silently") {
    std::vector<ConfigError> warnings;
    const auto rules = parse_mlx4_conf("# Config file for mlx4 hardware port settings\n"
                                       "# This file is read when the mlx4_core module is loaded\n"
                                       "#\n"
                                       "\n"
                                       "   \t\n"
                                       "   # indented comment\n"
                                       "0000:0c:00.0 ib\n"
                                       "0000:0d:00.0\tauto   ib\n",
                                       "mlx4.conf", &warnings);
    CHECK(warnings.empty());
    REQUIRE(rules.size() == 2);
    CHECK(rules[0].line == 7);
    CHECK(rules[0].port_type == Strings{"ib"}); // single-port card
    CHECK(rules[1].line == 8);
    CHECK(rules[1].port_type == Strings{"auto", "ib"});
}

TEST_CASE("a bad line of the admin's mlx4.conf is a warning with its position, and the good "
          "lines around it still count") {
    std::vector<ConfigError> warnings;
    const auto rules = parse_mlx4_conf("0000:0b:00.0 eth eth\n"
                                       "0b:00.0 eth eth\n"
                                       "0000:0c:00.0 infiniband\n"
                                       "0000:0d:00.0\n"
                                       "0000:0e:00.0 eth ib\n"
                                       "0000:0f:00.0 ib ib ib\n"
                                       "0000:10:00.0 ib eth\r\n",
                                       "mlx4.conf", &warnings);
    REQUIRE(rules.size() == 2);
    CHECK(rules[0].line == 1);
    CHECK(rules[1].line == 7);
    CHECK(rules[1].port_type == Strings{"ib", "eth"}); // CRLF file: no "\r" in the type
    CHECK(warning_texts(warnings) ==
          Strings{
              "mlx4.conf:2:1: \"0b:00.0\" is not a PCI address in the full form \"0000:0b:00.0\"; "
              "line skipped",
              "mlx4.conf:3:14: unknown port type \"infiniband\" (expected auto, ib or eth); line "
              "skipped",
              "mlx4.conf:4:13: no port type after the PCI address; line skipped",
              "mlx4.conf:5:18: port 1 eth needs port 2 eth (mlx4-setup.sh refuses this line); "
              "line skipped",
              "mlx4.conf:6:20: more than two port types (one line per card: <pci> <port1> "
              "[port2]); line skipped",
          });
}

TEST_CASE("an upper-case PCI address in mlx4.conf is refused: the setup script never found it") {
    std::vector<ConfigError> warnings;
    CHECK(parse_mlx4_conf("0000:0B:00.0 eth eth", "m", &warnings).empty());
    CHECK(warnings.size() == 1);
}

TEST_CASE("a last line without a newline still counts, and warnings may be ignored") {
    const auto rules = parse_mlx4_conf("x\n0000:0b:00.0 ib", "m", nullptr);
    REQUIRE(rules.size() == 1);
    CHECK(rules[0].line == 2);
}

TEST_CASE("a missing mlx4.conf (Debian never ships one) gives no rules and no warning") {
    std::vector<ConfigError> warnings;
    CHECK(load_mlx4_conf("/nonexistent/rdma/mlx4.conf", &warnings).empty());
    CHECK(warnings.empty());
}

TEST_CASE("at most 20 bad lines are listed one by one; one more warning counts the rest") {
    std::string text;
    for (int i = 0; i < 50; ++i)
        text += "zz\n";
    text += "0000:0b:00.0 eth eth\n";
    std::vector<ConfigError> warnings;
    const auto rules = parse_mlx4_conf(text, "m.conf", &warnings);
    CHECK(rules.size() == 1); // the good line after them still counts
    REQUIRE(warnings.size() == kMaxMlx4Warnings + 1);
    CHECK(warnings[0].line == 1);
    CHECK(warnings[19].line == 20);
    CHECK(warnings[20].to_string() == "m.conf: 30 more invalid lines skipped");
}

TEST_CASE("a 45 KB token is quoted in at most 64 bytes, so 23 such lines make small problems") {
    // The hostile review's file: 23 lines of one 45 KB field made Manager.Problems ~900 KB.
    std::string text;
    for (int i = 0; i < 23; ++i)
        // Not `std::string(45000, 'z') + "\n"`: with the precompiled header (tests/pch/),
        // GCC 12 warns -Warray-bounds inside that operator+, a false positive.
        text.append(45000, 'z').append("\n");
    std::vector<ConfigError> warnings;
    CHECK(parse_mlx4_conf(text, "m.conf", &warnings).empty());
    REQUIRE(warnings.size() == 21); // kMaxMlx4Warnings, then the summary
    CHECK(warnings[0].to_string() == "m.conf:1:1: \"" + std::string(64, 'z') +
                                         "...\" is not a PCI address in the full form "
                                         "\"0000:0b:00.0\"; line skipped");
    size_t total = 0;
    for (const auto& w : warnings)
        total += w.to_string().size();
    CHECK(total < 21 * 200);
    warnings.clear();
    parse_mlx4_conf("0000:0b:00.0 " + std::string(45000, 'q') + "\n", "m.conf", &warnings);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].to_string() == "m.conf:1:14: unknown port type \"" + std::string(64, 'q') +
                                         "...\" (expected auto, ib or eth); line skipped");
}
