// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rdmad {

/// `text` made safe for D-Bus strings and logs: invalid UTF-8 sequences, NUL, control
/// characters (C0 other than tab and newline, DEL, C1) and Unicode noncharacters each become
/// '?'. D-Bus rejects invalid UTF-8, and
/// sysfs text (node_desc, board_id) is whatever a driver or a user wrote.
std::string valid_utf8(std::string_view text);

} // namespace rdmad
