// SPDX-License-Identifier: MIT
#include "bus/objects.hpp"

#include "bus/errors.hpp"
#include "inventory/problems.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

namespace rdmad {
namespace {

/// Collects the names of properties whose value differs.
class ChangeSet {
  public:
    template <typename T>
    void compare(const char* name, const T& before, const T& after) {
        if (!(before == after))
            names_.emplace_back(name);
    }
    const std::vector<std::string>& names() const { return names_; }

  private:
    std::vector<std::string> names_;
};

} // namespace

// ---- Port ---------------------------------------------------------------------------------

PortObject::PortObject(sdbus::IConnection& connection, const PortView& view, const Methods* methods)
    : AdaptorInterfaces(connection, view.path), view_(&view), methods_(methods) {
    registerAdaptor();
}

PortObject::~PortObject() { unregisterAdaptor(); }

std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::string>> PortObject::GIDs() {
    std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::string>> out;
    out.reserve(view_->state.gids.size());
    for (const auto& g : view_->state.gids)
        out.emplace_back(g.index, g.gid, g.type, g.netdev);
    return out;
}

sdbus::Struct<uint32_t, std::string, std::string, std::string, std::string>
PortObject::RecommendedGID() {
    const RecommendedGid& g = view_->state.recommended_gid;
    return {g.index, g.gid, g.type, g.netdev, g.ip};
}

void PortObject::update(const PortView& before, const PortView& v) {
    const PortState& a = before.state;
    const PortState& b = v.state;
    ChangeSet c;
    c.compare("State", a.state, b.state);
    c.compare("PhysicalState", a.phys_state, b.phys_state);
    c.compare("LinkLayer", a.link_layer, b.link_layer);
    c.compare("Transport", a.transport, b.transport);
    c.compare("RoCEVersions", a.roce_versions, b.roce_versions);
    c.compare("RateGbps", a.rate_gbps, b.rate_gbps);
    c.compare("Rate", a.rate, b.rate);
    c.compare("LID", a.lid, b.lid);
    c.compare("SMLID", a.sm_lid, b.sm_lid);
    c.compare("GIDs", a.gids, b.gids);
    c.compare("Link", before.link_path, v.link_path);
    c.compare("PortType", a.port_type, b.port_type);
    c.compare("DesiredPortType", a.desired_port_type, b.desired_port_type);
    c.compare("PFCNoDrop", a.pfc_no_drop, b.pfc_no_drop);
    c.compare("DesiredPFCNoDrop", a.desired_pfc_no_drop, b.desired_pfc_no_drop);
    c.compare("InSync", a.in_sync, b.in_sync);
    c.compare("NetdevMTU", a.netdev_mtu, b.netdev_mtu);
    c.compare("ActiveMTU", a.active_mtu, b.active_mtu);
    c.compare("RecommendedGID", a.recommended_gid, b.recommended_gid);
    view_ = &v;
    // sdbus-c++ 1.2 sends every property for an empty list: never emit empty.
    if (!c.names().empty())
        emitPropertiesChangedSignal(org::rdmad1::Port_adaptor::INTERFACE_NAME, c.names());
}

std::string PortObject::sender() {
    const sdbus::Message* m = getObject().getCurrentlyProcessedMessage();
    return m ? m->getSender() : std::string();
}

void PortObject::SetPortType(sdbus::Result<>&& result, std::string type, bool persist) {
    const std::string syspath = view_->device_syspath;
    const uint32_t port = view_->state.number;
    call_authorized(
        methods_, sender(), std::move(result),
        [&] {
            if (!api::valid_port_type(type))
                throw MethodError(api::kInvalidArgument,
                                  "port type must be \"ib\", \"eth\" or \"auto\"");
            methods_->controller->check_port_type(syspath, port, type, persist);
        },
        [c = methods_ ? methods_->controller : nullptr, syspath, port, type, persist] {
            c->set_port_type(syspath, port, type, persist);
        });
}

void PortObject::SetPFCNoDrop(sdbus::Result<>&& result, std::vector<uint8_t> priorities,
                              bool persist) {
    const std::string syspath = view_->device_syspath;
    std::sort(priorities.begin(), priorities.end());
    call_authorized(
        methods_, sender(), std::move(result),
        [&] {
            // As in rdmad.conf(5): leaving PFC alone is the absence of a rule, not [].
            if (std::string why = api::pfc_priorities_error(priorities); !why.empty())
                throw MethodError(api::kInvalidArgument, why);
            methods_->controller->check_pfc(syspath);
        },
        [c = methods_ ? methods_->controller : nullptr, syspath, priorities, persist] {
            c->set_pfc(syspath, priorities, persist);
        });
}

void PortObject::Revert(sdbus::Result<>&& result, std::string setting) {
    const std::string syspath = view_->device_syspath;
    const uint32_t port = view_->state.number;
    call_authorized(
        methods_, sender(), std::move(result),
        [&] {
            if (!api::valid_revert_setting(setting))
                throw MethodError(api::kInvalidArgument,
                                  "setting must be \"\" (every setting) or \"PortType\"");
        },
        [c = methods_ ? methods_->controller : nullptr, syspath, port, setting] {
            c->revert(syspath, port, setting);
        });
}

// ---- Device -------------------------------------------------------------------------------

DeviceObject::DeviceObject(sdbus::IConnection& connection, const DeviceView& view, const Methods*)
    : AdaptorInterfaces(connection, view.path), view_(&view) {
    registerAdaptor();
}

DeviceObject::~DeviceObject() { unregisterAdaptor(); }

std::vector<sdbus::ObjectPath> DeviceObject::Ports() {
    std::vector<sdbus::ObjectPath> out;
    for (const auto& p : view_->ports)
        out.emplace_back(p.path);
    return out;
}

std::vector<sdbus::ObjectPath> DeviceObject::Links() {
    return {view_->link_paths.begin(), view_->link_paths.end()};
}

std::vector<sdbus::Struct<std::string, std::string, std::string>> DeviceObject::Problems() {
    std::vector<sdbus::Struct<std::string, std::string, std::string>> out;
    for (const auto& p : view_->state.problems)
        if (in_problems_property(p))
            out.emplace_back(p.code, p.severity, p.text);
    return out;
}

std::vector<sdbus::Struct<std::string, std::string, std::string, std::vector<std::string>,
                          std::string, uint32_t>>
DeviceObject::ProblemDetails() {
    std::vector<sdbus::Struct<std::string, std::string, std::string, std::vector<std::string>,
                              std::string, uint32_t>>
        out;
    for (const auto& p : view_->state.problems)
        out.emplace_back(p.code, p.severity, p.text, p.evidence, p.remedy, p.port);
    return out;
}

void DeviceObject::update(const DeviceView& before, const DeviceView& v) {
    const DeviceState& a = before.state;
    const DeviceState& b = v.state;
    ChangeSet c;
    c.compare("Name", a.name, b.name);
    c.compare("NodeType", a.node_type, b.node_type);
    c.compare("NodeGUID", a.node_guid, b.node_guid);
    c.compare("SysImageGUID", a.sys_image_guid, b.sys_image_guid);
    c.compare("FirmwareVersion", a.firmware_version, b.firmware_version);
    c.compare("HCAType", a.hca_type, b.hca_type);
    c.compare("BoardID", a.board_id, b.board_id);
    c.compare("NodeDescription", a.node_description, b.node_description);
    c.compare("PCIAddress", a.pci_address, b.pci_address);
    c.compare("KernelDriver", a.kernel_driver, b.kernel_driver);
    c.compare("Provider", a.provider, b.provider);
    c.compare("ProviderInstalled", a.provider_installed, b.provider_installed);
    c.compare("ProviderPackage", a.provider_package, b.provider_package);
    c.compare("VerbsDevice", a.verbs_device, b.verbs_device);
    c.compare("PhysicalFunction", before.pf_path, v.pf_path);
    std::vector<std::string> ports_a, ports_b;
    for (const auto& p : before.ports)
        ports_a.push_back(p.path);
    for (const auto& p : v.ports)
        ports_b.push_back(p.path);
    c.compare("Ports", ports_a, ports_b);
    c.compare("Links", before.link_paths, v.link_paths);
    std::vector<Problem> serious_a, serious_b;
    std::copy_if(a.problems.begin(), a.problems.end(), std::back_inserter(serious_a),
                 in_problems_property);
    std::copy_if(b.problems.begin(), b.problems.end(), std::back_inserter(serious_b),
                 in_problems_property);
    c.compare("Problems", serious_a, serious_b);
    c.compare("ProblemDetails", a.problems, b.problems);
    view_ = &v;
    if (!c.names().empty())
        emitPropertiesChangedSignal(org::rdmad1::Device_adaptor::INTERFACE_NAME, c.names());
}

// ---- Link ---------------------------------------------------------------------------------

LinkObject::LinkObject(sdbus::IConnection& connection, const LinkView& view, const Methods*)
    : AdaptorInterfaces(connection, view.path), view_(&view) {
    registerAdaptor();
}

LinkObject::~LinkObject() { unregisterAdaptor(); }

void LinkObject::update(const LinkView& before, const LinkView& v) {
    const LinkState& a = before.state;
    const LinkState& b = v.state;
    ChangeSet c;
    c.compare("Name", a.name, b.name);
    c.compare("PCIAddress", a.pci_address, b.pci_address);
    c.compare("Driver", a.driver, b.driver);
    c.compare("OperState", a.operstate, b.operstate);
    c.compare("RdmaCapable", a.rdma_capable, b.rdma_capable);
    c.compare("RdmaDevice", before.device_path, v.device_path);
    c.compare("Hint", a.hint, b.hint);
    view_ = &v;
    if (!c.names().empty())
        emitPropertiesChangedSignal(org::rdmad1::Link_adaptor::INTERFACE_NAME, c.names());
}

} // namespace rdmad
