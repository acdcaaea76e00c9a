// SPDX-License-Identifier: MIT
//
// Manager.Describe(): the Inventory and the Manager's state as one JSON document, written
// from the property tables (inventory/properties.hpp, bus/manager_state.hpp), so keys are
// the D-Bus property names and `rdmactl --json` and busctl agree. Shape documented in
// dbus/org.rdmad1.Manager.xml.
#pragma once

#include "bus/manager_state.hpp"
#include "inventory/inventory.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rdmad {

/// {"Version", "State", "DesiredStateSource", "Problems", "Devices": [...], "Links": [...]}
/// as compact JSON text (RFC 8259), every string valid UTF-8. Each device is {"Path", its
/// Device properties, with "Ports" its port objects ({"Path", the Port properties})}, each
/// link {"Path", its Link properties}. Devices by name, links by ifindex. Renders every
/// object: the reference that DescribeRenderer must equal.
std::string describe_json(const Inventory& inventory, const ManagerState& manager);

/// The devices of `inventory` with their ids, sorted by name (bytes, then syspath): the order
/// of ListDevices() and Describe().
std::vector<std::pair<const DeviceState*, const std::string*>> devices_by_name(const Inventory& inventory);

/// Describe()'s document kept rendered object by object: each device (with its ports) and
/// each netdev is rendered to JSON when a change set names it, so that a Describe() call only
/// joins the stored texts (at 1,024 devices, 2.6 MB: rendering it whole was about half of
/// rdmad's CPU for the call). render() equals describe_json() as long as every change set
/// of the Inventory went through changed().
class DescribeRenderer {
  public:
    /// Render again the objects `changes` names (applied to `inventory`); forget the gone.
    void changed(const Inventory& inventory, const ChangeSet& changes);

    /// The whole document as pieces in order: views of the stored texts, and of `scratch`
    /// for the Manager's members, the separators and any object never named by a change set
    /// (rendered in place and counted, so the answer stays whole). The views stay valid until
    /// `scratch`, the Inventory or this renderer changes.
    struct Pieces {
        std::vector<std::string_view> parts;
        size_t size = 0; ///< bytes of all parts
    };
    Pieces pieces(const Inventory& inventory, const ManagerState& manager,
                  std::deque<std::string>& scratch) const;

    /// The whole document, as describe_json() gives it: pieces() joined.
    std::string render(const Inventory& inventory, const ManagerState& manager) const;

    /// Devices and netdevs rendered since construction (for tests and benchmarks).
    uint64_t objects_rendered() const { return objects_rendered_; }

  private:
    void store(std::string& slot, std::string text);

    std::unordered_map<std::string, std::string> devices_; ///< Inventory id -> JSON object
    std::map<int32_t, std::string> links_;                 ///< ifindex -> JSON object
    size_t bytes_ = 0;                                     ///< of all stored texts
    mutable uint64_t objects_rendered_ = 0;
};

} // namespace rdmad
