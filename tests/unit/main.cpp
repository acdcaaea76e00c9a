// SPDX-License-Identifier: MIT
//
// The one Catch2 main for all unit tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
