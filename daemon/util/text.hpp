// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rdmad {

/// `text` made safe for D-Bus strings and logs: invalid UTF-8 sequences, NUL and control
/// characters other than tab and newline each become '?'. D-Bus rejects invalid UTF-8, and
/// sysfs text (node_desc, board_id) is whatever a driver or a user wrote.
std::string valid_utf8(std::string_view text);

} // namespace rdmad
