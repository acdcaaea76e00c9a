// SPDX-License-Identifier: MIT
//
// What the bus objects call for mutating methods. The daemon implements it; objects only
// turn D-Bus calls into these calls. A method may throw sdbus::Error while it validates,
// before it takes `result`; once it has taken it, it replies through it exactly once,
// possibly later on the loop (after polkit answers).
#pragma once

#include <cstdint>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <vector>

namespace rdmad {

using ChangeList = std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>;

class Controller {
  public:
    virtual ~Controller() = default;
    /// Port.SetPortType on port `port` of the device at `device_syspath`, called by `sender`.
    virtual void set_port_type(const std::string& sender, const std::string& device_syspath,
                               uint32_t port, const std::string& type, bool persist,
                               sdbus::Result<>&& result) = 0;
    /// Port.SetPFCNoDrop for the device at `device_syspath`.
    virtual void set_pfc(const std::string& sender, const std::string& device_syspath,
                         const std::vector<uint8_t>& priorities, bool persist,
                         sdbus::Result<>&& result) = 0;
    /// Manager.Reconcile.
    virtual void reconcile(const std::string& sender, bool dry_run,
                           sdbus::Result<ChangeList>&& result) = 0;
    /// Manager.Reload.
    virtual void reload(const std::string& sender, sdbus::Result<>&& result) = 0;
};

} // namespace rdmad
