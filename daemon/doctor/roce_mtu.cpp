// SPDX-License-Identifier: MIT
#include "doctor/roce_mtu.hpp"

#include <fmt/format.h>

namespace rdmad::doctor {

uint32_t roce_active_mtu(uint32_t netdev_mtu) {
    // include/rdma/ib_pack.h: IB_GRH_BYTES 40, IB_UDP_BYTES 8, IB_BTH_BYTES 12,
    // IB_EXT_XRC_BYTES 4, IB_EXT_ATOMICETH_BYTES 28, IB_ICRC_BYTES 4.
    constexpr uint32_t kHeaders = 40 + 8 + 12 + 4 + 28 + 4;
    if (netdev_mtu < kHeaders)
        return 0;
    const uint32_t payload = netdev_mtu - kHeaders;
    for (uint32_t mtu : {4096u, 2048u, 1024u, 512u, 256u})
        if (payload >= mtu)
            return mtu;
    return 0;
}

void derive_mtus(DeviceState& d, const Facts& facts) {
    for (auto& port : d.ports) {
        port.netdev_mtu = 0;
        if (facts.links && !port.netdev.empty())
            if (auto it = facts.links->find(port.netdev); it != facts.links->end())
                port.netdev_mtu = it->second->mtu;
        port.active_mtu = port.transport == "RoCE" ? roce_active_mtu(port.netdev_mtu) : 0;
    }
}

std::vector<Problem> check_roce_mtu(const DeviceState& d, const PortState& port,
                                    const LinkState* netdev) {
    if (port.transport != "RoCE")
        return {};
    Problem pr;
    pr.port = port.number;
    if (port.netdev.empty() || !netdev || netdev->mtu == 0) {
        pr.code = "roce-mtu-unknown";
        pr.severity = "info";
        pr.text = port.netdev.empty()
                      ? fmt::format("port {}: RoCE MTU unknown: no netdev known for the port",
                                    port.number)
                      : fmt::format("port {}: RoCE MTU unknown: the MTU of netdev {} is unreadable",
                                    port.number, port.netdev);
        if (!port.netdev.empty())
            pr.evidence.push_back(evidence(netdev_path(port.netdev) + "/mtu", "unreadable"));
        return {pr};
    }
    const uint32_t active = roce_active_mtu(netdev->mtu);
    if (netdev->mtu < 4096 || netdev->mtu >= kMtuFor4096)
        return {};
    pr.code = "roce-mtu-2048";
    pr.severity = "warning";
    pr.text = fmt::format("port {}: netdev {} has MTU {}, which gives a RoCE MTU of {}, not 4096 "
                          "(RoCE needs 96 bytes of headers)",
                          port.number, netdev->name, netdev->mtu, active);
    pr.evidence.push_back(
        evidence(netdev_path(netdev->name) + "/mtu", std::to_string(netdev->mtu)));
    pr.evidence.push_back(evidence(port_path(d, port.number) + "/link_layer", port.link_layer));
    pr.remedy = fmt::format("set the MTU of {} (and of the switch ports) to {} or more, e.g. "
                            "ip link set dev {} mtu 9000",
                            netdev->name, kMtuFor4096, netdev->name);
    return {pr};
}

} // namespace rdmad::doctor
