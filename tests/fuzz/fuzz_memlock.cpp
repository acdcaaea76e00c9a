// SPDX-License-Identifier: MIT
//
// libFuzzer target: /proc/<pid>/limits and systemd's system.conf as rdmad reads them for the
// locked-memory check (daemon/sources/memlock_reader.hpp). Invariants: no crash; a limit
// parsed from text names only digits or "unlimited"; DefaultLimitMEMLOCK= is kept short.
#include "sources/memlock_reader.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto limit = rdmad::parse_memlock_limit(text)) {
        // The line is in the text: a value the kernel could print.
        if (text.find("Max locked memory") == std::string_view::npos)
            std::abort();
    }
    if (auto value = rdmad::parse_default_limit_memlock(text)) {
        if (value->size() > 64 || value->find('\n') != std::string::npos)
            std::abort();
        (void)rdmad::parse_systemd_memlock(*value);
    }
    if (auto bytes = rdmad::parse_systemd_memlock(text)) {
        // Only "infinity" is unlimited; a number with a suffix never wraps to it silently.
        if (*bytes == rdmad::MemlockLimit::kUnlimited &&
            text.find("infinity") == std::string_view::npos)
            std::abort();
    }
    return 0;
}
