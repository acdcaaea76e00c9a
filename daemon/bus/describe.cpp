// SPDX-License-Identifier: MIT
#include "bus/describe.hpp"

#include "inventory/problems.hpp"

#include <nlohmann/json.hpp>

namespace rdmad {

using json = nlohmann::ordered_json;

namespace {

json port_json(const PortView& v) {
    const PortState& p = v.state;
    json gids = json::array();
    for (const auto& g : p.gids)
        gids.push_back({{"Index", g.index}, {"GID", g.gid}, {"Type", g.type}, {"Netdev", g.netdev}});
    return {{"Path", v.path},
            {"Number", p.number},
            {"State", p.state},
            {"PhysicalState", p.phys_state},
            {"LinkLayer", p.link_layer},
            {"Transport", p.transport},
            {"RoCEVersions", p.roce_versions},
            {"RateGbps", p.rate_gbps},
            {"Rate", p.rate},
            {"LID", p.lid},
            {"SMLID", p.sm_lid},
            {"GIDs", gids},
            {"Link", v.link_path},
            {"PortType", p.port_type},
            {"DesiredPortType", p.desired_port_type},
            {"PFCNoDrop", p.pfc_no_drop},
            {"DesiredPFCNoDrop", p.desired_pfc_no_drop},
            {"InSync", p.in_sync},
            {"NetdevMTU", p.netdev_mtu},
            {"ActiveMTU", p.active_mtu}};
}

json device_json(const DeviceView& v) {
    const DeviceState& d = v.state;
    json ports = json::array();
    for (const auto& p : v.ports)
        ports.push_back(port_json(p));
    json problems = json::array();
    json details = json::array();
    for (const auto& p : d.problems) {
        if (is_serious(p))
            problems.push_back({{"Code", p.code}, {"Severity", p.severity}, {"Text", p.text}});
        details.push_back({{"Code", p.code},
                           {"Severity", p.severity},
                           {"Text", p.text},
                           {"Evidence", p.evidence},
                           {"Remedy", p.remedy},
                           {"Port", p.port}});
    }
    return {{"Path", v.path},
            {"Name", d.name},
            {"NodeType", d.node_type},
            {"NodeGUID", d.node_guid},
            {"SysImageGUID", d.sys_image_guid},
            {"FirmwareVersion", d.firmware_version},
            {"HCAType", d.hca_type},
            {"BoardID", d.board_id},
            {"NodeDescription", d.node_description},
            {"PCIAddress", d.pci_address},
            {"KernelDriver", d.kernel_driver},
            {"Provider", d.provider},
            {"ProviderInstalled", d.provider_installed},
            {"ProviderPackage", d.provider_package},
            {"VerbsDevice", d.verbs_device},
            {"PhysicalFunction", v.pf_path},
            {"Ports", ports},
            {"Links", v.link_paths},
            {"Problems", problems},
            {"ProblemDetails", details}};
}

json link_json(const LinkView& v) {
    const LinkState& l = v.state;
    return {{"Path", v.path},
            {"Name", l.name},
            {"Index", l.index},
            {"PCIAddress", l.pci_address},
            {"Driver", l.driver},
            {"OperState", l.operstate},
            {"RdmaCapable", l.rdma_capable},
            {"RdmaDevice", v.device_path},
            {"Hint", l.hint}};
}

} // namespace

std::string describe_json(const BusModel& model, const std::string& version,
                          const std::string& state, const std::vector<std::string>& sources,
                          const std::vector<Problem>& problems) {
    json devices = json::array();
    for (const DeviceView* d : model.devices_by_name())
        devices.push_back(device_json(*d));
    json links = json::array();
    for (const auto& [_, l] : model.links)
        links.push_back(link_json(l));
    json daemon_problems = json::array();
    for (const auto& p : problems)
        daemon_problems.push_back({{"Code", p.code}, {"Severity", p.severity}, {"Text", p.text}});
    json doc = {{"Version", version},       {"State", state},
                {"DesiredStateSource", sources}, {"Problems", daemon_problems},
                {"Devices", devices},       {"Links", links}};
    // Sysfs text is untrusted and may hold invalid UTF-8: replace rather than throw.
    return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace rdmad
