// SPDX-License-Identifier: MIT
//
// libFuzzer target: the rules for text that leaves rdmad (daemon/util/text.hpp).
// Invariants, for any bytes:
// - valid_utf8(): valid UTF-8 (checked by sd-bus's own validator rules re-implemented
//   strictly here) without control characters other than tab and newline; a fixed point.
// - one_line_text(): the same, without tab or newline, nor U+2028/U+2029, the bidirectional
//   controls or U+FEFF; a fixed point; as long as valid_utf8() or shorter.
// - shown_token(): at most kMaxQuotedBytes bytes plus "...", no ASCII control character, and
//   the input itself when it was short and had none.
#include "util/text.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

void require(bool ok) {
    if (!ok)
        std::abort();
}

bool has_ascii_control(std::string_view s, bool allow_tab_newline) {
    for (unsigned char c : s)
        if ((c < 0x20 && !(allow_tab_newline && (c == '\t' || c == '\n'))) || c == 0x7f)
            return true;
    return false;
}

/// U+2028/U+2029, U+200E/U+200F, U+202A-U+202E, U+2066-U+2069, U+FEFF, U+061C in UTF-8.
bool has_line_breaking_or_bidi(std::string_view s) {
    for (size_t i = 0; i + 1 < s.size(); ++i) {
        const auto b0 = static_cast<unsigned char>(s[i]);
        const auto b1 = static_cast<unsigned char>(s[i + 1]);
        if (b0 == 0xd8 && b1 == 0x9c)
            return true;
        if (i + 2 >= s.size())
            continue;
        const auto b2 = static_cast<unsigned char>(s[i + 2]);
        if (b0 == 0xe2 && b1 == 0x80 && ((b2 >= 0xa8 && b2 <= 0xae) || b2 == 0x8e || b2 == 0x8f))
            return true;
        if (b0 == 0xe2 && b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9)
            return true;
        if (b0 == 0xef && b1 == 0xbb && b2 == 0xbf)
            return true;
    }
    return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);

    const std::string once = rdmad::valid_utf8(in);
    require(rdmad::valid_utf8(once) == once);
    require(!has_ascii_control(once, true));

    const std::string line = rdmad::one_line_text(in);
    require(rdmad::valid_utf8(line) == line);
    require(rdmad::one_line_text(line) == line);
    require(!has_ascii_control(line, false));
    require(!has_line_breaking_or_bidi(line));
    require(line.size() <= once.size());

    const std::string token = rdmad::shown_token(in);
    require(token.size() <= rdmad::kMaxQuotedBytes + 3);
    require(!has_ascii_control(token, false));
    if (in.size() <= rdmad::kMaxQuotedBytes && !has_ascii_control(in, false))
        require(token == in);
    return 0;
}
