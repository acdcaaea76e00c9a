// SPDX-License-Identifier: MIT
//
// Keeps the bus objects equal to the inventory: creates objects for new devices, ports and
// links (InterfacesAdded once fully built), updates the rest (PropertiesChanged with only the
// changed properties) and removes the gone ones (InterfacesRemoved, then unregister).
#pragma once

#include "bus/manager_object.hpp"
#include "bus/objects.hpp"
#include "bus/views.hpp"
#include "inventory/model.hpp"

#include <map>
#include <memory>
#include <sdbus-c++/sdbus-c++.h>

namespace rdmad {

class Exporter {
  public:
    explicit Exporter(sdbus::IConnection& connection);

    /// Where mutating methods go (Port.Set*, Manager.Reconcile/Reload).
    void set_controller(Controller* controller);
    ~Exporter();

    /// Make the bus show `inventory`.
    void publish(const Inventory& inventory);

    /// The RDMA device at `old_syspath` is now at `new_syspath` (a rename): its object keeps
    /// its path, and the next publish() changes only its Name.
    void rename_device(const std::string& old_syspath, const std::string& new_syspath);

    ManagerObject& manager() { return *manager_; }
    const BusModel& model() const { return model_; }

  private:
    sdbus::IConnection& connection_;
    BusModel model_;
    std::unique_ptr<ManagerObject> manager_;
    std::map<std::string, std::unique_ptr<DeviceObject>> devices_; ///< by path
    std::map<std::string, std::unique_ptr<PortObject>> ports_;     ///< by path
    std::map<std::string, std::unique_ptr<LinkObject>> links_;     ///< by path
    std::map<std::string, std::string> ids_; ///< device syspath -> object id, kept for life
    Controller* controller_ = nullptr;
};

} // namespace rdmad
