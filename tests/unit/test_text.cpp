// SPDX-License-Identifier: MIT
//
// Unit tests for UTF-8 sanitising (daemon/util/text.hpp). D-Bus rejects invalid UTF-8 in
// strings, and sysfs text (node_desc, board_id) is whatever a driver or user wrote. Validity
// per RFC 3629 (no overlongs, no surrogates, nothing above U+10FFFF); control characters are
// Unicode general category Cc (U+0000-U+001F, U+007F-U+009F).
#include "util/text.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace rdmad;

namespace {

bool all_ascii(const std::string& s) {
    for (char c : s)
        if (static_cast<unsigned char>(c) >= 0x80)
            return false;
    return true;
}

} // namespace

TEST_CASE("plain ASCII node descriptions pass unchanged") {
    CHECK(valid_utf8("host1 mlx5_0") == "host1 mlx5_0");
    CHECK(valid_utf8("") == "");
}

TEST_CASE("valid 2-, 3- and 4-byte UTF-8 text is kept unchanged") {
    CHECK(valid_utf8("h\xc3\xa9te") == "h\xc3\xa9te");                           // é
    CHECK(valid_utf8("\xe6\x97\xa5\xe6\x9c\xac") == "\xe6\x97\xa5\xe6\x9c\xac"); // 日本
    CHECK(valid_utf8("\xf0\x9f\x98\x80") == "\xf0\x9f\x98\x80");                 // U+1F600
    CHECK(valid_utf8("\xef\xbf\xbd") == "\xef\xbf\xbd");                         // U+FFFD
    CHECK(valid_utf8("\xf4\x8f\xbf\xbd") == "\xf4\x8f\xbf\xbd"); // U+10FFFD, the last character
    CHECK(valid_utf8("\xed\x9f\xbf") == "\xed\x9f\xbf");         // U+D7FF, before surrogates
}

TEST_CASE("newline and tab are kept") {
    CHECK(valid_utf8("a\tb\nc") == "a\tb\nc");
}

TEST_CASE("one_line_text() makes tab and newline '?' too, and is valid_utf8() otherwise") {
    // org.rdmad1(5): control characters in names and sysfs text read "?".
    CHECK(one_line_text("mlx4_0\n") == "mlx4_0?");
    CHECK(one_line_text("a\tb") == "a?b");
    CHECK(one_line_text("ens\x01" "f0") == "ens?f0");
    CHECK(one_line_text("r\xc3\xa9seau") == "r\xc3\xa9seau");
    CHECK(one_line_text("a\xe2\x80\xa8" "b") == "a?b");       // U+2028 line separator
    CHECK(one_line_text("a\xe2\x80\xa9" "b") == "a?b");       // U+2029 paragraph separator
    CHECK(one_line_text("\xe2\x80\xae" "0_5xlm") == "?0_5xlm"); // U+202E right-to-left override
    CHECK(one_line_text("a\xe2\x81\xa6" "b") == "a?b");       // U+2066 left-to-right isolate
    CHECK(one_line_text("\xef\xbb\xbf" "mlx5_0") == "?mlx5_0"); // U+FEFF
    CHECK(one_line_text("a\xd8\x9c" "b") == "a?b");            // U+061C Arabic letter mark
    CHECK(one_line_text("a\xe2\x80\x94" "b") == "a\xe2\x80\x94" "b"); // U+2014 em dash is kept
    CHECK(one_line_text("\xe2\x80") == "??"); // a cut sequence, as valid_utf8() shows it
}

TEST_CASE("ASCII control characters, DEL and an embedded NUL become '?'") {
    CHECK(valid_utf8(std::string("a\0b", 3)) == "a?b");
    CHECK(valid_utf8("\x1b[31mred") == "?[31mred");
    CHECK(valid_utf8("a\rb") == "a?b");
    CHECK(valid_utf8("\x01\x7f") == "??");
}

TEST_CASE("C1 control characters (U+0080-U+009F), e.g. the 8-bit CSI, become '?'") {
    // U+009B is CSI, a terminal escape introducer; U+0085 is NEL. Both are category Cc.
    CHECK(valid_utf8("a\xc2\x9b"
                     "31mb") == "a?31mb");
    CHECK(valid_utf8("\xc2\x85") == "?");
    CHECK(valid_utf8("\xc2\x80") == "?");
    CHECK(valid_utf8("\xc2\xa0") == "\xc2\xa0"); // U+00A0 NBSP is not a control character
}

TEST_CASE("overlong encodings become '?' instead of smuggling ASCII") {
    CHECK(valid_utf8("\xc0\xaf") == "??");           // overlong '/'
    CHECK(valid_utf8("\xc1\xbf") == "??");           // overlong DEL
    CHECK(valid_utf8("\xe0\x80\xaf") == "???");      // 3-byte overlong '/'
    CHECK(valid_utf8("\xf0\x80\x80\xaf") == "????"); // 4-byte overlong '/'
    CHECK(valid_utf8("\xc0\x80") == "??");           // modified-UTF-8 NUL
}

TEST_CASE("UTF-16 surrogates encoded in UTF-8 become '?'") {
    CHECK(valid_utf8("\xed\xa0\x80") == "???"); // U+D800
    CHECK(valid_utf8("\xed\xbf\xbf") == "???"); // U+DFFF
}

TEST_CASE("code points above U+10FFFF and bytes F5-FF become '?'") {
    CHECK(valid_utf8("\xf4\x90\x80\x80") == "????");
    CHECK(valid_utf8("\xff") == "?");
    CHECK(valid_utf8("\xfe\xfe") == "??");
    CHECK(all_ascii(valid_utf8("\xf8\x88\x80\x80\x80")));
}

TEST_CASE("a lone continuation byte becomes '?'") {
    CHECK(valid_utf8("a\x80z") == "a?z");
    CHECK(valid_utf8("\xbf") == "?");
}

TEST_CASE("a sequence truncated by the end of the text becomes '?' without reading past it") {
    // node_desc is cut at 64 bytes ("%.64s"), which can split a multi-byte character.
    std::string out = valid_utf8("ab\xe6\x97");
    CHECK(out.rfind("ab", 0) == 0);
    CHECK(out.size() > 2);
    CHECK(out.find_first_not_of('?', 2) == std::string::npos);
    CHECK(valid_utf8("\xf0\x9f\x98") != "\xf0\x9f\x98");
    CHECK(all_ascii(valid_utf8("\xf0\x9f\x98")));
}

TEST_CASE("a truncated sequence does not swallow the ASCII that follows it") {
    std::string out = valid_utf8("\xe6\x97x\xc3y");
    CHECK(all_ascii(out));
    CHECK(out.find('x') != std::string::npos);
    CHECK(out.back() == 'y');
    CHECK(out.find_first_not_of("?xy") == std::string::npos);
}

TEST_CASE("valid text around an invalid byte is kept intact") {
    CHECK(valid_utf8("\xc3\xa9\xff\xc3\xa9") == "\xc3\xa9?\xc3\xa9");
}

TEST_CASE("noncharacters, which sd-bus refuses in a string, become '?'") {
    // systemd src/basic/utf8.c unichar_is_valid(): U+FDD0-U+FDEF and U+xxFFFE/U+xxFFFF.
    CHECK(valid_utf8("a\xef\xbf\xbe" "b") == "a?b");       // U+FFFE
    CHECK(valid_utf8("a\xef\xbf\xbf" "b") == "a?b");       // U+FFFF
    CHECK(valid_utf8("a\xef\xb7\x90" "b") == "a?b");       // U+FDD0
    CHECK(valid_utf8("a\xf4\x8f\xbf\xbf" "b") == "a?b");   // U+10FFFF
    CHECK(valid_utf8("a\xef\xb7\xb0" "b") == "a\xef\xb7\xb0" "b"); // U+FDF0 is fine
}

TEST_CASE("shorten keeps short text and cuts long text at a character boundary") {
    CHECK(shorten("mlx5_0", 64) == "mlx5_0");
    CHECK(shorten(std::string(64, 'a'), 64) == std::string(64, 'a'));
    CHECK(shorten(std::string(65, 'a'), 64) == std::string(64, 'a') + "...");
    // "é" is 2 bytes (C3 A9): a cut after its first byte moves before it.
    CHECK(shorten("abc\xc3\xa9xyz", 4) == "abc...");
    CHECK(shorten("abc\xc3\xa9xyz", 5) == "abc\xc3\xa9...");
    // U+1F600 is 4 bytes: no cut inside it.
    CHECK(shorten("\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 6) == "\xf0\x9f\x98\x80...");
}

TEST_CASE("a message that leaves rdmad is valid UTF-8 and at most kMaxMessageBytes plus '...'") {
    const std::string name = "conf.d/\xff\xfe-bad.conf";
    CHECK(message_text(name + ": bad") == "conf.d/?"
                                          "?-bad.conf: bad"); // no trigraph
    const std::string huge(100000, 'x');
    CHECK(message_text(huge) == std::string(kMaxMessageBytes, 'x') + "...");
}
