// SPDX-License-Identifier: MIT
//
// org.rdmad1.Manager's properties: rdmad's own state (not the hardware's, which the Inventory
// holds), and its property table (inventory/properties.hpp has the others).
#pragma once

#include "inventory/model.hpp"
#include "inventory/properties.hpp"

#include <string>
#include <vector>

namespace rdmad {

struct ManagerState {
    std::string version;
    std::string state = "starting"; ///< "starting", "running", "degraded"
    /// DesiredStateSource: the files in force, each made valid UTF-8.
    std::vector<std::string> sources;
    /// Problems: the daemon's own (configuration errors), code and severity valid UTF-8, text
    /// as message_text() makes it.
    std::vector<Problem> problems;
    /// LoadedModules: the kernel modules rdmad loaded ([daemon] load_modules), in order.
    std::vector<std::string> loaded_modules = {};
    /// RdmaNetnsMode (now), DesiredRdmaNetnsMode, PendingRdmaNetnsMode (pending()).
    RdmaNetnsState rdma_netns = {};
    /// InstallProvidersMode: `[daemon] install_providers` in force, "never", "ask" or "auto".
    std::string install_providers_mode = {};
    bool operator==(const ManagerState&) const = default;
};

/// org.rdmad1.Manager, in the XML's order.
PropertyTable<ManagerState> manager_properties();

} // namespace rdmad
