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
#include <set>

namespace rdmad {

class Exporter {
  public:
    explicit Exporter(sdbus::IConnection& connection);

    /// Where mutating methods go (Port.Set*, Manager.Reconcile/Reload).
    void set_controller(Controller* controller);
    ~Exporter();

    /// Make the bus show `inventory`: the whole model is built again and every object
    /// compared (start-up, and passes that add, remove or relate objects).
    void publish(const Inventory& inventory);

    /// Make the bus show `inventory` where only `devices` (by syspath) and `links` (by
    /// ifindex) were re-read, with the same ports and the same netdev classification: only
    /// their objects are compared (PropertiesChanged for what differs). The cost does not
    /// grow with the host. Falls back to publish() when an object is not the one its view
    /// shows (then the model must be rebuilt). Returns false when it fell back.
    bool update(const Inventory& inventory, const std::set<std::string>& devices,
                const std::set<int32_t>& links);

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
    // Indexes into model_, rebuilt by publish().
    std::map<std::string, size_t> device_index_;           ///< syspath -> model_.devices index
    std::map<int32_t, size_t> link_index_;                 ///< ifindex -> model_.links index
    std::map<std::string, std::string> link_path_by_name_; ///< kernel name -> path
    Controller* controller_ = nullptr;
};

} // namespace rdmad
