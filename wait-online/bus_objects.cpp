// SPDX-License-Identifier: MIT
#include "bus_objects.hpp"

#include "rdmad_api.hpp"

#include <tuple>

namespace rdmad::wait_online {

namespace {

template <typename T> void take(const Properties& props, const char* name, T& into) {
    auto it = props.find(name);
    if (it != props.end() && it->second.containsValueOfType<T>())
        into = it->second.get<T>();
}

// ProblemDetails: a(sssassu) (code, severity, text, evidence, remedy, port).
using DetailsValue = std::vector<sdbus::Struct<std::string, std::string, std::string,
                                               std::vector<std::string>, std::string, uint32_t>>;
// RecommendedGID: (ussss) (index, GID, type, netdev, IP).
using GidValue = sdbus::Struct<uint32_t, std::string, std::string, std::string, std::string>;

void update(Device& d, const Properties& props) {
    take(props, "Name", d.name);
    auto it = props.find("ProblemDetails");
    if (it != props.end() && it->second.containsValueOfType<DetailsValue>()) {
        d.problems.clear();
        for (const auto& p : it->second.get<DetailsValue>())
            d.problems.push_back({std::get<0>(p), std::get<2>(p), std::get<5>(p)});
    }
}

void update(Port& p, const Properties& props) {
    take(props, "Number", p.number);
    take(props, "State", p.state);
    take(props, "PhysicalState", p.phys_state);
    take(props, "Transport", p.transport);
    take(props, "LID", p.lid);
    take(props, "SMLID", p.sm_lid);
    auto it = props.find("RecommendedGID");
    if (it != props.end() && it->second.containsValueOfType<GidValue>())
        p.recommended_gid = std::get<1>(it->second.get<GidValue>());
}

// A port's device is the path before "/port/<n>" (org.rdmad1(5), OBJECT PATHS).
std::string device_of(const std::string& port_path) {
    const std::string infix = std::string("/") + api::kPortElement + "/";
    const auto at = port_path.rfind(infix);
    return at == std::string::npos ? std::string() : port_path.substr(0, at);
}

} // namespace

void add_interfaces(Objects& objects, const std::string& path, const Interfaces& interfaces) {
    for (const auto& [iface, props] : interfaces) {
        if (iface == api::kDeviceInterface) {
            update(objects.devices[path], props);
        } else if (iface == api::kPortInterface) {
            Port& p = objects.ports[path];
            p.device_path = device_of(path);
            update(p, props);
        }
    }
}

void remove_interfaces(Objects& objects, const std::string& path,
                       const std::vector<std::string>& interfaces) {
    for (const auto& iface : interfaces) {
        if (iface == api::kDeviceInterface)
            objects.devices.erase(path);
        else if (iface == api::kPortInterface)
            objects.ports.erase(path);
    }
}

void change_properties(Objects& objects, const std::string& path, const std::string& interface,
                       const Properties& changed) {
    if (interface == api::kDeviceInterface) {
        if (auto it = objects.devices.find(path); it != objects.devices.end())
            update(it->second, changed);
    } else if (interface == api::kPortInterface) {
        if (auto it = objects.ports.find(path); it != objects.ports.end())
            update(it->second, changed);
    }
}

Objects objects_from(const ManagedObjects& managed) {
    Objects objects;
    for (const auto& [path, interfaces] : managed)
        add_interfaces(objects, path, interfaces);
    return objects;
}

} // namespace rdmad::wait_online
