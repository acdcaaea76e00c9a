// SPDX-License-Identifier: MIT
#include "inventory/transport.hpp"

#include <algorithm>

namespace rdmad {

std::string classify_transport(const std::string& node_type, const std::string& link_layer,
                               const std::string& kernel_driver) {
    if (node_type == "RNIC")
        return "iWARP";
    if (kernel_driver == "hfi1")
        return "OPA";
    if (node_type == "usNIC" || node_type == "usNIC UDP")
        return "usNIC";
    if (node_type == "unspecified")
        return "unspecified";
    if (node_type == "CA" || node_type == "switch" || node_type == "router") {
        if (link_layer == "InfiniBand")
            return "InfiniBand";
        if (link_layer == "Ethernet")
            return "RoCE";
    }
    return "unknown";
}

std::vector<std::string> roce_versions(const std::string& transport,
                                       const std::vector<GidEntry>& gids, bool has_gid_attrs) {
    std::vector<std::string> versions;
    if (transport != "RoCE")
        return versions;
    if (!has_gid_attrs)
        return {"v1"};
    bool v1 = false, v2 = false;
    for (const auto& g : gids) {
        v1 = v1 || g.type == "IB/RoCE v1";
        v2 = v2 || g.type == "RoCE v2";
    }
    if (v1)
        versions.emplace_back("v1");
    if (v2)
        versions.emplace_back("v2");
    return versions;
}

} // namespace rdmad
