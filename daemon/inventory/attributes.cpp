// SPDX-License-Identifier: MIT
//
// Pure parsers for sysfs attribute text. Every format below is the one the kernel prints in
// drivers/infiniband/core/sysfs.c (commit e04360a2, summarised in DOMAIN.md §3); other sources
// are named where they apply. No exceptions, no locale (std::from_chars only), and no allocation
// except the strings returned.
#include "inventory/attributes.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <system_error>

namespace rdmad {

namespace {

constexpr bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

constexpr bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

constexpr bool is_lower_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f');
}

constexpr bool is_hex(char c) {
    return is_lower_hex(c) || (c >= 'A' && c <= 'F');
}

constexpr char to_lower_hex(char c) {
    return (c >= 'A' && c <= 'F') ? static_cast<char>(c - 'A' + 'a') : c;
}

/// A whole string of decimal digits as uint32_t; nullopt for empty text, signs, or overflow.
std::optional<uint32_t> parse_decimal_u32(std::string_view text) {
    if (text.empty() || !is_digit(text.front()))
        return std::nullopt;
    uint32_t value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value, 10);
    if (ec != std::errc{} || ptr != end)
        return std::nullopt;
    return value;
}

/// Splits "<number>: <name>" once the text is trimmed. Returns the name as a view into `text`.
struct NumberedView {
    uint32_t number;
    std::string_view name;
};
std::optional<NumberedView> split_numbered(std::string_view text) {
    text = trim_attribute(text);
    const auto colon = text.find(": ");
    if (colon == std::string_view::npos)
        return std::nullopt;
    const auto number = parse_decimal_u32(text.substr(0, colon));
    if (!number)
        return std::nullopt;
    const std::string_view name = trim_attribute(text.substr(colon + 2));
    if (name.empty())
        return std::nullopt;
    return NumberedView{*number, name};
}

/// The name part of a numbered attribute, or the trimmed text when it is not numbered.
std::string numbered_name_or_text(std::string_view text) {
    if (const auto parsed = split_numbered(text))
        return std::string(parsed->name);
    return std::string(trim_attribute(text));
}

} // namespace

std::string_view trim_attribute(std::string_view text) {
    // sysfs show() functions end with "\n", but captures (and hand-written fixtures) may not,
    // and some carry trailing spaces; leading whitespace is never meaningful either.
    while (!text.empty() && is_space(text.back()))
        text.remove_suffix(1);
    while (!text.empty() && is_space(text.front()))
        text.remove_prefix(1);
    return text;
}

std::string parse_port_state(std::string_view text) {
    // kernel sysfs.c state_show(): "%d: %s\n", names NOP DOWN INIT ARMED ACTIVE ACTIVE_DEFER,
    // "UNKNOWN" otherwise. The kernel's own text is kept: it already is the name.
    return numbered_name_or_text(text);
}

std::string parse_phys_state(std::string_view text) {
    // kernel sysfs.c phys_state_show(): "%u: %s\n" (1 Sleep .. 5 LinkUp .. 7 Phy Test, else
    // "<unknown>"). The name is kept as printed, even when it does not belong to the number:
    // a procfs-derived capture holds "4: ACTIVE" here and we report what the file said.
    return numbered_name_or_text(text);
}

std::string parse_node_type(std::string_view text) {
    // kernel sysfs.c node_type_show(): "%u: %s\n" with RDMA_NODE_IB_CA = 1 "CA",
    // IB_SWITCH 2 "switch", IB_ROUTER 3 "router", RNIC 4 "RNIC", USNIC 5 "usNIC",
    // USNIC_UDP 6 "usNIC UDP", UNSPECIFIED 7 "unspecified", anything else "<unknown>".
    // The number is what the kernel and libibverbs act on, so it decides.
    static constexpr std::array<std::string_view, 8> names = {
        "", "CA", "switch", "router", "RNIC", "usNIC", "usNIC UDP", "unspecified"};
    if (const auto parsed = split_numbered(text)) {
        if (parsed->number >= 1 && parsed->number < names.size())
            return std::string(names[parsed->number]);
        return std::string(parsed->name);
    }
    return std::string(trim_attribute(text));
}

std::optional<double> parse_rate_gbps(std::string_view text) {
    // kernel sysfs.c rate_show(): "%d%s Gb/sec (%dX%s)\n", the %s after the number being ".5"
    // or "". So the value is a plain decimal, digits first: no sign, no exponent, never
    // nan/inf. chars_format::fixed refuses exponents; the first-char check refuses signs,
    // "nan", "inf" and a bare ".5". The number must end the text or be followed by whitespace
    // (the kernel always prints " Gb/sec"), so "1e999 Gb/sec" and "10x" are refused too.
    // Old kernels printed "0 GB/sec" for an unset rate: the unit text is not checked.
    text = trim_attribute(text);
    if (text.empty() || !is_digit(text.front()))
        return std::nullopt;
    double value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::fixed);
    if (ec != std::errc{})
        return std::nullopt; // includes result_out_of_range for absurdly long digit runs
    if (ptr != end && !is_space(*ptr))
        return std::nullopt;
    if (!std::isfinite(value) || value < 0)
        return std::nullopt;
    // The fastest rate the kernel can print is XDR 12X, 2400 Gb/s (ib_verbs.h ib_rate); a
    // value far beyond it is garbage, not a rate.
    if (value > 100000.0)
        return std::nullopt;
    return value;
}

std::optional<uint16_t> parse_lid(std::string_view text) {
    // kernel sysfs.c lid_show() / sm_lid_show(): "0x%x\n". The kernel always prints the "0x"
    // prefix, so we accept only 0x-prefixed hex: a bare "12" is ambiguous (decimal or hex?) and
    // is refused rather than guessed. LIDs are 16 bits (IBA 4.1.3); larger values are refused.
    text = trim_attribute(text);
    if (text.size() < 3 || text[0] != '0' || text[1] != 'x')
        return std::nullopt;
    const std::string_view digits = text.substr(2);
    if (!is_hex(digits.front()))
        return std::nullopt; // from_chars would not take a sign here anyway; keep it explicit
    uint32_t value = 0;
    const char* end = digits.data() + digits.size();
    auto [ptr, ec] = std::from_chars(digits.data(), end, value, 16);
    if (ec != std::errc{} || ptr != end || value > 0xffff)
        return std::nullopt;
    return static_cast<uint16_t>(value);
}

std::optional<std::string> parse_guid(std::string_view text) {
    // kernel sysfs.c node_guid_show() / sys_image_guid_show(): "%04x:%04x:%04x:%04x\n".
    // We accept 1-4 hex digits per group in either case and normalise to the kernel's own form
    // (zero-padded to 4, lower case), so the result always re-parses to itself.
    text = trim_attribute(text);
    size_t group = 0;
    size_t pos = 0;
    std::array<std::string_view, 4> groups{};
    while (true) {
        const auto colon = text.find(':', pos);
        const auto piece = text.substr(pos, colon == std::string_view::npos ? colon : colon - pos);
        if (group >= groups.size() || piece.empty() || piece.size() > 4)
            return std::nullopt;
        for (char c : piece)
            if (!is_hex(c))
                return std::nullopt;
        groups[group++] = piece;
        if (colon == std::string_view::npos)
            break;
        pos = colon + 1;
    }
    if (group != groups.size())
        return std::nullopt;
    std::string out;
    out.reserve(19);
    for (size_t i = 0; i < groups.size(); ++i) {
        if (i != 0)
            out.push_back(':');
        out.append(4 - groups[i].size(), '0');
        for (char c : groups[i])
            out.push_back(to_lower_hex(c));
    }
    return out;
}

std::optional<Gid> parse_gid(std::string_view text) {
    // kernel sysfs.c show_port_gid(): "%pI6\n", which always prints the full uncompressed form,
    // 8 groups of exactly 4 lower-case hex digits ("fe80:0000:...:0001"). A compressed "fe80::1"
    // never comes from the kernel and is refused. Empty or invalid table entries read as all
    // zeros; callers skip those (Gid::empty()). Upper case is tolerated.
    return Gid::parse(trim_attribute(text));
}

std::optional<std::string> parse_gid_type(std::string_view text) {
    // kernel ib_cache_gid_type_str() prints these two names; libibverbs cmd_device.c
    // query_sysfs_gid_type() compares against exactly V1_TYPE "IB/RoCE v1" and V2_TYPE
    // "RoCE v2", so any other spelling ("roce v2") is not a GID type libibverbs would accept.
    text = trim_attribute(text);
    if (text == "IB/RoCE v1" || text == "RoCE v2")
        return std::string(text);
    return std::nullopt;
}

std::string parse_link_layer(std::string_view text) {
    // kernel sysfs.c link_layer_show(): "InfiniBand", "Ethernet" or "Unknown" (EFA's
    // IB_LINK_LAYER_UNSPECIFIED shows as "Unknown"). Anything else passes through trimmed.
    return std::string(trim_attribute(text));
}

std::optional<std::string> parse_mlx4_port_type(std::string_view text) {
    // kernel drivers/net/ethernet/mellanox/mlx4/main.c show_port_type(): "ib\n", "eth\n", or,
    // when possible_type is MLX4_PORT_TYPE_AUTO, "auto (ib)\n" / "auto (eth)\n" (DOMAIN.md §1.3).
    text = trim_attribute(text);
    if (text == "ib" || text == "eth" || text == "auto (ib)" || text == "auto (eth)")
        return std::string(text);
    return std::nullopt;
}

bool is_pci_address(std::string_view text) {
    // The kernel names PCI functions with pci_name(): "%04x:%02x:%02x.%d" (drivers/pci/probe.c
    // pci_setup_device: domain, bus, PCI_SLOT(devfn), PCI_FUNC(devfn)); lower-case hex, slot
    // 0-0x1f (5 bits), function 0-7 (3 bits). The domain is an int printed with "%04x": usually
    // 4 digits, but Intel VMD assigns domains from 0x10000 up (drivers/pci/controller/vmd.c
    // vmd_find_free_domain), so 5-8 digits without a leading zero are accepted as well.
    // No trimming: this checks a name (a sysfs directory entry, an mlx4.conf field), not
    // attribute text.
    const auto colon = text.find(':');
    if (colon == std::string_view::npos || colon < 4 || colon > 8)
        return false;
    if (colon > 4 && text[0] == '0')
        return false;
    for (size_t i = 0; i < colon; ++i)
        if (!is_lower_hex(text[i]))
            return false;
    const std::string_view rest = text.substr(colon); // ":BB:DD.F"
    if (rest.size() != 8 || rest[0] != ':' || rest[3] != ':' || rest[6] != '.')
        return false;
    if (!is_lower_hex(rest[1]) || !is_lower_hex(rest[2]) || !is_lower_hex(rest[4]) ||
        !is_lower_hex(rest[5]))
        return false;
    if (rest[4] > '1') // slot is 5 bits: first digit 0 or 1
        return false;
    return rest[7] >= '0' && rest[7] <= '7';
}

bool is_port_number(std::string_view node_type, uint32_t number) {
    return node_type == "switch" ? number == 0 : number >= 1;
}

} // namespace rdmad
