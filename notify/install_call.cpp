// SPDX-License-Identifier: MIT
#include "install_call.hpp"

#include "rdmad_api.hpp"

#include <fmt/core.h>
#include <systemd/sd-bus.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace rdmad::notify {

namespace {

std::runtime_error bus_failure(const char* what, int r) {
    return std::runtime_error(fmt::format("{}: {}", what, std::strerror(-r)));
}

} // namespace

InstallCall::InstallCall(std::chrono::seconds timeout) {
    // Honours DBUS_SYSTEM_BUS_ADDRESS, as sdbus-c++'s system connection does.
    if (int r = sd_bus_open_system(&bus_); r < 0)
        throw bus_failure("cannot reach the system bus", r);
    sd_bus_message* m = nullptr;
    int r = sd_bus_message_new_method_call(bus_, &m, api::kBusName, api::kManagerPath,
                                           api::kManagerInterface, "InstallProviders");
    if (r >= 0)
        r = sd_bus_message_set_allow_interactive_authorization(m, 1);
    if (r >= 0) {
        const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(timeout);
        r = sd_bus_call_async(bus_, &slot_, m, &InstallCall::on_reply, this,
                              static_cast<uint64_t>(usec.count()));
    }
    sd_bus_message_unref(m);
    if (r < 0) {
        sd_bus_flush_close_unref(bus_);
        throw bus_failure("cannot call InstallProviders", r);
    }
}

InstallCall::~InstallCall() {
    sd_bus_slot_unref(slot_);
    sd_bus_flush_close_unref(bus_);
}

int InstallCall::on_reply(sd_bus_message* reply, void* userdata, sd_bus_error*) {
    auto* self = static_cast<InstallCall*>(userdata);
    Outcome out;
    // A timeout is a reply too: sd-bus makes it an org.freedesktop.DBus.Error.NoReply error.
    if (const sd_bus_error* e = sd_bus_message_get_error(reply)) {
        out.error_name = e->name ? e->name : "";
        out.error_message = e->message ? e->message : "";
    } else {
        char** strv = nullptr;
        if (int r = sd_bus_message_read_strv(reply, &strv); r < 0) {
            out.error_name = "org.freedesktop.DBus.Error.InvalidSignature";
            out.error_message =
                fmt::format("InstallProviders' reply is not \"as\": {}", std::strerror(-r));
        } else {
            for (char** s = strv; s && *s; ++s) {
                out.packages.emplace_back(*s);
                std::free(*s);
            }
            std::free(strv);
        }
    }
    self->outcome_ = std::move(out);
    return 0;
}

pollfd InstallCall::poll_fd() const {
    const int events = sd_bus_get_events(bus_);
    return {sd_bus_get_fd(bus_), static_cast<short>(events < 0 ? 0 : events), 0};
}

int InstallCall::poll_timeout_ms() const {
    uint64_t until = 0; // CLOCK_MONOTONIC, µs; UINT64_MAX for none (sd_bus_get_timeout(3))
    if (sd_bus_get_timeout(bus_, &until) < 0 || until == UINT64_MAX)
        return -1;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const uint64_t now_us =
        static_cast<uint64_t>(now.tv_sec) * 1000000u + static_cast<uint64_t>(now.tv_nsec) / 1000u;
    return until <= now_us ? 0 : static_cast<int>((until - now_us + 999) / 1000);
}

std::optional<InstallCall::Outcome> InstallCall::process() {
    int r = 0;
    while (!outcome_ && (r = sd_bus_process(bus_, nullptr)) > 0) {
    }
    if (!outcome_ && r < 0)
        outcome_ = Outcome{{},
                           "org.freedesktop.DBus.Error.Disconnected",
                           fmt::format("the system bus connection failed: {}", std::strerror(-r))};
    return outcome_;
}

} // namespace rdmad::notify
