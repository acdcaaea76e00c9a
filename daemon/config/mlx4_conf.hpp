// SPDX-License-Identifier: MIT
//
// The legacy /etc/rdma/mlx4.conf of RHEL and SUSE (rdma-core: redhat/rdma.mlx4.conf, applied by
// redhat/rdma.mlx4-setup.sh; DOMAIN.md §1.1). rdmad reads it at the lowest precedence so
// existing setups keep working. The file is not ours: a bad line is reported and skipped,
// never fatal.
#pragma once

#include "config/config_file.hpp"
#include "config/desired.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

/// At most this many warnings per file; one more line then counts the rest. Each warning is a
/// Manager.Problems entry, and a D-Bus message has a size limit.
inline constexpr size_t kMaxMlx4Warnings = 20;

/// One rule per valid line `<pci_address> <port1_type> [<port2_type>]`, matching by PCI address
/// and setting port_type. Invalid lines are skipped and, when `warnings` is non-null, appended
/// to it with their line and the column of the offending field: the first kMaxMlx4Warnings,
/// then one warning (line 0) "N more invalid lines skipped".
std::vector<Rule> parse_mlx4_conf(std::string_view text, const std::string& filename,
                                  std::vector<ConfigError>* warnings);

/// Reads and parses `path` (e.g. /etc/rdma/mlx4.conf). A missing file gives no rules and no
/// warning; one that cannot be read (read_config_file(): not a regular file, over 1 MiB, ...)
/// gives no rules and one warning with line 0.
std::vector<Rule> load_mlx4_conf(const std::string& path, std::vector<ConfigError>* warnings);

} // namespace rdmad
