// SPDX-License-Identifier: MIT
//
// The one Catch2 main (and the Catch2 implementation) for every Catch2 executable, compiled
// once into a static library (tests/meson.build): it is the costliest file of the tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
