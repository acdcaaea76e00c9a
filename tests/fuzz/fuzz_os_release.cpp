// SPDX-License-Identifier: MIT
//
// libFuzzer target: os-release(5) text (daemon/inventory/provider.hpp parse_os_release) and the
// package choice made from it. Invariants: no crash, and a known provider always gets a package.
#include "inventory/provider.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    rdmad::OsRelease os = rdmad::parse_os_release(text);
    rdmad::DistroFamily family = rdmad::distro_family(os);
    if (rdmad::provider_package("mlx5", family).empty())
        std::abort();
    for (const auto& like : os.id_like)
        if (like.empty() || like.find(' ') != std::string::npos)
            std::abort();
    return 0;
}
