// SPDX-License-Identifier: MIT
//
// mlx4_en's PFC module options as a source (DOMAIN.md §1, §7.3: pfctx/pfcrx are per-priority
// bitmasks, module-wide, taken when mlx4_en loads): what the loaded module runs with, and what
// rdmad's own modprobe.d file asks for the next load. The reconciler plans the file from them;
// the Daemon puts what is read into the Inventory (HostState::mlx4_module).
//
//   /sys/module/mlx4_en/parameters/pfctx   the loaded module's value, "%u\n" (kernel/params.c
//                                          param_get_uint); absent while mlx4_en is not loaded
//   <modprobe_dir>/rdmad-mlx4.conf         `options mlx4_en pfctx=0x.. pfcrx=0x..`, written by
//                                          actuators/modprobe.hpp, parsed as modprobe.d(5) reads
#pragma once

#include "inventory/model.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace rdmad {

/// The pfctx mask in rdmad's file, nullopt when the file is absent, unreadable (read like an
/// admin's file: no FIFO, at most 4 KiB) or sets none (actuators/modprobe.hpp
/// parse_mlx4_modprobe_text()).
std::optional<uint8_t> read_mlx4_modprobe(const std::string& modprobe_dir);

/// The pfctx of the loaded mlx4_en, nullopt when the module is not loaded or the value does not
/// parse (parse_pfc_mask()).
std::optional<uint8_t> loaded_mlx4_pfctx();

/// What of the two to read: a plan that cannot use a value does not read it.
struct Mlx4ModuleReads {
    bool file = false;   ///< rdmad's modprobe.d file
    bool loaded = false; ///< the loaded module's parameter
};

/// The values `reads` asks for (the others nullopt).
Mlx4ModuleActual read_mlx4_module(const std::string& modprobe_dir, Mlx4ModuleReads reads);

} // namespace rdmad
