// SPDX-License-Identifier: MIT
#include "sources/sriov_reader.hpp"

#include "util/sysfs.hpp"
#include "util/text.hpp"

#include <charconv>

namespace rdmad {

std::optional<uint32_t> parse_vf_count(std::string_view text) {
    if (!text.empty() && text.back() == '\n')
        text.remove_suffix(1);
    if (text.empty() || text.size() > 5 || (text.size() > 1 && text[0] == '0'))
        return std::nullopt;
    uint32_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n > 65535)
        return std::nullopt; // pci_sriov_get_totalvfs() is a u16
    return n;
}

SriovActual read_sriov(const std::string& pci_syspath) {
    SriovActual s;
    const auto total = sysfs::read_text(pci_syspath, "sriov_totalvfs");
    if (!total)
        return s; // no SR-IOV capability: not a PF
    const auto num = sysfs::read_text(pci_syspath, "sriov_numvfs");
    const auto t = parse_vf_count(*total);
    const auto n = num ? parse_vf_count(*num) : std::nullopt;
    if (t && n) {
        s.totalvfs = t;
        s.numvfs = n;
        return s;
    }
    // What the file holds, quoted and bounded, its newline aside: sysfs text a driver wrote.
    const auto shown = [](std::string_view v) {
        if (!v.empty() && v.back() == '\n')
            v.remove_suffix(1);
        return "\"" + shown_token(v) + "\"";
    };
    s.unreadable = !t    ? "sriov_totalvfs = " + shown(*total)
                   : num ? "sriov_numvfs = " + shown(*num)
                         : "sriov_numvfs = (absent)";
    return s;
}

} // namespace rdmad
