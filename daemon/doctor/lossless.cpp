// SPDX-License-Identifier: MIT
#include "doctor/lossless.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace rdmad::doctor {

namespace {

/// "3, 4" for a list of priorities.
std::string list(const std::vector<uint8_t>& priorities) {
    std::string out;
    for (auto p : priorities)
        out += (out.empty() ? "" : ", ") + std::to_string(p);
    return out;
}

std::string pfc_evidence(const std::string& netdev, const std::vector<uint8_t>& no_drop) {
    return evidence("dcb pfc show dev " + netdev + " prio-pfc", prio_pfc_text(no_drop));
}

std::string app_evidence(const std::string& netdev, const PfcActual& pfc) {
    return evidence("dcb -N app show dev " + netdev + " dscp-prio",
                    pfc.trust.empty() ? std::string("no APP table in the IEEE_GET reply")
                                      : dscp_prio_text(pfc.dscp_map));
}

/// The DSCP RoCE v2 traffic commonly carries: traffic class 106 = DSCP 26 << 2 | ECN 2, as
/// NVIDIA's lossless RoCE guides configure it; only an example in a remedy.
constexpr int kExampleDscp = 26;

} // namespace

std::string dscp_map_summary(const std::vector<std::pair<uint8_t, uint8_t>>& dscp_map) {
    std::string out;
    size_t i = 0;
    while (i < dscp_map.size()) {
        const auto [first, prio] = dscp_map[i];
        uint8_t last = first;
        size_t j = i + 1;
        // dscp_map is sorted by DSCP, then priority: a run is consecutive DSCPs, one priority.
        while (j < dscp_map.size() && dscp_map[j].first == last + 1 && dscp_map[j].second == prio)
            last = dscp_map[j++].first;
        out += out.empty() ? "" : ", ";
        out += first == last ? fmt::format("{} -> {}", first, prio)
                             : fmt::format("{}-{} -> {}", first, last, prio);
        i = j;
    }
    return out;
}

std::string prio_pfc_text(const std::vector<uint8_t>& no_drop) {
    std::string out = "prio-pfc";
    for (uint8_t p = 0; p < 8; ++p)
        out += fmt::format(" {}:{}", p,
                           std::find(no_drop.begin(), no_drop.end(), p) != no_drop.end() ? "on"
                                                                                         : "off");
    return out;
}

std::string dscp_prio_text(const std::vector<std::pair<uint8_t, uint8_t>>& dscp_map) {
    if (dscp_map.empty())
        return "none";
    std::string out = "dscp-prio";
    for (const auto& [dscp, prio] : dscp_map)
        out += fmt::format(" {}:{}", dscp, prio);
    return out;
}

std::vector<Problem> check_lossless(const DeviceState& /*d*/, const PortState& port) {
    if (port.transport != "RoCE")
        return {};
    const PfcActual& pfc = port.pfc;
    const std::string& netdev = port.netdev;
    if (pfc.status != PfcActual::Status::ok) {
        Problem pr;
        pr.code = "lossless-unknown";
        pr.severity = "info";
        pr.port = port.number;
        std::string why;
        std::string value;
        switch (pfc.status) {
        case PfcActual::Status::not_supported:
            why = fmt::format("netdev {} has no IEEE DCB PFC", netdev);
            value = "not supported";
            break;
        case PfcActual::Status::failed:
            why = fmt::format("the DCB of netdev {} could not be read", netdev);
            value = "unreadable";
            break;
        default:
            why = netdev.empty() ? std::string("no netdev known for the port")
                                 : fmt::format("the DCB of netdev {} was not read", netdev);
            value = "not read";
            break;
        }
        if (!pfc.message.empty())
            why += " (" + pfc.message.str() + ")";
        pr.text = fmt::format("port {}: whether RoCE is lossless is unknown: {}", port.number, why);
        if (!netdev.empty())
            pr.evidence.push_back(evidence("dcb pfc show dev " + netdev + " prio-pfc", value));
        return {pr};
    }

    std::vector<Problem> out;
    const auto& no_drop = pfc.priorities;
    const std::vector<std::string> ev = {pfc_evidence(netdev, no_drop), app_evidence(netdev, pfc)};

    if (no_drop.empty()) {
        Problem pr;
        pr.port = port.number;
        pr.evidence = {ev[0]};
        if (port.desired_pfc_no_drop.empty()) {
            pr.code = "pfc-off";
            pr.severity = "warning";
            pr.text = fmt::format("port {}: netdev {} has PFC off on every priority: RoCE "
                                  "traffic is lossy (a drop under congestion stalls it until "
                                  "the sender retransmits)",
                                  port.number, netdev);
            pr.remedy = fmt::format("enable PFC on the priority RoCE uses, here and on the "
                                    "switch: dcb pfc set dev {} prio-pfc 3:on, or pfc_no_drop = "
                                    "[3] in a [[rule]] of /etc/rdmad/rdmad.conf (profile = "
                                    "\"lossless-roce\" sets the whole chain: PFC, DSCP trust and "
                                    "map, RDMA-CM ToS)",
                                    netdev);
        } else {
            pr.code = "pfc-off-desired";
            pr.severity = "error";
            pr.text = fmt::format("port {}: netdev {} has PFC off on every priority, but the "
                                  "desired state asks no-drop priorities {}: RoCE traffic is "
                                  "lossy",
                                  port.number, netdev, list(port.desired_pfc_no_drop));
            pr.remedy = fmt::format("let rdmad apply it (apply = true in [daemon] of "
                                    "/etc/rdmad/rdmad.conf, then rdmactl reconcile), or dcb pfc "
                                    "set dev {} prio-pfc {}:on",
                                    netdev, port.desired_pfc_no_drop.front());
        }
        out.push_back(std::move(pr));
    } else if (pfc.trust == "dscp") {
        const bool mapped = std::any_of(pfc.dscp_map.begin(), pfc.dscp_map.end(), [&](auto& e) {
            return std::find(no_drop.begin(), no_drop.end(), e.second) != no_drop.end();
        });
        // One DSCP listed with two priorities (dcb app add does not replace): which one the
        // NIC uses is the driver's choice, so lossless traffic may land on a lossy priority.
        for (size_t i = 1; i < pfc.dscp_map.size(); ++i) {
            const auto& a = pfc.dscp_map[i - 1];
            const auto& b = pfc.dscp_map[i];
            if (a.first != b.first || a.second == b.second)
                continue;
            Problem pr;
            pr.code = "pfc-dscp-ambiguous";
            pr.severity = "warning";
            pr.port = port.number;
            pr.text = fmt::format("port {}: netdev {} maps DSCP {} to priorities {} and {}: which "
                                  "one the NIC uses is up to its driver",
                                  port.number, netdev, a.first, a.second, b.second);
            pr.evidence.assign(ev.begin(), ev.end());
            pr.remedy = fmt::format(
                "keep one entry: dcb app del dev {} dscp-prio {}:{}", netdev, a.first,
                std::find(no_drop.begin(), no_drop.end(), a.second) == no_drop.end() ? a.second
                                                                                     : b.second);
            out.push_back(std::move(pr));
            break; // one finding per port is enough to act on
        }
        if (!mapped) {
            Problem pr;
            pr.code = "pfc-dscp-unmapped";
            pr.severity = "warning";
            pr.port = port.number;
            pr.text = fmt::format("port {}: netdev {} has PFC on priorities {} and trusts DSCP, "
                                  "but no DSCP maps to a no-drop priority: RoCE traffic is lossy",
                                  port.number, netdev, list(no_drop));
            pr.evidence.assign(ev.begin(), ev.end());
            pr.remedy = fmt::format("map the DSCP your RoCE traffic carries to a no-drop "
                                    "priority, e.g. dcb app add dev {} dscp-prio {}:{}, or "
                                    "dscp_priority = {{ {} = {} }} in a [[rule]] of "
                                    "/etc/rdmad/rdmad.conf",
                                    netdev, kExampleDscp, no_drop.front(), kExampleDscp,
                                    no_drop.front());
            out.push_back(std::move(pr));
        }
    }

    Problem info;
    info.code = "lossless-config";
    info.severity = "info";
    info.port = port.number;
    info.evidence.assign(ev.begin(), ev.end());
    const std::string pfc_text = no_drop.empty()
                                     ? std::string("PFC off")
                                     : fmt::format("PFC on priorities {}", list(no_drop));
    if (pfc.trust == "dscp") {
        const std::string map = dscp_map_summary(pfc.dscp_map);
        info.text = fmt::format("port {}: netdev {}: {}, DSCP trust: DSCP {}", port.number, netdev,
                                pfc_text, map);
    } else if (pfc.trust == "pcp") {
        info.text = fmt::format("port {}: netdev {}: {}, PCP trust (no DSCP entry in the APP "
                                "table): RoCE traffic gets the priority of its VLAN tag's PCP, "
                                "untagged traffic priority 0",
                                port.number, netdev, pfc_text);
    } else {
        info.text = fmt::format("port {}: netdev {}: {}, trust mode unknown (no APP table read)",
                                port.number, netdev, pfc_text);
    }
    out.push_back(std::move(info));
    return out;
}

bool is_lossless_code(const std::string& code) {
    return code == "pfc-off" || code == "pfc-off-desired" || code == "pfc-dscp-unmapped" ||
           code == "pfc-dscp-ambiguous" || code == "lossless-config" || code == "lossless-unknown";
}

void refresh_lossless(DeviceState& d) {
    for (const auto& port : d.ports) {
        auto mine = [&](const Problem& p) {
            return p.port == port.number && is_lossless_code(p.code);
        };
        auto at = std::find_if(d.problems.begin(), d.problems.end(), mine);
        const auto index = static_cast<size_t>(at - d.problems.begin());
        std::erase_if(d.problems, mine);
        auto found = check_lossless(d, port);
        for (auto& p : found)
            p.details_only = p.severity == "info";
        d.problems.insert(d.problems.begin() +
                              static_cast<std::ptrdiff_t>(std::min(index, d.problems.size())),
                          found.begin(), found.end());
    }
}

} // namespace rdmad::doctor
