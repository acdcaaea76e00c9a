// SPDX-License-Identifier: MIT
#include "export/facts.hpp"

#include "doctor/gid_choice.hpp"

#include <algorithm>

namespace rdmad::exports {
bool has_routable_roce_v2_gid(const PortState& port) {
    return std::any_of(port.gids.begin(), port.gids.end(), [](const GidEntry& e) {
        return e.type == "RoCE v2" && doctor::routable_gid(e.gid);
    });
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
