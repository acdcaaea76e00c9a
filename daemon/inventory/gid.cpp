// SPDX-License-Identifier: MIT
#include "inventory/gid.hpp"

#include <algorithm>

namespace rdmad {
namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

} // namespace

std::optional<Gid> Gid::parse(std::string_view text) {
    // 8 groups of 4 digits and 7 colons: "%pI6" (lib/vsprintf.c ip6_string(): every group
    // with its leading zeros, never compressed).
    constexpr size_t kLength = 8 * 4 + 7;
    if (text.size() != kLength)
        return std::nullopt;
    Bytes bytes{};
    for (size_t group = 0; group < 8; ++group) {
        const size_t at = group * 5;
        if (group > 0 && text[at - 1] != ':')
            return std::nullopt;
        unsigned value = 0;
        for (size_t i = 0; i < 4; ++i) {
            const int digit = hex_value(text[at + i]);
            if (digit < 0)
                return std::nullopt;
            value = value * 16 + static_cast<unsigned>(digit);
        }
        bytes[group * 2] = static_cast<uint8_t>(value >> 8);
        bytes[group * 2 + 1] = static_cast<uint8_t>(value & 0xff);
    }
    return Gid(bytes);
}

std::string Gid::text() const {
    if (empty())
        return {};
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(8 * 4 + 7);
    for (size_t i = 0; i < bytes_.size(); ++i) {
        if (i > 0 && i % 2 == 0)
            out.push_back(':');
        out.push_back(kDigits[bytes_[i] >> 4]);
        out.push_back(kDigits[bytes_[i] & 0x0f]);
    }
    return out;
}

bool Gid::empty() const {
    return std::all_of(bytes_.begin(), bytes_.end(), [](uint8_t b) { return b == 0; });
}

} // namespace rdmad
