// SPDX-License-Identifier: MIT
//
// libFuzzer target: the RDMA-CM configfs files rdmad reads, ports/<n>/default_roce_mode and
// default_roce_tos (daemon/sources/rdma_cm_reader.hpp). Invariants: no crash; a mode parsed is
// one of the kernel's two strings and the input is exactly it, with or without the one newline
// the kernel prints; a ToS parsed is what the input says, printed back as the kernel prints it
// ("%u\n", kernel drivers/infiniband/core/cma_configfs.c default_roce_tos_show()).
#include "sources/rdma_cm_reader.hpp"

#include "fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto mode = rdmad::parse_roce_mode(text)) {
        check(*mode == rdmad::kRoceModeV1 || *mode == rdmad::kRoceModeV2,
              "a parsed mode is one of the two");
        check(text == *mode || text == *mode + "\n", "a parsed mode is the whole input");
    }
    if (auto tos = rdmad::parse_roce_tos(text)) {
        const std::string printed = std::to_string(*tos);
        check(text == printed || text == printed + "\n", "a parsed ToS prints back as its input");
    }
    return 0;
}
