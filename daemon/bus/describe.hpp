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
/// change set marks the objects it names to be measured again, measure_stale() (run while the
/// loop is idle) or the next size() renders each of them once to measure it, so a Describe()
/// call knows the document's size without rendering it, and write() renders each object into
/// one reused scratch text and hands it on, so the caller can put the document straight into
/// a reply of that size. At 1,024 devices the document is 2.6 MB: keeping it rendered held it
/// twice at the peak (the kept texts and the reply); the sizes cost 16 bytes per object.
/// write()'s bytes equal describe_json() as long as every change set of the Inventory went
/// through changed(). The sizes are a cache: the const members measure and keep.
class DescribeRenderer {
  public:
    /// Note the objects `changes` names (applied to `inventory`) to be measured again; forget
    /// the gone. Renders nothing.
    void changed(const Inventory& inventory, const ChangeSet& changes);
    /// Whether objects wait to be measured (measure_stale() would render them).
    bool has_stale() const { return !stale_devices_.empty() || !stale_links_.empty(); }
    /// Measure every object a change set named since the last measurement, each rendered once.
    void measure_stale(const Inventory& inventory) const;
    /// Bytes of the whole document: the stale objects measured first, then the kept sizes; an
    /// object no change set named is measured in place and kept too (each measured object is
    /// counted in objects_rendered()).
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

    /// Render `d` (`l`) into `scratch` and keep its size, which it returns.
    size_t measure_device(const Inventory& inventory, const std::string& id,
                          const DeviceState& d, std::string& scratch) const;
    size_t measure_link(const Inventory& inventory, const LinkState& l,
                        std::string& scratch) const;
    mutable std::unordered_map<std::string, size_t> devices_; ///< Inventory id -> bytes
    mutable std::map<int32_t, size_t> links_;                 ///< ifindex -> bytes
    mutable std::set<std::string> stale_devices_;             ///< ids to measure again
    mutable std::set<int32_t> stale_links_;                   ///< ifindexes to measure again
    mutable uint64_t objects_rendered_ = 0;
};

} // namespace rdmad
