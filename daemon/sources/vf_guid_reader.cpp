// SPDX-License-Identifier: MIT
#include "sources/vf_guid_reader.hpp"

#include "util/sysfs.hpp"

#include <charconv>
#include <fmt/format.h>

namespace rdmad {
namespace {

/// `n` groups of exactly `digits` hex digits separated by ':', as one 64-bit value.
std::optional<uint64_t> groups_of(std::string_view text, size_t n, size_t digits) {
    if (text.size() != n * digits + (n - 1))
        return std::nullopt;
    uint64_t value = 0;
    for (size_t g = 0; g < n; ++g) {
        const size_t at = g * (digits + 1);
        if (g + 1 < n && text[at + digits] != ':')
            return std::nullopt;
        for (size_t i = at; i < at + digits; ++i) {
            const char c = text[i];
            unsigned v = 0;
            if (c >= '0' && c <= '9')
                v = static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f')
                v = static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v = static_cast<unsigned>(c - 'A' + 10);
            else
                return std::nullopt;
            value = value << 4 | v;
        }
    }
    return value;
}

} // namespace

std::optional<uint64_t> parse_guid_text(std::string_view text) {
    if (auto v = groups_of(text, 8, 2))
        return v; // iproute2 get_guid(): "%02x:...", 23 characters
    return groups_of(text, 4, 4); // node_guid_show(): "%04x:%04x:%04x:%04x"
}

std::string guid_text(uint64_t guid) {
    return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", guid >> 48, (guid >> 32) & 0xffff,
                       (guid >> 16) & 0xffff, guid & 0xffff);
}

std::unordered_map<std::string, int32_t> read_vf_indexes(const std::string& pci_syspath) {
    std::unordered_map<std::string, int32_t> out;
    const std::string pf = pci_syspath + "/physfn";
    for (const auto& name : sysfs::list_dir(pci_syspath, "physfn")) {
        if (name.rfind("virtfn", 0) != 0)
            continue;
        uint32_t n = 0;
        const char* first = name.data() + 6;
        const char* last = name.data() + name.size();
        const auto [end, ec] = std::from_chars(first, last, n);
        if (ec != std::errc() || end != last || first == last || n > 65534)
            continue;
        if (std::string address = sysfs::link_basename(pf, name); !address.empty())
            out.emplace(std::move(address), static_cast<int32_t>(n));
    }
    return out;
}

std::optional<uint64_t> port_guid_of(const PortState& port) {
    for (const auto& g : port.gids) {
        if (g.index != 0)
            continue;
        uint64_t v = 0;
        for (size_t i = 8; i < 16; ++i)
            v = v << 8 | g.gid.bytes()[i];
        return v;
    }
    return std::nullopt;
}

} // namespace rdmad
