// SPDX-License-Identifier: MIT
//
// Precompiled for the integration tests (tests/integration/meson.build, cpp_pch): Catch2 and
// what harness.hpp includes (nlohmann/json, sdbus-c++), which every test file reads.
// No #pragma once: a precompiled header is compiled as a main file.

// log_listener.cpp's listener needs Catch2's reporter interfaces; the header is read once,
// here, so they are asked for here.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
