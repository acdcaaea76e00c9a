// SPDX-License-Identifier: MIT
//
// The D-Bus objects: one per RDMA device, port and netdev. Each shows a view that the
// exporter's model holds (one copy of the state, not two) and, on update(), emits one
// PropertiesChanged with only the properties that changed.
#pragma once

#include "bus/method_call.hpp"
#include "bus/views.hpp"
#include "org.rdmad1.Device.adaptor.h"
#include "org.rdmad1.Link.adaptor.h"
#include "org.rdmad1.Port.adaptor.h"

#include <sdbus-c++/sdbus-c++.h>

namespace rdmad {

class PortObject final : public sdbus::AdaptorInterfaces<org::rdmad1::Port_adaptor,
                                                         sdbus::ManagedObject_adaptor,
                                                         sdbus::Properties_adaptor> {
  public:
    /// `view` must stay where it is until update() names its successor.
    PortObject(sdbus::IConnection& connection, const PortView& view, const Methods* methods);
    ~PortObject();
    /// Show `now` (the model's new entry) instead of `before` (what was shown); emits
    /// PropertiesChanged for the properties that differ, nothing when none does.
    void update(const PortView& before, const PortView& now);
    /// Emit InterfacesAdded once the object is fully built.
    void announce() { emitInterfacesAddedSignal(); }
    /// Emit InterfacesRemoved before the object goes.
    void retract() { emitInterfacesRemovedSignal(); }

  private:
    uint32_t Number() override { return view_->state.number; }
    std::string State() override { return view_->state.state; }
    std::string PhysicalState() override { return view_->state.phys_state; }
    std::string LinkLayer() override { return view_->state.link_layer; }
    std::string Transport() override { return view_->state.transport; }
    std::vector<std::string> RoCEVersions() override { return view_->state.roce_versions; }
    double RateGbps() override { return view_->state.rate_gbps; }
    std::string Rate() override { return view_->state.rate; }
    uint16_t LID() override { return view_->state.lid; }
    uint16_t SMLID() override { return view_->state.sm_lid; }
    std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::string>> GIDs() override;
    sdbus::ObjectPath Link() override { return view_->link_path; }
    std::string PortType() override { return view_->state.port_type; }
    std::string DesiredPortType() override { return view_->state.desired_port_type; }
    std::vector<uint8_t> PFCNoDrop() override { return view_->state.pfc_no_drop; }
    std::vector<uint8_t> DesiredPFCNoDrop() override { return view_->state.desired_pfc_no_drop; }
    bool InSync() override { return view_->state.in_sync; }
    uint32_t NetdevMTU() override { return view_->state.netdev_mtu; }
    uint32_t ActiveMTU() override { return view_->state.active_mtu; }
    sdbus::Struct<uint32_t, std::string, std::string, std::string, std::string>
    RecommendedGID() override;
    void SetPortType(sdbus::Result<>&& result, std::string type, bool persist) override;
    void SetPFCNoDrop(sdbus::Result<>&& result, std::vector<uint8_t> priorities,
                      bool persist) override;
    void Revert(sdbus::Result<>&& result, std::string setting) override;
    std::string sender();

    const PortView* view_;
    const Methods* methods_;
};

class DeviceObject final : public sdbus::AdaptorInterfaces<org::rdmad1::Device_adaptor,
                                                           sdbus::ManagedObject_adaptor,
                                                           sdbus::Properties_adaptor> {
  public:
    /// `view` must stay where it is until update() names its successor.
    DeviceObject(sdbus::IConnection& connection, const DeviceView& view, const Methods* methods);
    ~DeviceObject();
    void update(const DeviceView& before, const DeviceView& now);
    void announce() { emitInterfacesAddedSignal(); }
    void retract() { emitInterfacesRemovedSignal(); }

  private:
    std::string Name() override { return view_->state.name; }
    std::string NodeType() override { return view_->state.node_type; }
    std::string NodeGUID() override { return view_->state.node_guid; }
    std::string SysImageGUID() override { return view_->state.sys_image_guid; }
    std::string FirmwareVersion() override { return view_->state.firmware_version; }
    std::string HCAType() override { return view_->state.hca_type; }
    std::string BoardID() override { return view_->state.board_id; }
    std::string NodeDescription() override { return view_->state.node_description; }
    std::string PCIAddress() override { return view_->state.pci_address; }
    std::string KernelDriver() override { return view_->state.kernel_driver; }
    std::string Provider() override { return view_->state.provider; }
    bool ProviderInstalled() override { return view_->state.provider_installed; }
    std::string ProviderPackage() override { return view_->state.provider_package; }
    std::string VerbsDevice() override { return view_->state.verbs_device; }
    sdbus::ObjectPath PhysicalFunction() override { return view_->pf_path; }
    std::vector<sdbus::ObjectPath> Ports() override;
    std::vector<sdbus::ObjectPath> Links() override;
    std::vector<sdbus::Struct<std::string, std::string, std::string>> Problems() override;
    std::vector<sdbus::Struct<std::string, std::string, std::string, std::vector<std::string>,
                              std::string, uint32_t>>
    ProblemDetails() override;

    const DeviceView* view_;
};

class LinkObject final : public sdbus::AdaptorInterfaces<org::rdmad1::Link_adaptor,
                                                         sdbus::ManagedObject_adaptor,
                                                         sdbus::Properties_adaptor> {
  public:
    /// `view` must stay where it is until update() names its successor.
    LinkObject(sdbus::IConnection& connection, const LinkView& view, const Methods* methods);
    ~LinkObject();
    void update(const LinkView& before, const LinkView& now);
    void announce() { emitInterfacesAddedSignal(); }
    void retract() { emitInterfacesRemovedSignal(); }

  private:
    std::string Name() override { return view_->state.name; }
    int32_t Index() override { return view_->state.index; }
    std::string PCIAddress() override { return view_->state.pci_address; }
    std::string Driver() override { return view_->state.driver; }
    std::string OperState() override { return view_->state.operstate; }
    std::string RdmaCapable() override { return view_->state.rdma_capable; }
    sdbus::ObjectPath RdmaDevice() override { return view_->device_path; }
    std::string Hint() override { return view_->state.hint; }

    const LinkView* view_;
};

} // namespace rdmad
