// SPDX-License-Identifier: MIT
//
// Unit tests for reading back rdmad's modprobe.d file (daemon/actuators/modprobe.hpp). Formats:
// modprobe.d(5) and the kernel's uint module parameters (kernel/params.c param_set_uint).
#include "actuators/modprobe.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;

TEST_CASE("the file rdmad writes reads back as the mask it was written for") {
    for (unsigned m = 0; m <= 0xff; ++m)
        CHECK(parse_mlx4_modprobe_text(mlx4_modprobe_text(static_cast<uint8_t>(m))) == m);
}

TEST_CASE("a pfctx in a comment or another module's options line is not mlx4_en's") {
    CHECK_FALSE(parse_mlx4_modprobe_text("# options mlx4_en pfctx=0x08\n"));
    CHECK_FALSE(parse_mlx4_modprobe_text("options mlx4_core pfctx=0x08\n"));
    CHECK_FALSE(parse_mlx4_modprobe_text("options mlx4_en xpfctx=0x08\n"));
    CHECK(parse_mlx4_modprobe_text("# pfctx=0x01\noptions mlx4_en pfctx=0x08\n") == 0x08);
}

TEST_CASE("options separated by tabs, continued lines and mlx4-en are read as modprobe reads "
          "them") {
    CHECK(parse_mlx4_modprobe_text("options mlx4_en pfctx=0x08\tpfcrx=0x08") == 0x08);
    CHECK(parse_mlx4_modprobe_text("options mlx4_en \\\npfctx=0x10\n") == 0x10);
    CHECK(parse_mlx4_modprobe_text("options mlx4-en pfctx=3\n") == 3);
    CHECK(parse_mlx4_modprobe_text("options mlx4_en pfctx=1\noptions mlx4_en pfctx=2\n") == 2);
}

TEST_CASE("a pfc mask is read with the kernel's base-0 rule and refused above 8 bits") {
    CHECK(parse_pfc_mask("8\n") == 8);
    CHECK(parse_pfc_mask("0x1f") == 0x1f);
    CHECK(parse_pfc_mask("010") == 8); // octal, as kstrtouint reads it
    CHECK(parse_pfc_mask("0") == 0);
    CHECK_FALSE(parse_pfc_mask("0x"));
    CHECK_FALSE(parse_pfc_mask("256"));
    CHECK_FALSE(parse_pfc_mask("-1"));
    CHECK_FALSE(parse_pfc_mask("0x-1"));
    CHECK_FALSE(parse_pfc_mask("08"));
    CHECK_FALSE(parse_pfc_mask(""));
}
