// SPDX-License-Identifier: MIT
//
// libFuzzer target: the output of mstflint's `mstconfig -e -d <pci> query LINK_TYPE_P<n>`
// (daemon/sources/mstconfig.hpp), which rdmad reads from an outside program. Invariants: no
// crash; every row has a name and no more rows than the input has lines; a reading is ok only
// with a current and a next-boot type rdmad knows ("ib", "eth", "auto"), else it says why.
#include "sources/mstconfig.hpp"

#include "fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto rows = rdmad::parse_mstconfig_query(text)) {
        const size_t lines = size_t(std::count(text.begin(), text.end(), '\n')) + 1;
        check(rows->size() <= lines, "at most one row per line");
        for (const auto& row : *rows)
            check(!row.name.empty(), "every row has a name");
    }
    for (uint32_t port : {1u, 2u}) {
        const rdmad::FirmwarePortType fw = rdmad::firmware_port_type_from(text, port);
        const auto known = [](const std::string& t) {
            return t == "ib" || t == "eth" || t == "auto";
        };
        if (fw.status == rdmad::FirmwarePortType::Status::ok)
            check(known(fw.current) && known(fw.next_boot), "an ok reading has known types");
        else
            check(!fw.message.empty(), "a reading that is not ok says why");
        check(fw.card_port == port, "the card port asked");
    }
    return 0;
}
