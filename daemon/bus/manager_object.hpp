// SPDX-License-Identifier: MIT
//
// /org/rdmad1: org.rdmad1.Manager plus org.freedesktop.DBus.ObjectManager.
#pragma once

#include "bus/views.hpp"
#include "org.rdmad1.Manager.adaptor.h"

#include <functional>
#include <sdbus-c++/sdbus-c++.h>

namespace rdmad {

class ManagerObject final : public sdbus::AdaptorInterfaces<org::rdmad1::Manager_adaptor,
                                                            sdbus::ObjectManager_adaptor,
                                                            sdbus::Properties_adaptor> {
  public:
    /// `model` must outlive the object: the manager answers from it.
    ManagerObject(sdbus::IConnection& connection, const BusModel& model);
    ~ManagerObject();

    /// Set State ("starting", "running", "degraded"); emits PropertiesChanged when it changes.
    void set_state(const std::string& state);
    const std::string& state() const { return state_; }

  private:
    std::string Version() override;
    std::string State() override { return state_; }
    std::vector<sdbus::Struct<std::string, sdbus::ObjectPath>> ListDevices() override;
    sdbus::ObjectPath GetDeviceByName(const std::string& name) override;
    sdbus::ObjectPath GetLinkByName(const std::string& name) override;
    std::string Describe() override;

    const BusModel& model_;
    std::string state_ = "starting";
};

} // namespace rdmad
