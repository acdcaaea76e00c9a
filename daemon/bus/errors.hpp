// SPDX-License-Identifier: MIT
//
// The named D-Bus errors of org.rdmad1 (documented in org.rdmad1(5)).
#pragma once

#include "util/text.hpp"

#include <sdbus-c++/Error.h>
#include <string>
#include <string_view>

namespace rdmad::errors {

inline constexpr const char* NoSuchObject = "org.rdmad1.Error.NoSuchObject";
inline constexpr const char* InvalidArgument = "org.rdmad1.Error.InvalidArgument";
inline constexpr const char* Failed = "org.rdmad1.Error.Failed";
inline constexpr const char* NotSupported = "org.rdmad1.Error.NotSupported";
inline constexpr const char* Busy = "org.rdmad1.Error.Busy";
inline constexpr const char* AccessDenied = "org.freedesktop.DBus.Error.AccessDenied";

/// The one way rdmad builds an error reply: `message` as message_text() makes it, since
/// it may quote a file name or a kernel name, and sd-bus cannot send a reply that is not
/// (the caller would wait for its timeout instead).
inline sdbus::Error make(const char* name, std::string_view message) {
    return sdbus::Error(name, message_text(message));
}

/// Run `f`, turning anything that is not an sdbus::Error into org.rdmad1.Error.Failed:
/// sdbus-c++ 1.2 lets only sdbus::Error out of a handler; anything else aborts the daemon.
template <typename F>
auto guard(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const sdbus::Error&) {
        throw;
    } catch (const std::exception& e) {
        throw make(Failed, e.what());
    }
}

} // namespace rdmad::errors
