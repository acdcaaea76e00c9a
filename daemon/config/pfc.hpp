// SPDX-License-Identifier: MIT
//
// PFC no-drop priorities <-> the 8-bit mask the kernel takes: bit n is 802.1p priority n, both
// in mlx4_en's pfctx/pfcrx module parameters (kernel drivers/net/ethernet/mellanox/mlx4/
// en_main.c) and in DCB netlink's struct ieee_pfc.pfc_en (include/uapi/linux/dcbnl.h).
// DOMAIN.md §2.1, §2.2 and §7.3: a mask of 3 means priorities 0 and 1, not "1 and 2" as
// rdma-core's providers/mlx4/mlx4.conf example claims.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace rdmad {

/// {3} -> 0x08, {4} -> 0x10, {3, 4} -> 0x18, {} -> 0; repeats are harmless.
/// nullopt when a priority is outside 0-7.
std::optional<uint8_t> pfc_mask(const std::vector<uint8_t>& priorities);

/// 0x18 -> {3, 4}: the set bits, ascending.
std::vector<uint8_t> pfc_priorities(uint8_t mask);

} // namespace rdmad
