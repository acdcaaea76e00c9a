// SPDX-License-Identifier: MIT
//
// Logging: to the journal with structured fields when run by systemd (JOURNAL_STREAM set or
// stderr not a tty is not enough: we check JOURNAL_STREAM as sd-daemon(3) suggests), else to
// stderr as "rdmad: <message>".
#pragma once

#include <cstdint>
#include <fmt/format.h>
#include <string>
#include <utility>
#include <vector>

namespace rdmad::log {

enum class Level { error = 3, warning = 4, notice = 5, info = 6, debug = 7 }; // syslog(3) values

/// Messages above this level are dropped (default info; `--verbose` sets debug).
void set_max_level(Level level);

/// Structured journal fields besides MESSAGE, e.g. {"RDMA_DEVICE", "mlx5_0"}.
using Fields = std::vector<std::pair<std::string, std::string>>;

void write(Level level, const std::string& message, const Fields& fields = {});

/// Fields naming the objects a message is about, as DESIGN.md names them: RDMA_DEVICE=,
/// NETDEV=, PCI_ADDRESS=, PORT=; empty values are left out. `journalctl RDMA_DEVICE=mlx5_0`
/// then finds every message about mlx5_0.
Fields about(const std::string& rdma_device, const std::string& netdev = {},
             const std::string& pci_address = {}, uint32_t port = 0);

/// A message with structured fields: log::with(Level::info, about("mlx5_0"), "...", ...).
template <typename... Args>
void with(Level level, const Fields& fields, fmt::format_string<Args...> f, Args&&... args) {
    write(level, fmt::format(f, std::forward<Args>(args)...), fields);
}

template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
    write(Level::error, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warning(fmt::format_string<Args...> f, Args&&... args) {
    write(Level::warning, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
    write(Level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
    write(Level::debug, fmt::format(f, std::forward<Args>(args)...));
}

} // namespace rdmad::log
