// SPDX-License-Identifier: MIT
#include "bus/manager_state.hpp"

#include <utility>

namespace rdmad {
namespace {

const Property<ManagerState> kManager[] = {
    {"Version", "s",
     [](const ManagerState& a, const ManagerState& b) { return a.version == b.version; },
     [](ValueWriter& w, const ManagerState& m, const PropertyContext&) { w.string(m.version); },
     true},
    {"State", "s", [](const ManagerState& a, const ManagerState& b) { return a.state == b.state; },
     [](ValueWriter& w, const ManagerState& m, const PropertyContext&) { w.string(m.state); }},
    {"DesiredStateSource", "as",
     [](const ManagerState& a, const ManagerState& b) { return a.sources == b.sources; },
     [](ValueWriter& w, const ManagerState& m, const PropertyContext&) {
         w.begin_array("s");
         for (const auto& s : m.sources)
             w.string(s);
         w.end_array();
     }},
    {"Problems", "a(sss)",
     [](const ManagerState& a, const ManagerState& b) { return a.problems == b.problems; },
     // Made valid and bounded when they are set (ManagerObject::set_problems()): as they are.
     [](ValueWriter& w, const ManagerState& m, const PropertyContext&) {
         w.begin_array("(sss)");
         for (const auto& p : m.problems) {
             w.begin_struct("sss");
             for (auto [field, value] : {std::pair{"Code", &p.code}, {"Severity", &p.severity},
                                         {"Text", &p.text}}) {
                 w.field(field);
                 w.string(*value);
             }
             w.end_struct();
         }
         w.end_array();
     }},
    {"LoadedModules", "as",
     [](const ManagerState& a, const ManagerState& b) {
         return a.loaded_modules == b.loaded_modules;
     },
     [](ValueWriter& w, const ManagerState& m, const PropertyContext&) {
         w.begin_array("s");
         for (const auto& s : m.loaded_modules)
             w.string(s);
         w.end_array();
     }},
    {"RdmaNetnsMode", "s",
     [](const ManagerState& a, const ManagerState& b) {
         return a.rdma_netns.now == b.rdma_netns.now;
     },
     [](ValueWriter& w, const ManagerState& m, const PropertyContext&) {
         w.string(m.rdma_netns.now);
     }},
    {"DesiredRdmaNetnsMode", "s",
     [](const ManagerState& a, const ManagerState& b) {
         return a.rdma_netns.desired == b.rdma_netns.desired;
     },
     [](ValueWriter& w, const ManagerState& m, const PropertyContext&) {
         w.string(m.rdma_netns.desired);
     }},
    {"PendingRdmaNetnsMode", "s",
     [](const ManagerState& a, const ManagerState& b) {
         return a.rdma_netns.pending() == b.rdma_netns.pending();
     },
     [](ValueWriter& w, const ManagerState& m, const PropertyContext&) {
         w.string(m.rdma_netns.pending());
     }},
    {"InstallProvidersMode", "s",
     [](const ManagerState& a, const ManagerState& b) {
         return a.install_providers_mode == b.install_providers_mode;
     },
     [](ValueWriter& w, const ManagerState& m, const PropertyContext&) {
         w.string(m.install_providers_mode);
     }},
};

} // namespace

PropertyTable<ManagerState> manager_properties() { return kManager; }

} // namespace rdmad
