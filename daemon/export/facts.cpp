// SPDX-License-Identifier: MIT
#include "export/facts.hpp"

#include <algorithm>
#include <array>

namespace rdmad::exports {
namespace {

/// The 16-bit groups of an uncompressed GID, nullopt for anything else.
std::optional<std::array<uint16_t, 8>> groups(const std::string& gid) {
    if (gid.size() != 39)
        return std::nullopt;
    std::array<uint16_t, 8> out{};
    for (size_t g = 0; g < 8; ++g) {
        if (g && gid[g * 5 - 1] != ':')
            return std::nullopt;
        uint16_t v = 0;
        for (size_t i = 0; i < 4; ++i) {
            const char c = gid[g * 5 + i];
            int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (d < 0)
                return std::nullopt;
            v = static_cast<uint16_t>(v * 16 + d);
        }
        out[g] = v;
    }
    return out;
}

} // namespace

bool routable_gid(const std::string& gid) {
    const auto g = groups(gid);
    if (!g)
        return false;
    if (std::all_of(g->begin(), g->end(), [](uint16_t v) { return v == 0; }))
        return false;
    return ((*g)[0] & 0xffc0) != 0xfe80; // RFC 4291 §2.5.6: link-local is fe80::/10
}

bool ipv4_mapped_gid(const std::string& gid) {
    const auto g = groups(gid);
    // RFC 4291 §2.5.5.2: ::ffff:a.b.c.d; the kernel's RoCE GID for an IPv4 address.
    return g && std::all_of(g->begin(), g->begin() + 5, [](uint16_t v) { return v == 0; }) &&
           (*g)[5] == 0xffff && ((*g)[6] || (*g)[7]);
}

bool has_routable_roce_v2_gid(const PortState& port) {
    return std::any_of(port.gids.begin(), port.gids.end(), [](const GidEntry& e) {
        return e.type == "RoCE v2" && routable_gid(e.gid);
    });
}

std::optional<uint32_t> recommended_roce_gid_index(const PortState& port) {
    std::optional<uint32_t> ipv4, routable;
    for (const GidEntry& e : port.gids) {
        if (e.type != "RoCE v2" || !routable_gid(e.gid))
            continue;
        if (ipv4_mapped_gid(e.gid) && (!ipv4 || e.index < *ipv4))
            ipv4 = e.index;
        if (!routable || e.index < *routable)
            routable = e.index;
    }
    return ipv4 ? ipv4 : routable;
}

std::string usable_transport(const DeviceState& device, const PortState& port) {
    if (port.state != "ACTIVE" || !device.provider_installed || device.verbs_device.empty())
        return {};
    if (port.transport == "InfiniBand")
        return "infiniband";
    if (port.transport == "iWARP")
        return "iwarp";
    if (port.transport == "RoCE" && std::find(port.roce_versions.begin(), port.roce_versions.end(),
                                              "v2") != port.roce_versions.end())
        return "roce-v2";
    return {};
}

} // namespace rdmad::exports
