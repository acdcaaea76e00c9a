// SPDX-License-Identifier: MIT
//
// The named D-Bus errors of org.rdmad1 (documented in org.rdmad1(5); names in
// dbus/rdmad_api.hpp) as sdbus-c++ errors.
#pragma once

#include "bus/controller.hpp"
#include "rdmad_api.hpp"
#include "util/text.hpp"

#include <sdbus-c++/Error.h>
#include <string>
#include <string_view>

namespace rdmad::errors {

inline constexpr const char* NoSuchObject = api::kNoSuchObject;
inline constexpr const char* InvalidArgument = api::kInvalidArgument;
inline constexpr const char* Failed = api::kFailed;
inline constexpr const char* NotSupported = api::kNotSupported;
inline constexpr const char* Busy = api::kBusy;
inline constexpr const char* AccessDenied = api::kAccessDenied;

/// The one way rdmad builds an error reply: `message` as message_text() makes it, since
/// it may quote a file name or a kernel name, and sd-bus cannot send a reply that is not
/// (the caller would wait for its timeout instead).
inline sdbus::Error make(const char* name, std::string_view message) {
    return sdbus::Error(name, message_text(message));
}

/// Run `f`, turning anything that is not an sdbus::Error into a named one (a MethodError
/// under its name, anything else org.rdmad1.Error.Failed): sdbus-c++ 1.2 lets only
/// sdbus::Error out of a handler; anything else aborts the daemon.
template <typename F>
auto guard(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const sdbus::Error&) {
        throw;
    } catch (const MethodError& e) {
        throw make(e.name(), e.message());
    } catch (const std::exception& e) {
        throw make(Failed, e.what());
    }
}

} // namespace rdmad::errors
