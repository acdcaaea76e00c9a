// SPDX-License-Identifier: MIT
#include "doctor/facts.hpp"

namespace rdmad::doctor {

LinkIndex index_links(const std::map<int32_t, LinkState>& links) {
    LinkIndex index;
    for (const auto& [_, l] : links)
        index.emplace(l.name, &l);
    return index;
}

std::string evidence(const std::string& path, const std::string& value) {
    return path + " = " + value;
}

std::string device_path(const DeviceState& d) {
    return "/sys/class/infiniband/" + d.name;
}

std::string port_path(const DeviceState& d, uint32_t port) {
    return device_path(d) + "/ports/" + std::to_string(port);
}

std::string netdev_path(const std::string& netdev) {
    return "/sys/class/net/" + netdev;
}

std::string pci_path(const std::string& address) {
    return "/sys/bus/pci/devices/" + address;
}

bool is_fabric_transport(const std::string& transport) {
    return transport == "InfiniBand" || transport == "OPA";
}

} // namespace rdmad::doctor
