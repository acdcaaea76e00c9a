// SPDX-License-Identifier: MIT
#include "doctor/partition.hpp"

#include "inventory/attributes.hpp"

#include <fmt/format.h>

namespace rdmad::doctor {

std::optional<uint16_t> parse_pkey(std::string_view text) {
    // "0x%04x": the form of `lid`, 16 bits with the "0x" prefix.
    return parse_lid(text);
}

std::vector<Problem> check_partition(const DeviceState& d, const PortState& port) {
    if (port.transport != "InfiniBand")
        return {};
    Problem pr;
    pr.port = port.number;
    const std::string file = port_path(d, port.number) + "/pkeys/0";
    const auto pkey = parse_pkey(port.pkey0);
    if (!pkey) {
        pr.code = "pkey-unknown";
        pr.severity = "info";
        pr.text = fmt::format("port {}: partition membership unknown: P_Key entry 0 is {}",
                              port.number, port.pkey0.empty() ? "absent" : "malformed");
        pr.evidence.push_back(evidence(file, port.pkey0.empty() ? "absent" : port.pkey0));
        return {pr};
    }
    // Entry 0 holds the default partition (0x7fff with the membership bit 0x8000).
    if (*pkey != 0x7fff)
        return {};
    pr.code = "pkey-limited-member";
    pr.severity = "warning";
    pr.text = fmt::format("port {} is a limited member of the default partition (P_Key 0x7fff): "
                          "it cannot talk to other limited members, only to full members",
                          port.number);
    pr.evidence.push_back(evidence(file, port.pkey0));
    pr.remedy = "make this port a full member of the default partition in the subnet manager's "
                "partition configuration (opensm: partitions.conf, 'Default=0x7fff, ipoib : "
                "ALL=full;'), unless the fabric limits it on purpose";
    return {pr};
}

} // namespace rdmad::doctor
