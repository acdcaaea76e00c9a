// SPDX-License-Identifier: MIT
//
// mlx4 PFC as module options: rdmad's own file in /etc/modprobe.d (never the admin's
// mlx4.conf), `options mlx4_en pfctx=0x.. pfcrx=0x..` (DOMAIN.md §1, §7.3: per-priority
// bitmasks, module-wide, applied when mlx4_en loads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rdmad {

/// The file rdmad owns: "<dir>/rdmad-mlx4.conf".
std::string mlx4_modprobe_path(const std::string& modprobe_dir);

/// The file's content for `mask`, with a header saying who wrote it.
std::string mlx4_modprobe_text(uint8_t mask);

/// The pfctx mask in rdmad's file, nullopt when the file is absent or has none.
std::optional<uint8_t> read_mlx4_modprobe(const std::string& modprobe_dir);

/// The pfctx of the loaded mlx4_en (/sys/module/mlx4_en/parameters/pfctx), nullopt when the
/// module is not loaded.
std::optional<uint8_t> loaded_mlx4_pfctx();

/// Write the file atomically; throws std::system_error.
void write_mlx4_modprobe(const std::string& modprobe_dir, uint8_t mask);

/// Remove rdmad's file from `modprobe_dir` (nothing asks for mlx4 PFC any more), then fsync
/// the directory. A missing file is fine. Throws std::system_error otherwise.
void remove_mlx4_modprobe(const std::string& modprobe_dir);

} // namespace rdmad
