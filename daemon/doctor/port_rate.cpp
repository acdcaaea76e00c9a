// SPDX-License-Identifier: MIT
#include "doctor/port_rate.hpp"

#include <charconv>
#include <fmt/format.h>

namespace rdmad::doctor {
namespace {

bool known_speed(std::string_view s) {
    for (std::string_view k : {"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR"})
        if (s == k)
            return true;
    return false;
}

} // namespace

std::optional<PortRate> parse_port_rate(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.remove_suffix(1);
    PortRate r;
    // "%d%s": the integer, then ".5" when applicable.
    const char* p = text.data();
    const char* end = text.data() + text.size();
    uint32_t whole = 0;
    auto [q, ec] = std::from_chars(p, end, whole);
    if (ec != std::errc())
        return std::nullopt;
    r.gbps = whole;
    std::string_view rest(q, end - q);
    if (rest.substr(0, 2) == ".5") {
        r.gbps += 0.5;
        rest.remove_prefix(2);
    }
    constexpr std::string_view kUnit = " Gb/sec (";
    if (rest.substr(0, kUnit.size()) != kUnit)
        return std::nullopt;
    rest.remove_prefix(kUnit.size());
    auto [w, ec2] = std::from_chars(rest.data(), rest.data() + rest.size(), r.width);
    if (ec2 != std::errc())
        return std::nullopt;
    if (r.width != 1 && r.width != 2 && r.width != 4 && r.width != 8 && r.width != 12)
        return std::nullopt;
    rest.remove_prefix(w - rest.data());
    if (rest.empty() || rest.front() != 'X' || rest.back() != ')')
        return std::nullopt;
    rest = rest.substr(1, rest.size() - 2);
    if (!rest.empty() && rest.front() == ' ')
        rest.remove_prefix(1);
    if (!rest.empty() && !known_speed(rest))
        return std::nullopt;
    r.speed = std::string(rest);
    return r;
}

std::vector<Problem> check_port_rate(const DeviceState& d, const PortState& port) {
    if (port.state != "ACTIVE" || parse_port_rate(port.rate))
        return {};
    Problem pr;
    pr.code = "port-rate-unknown";
    pr.severity = "info";
    pr.port = port.number;
    pr.text = fmt::format("port {}: rate unknown: `rate` is {}", port.number,
                          port.rate.empty() ? "absent or unreadable" : "not in the kernel's form");
    pr.evidence.push_back(evidence(port_path(d, port.number) + "/rate",
                                   port.rate.empty() ? "unreadable" : port.rate));
    return {pr};
}

} // namespace rdmad::doctor
