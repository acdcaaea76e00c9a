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
#include <map>
#include <set>
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

/// Describe()'s document written object by object, with only each object's size kept: a
/// change set forgets the sizes of the objects it names, measure() renders the objects whose
/// size is not kept once, to measure them (when the loop is idle, after the change set's
/// signals are out); a Describe() call then knows the document's size without rendering
/// (size()), and write() renders each object
/// into one reused scratch text and hands it on, so the caller can put the document straight
/// into a reply of that size. At 1,024 devices the document is 2.6 MB: keeping it rendered
/// held it twice at the peak (the kept texts and the reply), the sizes cost 16 bytes per
/// object. write()'s bytes equal describe_json() as long as every change set of the Inventory
/// went through changed(), measured or not.
class DescribeRenderer {
  public:
    /// Forget the sizes of the objects `changes` names (applied to `inventory`): added,
    /// changed and gone. Renders nothing.
    void changed(const Inventory& inventory, const ChangeSet& changes);

    /// Render and keep the size of each object of `inventory` that a change set named since
    /// the last measure() (added or changed; gone ones are skipped). Returns how many it
    /// measured. An object no change set named is measured in place by size(), every time.
    size_t measure(const Inventory& inventory);

    /// Bytes of the whole document, from the kept sizes; an object no change set named is
    /// rendered to measure it (and counted in objects_rendered()).
    size_t size(const Inventory& inventory, const ManagerState& manager) const;

    /// The whole document, piece by piece in order, to `sink(std::string_view)`: the
    /// Manager's members, the separators and each object, rendered into one scratch text
    /// reused from piece to piece (a view is valid only during its call). Returns the bytes
    /// handed on.
    template <typename Sink>
    size_t write(const Inventory& inventory, const ManagerState& manager, Sink&& sink) const {
        size_t bytes = 0;
        std::string scratch;
        for_each_piece(inventory, manager, scratch, [&](std::string_view piece) {
            bytes += piece.size();
            sink(piece);
        });
        return bytes;
    }

    /// The whole document, as describe_json() gives it: write() joined.
    std::string render(const Inventory& inventory, const ManagerState& manager) const;

    /// Devices and netdevs rendered since construction, to measure or to write (for tests and
    /// benchmarks).
    uint64_t objects_rendered() const { return objects_rendered_; }

  private:
    struct PieceSink {
        void* context;
        void (*call)(void* context, std::string_view piece);
    };
    template <typename F>
    void for_each_piece(const Inventory& inventory, const ManagerState& manager,
                        std::string& scratch, F&& f) const {
        pieces(inventory, manager, scratch,
               PieceSink{&f, [](void* c, std::string_view piece) { (*static_cast<F*>(c))(piece); }});
    }
    void pieces(const Inventory& inventory, const ManagerState& manager, std::string& scratch,
                PieceSink sink) const;

    std::unordered_map<std::string, size_t> devices_; ///< Inventory id -> bytes of its object
    std::map<int32_t, size_t> links_;                 ///< ifindex -> bytes of its object
    // What change sets named since the last measure(): it renders these, not a walk of the
    // host (a walk of 2,000 objects after every isolated change cost 0.8 ms at 1,024 devices).
    std::set<std::string> stale_devices_;
    std::set<int32_t> stale_links_;
    mutable uint64_t objects_rendered_ = 0;
};

} // namespace rdmad
