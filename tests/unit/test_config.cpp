// SPDX-License-Identifier: MIT
//
// Unit tests for rdmad's TOML configuration (daemon/config/config_file.hpp): the error an admin
// sees for each kind of broken file, with its exact file:line:column, and precedence across
// /etc/rdmad/rdmad.conf and conf.d/*.conf. Format: man/rdmad.conf.5.scd.
#include "config/config_file.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>

using namespace rdmad;
using rdmad::test::TempDir;

namespace {

std::string error_of(const std::string& text) {
    auto parsed = parse_config_text(text, "f.conf");
    if (const auto* e = std::get_if<ConfigError>(&parsed))
        return e->to_string();
    return "(no error)";
}

ConfigFile parse_ok(const std::string& text) {
    auto parsed = parse_config_text(text, "f.conf");
    if (const auto* e = std::get_if<ConfigError>(&parsed))
        FAIL("unexpected error: " << e->to_string());
    return std::get<ConfigFile>(parsed);
}


} // namespace

TEST_CASE("each kind of broken config file names its file, line, column and reason") {
    struct Case {
        const char* what;
        const char* text;
        const char* error;
    };
    const Case cases[] = {
        {"TOML syntax error (unterminated string)", "[[rule]]\ndevice = \"mlx5_0\n",
         "f.conf:2:17: Error while parsing string: unescaped control characters other than TAB "
         "(U+0009) are explicitly prohibited"},
        {"TOML syntax error (key defined twice)", "[[rule]]\ndevice = \"a\"\ndevice = \"b\"\n",
         "f.conf:3:10: Error while parsing key-value pair: cannot redefine existing string "
         "'device'"},
        {"triple bracket table header (toml++ 3.3 asserts on it)", "[[[rule]]]\ndevice = \"x\"\n",
         "f.conf:1:3: Error while parsing table header: expected bare key starting character or "
         "string delimiter, saw '['"},
        {"table header cut at the end of its line", "# c\n  [[\nrule]]\n",
         "f.conf:2:5: Error while parsing table header: expected bare key starting character or "
         "string delimiter, saw '\\n'"},
        {"accented letter in a key (toml++ 3.3 has undefined behaviour on it)",
         "[[rule]]\nd\u00e9vice = \"mlx5_0\"\n",
         "f.conf:2:2: non-ASCII character outside a comment (keys and values of rdmad's "
         "configuration are ASCII)"},
        {"non-ASCII letter in a value", "[[rule]]\ndevice = \"mlx5_\u00e9\"\n",
         "f.conf:2:16: non-ASCII character outside a comment (keys and values of rdmad's "
         "configuration are ASCII)"},
        {"closing brace where an array value should be (toml++ 3.3 asserts on it)",
         "[[rule]]\ndevice = \"x\"\nport_type = [\"eth\", }\n",
         "f.conf:3:21: Error while parsing value: expected a value, saw '}'"},
        {"date, space, one digit in an array (toml++ 3.3 asserts on it)",
         "[[rule]]\ndevice = \"x\"\nport_type = [1979-05-27 0]\n",
         "f.conf:3:25: Error while parsing value: expected a time (HH:MM:SS) after the date and "
         "space, saw '0'"},
        {"date-like value with '=' before a space and one digit (toml++ 3.3 check)",
         "[daemon]\napply = true\n\n[[rule]]\ndevice = \"x\"\nx=1979-05-2= 0\n",
         "f.conf:6:1: not TOML that rdmad can read: the parser (toml++ 3.3) failed its check "
         "\"!is_value_terminator(*cp)\" in this line"},
        {"date-like value with control characters (toml++ 3.3 check)", "a = 1979-05-\x01\x02 0\n",
         "f.conf:1:1: not TOML that rdmad can read: the parser (toml++ 3.3) failed its check "
         "\"!is_value_terminator(*cp)\" in this line"},
        {"value of 126 characters, a date without its underscores (toml++ 3.3 would step "
         "back past its history, in a noexcept function)",
         "[daemon]\napply = 1"
         "____________________________________________________________"
         "_______________________________________________________979-05-27 00\n",
         "f.conf:2:9: value longer than 100 characters without a space, comma or bracket"},
        {"date, space, one digit at the end of a line", "[daemon]\napply = 1979-05-27 7\n",
         "f.conf:2:20: Error while parsing value: expected a time (HH:MM:SS) after the date and "
         "space, saw '7'"},
        {"boolean given as a string", "[[rule]]\ndevice = \"mlx5_0\"\nrequire_provider = \"yes\"\n",
         "f.conf:3:20: require_provider must be true or false, not a string"},
        {"apply given as a string", "[daemon]\napply = \"no\"\n",
         "f.conf:2:9: apply must be true or false, not a string"},
        {"port_type given as a string, not a list",
         "[[rule]]\ndevice = \"x\"\nport_type = \"eth\"\n",
         "f.conf:3:13: port_type must be a list of strings, not a string"},
        {"priority given as a string", "[[rule]]\ndevice = \"x\"\npfc_no_drop = [\"3\"]\n",
         "f.conf:3:16: pfc_no_drop entries must be integers 0-7, not a string"},
        {"device given as an integer", "[[rule]]\ndevice = 5\n",
         "f.conf:2:10: device must be a string, not an integer"},
        {"misspelt key in a rule", "[[rule]]\ndevice = \"mlx5_0\"\nport_types = [\"eth\"]\n",
         "f.conf:3:1: unknown key \"port_types\" in [[rule]] (expected pci_address, driver, "
         "node_guid, device, netdev, profile, port_type, pfc_no_drop, trust, dscp_priority, "
         "exclusive, rdma_cm_roce_mode, rdma_cm_tos, sriov_numvfs, vf_guids, require_provider, min_rate_gbps or "
         "min_active_ports)"},
        {"min_rate_gbps as a string", "[[rule]]\ndevice = \"x\"\nmin_rate_gbps = \"100\"\n",
         "f.conf:3:17: min_rate_gbps must be a number, not a string"},
        {"min_rate_gbps of 0", "[[rule]]\ndevice = \"x\"\nmin_rate_gbps = 0\n",
         "f.conf:3:17: min_rate_gbps must be more than 0 and at most 10000, not 0"},
        {"min_rate_gbps negative", "[[rule]]\ndevice = \"x\"\nmin_rate_gbps = -25\n",
         "f.conf:3:17: min_rate_gbps must be more than 0 and at most 10000, not -25"},
        {"min_rate_gbps nan", "[[rule]]\ndevice = \"x\"\nmin_rate_gbps = nan\n",
         "f.conf:3:17: min_rate_gbps must be more than 0 and at most 10000, not nan"},
        {"min_rate_gbps just above 10000",
         "[[rule]]\ndevice = \"x\"\nmin_rate_gbps = 10000.000000000002\n",
         "f.conf:3:17: min_rate_gbps must be more than 0 and at most 10000, not "
         "10000.000000000002"},
        {"min_active_ports as a float", "[[rule]]\ndevice = \"x\"\nmin_active_ports = 1.5\n",
         "f.conf:3:20: min_active_ports must be an integer, not a float"},
        {"min_active_ports of 0", "[[rule]]\ndevice = \"x\"\nmin_active_ports = 0\n",
         "f.conf:3:20: min_active_ports must be from 1 to 64, not 0"},
        {"min_active_ports huge",
         "[[rule]]\ndevice = \"x\"\nmin_active_ports = 9223372036854775807\n",
         "f.conf:3:20: min_active_ports must be from 1 to 64, not 9223372036854775807"},
        {"unknown key in [daemon]", "[daemon]\napply = true\n  dry_run = true\n",
         "f.conf:3:3: unknown key \"dry_run\" in [daemon] (expected \"apply\", "
         "\"install_providers\", \"load_modules\", \"modules\", \"mstconfig\", "
         "\"persist_modules\", \"rdma_netns_mode\" or \"provider_package\")"},
        {"mstconfig as a command line", "[daemon]\nmstconfig = \"mstconfig -y\"\n",
         "f.conf:2:13: mstconfig must be the absolute path of the mstconfig program (e.g. "
         "\"/usr/bin/mstconfig\")"},
        {"an RDMA netns mode the kernel has not", "[daemon]\nrdma_netns_mode = \"private\"\n",
         "f.conf:2:19: unknown RDMA netns mode \"private\" (expected \"shared\" or "
         "\"exclusive\")"},
        {"install_providers misspelt", "[daemon]\ninstall_providers = \"automatic\"\n",
         "f.conf:2:21: install_providers must be \"never\", \"ask\" or \"auto\", not "
         "\"automatic\""},
        {"install_providers as a boolean", "[daemon]\ninstall_providers = true\n",
         "f.conf:2:21: install_providers must be a string, not a boolean"},
        {"provider_package with a shell character", "[daemon]\nprovider_package = \"a;b\"\n",
         "f.conf:2:20: "
         "provider_package must be package names (letters, digits, then + - . _) separated by "
         "spaces, at most 128 bytes"},
        {"provider_package with a command after it",
         "[daemon]\nprovider_package = \"x; rm -rf /\"\n",
         "f.conf:2:20: "
         "provider_package must be package names (letters, digits, then + - . _) separated by "
         "spaces, at most 128 bytes"},
        {"provider_package as an apt option",
         "[daemon]\nprovider_package = \"ibverbs-providers -y\"\n",
         "f.conf:2:20: "
         "provider_package must be package names (letters, digits, then + - . _) separated by "
         "spaces, at most 128 bytes"},
        {"provider_package as a long option",
         "[daemon]\nprovider_package = \"--allow-unauthenticated\"\n",
         "f.conf:2:20: "
         "provider_package must be package names (letters, digits, then + - . _) separated by "
         "spaces, at most 128 bytes"},
        {"provider_package of spaces alone", "[daemon]\nprovider_package = \"   \"\n",
         "f.conf:2:20: "
         "provider_package must be package names (letters, digits, then + - . _) separated by "
         "spaces, at most 128 bytes"},
        {"provider_package with a newline escape", "[daemon]\nprovider_package = \"a\\nb\"\n",
         "f.conf:2:20: "
         "provider_package must be package names (letters, digits, then + - . _) separated by "
         "spaces, at most 128 bytes"},
        {"provider_package with a tab", "[daemon]\nprovider_package = \"a\\tb\"\n",
         "f.conf:2:20: "
         "provider_package must be package names (letters, digits, then + - . _) separated by "
         "spaces, at most 128 bytes"},
        {"provider_package with a non-ASCII letter",
         "[daemon]\nprovider_package = \"libibverbs\u00e9\"\n",
         "f.conf:2:31: non-ASCII character outside a comment (keys and values of rdmad's "
         "configuration are ASCII)"},
        {"provider_package with a byte that is not UTF-8",
         "[daemon]\nprovider_package = \"libibverbs\xff\"\n",
         "f.conf:2:31: non-ASCII character outside a comment (keys and values of rdmad's "
         "configuration are ASCII)"},
        {"install_providers as a number", "[daemon]\ninstall_providers = 3\n",
         "f.conf:2:21: install_providers must be a string, not an integer"},
        {"install_providers in capitals", "[daemon]\ninstall_providers = \"AUTO\"\n",
         "f.conf:2:21: install_providers must be \"never\", \"ask\" or \"auto\", not \"AUTO\""},

        {"relative export directory", "[export]\nprometheus_dir = \"prom\"\n",
         "f.conf:2:18: prometheus_dir must be an absolute directory path"},
        {"export directory given as a boolean", "[export]\nnfd_dir = false\n",
         "f.conf:2:11: nfd_dir must be a string (a directory, or \"\" for off), not a boolean"},
        {"unknown key in [export]", "[export]\nprom_dir = \"/x\"\n",
         "f.conf:2:1: unknown key \"prom_dir\" in [export] (expected \"prometheus_dir\" or "
         "\"nfd_dir\")"},
        {"misspelt table", "[deamon]\napply = false\n",
         "f.conf:1:2: unknown table [deamon] (expected [daemon], [export], [dispatcher], [doctor] "
         "or [[rule]])"},
        {"top-level key outside any table", "apply = false\n",
         "f.conf:1:1: unknown key \"apply\" (expected the [daemon], [export], [dispatcher] or "
         "[doctor] table or [[rule]] tables)"},
        {"memlock launcher name too long",
         "[doctor]\nmemlock_launchers = [\"a-very-long-name-x\"]\n",
         "f.conf:2:22: memlock_launchers entries must be process names of 1 to 15 characters (as "
         "in /proc/<pid>/comm)"},
        {"memlock launchers not a list", "[doctor]\nmemlock_launchers = \"slurmd\"\n",
         "f.conf:2:21: memlock_launchers must be a list of process names, not a string"},
        {"unknown key in [doctor]", "[doctor]\nlaunchers = []\n",
         "f.conf:2:1: unknown key \"launchers\" in [doctor] (expected \"memlock_launchers\")"},
        {"relative dispatcher directory", "[dispatcher]\ndirectories = [\"/etc/x\", \"y\"]\n",
         "f.conf:2:26: directories must list absolute directory paths"},
        {"dispatcher time limit of 0", "[dispatcher]\ntimeout_sec = 0\n",
         "f.conf:2:15: timeout_sec must be a whole number of seconds from 1 to 3600"},
        {"dispatcher time limit as a string", "[dispatcher]\ntimeout_sec = \"30\"\n",
         "f.conf:2:15: timeout_sec must be a whole number of seconds from 1 to 3600"},
        {"unknown key in [dispatcher]", "[dispatcher]\ntimeout = 5\n",
         "f.conf:2:1: unknown key \"timeout\" in [dispatcher] (expected \"directories\" or "
         "\"timeout_sec\")"},
        {"[rule] written for [[rule]]", "[rule]\ndevice = \"x\"\n",
         "f.conf:1:2: rule must be an array of tables ([[rule]]), not a table"},
        {"priority 8", "[[rule]]\ndriver = \"mlx5_core\"\npfc_no_drop = [3, 8]\n",
         "f.conf:3:19: priority 8 is outside 0-7"},
        {"negative priority", "[[rule]]\ndriver = \"mlx5_core\"\npfc_no_drop = [-1]\n",
         "f.conf:3:16: priority -1 is outside 0-7"},
        {"priority listed twice", "[[rule]]\ndriver = \"mlx5_core\"\npfc_no_drop = [3, 4, 3]\n",
         "f.conf:3:22: priority 3 is listed twice in pfc_no_drop"},
        {"unknown port type", "[[rule]]\ndevice = \"mlx4_0\"\nport_type = [\"eth\", \"roce\"]\n",
         "f.conf:3:21: unknown port type \"roce\" (expected \"ib\", \"eth\" or \"auto\")"},
        {"empty port_type list", "[[rule]]\ndevice = \"x\"\nport_type = []\n",
         "f.conf:3:13: port_type must not be an empty list"},
        {"empty pfc_no_drop list", "[[rule]]\ndevice = \"x\"\npfc_no_drop = []\n",
         "f.conf:3:15: pfc_no_drop must not be an empty list"},
        {"empty match string", "[[rule]]\nnetdev = \"\"\nport_type = [\"eth\"]\n",
         "f.conf:2:10: netdev must not be empty"},
        {"rule without any match key", "# all cards\n[[rule]]\nport_type = [\"ib\"]\n",
         "f.conf:2:1: rule matches nothing: set at least one of pci_address, driver, node_guid, "
         "device or netdev"},
        {"PCI address without its function", "[[rule]]\npci_address = \"0000:0b:00\"\n",
         "f.conf:2:15: invalid PCI address \"0000:0b:00\" (expected domain:bus:slot.function, "
         "e.g. \"0000:0b:00.0\")"},
        {"PCI address without its domain", "[[rule]]\npci_address = \"0b:00.0\"\n",
         "f.conf:2:15: invalid PCI address \"0b:00.0\" (expected domain:bus:slot.function, "
         "e.g. \"0000:0b:00.0\")"},
        {"GUID with three groups", "[[rule]]\nnode_guid = \"0002:c903:0031\"\n",
         "f.conf:2:13: malformed node GUID \"0002:c903:0031\" (expected 4 colon-separated groups "
         "of hex digits, e.g. \"0002:c903:0031:78f0\")"},
        {"GUID in 0x form", "[[rule]]\nnode_guid = \"0x0002c903003178f0\"\n",
         "f.conf:2:13: malformed node GUID \"0x0002c903003178f0\" (expected 4 colon-separated "
         "groups of hex digits, e.g. \"0002:c903:0031:78f0\")"},
        {"two rules with the same match in one file",
         "[[rule]]\ndevice = \"mlx5_*\"\nport_type = [\"eth\"]\n\n[[rule]]\ndevice = "
         "\"mlx5_*\"\npfc_no_drop = [3]\n",
         "f.conf:5:1: rule has the same match as the rule at line 1; merge the two rules"},
        {"same match written with a differently cased GUID",
         "[[rule]]\nnode_guid = \"0002:C903:0031:78F0\"\n[[rule]]\nnode_guid = "
         "\"2:c903:31:78f0\"\n",
         "f.conf:3:1: rule has the same match as the rule at line 1; merge the two rules"},
    };
    for (const auto& c : cases) {
        INFO(c.what);
        CHECK(error_of(c.text) == c.error);
    }
}

TEST_CASE("install_providers and provider_package are read, and a later file wins") {
    ConfigFile a = parse_ok("[daemon]\ninstall_providers = \"auto\"\n"
                            "provider_package = \"libibverbs libmlx5-1\"\n");
    CHECK(a.install_providers == InstallProviders::automatic);
    CHECK(a.provider_package == "libibverbs libmlx5-1");
    CHECK(parse_ok("[daemon]\ninstall_providers = \"never\"\n").install_providers ==
          InstallProviders::never);
    DesiredConfig config;
    CHECK(config.install_providers == InstallProviders::ask); // the default
    CHECK(config.provider_package.empty());
    merge_config(config, std::move(a), "10-a.conf");
    merge_config(config, parse_ok("[daemon]\ninstall_providers = \"ask\"\n"), "20-b.conf");
    CHECK(config.install_providers == InstallProviders::ask);
    CHECK(config.provider_package == "libibverbs libmlx5-1"); // 20-b.conf leaves it
}

TEST_CASE("provider_package of more than 128 bytes is refused where it starts") {
    const std::string why = "provider_package must be package names (letters, digits, then + - "
                            ". _) separated by spaces, at most 128 bytes";
    // 128 bytes of names pass; 129 and 10 KB (spaces keep the line under the 100-character
    // token limit) are refused at the value's column 20.
    std::string names128;
    while (names128.size() < 128)
        names128 += names128.empty() ? "a" : " a";
    names128.resize(128, 'b');
    CHECK(parse_ok("[daemon]\nprovider_package = \"" + names128 + "\"\n").provider_package ==
          names128);
    CHECK(error_of("[daemon]\nprovider_package = \"" + names128 + "c\"\n") ==
          "f.conf:2:20: " + why);
    std::string big;
    while (big.size() < 10240)
        big += "libibverbs ";
    CHECK(error_of("[daemon]\nprovider_package = \"" + big + "\"\n") == "f.conf:2:20: " + why);
}

TEST_CASE("provider_package names that start with a letter or digit are read") {
    CHECK(parse_ok("[daemon]\nprovider_package = \"libibverbs1 rdma-core 0ad libstdc++6 "
                   "Mesa_dri\"\n")
              .provider_package == "libibverbs1 rdma-core 0ad libstdc++6 Mesa_dri");
    CHECK(parse_ok("[daemon]\nprovider_package = \"\"\n").provider_package == "");
}

TEST_CASE("a NUL byte is reported at its position with the whole message") {
    // toml++ builds its messages as C strings: its own text stopped at the NUL ("saw 'tr").
    CHECK(error_of(std::string("[daemon]\napply = tr\0ue\n", 22)) ==
          "f.conf:2:11: NUL byte (TOML allows no control character but tab)");
    CHECK(error_of(std::string("# a comment \0\n[daemon]\napply = true\n", 37)) ==
          "f.conf:1:13: NUL byte (TOML allows no control character but tab)");
}

TEST_CASE("a bad key or value is quoted with at most 64 bytes, and the reason is kept whole") {
    // org.rdmad1(5): an error's text quotes at most 64 bytes of a bad token from a file.
    const std::string key(900000, 'k');
    CHECK(error_of("[[rule]]\n" + key + " = 1\n") ==
          "f.conf:2:1: unknown key \"" + std::string(64, 'k') +
              "...\" in [[rule]] (expected pci_address, driver, node_guid, device, netdev, "
              "profile, port_type, pfc_no_drop, trust, dscp_priority, exclusive, rdma_cm_roce_mode, rdma_cm_tos, sriov_numvfs, vf_guids, require_provider, min_rate_gbps or min_active_ports)");
    const std::string value(500000, 'Z');
    CHECK(error_of("[[rule]]\npci_address = \"" + value + "\"\n") ==
          "f.conf:2:15: invalid PCI address \"" + std::string(64, 'Z') +
              "...\" (expected domain:bus:slot.function, e.g. \"0000:0b:00.0\")");
}

TEST_CASE("an unknown table's name is shown like a bad key: 64 bytes, controls as '?'") {
    const std::string expected = " (expected [daemon], [export], [dispatcher], [doctor] or [[rule]])";
    CHECK(error_of("[" + std::string(200000, 'a') + "]\n") ==
          "f.conf:1:2: unknown table [" + std::string(64, 'a') + "...]" + expected);
    // TOML escapes in a quoted table name: a newline, a tab, ESC and NUL.
    CHECK(error_of("[\"a\\nb\\tc\\u001b[31m\"]\n") == "f.conf:1:2: unknown table [a?b?c?[31m]" + expected);
    CHECK(error_of("[\"a\\u0000b\"]\n") == "f.conf:1:2: unknown table [a?b]" + expected);
}

TEST_CASE("a NUL after a backslash or as a header's first character is reported as a NUL") {
    CHECK(error_of(std::string("[[rule]]\ndevice=\"a\\\0b\"\n", 23)) ==
          "f.conf:2:11: NUL byte (TOML allows no control character but tab)");
    CHECK(error_of(std::string("[\0daemon]\n", 10)) ==
          "f.conf:1:2: NUL byte (TOML allows no control character but tab)");
}

TEST_CASE("toml++'s own description of an error is cut after 256 bytes") {
    // "cannot redefine existing table" quotes the whole key path.
    const std::string table(5000, 't');
    const std::string text = "[" + table + "]\n[" + table + "]\n";
    const std::string head = "Error while parsing table header: cannot redefine existing table '";
    CHECK(error_of(text) == "f.conf:2:1: " + head + std::string(256 - head.size(), 't') + "...");
}

TEST_CASE("a failed toml++ check is found on its line in one parse, also at the end of 1 MiB") {
    // The breaker's file: 47,860 lines of nested inline tables, then a line that makes toml++
    // fail its check. The line used to be found by parsing ~16 prefixes (4 s on the event loop).
    std::string text;
    for (int i = 0; i < 47860; ++i)
        text += fmt::format("a{:x}={{b={{c=[[[1]]]}}}}\n", i);
    text += "x=1979-05-2= 0\n";
    REQUIRE(text.size() < 1024 * 1024);
    CHECK(error_of(text) == "f.conf:47861:1: not TOML that rdmad can read: the parser (toml++ "
                            "3.3) failed its check \"!is_value_terminator(*cp)\" in this line");
    // The same check in a string that spans lines before it: still its own line.
    CHECK(error_of("s = \"\"\"\none\ntwo\n\"\"\"\n[daemon]\nx=1979-05-2= 0\n") ==
          "f.conf:6:1: not TOML that rdmad can read: the parser (toml++ 3.3) failed its check "
          "\"!is_value_terminator(*cp)\" in this line");
}

TEST_CASE("with two mistakes the one earlier in the file is reported, not the first key by name") {
    // toml++ keeps a table's keys sorted by name: "device" (line 3) would be visited before
    // "port_type" (line 2).
    CHECK(error_of("[[rule]]\nport_type = [\"bogus\"]\ndevice = 5\n") ==
          "f.conf:2:14: unknown port type \"bogus\" (expected \"ib\", \"eth\" or \"auto\")");
    CHECK(error_of("[[rule]]\nzzz = 1\n[daemon]\naaa = 1\n") ==
          "f.conf:2:1: unknown key \"zzz\" in [[rule]] (expected pci_address, driver, node_guid, "
          "device, netdev, profile, port_type, pfc_no_drop, trust, dscp_priority, exclusive, rdma_cm_roce_mode, rdma_cm_tos, sriov_numvfs, vf_guids, require_provider, min_rate_gbps or "
          "min_active_ports)");
}

TEST_CASE("a syntax error before a table header toml++ cannot take is still the one reported") {
    CHECK(error_of("[daemon]\napply = \n[[[rule]]]\n") ==
          "f.conf:2:9: Error while parsing key-value pair: expected value, saw '\\n'");
}

TEST_CASE("comments may be written in any language") {
    CHECK(
        parse_ok("# carte r\u00e9seau \u2014 \u7f51\u5361\n[[rule]]\ndevice = \"x\" # caf\u00e9\n")
            .rules.size() == 1);
}

TEST_CASE("a syntax error before a non-ASCII character is still the one reported") {
    CHECK(error_of("[daemon]\napply = \n[[rule]]\nd\u00e9vice = 1\n") ==
          "f.conf:2:9: Error while parsing key-value pair: expected value, saw '\\n'");
}

TEST_CASE("a valid file gives every key, in file order, with priorities sorted") {
    const auto file = parse_ok(R"(# rdmad.conf
[daemon]
apply = false

[[rule]]
pci_address = "0000:0B:00.0"
port_type = ["eth", "ib"]

[[rule]]
driver = "mlx5_core"
netdev = "enp*"
pfc_no_drop = [4, 3]
require_provider = false

[[rule]]
node_guid = "0002:C903:31:78f0"
device = "mlx5_*"
min_rate_gbps = 100
min_active_ports = 2

[[rule]]
device = "mlx4_*"
min_rate_gbps = 56.25
)");
    REQUIRE(file.apply == false);
    REQUIRE(file.rules.size() == 4);
    const auto& a = file.rules[0];
    CHECK(a.file == "f.conf");
    CHECK(a.line == 5);
    CHECK(a.match.pci_address == "0000:0b:00.0"); // stored as the kernel prints it
    CHECK(a.port_type == std::vector<std::string>{"eth", "ib"});
    CHECK_FALSE(a.pfc_no_drop);
    CHECK_FALSE(a.require_provider);
    const auto& b = file.rules[1];
    CHECK(b.line == 9);
    CHECK(b.match.driver == "mlx5_core");
    CHECK(b.match.netdev_glob == "enp*");
    CHECK(b.pfc_no_drop == std::vector<uint8_t>{3, 4});
    CHECK(b.require_provider == false);
    CHECK_FALSE(b.port_type);
    const auto& c = file.rules[2];
    CHECK(c.line == 15);
    CHECK(c.match.node_guid == "0002:c903:0031:78f0");
    CHECK(c.match.device_glob == "mlx5_*");
    CHECK(c.min_rate_gbps == 100.0);
    CHECK(c.min_active_ports == 2u);
    CHECK(file.rules[3].min_rate_gbps == 56.25);
    CHECK_FALSE(file.rules[3].min_active_ports);
}

TEST_CASE("an empty file sets nothing and leaves apply unset") {
    const auto file = parse_ok("");
    CHECK_FALSE(file.apply);
    CHECK(file.rules.empty());
    CHECK(parse_ok("# only a comment\n[daemon]\n").rules.empty());
}

TEST_CASE("one port type is enough and more than two are allowed") {
    CHECK(parse_ok("[[rule]]\ndevice=\"a\"\nport_type=[\"auto\"]\n").rules[0].port_type->size() ==
          1);
    CHECK(parse_ok("[[rule]]\ndevice=\"a\"\nport_type=[\"ib\",\"ib\",\"ib\"]\n")
              .rules[0]
              .port_type->size() == 3);
}

TEST_CASE("rules that differ in any match key are not duplicates") {
    const auto file = parse_ok("[[rule]]\ndevice = \"mlx5_0\"\n[[rule]]\ndevice = \"mlx5_0\"\n"
                               "driver = \"mlx5_core\"\n");
    CHECK(file.rules.size() == 2);
}

TEST_CASE("an unreadable-file error prints without line and column") {
    CHECK(
        ConfigError{"/etc/rdmad/rdmad.conf", 0, 0, "cannot read: Permission denied"}.to_string() ==
        "/etc/rdmad/rdmad.conf: cannot read: Permission denied");
    CHECK(ConfigError{"a.conf", 3, 7, "bad"}.to_string() == "a.conf:3:7: bad");
}

TEST_CASE("no config files at all is the default: apply, no rules") {
    TempDir dir("rdmad-config");
    auto loaded = load_config((dir.path / "rdmad.conf").string(), (dir.path / "conf.d").string());
    REQUIRE(std::holds_alternative<DesiredConfig>(loaded));
    const auto& config = std::get<DesiredConfig>(loaded);
    CHECK(config.apply);
    CHECK(config.rules.empty());
    CHECK(config.sources.empty());
}

TEST_CASE("drop-ins are read after the main file in lexical order, whatever their creation "
          "order, and later keys win") {
    TempDir dir("rdmad-config");
    const auto main = dir.write("rdmad.conf", "[[rule]]\ndevice = \"mlx5_*\"\n"
                                              "port_type = [\"eth\", \"eth\"]\n"
                                              "pfc_no_drop = [3]\n");
    const auto b = dir.write("conf.d/20-b.conf", "[daemon]\napply = true\n"
                                                 "[[rule]]\ndevice = \"mlx5_0\"\n"
                                                 "pfc_no_drop = [4]\n");
    const auto a = dir.write("conf.d/10-a.conf", "[daemon]\napply = false\n"
                                                 "[[rule]]\ndevice = \"mlx5_0\"\n"
                                                 "pfc_no_drop = [5]\nrequire_provider = false\n");
    // Not drop-ins: a disabled file, a hidden one, a directory.
    dir.write("conf.d/30-c.conf.disabled", "this is not TOML");
    dir.write("conf.d/.40-d.conf", "this is not TOML");
    std::filesystem::create_directories(dir.path / "conf.d" / "50-e.conf");

    auto loaded = load_config(main, (dir.path / "conf.d").string());
    if (const auto* e = std::get_if<ConfigError>(&loaded))
        FAIL(e->to_string());
    const auto& config = std::get<DesiredConfig>(loaded);
    CHECK(config.sources == std::vector<std::string>{main, a, b});
    CHECK(config.apply); // 20-b.conf sets it back after 10-a.conf
    REQUIRE(config.rules.size() == 3);
    CHECK(config.rules[0].file == main);
    CHECK(config.rules[1].file == a);
    CHECK(config.rules[2].file == b);

    DeviceState mlx5_0;
    mlx5_0.name = "mlx5_0";
    const auto desired = resolve(config, mlx5_0, {});
    CHECK(desired.port_type == std::vector<std::string>{"eth", "eth"}); // main file, kept
    CHECK(desired.pfc_no_drop == std::vector<uint8_t>{4});              // 20-b over 10-a
    CHECK_FALSE(desired.require_provider);                              // 10-a, not reset
    CHECK(desired.from == std::vector<std::string>{main + ":1", a + ":3", b + ":3"});
}

TEST_CASE("the same match in two files is an override, not a duplicate") {
    TempDir dir("rdmad-config");
    const auto main = dir.write("rdmad.conf", "[[rule]]\ndevice = \"mlx5_0\"\n");
    dir.write("conf.d/a.conf", "[[rule]]\ndevice = \"mlx5_0\"\n");
    auto loaded = load_config(main, (dir.path / "conf.d").string());
    REQUIRE(std::holds_alternative<DesiredConfig>(loaded));
    CHECK(std::get<DesiredConfig>(loaded).rules.size() == 2);
}

TEST_CASE("a broken drop-in fails the whole load with its own file name and position") {
    TempDir dir("rdmad-config");
    const auto main = dir.write("rdmad.conf", "[daemon]\napply = false\n");
    const auto bad = dir.write("conf.d/10-pfc.conf", "[[rule]]\ndriver = \"mlx5_core\"\n"
                                                     "pfc_no_drop = [8]\n");
    auto loaded = load_config(main, (dir.path / "conf.d").string());
    REQUIRE(std::holds_alternative<ConfigError>(loaded));
    CHECK(std::get<ConfigError>(loaded).to_string() == bad + ":3:16: priority 8 is outside 0-7");
}

TEST_CASE("a main config path that cannot be read is an error, not an empty config") {
    TempDir dir("rdmad-config");
    std::filesystem::create_directories(dir.path / "rdmad.conf"); // read() fails with EISDIR
    auto loaded = load_config((dir.path / "rdmad.conf").string(), (dir.path / "conf.d").string());
    REQUIRE(std::holds_alternative<ConfigError>(loaded));
    const auto& e = std::get<ConfigError>(loaded);
    CHECK(e.file == (dir.path / "rdmad.conf").string());
    CHECK(e.line == 0);
    CHECK(e.reason == "not a regular file");
}

TEST_CASE("a TOML escape cannot smuggle a control or non-ASCII character into a match value") {
    // "\u00e9" and "\u0000" are valid TOML (toml.io v1.0.0, Strings) but no RDMA device,
    // driver, netdev or PCI address has them; fnmatch would see "a" for "a\u0000b".
    CHECK(error_of("[[rule]]\ndevice = \"r\\u00e9seau\"\n") ==
          "f.conf:2:10: device must be printable ASCII (no control characters)");
    CHECK(error_of("[[rule]]\nnetdev = \"a\\u0000b\"\n") ==
          "f.conf:2:10: netdev must be printable ASCII (no control characters)");
    CHECK(error_of("[[rule]]\ndriver = \"mlx5\\tcore\"\n") ==
          "f.conf:2:10: driver must be printable ASCII (no control characters)");
}

namespace {
/// `levels` dotted parts: "a.a.a...a".
std::string dotted(int levels) {
    std::string key = "a";
    for (int i = 1; i < levels; ++i)
        key += ".a";
    return key;
}
} // namespace

TEST_CASE("a table header nesting 60,000 levels is refused with its position, not a stack "
          "overflow inside toml++") {
    // 120 KB: the file of the hostile review that ended rdmad with SIGSEGV (toml++ recurses
    // once per level). The 33rd part is the first too deep: the 32nd '.', at column 1 + 2 * 32.
    CHECK(error_of("# deep\n[" + dotted(60000) + ".b]\n") ==
          "f.conf:2:65: key nests tables more than 32 levels deep");
}

TEST_CASE("60,000 dotted keys under [[rule]] are refused the same way") {
    CHECK(error_of("[[rule]]\ndevice = \"mlx5_0\"\n" + dotted(60000) + " = 1\n") ==
          "f.conf:3:62: key nests tables more than 32 levels deep");
}

TEST_CASE("the depth counts the table header, inline tables and arrays a key is inside") {
    // [a.a...] (20 levels), then a key of 10 levels: 30, allowed, toml++ reports the schema.
    CHECK(error_of("[" + dotted(20) + "]\n" + dotted(10) + " = 1\n") ==
          "f.conf:1:2: unknown table [a] (expected [daemon], [export], [dispatcher], [doctor] or "
          "[[rule]])");
    // 20 + 10 + 3: too deep, the third part of the last key is the 33rd level (its '.' at
    // column 28).
    CHECK(error_of("[" + dotted(20) + "]\n" + dotted(10) + " = { " + dotted(3) + " = 1 }\n") ==
          "f.conf:2:28: key nests tables more than 32 levels deep");
    // The array and the inline table are levels 1 and 2; the 30th '.' (column 8 + 2 * 30)
    // starts level 33.
    CHECK(error_of("x = [ { " + dotted(40) + " = 1 } ]\n") ==
          "f.conf:1:68: key nests tables more than 32 levels deep");
}

TEST_CASE("dots in strings, floats and quoted keys are not nesting") {
    CHECK(error_of("[[rule]]\ndevice = \"" + dotted(100) + "\"\n").find("nests") ==
          std::string::npos);
    CHECK(error_of("[[rule]]\n\"" + dotted(100) + "\" = 1\n").find("nests") == std::string::npos);
    CHECK(error_of("x = [1.5, 2.5, 3.5, 4.5]\n").find("nests") == std::string::npos);
}

TEST_CASE("a text over 1 MiB is refused before parsing, whoever passes it") {
    CHECK(error_of(std::string((1 << 20) + 1, '#')) ==
          "f.conf:1:1: larger than 1 MiB, the most rdmad reads");
}

TEST_CASE("a file of 30,000 rules is checked for duplicates in one pass, and the duplicate "
          "still names the first rule with its match") {
    // 2 lines a rule ("[[rule]]", "device = ..."): rule i starts on line 2i+1.
    std::string text;
    for (int i = 0; i < 30000; ++i)
        text += "[[rule]]\ndevice = \"d" + std::to_string(i) + "\"\n";
    const auto start = std::chrono::steady_clock::now();
    CHECK(parse_ok(text).rules.size() == 30000);
    // Compared pairwise, 22,793 rules took 4.5 s (bench/rules.py); one lookup a rule takes
    // well under 1 s, under ASan too.
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
    text += "[[rule]]\ndevice = \"d7\"\n"; // rule 30001 on line 60001; d7 is rule 8, line 15
    CHECK(error_of(text) ==
          "f.conf:60001:1: rule has the same match as the rule at line 15; merge the two rules");
}

TEST_CASE("load_config keeps every file's rules, in file order, once") {
    TempDir dir("rdmad-config");
    const auto main =
        dir.write("rdmad.conf", "[[rule]]\ndevice = \"a\"\n[[rule]]\ndevice = \"b\"\n");
    const auto c = dir.write("conf.d/c.conf", "[[rule]]\ndevice = \"c\"\n");
    auto loaded = load_config(main, (dir.path / "conf.d").string());
    REQUIRE(std::holds_alternative<DesiredConfig>(loaded));
    const auto& rules = std::get<DesiredConfig>(loaded).rules;
    REQUIRE(rules.size() == 3);
    CHECK(rules[0].match.device_glob == "a");
    CHECK(rules[0].file == main);
    CHECK(rules[1].match.device_glob == "b");
    CHECK(rules[1].line == 3);
    CHECK(rules[2].match.device_glob == "c");
    CHECK(rules[2].file == c);
}

TEST_CASE("[export] sets each directory, \"\" turns one off, a later file wins key by key") {
    auto first = std::get<ConfigFile>(
        parse_config_text("[export]\nprometheus_dir = \"/srv/prom\"\nnfd_dir = \"\"\n", "a.conf"));
    CHECK(first.prometheus_dir == std::optional<std::string>("/srv/prom"));
    CHECK(first.nfd_dir == std::optional<std::string>(""));
    auto second =
        std::get<ConfigFile>(parse_config_text("[export]\nnfd_dir = \"/run/nfd\"\n", "b.conf"));
    CHECK(!second.prometheus_dir);
    DesiredConfig config;
    // The defaults: Debian's node-exporter textfile directory and nfd-worker's features.d.
    CHECK(config.exports.prometheus_dir == "/var/lib/prometheus/node-exporter");
    CHECK(config.exports.nfd_dir == "/etc/kubernetes/node-feature-discovery/features.d");
    merge_config(config, std::move(first), "a.conf");
    merge_config(config, std::move(second), "b.conf");
    CHECK(config.exports.prometheus_dir == "/srv/prom");
    CHECK(config.exports.nfd_dir == "/run/nfd");
}

TEST_CASE("[dispatcher] sets the directories and the time limit, a later file wins key by key") {
    DesiredConfig config;
    // The defaults: /etc first (a name there hides the same name in /usr/lib), 30 s.
    CHECK(config.dispatcher.directories ==
          std::vector<std::string>{"/etc/rdmad/dispatcher.d", "/usr/lib/rdmad/dispatcher.d"});
    CHECK(config.dispatcher.timeout_sec == 30);
    auto first = std::get<ConfigFile>(parse_config_text(
        "[dispatcher]\ndirectories = [\"/srv/a\", \"/srv/b\"]\ntimeout_sec = 5\n", "a.conf"));
    auto second =
        std::get<ConfigFile>(parse_config_text("[dispatcher]\ntimeout_sec = 3600\n", "b.conf"));
    CHECK(!second.dispatcher_directories);
    merge_config(config, std::move(first), "a.conf");
    merge_config(config, std::move(second), "b.conf");
    CHECK(config.dispatcher.directories == std::vector<std::string>{"/srv/a", "/srv/b"});
    CHECK(config.dispatcher.timeout_sec == 3600);
    // An empty list: no scripts at all.
    auto none =
        std::get<ConfigFile>(parse_config_text("[dispatcher]\ndirectories = []\n", "c.conf"));
    merge_config(config, std::move(none), "c.conf");
    CHECK(config.dispatcher.directories.empty());
}

TEST_CASE("[doctor] memlock_launchers replaces the default list") {
    const auto file = parse_ok("[doctor]\nmemlock_launchers = [\"slurmd\", \"flux-broker\"]\n");
    REQUIRE(file.memlock_launchers);
    CHECK(*file.memlock_launchers == std::vector<std::string>{"slurmd", "flux-broker"});
    CHECK(DesiredConfig{}.memlock_launchers == std::vector<std::string>{"slurmd", "slurmstepd",
                                                                        "pbs_mom", "kubelet",
                                                                        "containerd", "dockerd"});
}
