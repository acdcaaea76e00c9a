// SPDX-License-Identifier: MIT
//
// The one way a fuzz target reports a broken invariant: a message naming it, then abort(), which
// libFuzzer records as a crash with the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>

/// Aborts with "invariant violated: <what>" unless `ok`.
inline void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "invariant violated: %s\n", what);
        std::abort();
    }
}
