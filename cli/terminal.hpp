// SPDX-License-Identifier: MIT
//
// What rdmactl does differently on a terminal, as systemctl does: colour (off with NO_COLOR,
// https://no-color.org, with --no-color, with TERM=dumb, and never when the stream is not a
// terminal) and a pager for long output ($RDMACTL_PAGER, else $PAGER, else less with
// LESS=FRSXMK when LESS is unset; off with --no-pager, an empty value or "cat").
#pragma once

#include <string>
#include <string_view>

namespace rdmactl {

/// SGR sequences (ECMA-48 "Select Graphic Rendition"): what a severity or a state is shown in.
namespace sgr {
inline constexpr const char* kRed = "\x1b[0;1;31m";
inline constexpr const char* kYellow = "\x1b[0;1;33m";
inline constexpr const char* kGreen = "\x1b[0;1;32m";
inline constexpr const char* kReset = "\x1b[0m";
} // namespace sgr

/// True when colour suits file descriptor `fd`: it is a terminal, TERM is not "dumb" and
/// NO_COLOR is unset or empty; `disabled` (--no-color) makes it false.
bool color_for(int fd, bool disabled);

/// `text` wrapped in `sgr` and a reset; `text` itself when `sgr` is null or empty.
std::string paint(const char* sgr, std::string_view text);

/// The colour of a problem severity ("error" red, "warning" yellow), else nullptr.
const char* severity_color(std::string_view severity);
/// The colour of a port State ("ACTIVE" green), else nullptr.
const char* state_color(std::string_view state);

/// Starts the pager when stdout is a terminal and a pager is wanted: stdout then goes into
/// the pager's standard input. Returns false (and leaves stdout alone) when it did not.
bool start_pager();
/// Flushes and closes stdout, then waits for the pager; a no-op when none was started.
void end_pager();

} // namespace rdmactl
