// SPDX-License-Identifier: MIT
//
// Unit tests for PFC priority masks (daemon/config/pfc.hpp). Facts: DOMAIN.md §2.1-2.2 (bit n is
// priority n in mlx4_en pfctx/pfcrx and in struct ieee_pfc.pfc_en) and §7.3.
#include "config/pfc.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;

TEST_CASE("priority 3 is bit 3 (0x08), not the value 3") {
    CHECK(pfc_mask({3}) == 0x08);
    CHECK(pfc_mask({4}) == 0x10);
    CHECK(pfc_mask({3, 4}) == 0x18);
    CHECK(pfc_mask({4, 3, 3}) == 0x18);
    CHECK(pfc_mask({}) == 0x00);
    CHECK(pfc_mask({0, 1, 2, 3, 4, 5, 6, 7}) == 0xff);
}

TEST_CASE("mask 3 means priorities 0 and 1, as rdma-core's mlx4.conf example gets wrong") {
    CHECK(pfc_priorities(3) == std::vector<uint8_t>{0, 1});
    CHECK(pfc_priorities(0x18) == std::vector<uint8_t>{3, 4});
    CHECK(pfc_priorities(0).empty());
    CHECK(pfc_priorities(0x80) == std::vector<uint8_t>{7});
}

TEST_CASE("a priority above 7 gives no mask rather than a wrapped bit") {
    CHECK_FALSE(pfc_mask({8}));
    CHECK_FALSE(pfc_mask({3, 255}));
}

TEST_CASE("every mask survives the round trip through priorities") {
    for (unsigned m = 0; m < 256; ++m)
        CHECK(pfc_mask(pfc_priorities(static_cast<uint8_t>(m))) == m);
}
