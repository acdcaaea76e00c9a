// SPDX-License-Identifier: MIT
//
// libFuzzer target: the modprobe.d(5) text rdmad reads back from its own file in
// /etc/modprobe.d (daemon/actuators/modprobe.hpp parse_mlx4_modprobe_text) and the mlx4_en
// pfctx value read from sysfs (parse_pfc_mask, kernel/params.c param_set_uint rules).
// Invariants: no crash; a mask read from any text is the one rdmad's own file for that mask
// gives back; a value accepted by parse_pfc_mask is one the kernel prints the same way.
#include "actuators/modprobe.hpp"
#include "fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view in(reinterpret_cast<const char*>(data), size);

    if (const auto mask = rdmad::parse_mlx4_modprobe_text(in)) {
        check(rdmad::parse_mlx4_modprobe_text(rdmad::mlx4_modprobe_text(*mask)) == mask,
              "the file rdmad writes for a mask reads back as that mask");
        // rdmad's file appended after any text wins: modprobe takes the last option.
        const std::string later = std::string(in) + "\n" + rdmad::mlx4_modprobe_text(*mask ^ 1);
        check(rdmad::parse_mlx4_modprobe_text(later) == (*mask ^ 1), "the last pfctx wins");
    }

    if (const auto v = rdmad::parse_pfc_mask(in)) {
        // sysfs shows a uint parameter as "%u\n" (kernel/params.c param_get_uint).
        check(rdmad::parse_pfc_mask(std::to_string(*v) + "\n") == v, "decimal re-parses");
        char hex[8];
        std::snprintf(hex, sizeof hex, "%#04x", static_cast<unsigned>(*v));
        check(rdmad::parse_pfc_mask(hex) == v, "hex as rdmad writes it re-parses");
    }
    return 0;
}
