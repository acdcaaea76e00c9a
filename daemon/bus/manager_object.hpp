// SPDX-License-Identifier: MIT
//
// /org/rdmad1: org.rdmad1.Manager plus org.freedesktop.DBus.ObjectManager.
#pragma once

#include "bus/describe.hpp"
#include "bus/method_call.hpp"
#include "bus/views.hpp"
#include "inventory/model.hpp"
#include "org.rdmad1.Manager.adaptor.h"

#include <functional>
#include <sdbus-c++/sdbus-c++.h>

namespace rdmad {

class ManagerObject final : public sdbus::AdaptorInterfaces<org::rdmad1::Manager_adaptor,
                                                            sdbus::ObjectManager_adaptor,
                                                            sdbus::Properties_adaptor> {
  public:
    /// `model` and `describe` (the model kept rendered for Describe()) must outlive the
    /// object: the manager answers from them.
    ManagerObject(sdbus::IConnection& connection, const BusModel& model,
                  const DescribeRenderer& describe);

    /// Where Reconcile() and Reload() go; null answers them with NotSupported.
    void set_methods(const Methods* methods) { methods_ = methods; }

    /// DesiredStateSource; emits PropertiesChanged when it changes.
    void set_sources(const std::vector<std::string>& sources);
    /// The daemon's own problems (config errors); emits PropertiesChanged when they change.
    void set_problems(const std::vector<Problem>& problems);
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
    std::vector<std::string> DesiredStateSource() override { return sources_; }
    std::vector<sdbus::Struct<std::string, std::string, std::string>> Problems() override;
    void Reconcile(sdbus::Result<std::vector<
                       sdbus::Struct<std::string, std::string, std::string, std::string>>>&& result,
                   bool dry_run) override;
    void Reload(sdbus::Result<>&& result) override;
    std::string sender();

    const BusModel& model_;
    const DescribeRenderer& describe_;
    std::string state_ = "starting";
    const Methods* methods_ = nullptr;
    std::vector<std::string> sources_;
    std::vector<Problem> problems_;
};

} // namespace rdmad
