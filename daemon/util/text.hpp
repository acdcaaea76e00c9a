// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

/// `text` made safe for D-Bus strings and logs: invalid UTF-8 sequences, NUL, control
/// characters (C0 other than tab and newline, DEL, C1) and Unicode noncharacters each become
/// '?'. D-Bus rejects invalid UTF-8, and
/// sysfs text (node_desc, board_id) is whatever a driver or a user wrote.
std::string valid_utf8(std::string_view text);

/// `text` cut to at most `max_bytes` bytes plus "...", at a UTF-8 character boundary, when it
/// is longer; as it is otherwise. For quoting outside input in messages: a 45 KB token in a bad
/// line must not make a 45 KB problem.
std::string shorten(std::string_view text, size_t max_bytes);

/// The most bytes of one token of outside input (a key, a value, a field of a line) that a
/// message quotes; quote it as shorten(token, kMaxQuotedBytes). org.rdmad1(5) promises it.
inline constexpr size_t kMaxQuotedBytes = 64;

/// A token of outside input as a message quotes it: at most kMaxQuotedBytes of it (then
/// "..."), each ASCII control character (tab and newline included) and DEL shown as '?'.
std::string shown_token(std::string_view token);

/// Longest text of one problem, error reply or log message that rdmad sends: messages quote
/// outside input (shorten()) and file names (at most PATH_MAX, 4,096 bytes); this bounds the
/// sum.
inline constexpr size_t kMaxMessageBytes = 8192;

/// valid_utf8(text) on one line, read in order: tab, newline, the Unicode line and paragraph
/// separators and the bidirectional controls read '?' too. For names and attribute values that
/// leave rdmad (an RDMA device or netdev name, a sysfs attribute, a name a caller gave), which
/// such a character would make look like two values or like another name (org.rdmad1(5)).
std::string one_line_text(std::string_view text);

/// The rule for a message that leaves rdmad (a problem's text, an error reply, a log line):
/// valid_utf8(shorten(text, kMaxMessageBytes)).
std::string message_text(std::string_view text);

/// The words of `line`: the runs between blanks (space, tab, carriage return), as a shell's
/// `read` splits with the default IFS and as modprobe.d(5) and mstconfig's tables separate
/// their fields. Views into `line`.
std::vector<std::string_view> blank_separated(std::string_view line);

} // namespace rdmad
