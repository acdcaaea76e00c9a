// SPDX-License-Identifier: MIT
//
// The edge between the sd-event loop and our code: a callback's exception must not unwind
// through libsystemd's C frames (that aborts the daemon), and one failed event must not end
// the loop. STYLE.md: "caught at the event-loop edge".
#pragma once

#include "util/log.hpp"

#include <exception>

namespace rdmad {

/// Runs `body`; what it throws is logged as "<what>: <reason>" and ends here. Returns 0, what
/// an sd-event callback returns to stay enabled.
template <typename F> int at_loop_edge(const char* what, F&& body) noexcept {
    try {
        body();
    } catch (const std::exception& e) {
        log::error("{}: {}", what, e.what());
    } catch (...) {
        log::error("{}: an unknown exception", what);
    }
    return 0;
}

} // namespace rdmad
