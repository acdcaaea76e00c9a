// SPDX-License-Identifier: MIT
//
// The named D-Bus errors of org.rdmad1 (documented in org.rdmad1(5); names in
// dbus/rdmad_api.hpp) for sd-bus handlers, and the edge every handler has: no exception
// leaves it (it would unwind through sd-bus's C and end the daemon).
#pragma once

#include "bus/controller.hpp"
#include "rdmad_api.hpp"
#include "util/text.hpp"

#include <exception>
#include <string>
#include <string_view>
#include <systemd/sd-bus.h>

namespace rdmad::errors {

inline constexpr const char* NoSuchObject = api::kNoSuchObject;
inline constexpr const char* InvalidArgument = api::kInvalidArgument;
inline constexpr const char* Failed = api::kFailed;
inline constexpr const char* NotSupported = api::kNotSupported;
inline constexpr const char* Busy = api::kBusy;
inline constexpr const char* AccessDenied = api::kAccessDenied;

/// Make `error` the error `name` with `message` as message_text() makes it (it may quote a
/// file or kernel name, and sd-bus cannot send a string that is not valid UTF-8 and NUL-free:
/// the caller would wait for its timeout instead). Returns the negative errno a handler
/// returns with it (sd_bus_error_set(3)).
inline int set(sd_bus_error* error, const char* name, std::string_view message) {
    const int r = sd_bus_error_set(error, name, message_text(message).c_str());
    return r < 0 ? r : -EIO;
}

/// Run `f` (which returns what the handler returns: >= 0, or a negative errno with `error`
/// set), turning an exception into an error reply: a MethodError under its name, anything
/// else org.rdmad1.Error.Failed.
template <typename F> int guard(sd_bus_error* error, F&& f) noexcept {
    try {
        return f();
    } catch (const MethodError& e) {
        return set(error, e.name(), e.message());
    } catch (const std::exception& e) {
        return set(error, Failed, e.what());
    } catch (...) {
        return set(error, Failed, "unexpected error");
    }
}

} // namespace rdmad::errors
