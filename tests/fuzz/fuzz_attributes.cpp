// SPDX-License-Identifier: MIT
//
// libFuzzer target: feeds one input to every parser of daemon/inventory/attributes.hpp and checks
// the invariants their contracts promise (formats: kernel drivers/infiniband/core/sysfs.c, see
// DOMAIN.md §3). Seed corpus: tests/fuzz/corpus/attributes/ (values from recorded captures).
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Idaemon \
//       tests/fuzz/fuzz_attributes.cpp daemon/inventory/attributes.cpp -o fuzz_attributes
//   ./fuzz_attributes -max_total_time=60 tests/fuzz/corpus/attributes
#include "fuzz_check.hpp"
#include "inventory/attributes.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace rdmad;

namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool is_trimmed(std::string_view s) {
    return s.empty() || (!is_space(s.front()) && !is_space(s.back()));
}

bool is_lower_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

void check_all(std::string_view in) {
    const std::string_view trimmed = trim_attribute(in);
    check(is_trimmed(trimmed), "trim_attribute leaves no outer whitespace");
    check(trimmed.empty() || (trimmed.data() >= in.data() &&
                              trimmed.data() + trimmed.size() <= in.data() + in.size()),
          "trim_attribute returns a view into its input");
    check(trim_attribute(trimmed) == trimmed, "trim_attribute is idempotent");

    const std::string state = parse_port_state(in);
    check(is_trimmed(state) && state.size() <= trimmed.size(), "port state is trimmed text");
    const std::string phys = parse_phys_state(in);
    check(is_trimmed(phys) && phys.size() <= trimmed.size(), "phys_state is trimmed text");
    check(state == phys, "state and phys_state share the numbered-name rule");
    check(in.empty() == false || state.empty(), "empty input gives an empty state");

    const std::string node = parse_node_type(in);
    check(is_trimmed(node), "node_type is trimmed");

    if (const auto rate = parse_rate_gbps(in)) {
        check(!std::isnan(*rate) && std::isfinite(*rate), "rate is finite");
        check(*rate >= 0 && !std::signbit(*rate), "rate is non-negative");
    }

    if (const auto lid = parse_lid(in)) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "0x%x\n", static_cast<unsigned>(*lid));
        check(parse_lid(buf) == lid, "lid printed as the kernel does re-parses to itself");
    }

    if (const auto guid = parse_guid(in)) {
        check(guid->size() == 19, "guid is 4 groups of 4 digits");
        for (size_t i = 0; i < guid->size(); ++i)
            check(i % 5 == 4 ? (*guid)[i] == ':' : is_lower_hex((*guid)[i]),
                  "guid is lower-case hex with colons");
        check(parse_guid(*guid) == guid, "guid re-parses to itself");
    }

    if (const auto gid = parse_gid(in)) {
        // A GID is kept as its 16 bytes; its text is the kernel's (8 groups of 4 lower-case
        // hex digits), "" for the all-zero GID.
        const std::string text = gid->text();
        check(gid->empty() == text.empty(), "only the all-zero gid has no text");
        check(text.empty() || text.size() == 39, "gid is empty or 8 groups of 4 digits");
        for (size_t i = 0; i < text.size(); ++i)
            check(i % 5 == 4 ? text[i] == ':' : is_lower_hex(text[i]),
                  "gid is lower-case hex with colons");
        if (!gid->empty())
            check(parse_gid(text) == gid, "gid re-parses to itself");
    }

    if (const auto type = parse_gid_type(in))
        check(*type == "IB/RoCE v1" || *type == "RoCE v2", "gid type is one of the two names");

    check(parse_link_layer(in) == trimmed, "link_layer is the trimmed text");

    if (const auto type = parse_mlx4_port_type(in))
        check(*type == "ib" || *type == "eth" || *type == "auto (ib)" || *type == "auto (eth)",
              "mlx4 port type is one of the four read-back strings");

    if (is_pci_address(in)) {
        check(in.size() >= 12 && in.size() <= 16, "pci address has the DDDD:BB:DD.F length");
        for (char c : in)
            check(is_lower_hex(c) || c == ':' || c == '.', "pci address is lower-case hex");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string in(reinterpret_cast<const char*>(data), size);
    check_all(in);

    // Every attribute parser must give the same answer with and without the kernel's newline
    // (recorded captures exist both ways) and with trailing spaces.
    for (const char* suffix : {"\n", " \n"}) {
        const std::string with = in + suffix;
        check(parse_port_state(with) == parse_port_state(in), "state ignores the newline");
        check(parse_phys_state(with) == parse_phys_state(in), "phys_state ignores the newline");
        check(parse_node_type(with) == parse_node_type(in), "node_type ignores the newline");
        const auto r1 = parse_rate_gbps(with);
        const auto r2 = parse_rate_gbps(in);
        check(r1.has_value() == r2.has_value() && (!r1 || *r1 == *r2), "rate ignores the newline");
        check(parse_lid(with) == parse_lid(in), "lid ignores the newline");
        check(parse_guid(with) == parse_guid(in), "guid ignores the newline");
        check(parse_gid(with) == parse_gid(in), "gid ignores the newline");
        check(parse_gid_type(with) == parse_gid_type(in), "gid type ignores the newline");
        check(parse_link_layer(with) == parse_link_layer(in), "link_layer ignores the newline");
        check(parse_mlx4_port_type(with) == parse_mlx4_port_type(in), "mlx4 ignores the newline");
    }
    return 0;
}
