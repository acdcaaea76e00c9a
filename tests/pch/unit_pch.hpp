// SPDX-License-Identifier: MIT
//
// Precompiled for the unit tests (tests/meson.build, cpp_pch): Catch2's header is most of
// the compile time of a small test file. Only headers that nearly every test file includes.
// No #pragma once: a precompiled header is compiled as a main file.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>
