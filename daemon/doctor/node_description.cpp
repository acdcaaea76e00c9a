// SPDX-License-Identifier: MIT
#include "doctor/node_description.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace rdmad::doctor {

std::vector<Problem> check_node_description(const DeviceState& d, const HostFacts* host) {
    if (!host || std::none_of(d.ports.begin(), d.ports.end(),
                              [](const PortState& p) { return is_fabric_transport(p.transport); }))
        return {};
    Problem pr;
    const std::string file = device_path(d) + "/node_desc";
    // rdma-ndd writes "%h %d": the host name (gethostname) and the device name.
    const std::string name = host->hostname.substr(0, host->hostname.find('.'));
    if (name.empty()) {
        pr.code = "node-description-unknown";
        pr.severity = "info";
        pr.text = "whether the node description names this host is unknown: the host name is "
                  "unknown";
        pr.evidence.push_back(evidence(file, d.node_description));
        return {pr};
    }
    if (d.node_description.find(name) != std::string::npos)
        return {};
    pr.code = "node-description-no-hostname";
    pr.severity = "info";
    pr.text = fmt::format("node description \"{}\" does not name this host ({}): fabric tools "
                          "(ibnetdiscover, iblinkinfo, the SM's log) will not show it by name",
                          d.node_description, name);
    pr.evidence.push_back(evidence(file, d.node_description));
    pr.evidence.push_back(evidence("uname -n", host->hostname));
    pr.remedy = "systemctl enable --now rdma-ndd (rdma-core) keeps it as \"<host> <device>\"";
    return {pr};
}

} // namespace rdmad::doctor
