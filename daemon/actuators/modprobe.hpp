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

/// The value of the last `<option>=` on an `options <module> ...` line of a modprobe.d(5)
/// text (comments skipped, '\' continuations joined, '-' and '_' alike in the module name, as
/// modprobe reads it); nullopt when no line sets it.
std::optional<std::string> modprobe_option(std::string_view text, std::string_view module,
                                           std::string_view option);

/// A `bool` module parameter as the kernel reads it (kstrtobool: "Y", "y", "1", "on" true;
/// "N", "n", "0", "off" false) and prints it ("Y\n", "N\n"); nullopt otherwise.
std::optional<bool> parse_module_bool(std::string_view value);

/// The RDMA network namespace mode as a module option (kernel drivers/infiniband/core/
/// device.c: `module_param_named(netns_mode, ib_devices_shared_netns, bool, 0444)`, "Share
/// device among net namespaces; default=1 (shared)"): rdmad's own file
/// "<dir>/rdmad-ib_core.conf" with `options ib_core netns_mode=1` (shared) or `=0`
/// (exclusive), taken when ib_core loads.
std::string ib_core_modprobe_path(const std::string& modprobe_dir);
std::string ib_core_modprobe_text(bool shared);
/// Write it atomically; throws std::system_error.
void write_ib_core_modprobe(const std::string& modprobe_dir, bool shared);
/// Remove it (`[daemon] rdma_netns_mode` is no longer set) and fsync the directory; a missing
/// file is fine. Throws std::system_error otherwise.
void remove_ib_core_modprobe(const std::string& modprobe_dir);

/// Whether a modprobe.d text is one rdmad wrote: it begins with the header of
/// ib_core_modprobe_text() and mlx4_modprobe_text() ("# Written by rdmad"). A file of that
/// name without it is an admin's, which rdmad never removes.
bool written_by_rdmad(std::string_view text);

// Reading the files and the loaded modules' values: sources/mlx4_module_reader.hpp,
// sources/rdma_netns_reader.hpp.

/// Write the file atomically; throws std::system_error.
void write_mlx4_modprobe(const std::string& modprobe_dir, uint8_t mask);

/// Remove rdmad's file from `modprobe_dir` (nothing asks for mlx4 PFC any more), then fsync
/// the directory. A missing file is fine. Throws std::system_error otherwise.
void remove_mlx4_modprobe(const std::string& modprobe_dir);

} // namespace rdmad
