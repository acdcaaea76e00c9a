// SPDX-License-Identifier: MIT
#include "doctor/gid_choice.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <fmt/format.h>
#include <tuple>

namespace rdmad::doctor {
namespace {

// The kernel's GID types (drivers/infiniband/core/cache.c gid_type_str[]).
constexpr const char* kRoceV1 = "IB/RoCE v1";
constexpr const char* kRoceV2 = "RoCE v2";

/// How a GID entry's netdev stands to the port's netdev: 0 the port's own, 1 stacked on it
/// (VLAN, bond), nullopt anything else.
std::optional<int> netdev_rank(const PortState& port, const GidEntry& e, const LinkIndex* links) {
    if (e.netdev.empty() || port.netdev.empty())
        return std::nullopt;
    if (e.netdev == port.netdev)
        return 0;
    if (!links)
        return std::nullopt;
    const auto own = links->find(port.netdev);
    if (own != links->end() && own->second->master == e.netdev)
        return 1; // the bond the port's netdev is enslaved to
    const auto it = links->find(e.netdev);
    // DEVTYPE names: net/8021q/vlan_dev.c vlan_type "vlan", drivers/net/bonding/bond_main.c
    // bond_type "bond". A vxlan ("vxlan"), macvlan or tunnel carries the address elsewhere.
    if (it != links->end() && (it->second->kind == "vlan" || it->second->kind == "bond"))
        return 1;
    return std::nullopt;
}

/// 0 IPv4-mapped, 1 routable IPv6, 2 link-local.
int address_rank(const Gid& gid) {
    if (ipv4_mapped_gid(gid))
        return 0;
    return routable_gid(gid) ? 1 : 2;
}

} // namespace

bool routable_gid(const Gid& gid) {
    const auto& b = gid.bytes();
    if (gid.empty())
        return false;
    return !(b[0] == 0xfe && (b[1] & 0xc0) == 0x80); // fe80::/10
}

bool routable_gid(const std::string& gid) {
    const auto g = Gid::parse(gid);
    return g && routable_gid(*g);
}

bool ipv4_mapped_gid(const Gid& gid) {
    const auto& b = gid.bytes();
    for (size_t i = 0; i < 10; ++i)
        if (b[i] != 0)
            return false;
    return b[10] == 0xff && b[11] == 0xff && (b[12] || b[13] || b[14] || b[15]);
}

bool ipv4_mapped_gid(const std::string& gid) {
    const auto g = Gid::parse(gid);
    return g && ipv4_mapped_gid(*g);
}

std::string gid_ip(const Gid& gid) {
    char text[INET6_ADDRSTRLEN] = {};
    if (ipv4_mapped_gid(gid))
        return inet_ntop(AF_INET, gid.bytes().data() + 12, text, sizeof text) ? text : "";
    return inet_ntop(AF_INET6, gid.bytes().data(), text, sizeof text) ? text : "";
}

std::string gid_ip(const std::string& gid) {
    const auto g = Gid::parse(gid);
    return g ? gid_ip(*g) : std::string();
}

RecommendedGid recommend_gid(const PortState& port, const LinkIndex* links) {
    if (port.transport != "RoCE")
        return {};
    const bool has_v2 = std::any_of(port.gids.begin(), port.gids.end(),
                                    [](const GidEntry& e) { return e.type == kRoceV2; });
    // (type rank, address rank, netdev rank, index): smaller is better.
    std::optional<std::tuple<int, int, int, uint32_t>> best;
    const GidEntry* chosen = nullptr;
    for (const GidEntry& e : port.gids) {
        int type_rank = 0;
        if (e.type == kRoceV2) {
            if (!routable_gid(e.gid))
                continue;
        } else if (e.type == kRoceV1 && !has_v2) {
            type_rank = 1;
        } else {
            continue;
        }
        const auto nd = netdev_rank(port, e, links);
        if (!nd)
            continue;
        const auto key = std::make_tuple(type_rank, address_rank(e.gid), *nd, e.index);
        if (!best || key < *best) {
            best = key;
            chosen = &e;
        }
    }
    if (!chosen)
        return {};
    return {chosen->index, chosen->gid, chosen->type, chosen->netdev,
            ipv4_mapped_gid(chosen->gid) || routable_gid(chosen->gid) ? gid_ip(chosen->gid) : ""};
}

void derive_recommended_gids(DeviceState& d, const Facts& facts) {
    for (auto& port : d.ports)
        port.recommended_gid = recommend_gid(port, facts.links);
}

std::vector<Problem> check_gid(const DeviceState& d, const PortState& port) {
    if (port.transport != "RoCE" || port.recommended_gid.type == kRoceV2)
        return {};
    const bool has_v2 = std::any_of(port.gids.begin(), port.gids.end(),
                                    [](const GidEntry& e) { return e.type == kRoceV2; });
    if (!has_v2)
        return {};
    Problem pr;
    pr.code = "no-routable-gid";
    pr.severity = "warning";
    pr.port = port.number;
    const std::string netdev = port.netdev.empty() ? std::string("its netdev") : port.netdev;
    pr.text = fmt::format("port {}: no routable RoCE v2 GID: the RoCE v2 GIDs are link-local "
                          "(or on a netdev that is not the port's), so RoCE v2 traffic cannot "
                          "be routed and applications have no GID index to use",
                          port.number);
    const std::string dir = port_path(d, port.number);
    for (const GidEntry& e : port.gids) {
        if (e.type != kRoceV2)
            continue;
        pr.evidence.push_back(evidence(fmt::format("{}/gids/{}", dir, e.index), e.gid.text()));
        pr.evidence.push_back(evidence(fmt::format("{}/gid_attrs/ndevs/{}", dir, e.index),
                                       e.netdev.empty() ? std::string("none") : e.netdev.str()));
        if (pr.evidence.size() >= 16) // the whole table is in GIDs; a few entries tell it
            break;
    }
    pr.remedy = fmt::format("give {} an IPv4 or a global IPv6 address (ip address add "
                            "ADDRESS/PREFIX dev {}); the kernel adds its RoCE v2 GID",
                            netdev, netdev);
    return {pr};
}

} // namespace rdmad::doctor
