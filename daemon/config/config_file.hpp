// SPDX-License-Identifier: MIT
//
// rdmad's own configuration: /etc/rdmad/rdmad.conf, then /etc/rdmad/conf.d/*.conf in lexical
// order, TOML (https://toml.io/en/v1.0.0), later keys win. The format is documented in
// man/rdmad.conf.5.scd; keep the two in step.
#pragma once

#include "config/desired.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rdmad {

/// A configuration file that cannot be used, or (for mlx4.conf) a line that is skipped.
/// line and column are 1-based; both are 0 when the whole file is at fault (unreadable).
struct ConfigError {
    std::string file;
    int line = 0;
    int column = 0;
    std::string reason;
    /// "file:line:column: reason", or "file: reason" when line is 0.
    std::string to_string() const;
    bool operator==(const ConfigError&) const = default;
};

/// One parsed file: what it sets, before merging with the others.
struct ConfigFile {
    std::optional<bool> apply; ///< `[daemon] apply`, nullopt when the file does not set it
    std::optional<std::string> mstconfig; ///< `[daemon] mstconfig`: an absolute path
    std::optional<std::string> rdma_netns_mode; ///< `[daemon] rdma_netns_mode`
    std::optional<InstallProviders> install_providers; ///< `[daemon] install_providers`
    std::optional<std::string> provider_package;       ///< `[daemon] provider_package`
    std::optional<std::string> prometheus_dir; ///< `[export] prometheus_dir`, "" = off
    std::optional<std::string> nfd_dir;        ///< `[export] nfd_dir`, "" = off
    /// `[dispatcher] directories`: absolute paths, in precedence order
    std::optional<std::vector<std::string>> dispatcher_directories;
    std::optional<uint32_t> dispatcher_timeout_sec; ///< `[dispatcher] timeout_sec`, 1-3600
    std::optional<std::vector<std::string>> memlock_launchers; ///< `[doctor] memlock_launchers`
    std::optional<bool> load_modules;                          ///< `[daemon] load_modules`
    std::optional<std::vector<std::string>> modules;           ///< `[daemon] modules`, unique
    std::optional<bool> persist_modules;                       ///< `[daemon] persist_modules`
    std::vector<Rule> rules;   ///< in file order; file and line filled in
    bool operator==(const ConfigFile&) const = default;
};

/// Parses one file's text. `filename` goes into every Rule and the error. On several problems
/// the one that comes first in the text is returned.
std::variant<ConfigFile, ConfigError> parse_config_text(std::string_view text,
                                                        const std::string& filename);

/// Reads `main_path` (e.g. /etc/rdmad/rdmad.conf), then every `*.conf` in `dropin_dir` (e.g.
/// /etc/rdmad/conf.d) in lexical (byte) order of their names. Missing files and a missing
/// directory are fine; an unreadable file or directory, and the first bad file, are an error.
/// `sources` lists the files read.
std::variant<DesiredConfig, ConfigError> load_config(const std::string& main_path,
                                                     const std::string& dropin_dir);

/// Moves `file`'s rules to the end of `config` and takes its `apply` when set (later files
/// win). `file` is left without rules: a config of 100,000 rules is held once, not twice.
void merge_config(DesiredConfig& config, ConfigFile&& file, const std::string& filename);

} // namespace rdmad
