// SPDX-License-Identifier: MIT
//
// Keeps the bus objects equal to the Inventory by applying its change sets: creates the
// objects of new devices, ports and links (InterfacesAdded once fully built), updates the
// objects a change set names (PropertiesChanged with only the changed properties) and removes
// the gone ones (InterfacesRemoved, then unregister). It never rebuilds the model: the cost of
// a change set is the size of the objects it names.
#pragma once

#include "bus/describe.hpp"
#include "bus/manager_object.hpp"
#include "bus/objects.hpp"
#include "bus/views.hpp"
#include "inventory/inventory.hpp"

#include <map>
#include <memory>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace rdmad {

class Exporter {
  public:
    explicit Exporter(sdbus::IConnection& connection);

    /// Where mutating methods go (Port.Set*, Manager.Reconcile/Reload), and who authorizes
    /// them; both must outlive the exporter.
    void set_methods(Controller* controller, Authorizer* authorizer);
    ~Exporter();

    /// Make the bus show `inventory` where `changes` says it changed. An object the bus
    /// refuses is logged and skipped; the others are still applied.
    void apply(const Inventory& inventory, const ChangeSet& changes);

    /// From now on, new objects are announced with InterfacesAdded. Until then (rdmad does
    /// not own org.rdmad1 yet) they are not: a client matches rdmad's signals by that name,
    /// so no client could receive them, and each would cost its properties marshalled and
    /// relayed (at 1,024 devices, 3,000 signals). Clients read the first objects with
    /// GetManagedObjects() or Describe() when NameOwnerChanged says rdmad took the name.
    void start_announcing() { announcing_ = true; }

    ManagerObject& manager() { return *manager_; }
    const BusModel& model() const { return model_; }

  private:
    void retract_device(const std::string& path);
    void show_device(const Inventory& inventory, const DeviceState& device);
    void retract_link(int32_t ifindex);
    void show_link(const Inventory& inventory, const LinkState& link);

    sdbus::IConnection& connection_;
    BusModel model_; ///< what the objects show; they point into it
    DescribeRenderer describe_; ///< model_ as Describe()'s JSON, object by object
    std::unique_ptr<ManagerObject> manager_;
    std::map<std::string, std::unique_ptr<DeviceObject>> devices_; ///< by path
    std::map<std::string, std::unique_ptr<PortObject>> ports_;     ///< by path
    std::map<int32_t, std::unique_ptr<LinkObject>> links_;         ///< by ifindex
    Methods methods_;
    bool announcing_ = false;
};

} // namespace rdmad
