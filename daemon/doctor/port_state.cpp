// SPDX-License-Identifier: MIT
#include "doctor/port_state.hpp"

#include <fmt/format.h>

namespace rdmad::doctor {
namespace {

// uapi linux/if.h: IFF_UP is bit 0 of the netdev flags (`flags` prints them "0x%x").
constexpr int64_t kIffUp = 0x1;

std::string hex(uint16_t v) {
    return fmt::format("0x{:x}", v);
}

std::string or_unreadable(const std::string& s) {
    return s.empty() ? "unreadable" : s;
}

Problem base(const DeviceState& d, const PortState& p) {
    Problem pr;
    pr.code = "port-not-active";
    pr.severity = "warning";
    pr.port = p.number;
    const std::string dir = port_path(d, p.number);
    pr.evidence.push_back(evidence(dir + "/state", or_unreadable(p.state)));
    pr.evidence.push_back(evidence(dir + "/phys_state", or_unreadable(p.phys_state)));
    pr.evidence.push_back(evidence(dir + "/link_layer", or_unreadable(p.link_layer)));
    return pr;
}

std::string state_words(const PortState& p) {
    return fmt::format("port {} is {}{}", p.number,
                       p.state.empty() ? "in an unreadable state" : p.state,
                       p.phys_state.empty() ? "" : fmt::format(" ({})", p.phys_state));
}

void fabric_reason(const DeviceState& d, const PortState& p, Problem& pr) {
    const std::string dir = port_path(d, p.number);
    const bool vf = !d.physical_function.empty();
    auto lids = [&] {
        pr.evidence.push_back(evidence(dir + "/lid", hex(p.lid)));
        pr.evidence.push_back(evidence(dir + "/sm_lid", hex(p.sm_lid)));
    };
    if (p.state == "DOWN" && p.phys_state == "Polling") {
        pr.text = state_words(p) + ": no link partner (the port sees no signal)";
        pr.remedy = "check the cable, the transceiver and that the switch port is up";
    } else if (p.state == "DOWN" && p.phys_state == "Disabled") {
        if (!d.pci_address.empty())
            pr.evidence.push_back(
                evidence(pci_path(d.pci_address) + "/physfn", vf ? d.physical_function : "absent"));
        if (vf) {
            pr.text = state_words(p) + ": this VF's port is not enabled by the subnet manager";
            pr.remedy = fmt::format(
                "enable SR-IOV virtualization in the subnet manager (opensm: virt_enabled 2) and "
                "set the VF's node and port GUIDs through the PF {} (ip link set <pf netdev> vf "
                "<n> node_guid <guid> port_guid <guid> state enable)",
                d.physical_function);
        } else {
            pr.text = state_words(p) + ": the port is disabled (locally or by the switch)";
            pr.remedy = "enable it again (ibportstate <lid> <port> enable on the switch port, or "
                        "check the adapter's firmware configuration)";
        }
    } else if (p.state == "INIT" && p.phys_state == "LinkUp" && p.sm_lid == 0) {
        lids();
        pr.text = state_words(p) + ": no subnet manager is reachable (SM LID 0)";
        pr.remedy = "start a subnet manager on the fabric (systemctl enable --now opensm on one "
                    "node, or the switch's SM) and check that it sees this port";
    } else if (p.state == "INIT" && p.sm_lid != 0 && (p.lid == 0 || p.lid == 0xffff)) {
        lids();
        pr.text = fmt::format("{}: the subnet manager (LID {}) knows the port but has not "
                              "configured it (LID {})",
                              state_words(p), hex(p.sm_lid), hex(p.lid));
        pr.remedy = "look for errors about this port's GUID in the subnet manager's log "
                    "(/var/log/opensm.log) and wait for or force a sweep";
    } else if (p.state == "ARMED") {
        lids();
        pr.text = state_words(p) + ": waiting for the subnet manager to activate it";
        pr.remedy = "check the subnet manager: it moves ARMED ports to ACTIVE at the end of a "
                    "sweep; a port that stays ARMED means the sweep does not finish";
    } else {
        lids();
        pr.code = "port-not-active";
        pr.text = state_words(p) + ": reason unknown";
        pr.remedy = "check the cable and the subnet manager; dmesg may name the cause";
    }
}

void ethernet_reason(const PortState& p, const LinkState* netdev, Problem& pr) {
    if (p.netdev.empty() || !netdev) {
        pr.text = state_words(p) + ": reason unknown (no netdev known for the port)";
        pr.remedy = "dmesg may name the cause";
        return;
    }
    const std::string dir = netdev_path(netdev->name);
    pr.evidence.push_back(evidence(dir + "/operstate", or_unreadable(netdev->operstate)));
    pr.evidence.push_back(evidence(
        dir + "/flags", netdev->flags < 0 ? "unreadable" : fmt::format("0x{:x}", netdev->flags)));
    pr.evidence.push_back(evidence(dir + "/carrier", or_unreadable(netdev->carrier)));
    if (netdev->flags >= 0 && !(netdev->flags & kIffUp)) {
        pr.text =
            fmt::format("{}: its netdev {} is administratively down", state_words(p), netdev->name);
        pr.remedy = fmt::format("ip link set dev {} up (and make it persistent in the network "
                                "configuration)",
                                netdev->name);
    } else if (netdev->carrier == "0") {
        pr.text = fmt::format("{}: its netdev {} has no carrier (operstate {})", state_words(p),
                              netdev->name, or_unreadable(netdev->operstate));
        pr.remedy = "check the cable, the transceiver and that the switch port is up";
    } else if (netdev->carrier == "1") {
        pr.text = fmt::format("{}: its netdev {} has carrier; reason unknown", state_words(p),
                              netdev->name);
        pr.remedy = "dmesg may name the cause (the RDMA function of the adapter may be "
                    "disabled in its firmware or by devlink)";
    } else {
        pr.text = fmt::format("{}: reason unknown (netdev {}'s carrier and flags are unreadable)",
                              state_words(p), netdev->name);
        pr.remedy = fmt::format("ip link show dev {}", netdev->name);
    }
}

} // namespace

std::vector<Problem> check_port_state(const DeviceState& d, const PortState& port,
                                      const LinkState* netdev) {
    if (port.state == "ACTIVE" || port.state == "ACTIVE_DEFER")
        return {};
    Problem pr = base(d, port);
    if (port.state.empty()) {
        pr.text = fmt::format("port {}'s state is unreadable: reason unknown", port.number);
        pr.remedy = "dmesg may name the cause";
    } else if (is_fabric_transport(port.transport)) {
        fabric_reason(d, port, pr);
    } else if (port.transport == "RoCE" || port.transport == "iWARP") {
        ethernet_reason(port, netdev, pr);
    } else {
        pr.text = state_words(port) + ": reason unknown";
        pr.remedy = "dmesg may name the cause";
    }
    return {pr};
}

} // namespace rdmad::doctor
