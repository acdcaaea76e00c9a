// SPDX-License-Identifier: MIT
#include "util/text.hpp"

namespace rdmad {

std::string valid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            out += (c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n' ? static_cast<char>(c) : '?';
            ++i;
            continue;
        }
        // Length and minimum code point of the sequence (RFC 3629), rejecting overlongs,
        // surrogates and values above U+10FFFF.
        size_t len = 0;
        uint32_t cp = 0, min = 0;
        if ((c & 0xe0) == 0xc0) {
            len = 2, cp = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
            len = 3, cp = c & 0x0f, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
            len = 4, cp = c & 0x07, min = 0x10000;
        }
        bool ok = len > 0 && i + len <= s.size();
        for (size_t k = 1; ok && k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            ok = (cc & 0xc0) == 0x80;
            cp = (cp << 6) | (cc & 0x3f);
        }
        ok = ok && cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
        // Noncharacters (U+FDD0-U+FDEF and every U+xxFFFE/U+xxFFFF): sd-bus refuses strings
        // holding them (systemd src/basic/utf8.c unichar_is_valid), which would fail a whole
        // signal.
        const bool nonchar = (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe;
        if (ok && (cp <= 0x9f || nonchar)) {
            // C1 control characters (U+0080-U+009F, e.g. U+009B CSI) are controls too.
            out += '?';
            i += len;
        } else if (ok) {
            out.append(s.substr(i, len));
            i += len;
        } else {
            out += '?';
            ++i;
        }
    }
    return out;
}

std::string shorten(std::string_view text, size_t max_bytes) {
    if (text.size() <= max_bytes)
        return std::string(text);
    size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80)
        --cut; // text[cut] continues a character: cut before the character starts
    return std::string(text.substr(0, cut)) + "...";
}

std::string shown_token(std::string_view token) {
    std::string out = shorten(token, kMaxQuotedBytes);
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            c = '?';
    return out;
}

std::string one_line_text(std::string_view text) {
    const std::string valid = valid_utf8(text);
    std::string out;
    out.reserve(valid.size());
    size_t i = 0;
    while (i < valid.size()) {
        auto byte = [&](size_t k) { return static_cast<unsigned char>(valid[i + k]); };
        const size_t left = valid.size() - i;
        // Bytes of a character that breaks a line or reorders what follows it: tab, newline,
        // U+2028/U+2029 (line and paragraph separator), the bidirectional controls U+200E,
        // U+200F, U+202A-U+202E, U+2066-U+2069 and U+061C, and U+FEFF (Unicode 15, Cf/Zl/Zp).
        size_t shown_as_one = 0;
        if (valid[i] == '\t' || valid[i] == '\n')
            shown_as_one = 1;
        else if (left >= 3 && byte(0) == 0xe2 && byte(1) == 0x80 &&
                 ((byte(2) >= 0xa8 && byte(2) <= 0xae) || byte(2) == 0x8e || byte(2) == 0x8f))
            shown_as_one = 3;
        else if (left >= 3 && byte(0) == 0xe2 && byte(1) == 0x81 && byte(2) >= 0xa6 &&
                 byte(2) <= 0xa9)
            shown_as_one = 3;
        else if (left >= 3 && byte(0) == 0xef && byte(1) == 0xbb && byte(2) == 0xbf)
            shown_as_one = 3;
        else if (left >= 2 && byte(0) == 0xd8 && byte(1) == 0x9c)
            shown_as_one = 2;
        if (shown_as_one) {
            out += '?';
            i += shown_as_one;
        } else {
            out += valid[i++];
        }
    }
    return out;
}

std::string message_text(std::string_view text) {
    return valid_utf8(shorten(text, kMaxMessageBytes));
}

std::vector<std::string_view> blank_separated(std::string_view line) {
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && blank(line[i]))
            ++i;
        const size_t start = i;
        while (i < line.size() && !blank(line[i]))
            ++i;
        if (i > start)
            out.push_back(line.substr(start, i - start));
    }
    return out;
}

} // namespace rdmad
