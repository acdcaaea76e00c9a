// SPDX-License-Identifier: MIT
//
// Manager.Describe(): the whole bus model as one JSON document. Keys are the D-Bus property
// names, so `rdmactl --json` and busctl agree. Shape documented in dbus/org.rdmad1.Manager.xml.
#pragma once

#include "bus/views.hpp"
#include "inventory/model.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace rdmad {

/// {"Version", "State", "DesiredStateSource", "Problems", "Devices": [...], "Links": [...]}
/// as compact JSON text (RFC 8259), every string valid UTF-8. Devices by name
/// (BusModel::devices_by_name()), links by ifindex. `sources` and `problems` are the
/// Manager's DesiredStateSource and Problems. Renders every object: the reference that
/// DescribeRenderer must equal.
std::string describe_json(const BusModel& model, const std::string& version,
                          const std::string& state, const std::vector<std::string>& sources = {},
                          const std::vector<Problem>& problems = {});

/// Describe()'s document kept rendered object by object: each device (with its ports) and
/// each netdev is rendered to JSON when the exporter shows it changed, so that a Describe()
/// call only joins the stored texts (at 1,024 devices, 2.6 MB: rendering it whole was about
/// half of rdmad's CPU for the call). render() equals describe_json() on the same model as
/// long as every object put into or dropped from the model was passed to put() or drop_*().
class DescribeRenderer {
  public:
    /// Render `device` (its object path is the key) again.
    void put(const DeviceView& device);
    /// Forget the device object at `path`.
    void drop_device(const std::string& path);
    /// Render `link` (its ifindex is the key) again.
    void put(const LinkView& link);
    /// Forget the netdev with ifindex `ifindex`.
    void drop_link(int32_t ifindex);

    /// The whole document, as describe_json(model, ...) gives it. An object of `model` that
    /// was never put() is rendered in place (and counted), so the answer stays whole.
    std::string render(const BusModel& model, const std::string& version, const std::string& state,
                       const std::vector<std::string>& sources,
                       const std::vector<Problem>& problems) const;

    /// Devices and netdevs rendered since construction (for tests and benchmarks).
    uint64_t objects_rendered() const { return objects_rendered_; }

  private:
    std::unordered_map<std::string, std::string> devices_; ///< object path -> JSON object
    std::map<int32_t, std::string> links_;                 ///< ifindex -> JSON object
    size_t bytes_ = 0;                                     ///< of all stored texts
    mutable uint64_t objects_rendered_ = 0;
};

} // namespace rdmad
