// SPDX-License-Identifier: MIT
//
// Precompiled for rdmactl (cli/meson.build, cpp_pch): nlohmann/json reaches every verb file
// through client.hpp and document.hpp, and with fmt it is most of each file's compile time.
// Every file includes what it uses all the same.
// No #pragma once: a precompiled header is compiled as a main file.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
