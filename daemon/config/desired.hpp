// SPDX-License-Identifier: MIT
//
// The desired state (DESIGN.md "Desired state") as plain values: rules read from
// /etc/rdmad/rdmad.conf, /etc/rdmad/conf.d/*.conf and the legacy /etc/rdma/mlx4.conf, and what
// they ask of one device once resolved. Nothing here reads a file or touches the system.
#pragma once

#include "inventory/model.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rdmad {

/// Which devices a rule applies to. Every field that is set ("" = unset) must match; a valid
/// rule sets at least one. (Default member initialisers keep `Match{.driver = "x"}` free of
/// -Wmissing-field-initializers.)
struct Match {
    std::string pci_address{}; ///< exact, pci_name() form "0000:0b:00.0"
    std::string driver{};      ///< exact kernel driver of the device ("mlx5_core", "rdma_rxe")
    std::string node_guid{};   ///< exact, normalised as the kernel prints it: "0002:c903:0031:78f0"
    std::string device_glob{}; ///< fnmatch(3) pattern on the RDMA device name ("mlx5_*")
    std::string netdev_glob{}; ///< fnmatch(3) pattern; matches when any netdev of the device does
    bool empty() const {
        return pci_address.empty() && driver.empty() && node_guid.empty() && device_glob.empty() &&
               netdev_glob.empty();
    }
    bool operator==(const Match&) const = default;
};

/// `vf_guids` of a rule (reconcile/settings/vf_guids.cpp): a static list of VF GUIDs, or a
/// range where VF n gets base + n (node and port alike).
struct VfGuids {
    std::vector<VfGuid> list; ///< a list: sorted by VF, each VF once; empty for a range
    std::optional<VfGuid> base; ///< a range: VF 0's GUIDs (base->vf is 0)
    /// What VF `vf` is asked: its list entry, or base + vf for a range (nullopt when the list
    /// has no entry for it, or base + vf would pass ff:ff:ff:ff:ff:ff:ff:ff).
    std::optional<VfGuid> of(uint32_t vf) const;
    bool operator==(const VfGuids&) const = default;
};

/// One `[[rule]]` table (or one mlx4.conf line). Unset keys leave what earlier rules set.
struct Rule {
    std::string file; ///< where it was written, for `from` and for diagnostics
    int line = 0;
    Match match;
    std::optional<std::vector<std::string>> port_type; ///< per port from port 1: "ib"|"eth"|"auto"
    std::optional<std::vector<uint8_t>> pfc_no_drop;   ///< sorted, unique, each 0-7
    /// A named set of values applied before the rule's own keys ("lossless-roce";
    /// reconcile/settings/profile.cpp)
    std::optional<std::string> profile;
    std::optional<std::string> trust;      ///< "dscp" | "pcp" (reconcile/settings/dscp.cpp)
    std::optional<DscpMap> dscp_priority;  ///< DSCP -> priority, sorted by DSCP, DSCPs unique
    std::optional<bool> exclusive;         ///< dscp_priority: remove DSCP entries not listed
    std::optional<std::string> rdma_cm_roce_mode; ///< "RoCE v2" | "IB/RoCE v1"
    std::optional<uint8_t> rdma_cm_tos;           ///< 0-255
    std::optional<uint32_t> sriov_numvfs; ///< VFs of the PF (reconcile/settings/sriov_numvfs.cpp)
    std::optional<VfGuids> vf_guids; ///< its VFs' GUIDs (reconcile/settings/vf_guids.cpp)
    std::optional<bool> require_provider;
    /// Expectations, checked and reported, never acted on: every ACTIVE port at least this
    /// rate in Gb/s (> 0, at most 10000), and at least this many ACTIVE ports (1-64).
    std::optional<double> min_rate_gbps;
    std::optional<uint32_t> min_active_ports;
    bool operator==(const Rule&) const = default;
};

/// `[export]`: where rdmad writes the files other agents collect (daemon/export/). "" turns a
/// file off; so does a directory that does not exist.
struct ExportConfig {
    /// node-exporter's textfile collector directory (Debian's prometheus-node-exporter
    /// --collector.textfile.directory default): rdmad.prom goes there.
    std::string prometheus_dir = "/var/lib/prometheus/node-exporter";
    /// Kubernetes Node Feature Discovery's local feature files (nfd-worker's
    /// features.d): rdmad goes there.
    std::string nfd_dir = "/etc/kubernetes/node-feature-discovery/features.d";
    bool operator==(const ExportConfig&) const = default;
};

/// `[dispatcher]`: the dispatcher scripts rdmad runs on events (daemon/dispatch/).
struct DispatcherConfig {
    /// Where the scripts are, in precedence order: a name found in an earlier directory hides
    /// the same name in later ones. A directory that does not exist holds no scripts.
    std::vector<std::string> directories = {"/etc/rdmad/dispatcher.d",
                                            "/usr/lib/rdmad/dispatcher.d"};
    uint32_t timeout_sec = 30; ///< each script's time limit (1-3600), SIGKILL after it
    bool operator==(const DispatcherConfig&) const = default;
};

/// `[daemon] install_providers`: whether rdmad installs a missing rdma-core provider's
/// package through PackageKit: never, when Manager.InstallProviders() asks, or at once.
enum class InstallProviders { never, ask, automatic };
/// The rdmad.conf(5) spelling of `mode`: "never", "ask", "auto" (Manager.InstallProvidersMode).
inline const char* install_providers_name(InstallProviders mode) {
    return mode == InstallProviders::never ? "never"
           : mode == InstallProviders::ask ? "ask"
                                           : "auto";
}

/// `[daemon]` load_modules, modules, persist_modules: the kernel modules rdmad loads
/// (reconcile/settings/kernel_modules.cpp).
struct ModulesConfig {
    bool load = false;                ///< load each module-not-loaded NIC's RDMA driver
    std::vector<std::string> modules; ///< and these user-space access modules ("ib_umad")
    bool persist = false;             ///< and list them in rdmad's modules-load.d file
    bool operator==(const ModulesConfig&) const = default;
};

/// Every rule in effect, in precedence order (later wins, key by key).
struct DesiredConfig {
    /// `[doctor] memlock_launchers`: processes (by /proc/<pid>/comm) that start RDMA
    /// applications, whose locked-memory limit the doctor checks (doctor/memlock.hpp).
    std::vector<std::string> memlock_launchers = {"slurmd",  "slurmstepd", "pbs_mom",
                                                  "kubelet", "containerd", "dockerd"};
    bool apply = true; ///< `[daemon] apply`; false: observe and report drift, never write
    /// `[daemon] mstconfig`: the mstconfig to run (ConnectX-4+ port type); "" looks it up on
    /// PATH
    std::string mstconfig;
    /// `[daemon] rdma_netns_mode`: "shared", "exclusive"; "" leaves the mode alone
    std::string rdma_netns_mode;
    InstallProviders install_providers = InstallProviders::ask; ///< `[daemon] install_providers`
    /// `[daemon] provider_package`: the package(s) that ship the providers here, space-separated;
    /// "" means the one os-release's distribution names (inventory/provider.hpp).
    std::string provider_package;
    ExportConfig exports; ///< `[export]`, the last file that sets a key wins
    DispatcherConfig dispatcher; ///< `[dispatcher]`, the last file that sets a key wins
    ModulesConfig modules;       ///< `[daemon]` module keys, the last file that sets one wins
    std::vector<Rule> rules;
    std::vector<std::string> sources; ///< files in effect, in the order they were read
    bool operator==(const DesiredConfig&) const = default;
};

/// What the rules ask of one device. Empty vectors mean "nothing asked".
struct DeviceDesired {
    std::vector<std::string> port_type; ///< per port from port 1; empty: leave alone
    std::vector<uint8_t> pfc_no_drop;   ///< per device, sorted; empty: leave alone
    std::string trust;                  ///< "dscp" | "pcp"; "": leave alone
    DscpMap dscp_priority;              ///< empty: leave alone
    bool exclusive = false;             ///< dscp_priority: remove DSCP entries not listed
    std::string rdma_cm_roce_mode;      ///< "": leave alone
    std::optional<uint8_t> rdma_cm_tos; ///< nullopt: leave alone
    std::optional<uint32_t> sriov_numvfs; ///< nullopt: leave alone
    std::optional<VfGuids> vf_guids;      ///< nullopt: leave alone
    /// Where each key in force came from, by key ("pfc_no_drop" -> "/etc/rdmad/rdmad.conf:3",
    /// or "profile lossless-roce (/etc/rdmad/rdmad.conf:3)" for a value a profile gave)
    std::map<std::string, std::string> origin;
    bool require_provider = true;       ///< a missing rdma-core provider is a problem
    std::optional<double> min_rate_gbps;      ///< expectation: rate of each ACTIVE port
    std::optional<uint32_t> min_active_ports; ///< expectation: number of ACTIVE ports
    std::vector<std::string> from;      ///< "file:line" of each matching rule that set a key
    bool operator==(const DeviceDesired&) const = default;
};

/// True when every set field of `match` matches the device; false for an empty match.
/// `links_of_device` are the device's netdevs (for netdev_glob), besides its ports' netdevs.
bool rule_matches(const Match& match, const DeviceState& device,
                  const std::vector<LinkState>& links_of_device);

/// Applies every matching rule of `config` in order; later rules win key by key (a later rule
/// that sets only pfc_no_drop keeps an earlier rule's port_type).
DeviceDesired resolve(const DesiredConfig& config, const DeviceState& device,
                      const std::vector<LinkState>& links_of_device);

} // namespace rdmad
