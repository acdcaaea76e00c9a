// SPDX-License-Identifier: MIT
//
// mlx4 PFC as module options: rdmad's own file in /etc/modprobe.d (never the admin's
// mlx4.conf), `options mlx4_en pfctx=0x.. pfcrx=0x..` (DOMAIN.md §1, §7.3: per-priority
// bitmasks, module-wide, applied when mlx4_en loads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rdmad {

/// The file rdmad owns: "<dir>/rdmad-mlx4.conf".
std::string mlx4_modprobe_path(const std::string& modprobe_dir);

/// The file's content for `mask`, with a header saying who wrote it.
std::string mlx4_modprobe_text(uint8_t mask);

/// A pfctx/pfcrx value as the kernel reads a `uint` module parameter (kernel/params.c
/// param_set_uint -> kstrtouint base 0: "0x" hex, a leading "0" octal, else decimal), outer
/// whitespace aside (sysfs adds a newline). nullopt when malformed or above 0xff (8 priorities).
std::optional<uint8_t> parse_pfc_mask(std::string_view value);

/// The mlx4_en pfctx mask a modprobe.d(5) text sets: `options mlx4_en ... pfctx=<mask> ...`
/// lines ('#' lines skipped, a '\' at the end of a line continues it), the last such option
/// winning as it does for modprobe. nullopt when no line sets it or its value is malformed.
std::optional<uint8_t> parse_mlx4_modprobe_text(std::string_view text);

// Reading the file and the loaded module's value: sources/mlx4_module_reader.hpp.

/// Write the file atomically; throws std::system_error.
void write_mlx4_modprobe(const std::string& modprobe_dir, uint8_t mask);

/// Remove rdmad's file from `modprobe_dir` (nothing asks for mlx4 PFC any more), then fsync
/// the directory. A missing file is fine. Throws std::system_error otherwise.
void remove_mlx4_modprobe(const std::string& modprobe_dir);

} // namespace rdmad
