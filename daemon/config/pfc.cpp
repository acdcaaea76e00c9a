// SPDX-License-Identifier: MIT
#include "config/pfc.hpp"
#include "rdmad_api.hpp"

namespace rdmad {

std::optional<uint8_t> pfc_mask(const std::vector<uint8_t>& priorities) {
    unsigned mask = 0;
    for (uint8_t p : priorities) {
        if (p > api::kMaxPriority) // 802.1p has 3 bits of priority
            return std::nullopt;
        mask |= 1u << p;
    }
    return static_cast<uint8_t>(mask);
}

std::vector<uint8_t> pfc_priorities(uint8_t mask) {
    std::vector<uint8_t> out;
    for (uint8_t p = 0; p < 8; ++p)
        if (mask & (1u << p))
            out.push_back(p);
    return out;
}

} // namespace rdmad
