// SPDX-License-Identifier: MIT
#include "bus/bus.hpp"

#include "bus/authorizer.hpp"
#include "bus/event_loop.hpp"
#include "bus/exporter.hpp"
#include "rdmad_api.hpp"

#include <sdbus-c++/sdbus-c++.h>
#include <stdexcept>

namespace rdmad {

struct Bus::Parts {
    std::unique_ptr<sdbus::IConnection> connection;
    std::unique_ptr<BusEventSource> source;
    std::unique_ptr<Authorizer> authorizer;
    std::unique_ptr<Exporter> exporter;
};

Bus::Bus(sd_event* event, Controller& controller) : parts_(std::make_unique<Parts>()) {
    parts_->connection = sdbus::createSystemBusConnection();
    parts_->source = std::make_unique<BusEventSource>(event, *parts_->connection);
    parts_->exporter = std::make_unique<Exporter>(*parts_->connection);
    parts_->authorizer = std::make_unique<Authorizer>(*parts_->connection);
    parts_->exporter->set_methods(&controller, parts_->authorizer.get());
}

Bus::~Bus() {
    // Objects before polkit's proxies, both before the loop adapter and the connection.
    parts_->exporter.reset();
    parts_->authorizer.reset();
    parts_->source.reset();
    parts_->connection.reset();
}

void Bus::apply(const Inventory& inventory, const ChangeSet& changes) {
    parts_->exporter->apply(inventory, changes);
}

void Bus::set_sources(const std::vector<std::string>& sources) {
    parts_->exporter->manager().set_sources(sources);
}

void Bus::set_problems(const std::vector<Problem>& problems) {
    parts_->exporter->manager().set_problems(problems);
}

void Bus::set_state(const std::string& state) {
    parts_->exporter->manager().set_state(state);
}

const std::string& Bus::state() const {
    return parts_->exporter->manager().state();
}

void Bus::request_name() {
    try {
        parts_->connection->requestName(api::kBusName);
    } catch (const sdbus::Error& e) {
        // sd-bus gives EEXIST as "Failed to request bus name (File exists)": say which name,
        // and what most likely holds it.
        if (e.getName() == "org.freedesktop.DBus.Error.FileExists")
            throw std::runtime_error(std::string("cannot take the bus name ") + api::kBusName +
                                     ": another process owns it (is rdmad already running?)");
        throw std::runtime_error(std::string("cannot take the bus name ") + api::kBusName + ": " +
                                 e.getMessage());
    }
    parts_->exporter->start_announcing();
}

} // namespace rdmad
