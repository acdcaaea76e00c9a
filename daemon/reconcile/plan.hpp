// SPDX-License-Identifier: MIT
//
// The reconciler's pure part: desired x actual -> plan. Which writes would bring each adapter
// to what the admin asked (mlx4 port type, ConnectX-4+ firmware port type for next boot, PFC
// no-drop priorities, the mlx4_en and ib_core module options), and what cannot be done here
// and why (a firmware reset pending, no mstconfig, no DCB, a missing provider). No I/O: the
// executor runs the actions and the hotplug path verifies them.
#pragma once

#include "config/desired.hpp"
#include "inventory/model.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rdmad {

/// mlx4 module state for PFC (DOMAIN.md §1, §7.3: pfctx/pfcrx are load-time module options).
struct Mlx4ModuleState {
    std::optional<uint8_t> loaded_pfctx;  ///< /sys/module/mlx4_en/parameters/pfctx, if loaded
    std::optional<uint8_t> file_pfctx;    ///< what rdmad's modprobe.d file says now, if any
    /// Keep the file even when no present mlx4 device asks for PFC: a config file has an
    /// error, or a rule may ask it of an mlx4 device not matched now (absent, re-created,
    /// its netdev not there yet).
    bool keep_file = false;
};

struct Action {
    /// mlx4_modprobe writes rdmad's modprobe.d file with `mask`; mlx4_modprobe_remove deletes
    /// it when mlx4 devices are present and none asks for PFC any more.
    /// dscp_app makes the DSCP entries of a netdev's APP table `dscp_add` plus what it has,
    /// less `dscp_remove` (trust, dscp_priority); rdma_cm writes a port's RDMA-CM defaults
    /// (`value` the RoCE mode, `number` the ToS; "" and -1 leave one alone).
    enum class Kind {
        mlx4_port_type,
        pfc,
        mlx4_modprobe,
        mlx4_modprobe_remove,
        dscp_app,
        rdma_cm,
        /// module_load loads kernel module `value` (for netdev `netdev`, "" for a module of
        /// [daemon] modules); modules_load_file writes rdmad's modules-load.d file with
        /// `modules`; modules_load_file_remove deletes it (reconcile/settings/kernel_modules.cpp)
        module_load,
        modules_load_file,
        modules_load_file_remove,
        firmware_port_type, ///< ConnectX-4+: mstconfig set LINK_TYPE_P<number>=`value`
        ib_core_modprobe,   ///< rdmad-ib_core.conf with netns_mode for `value` (host-wide)
        ib_core_modprobe_remove, ///< rdmad-ib_core.conf removed (rdma_netns_mode unset)
        sriov_numvfs, ///< `number` VFs on the PF `pci_address` (settings/sriov_numvfs.cpp)
        /// VF `number` (PCI function `pci_address`, RDMA device `device`) of the PF whose
        /// IPoIB netdev is `netdev` (`ifindex`) gets node and port GUIDs `value`
        /// ("<node> <port>", sysfs form) (settings/vf_guids.cpp)
        vf_guids
    } kind;
    std::string device;      ///< RDMA device name
    std::string syspath;     ///< its syspath (identity across the pass)
    uint32_t port = 0;       ///< port number (mlx4_port_type)
    std::string pci_address; ///< mlx4_port_type
    std::string netdev;      ///< pfc
    std::string value;       ///< mlx4_port_type: "ib" | "eth" | "auto"
    uint8_t mask = 0;        ///< pfc, mlx4_modprobe
    std::string setting;     ///< "PortType", "PFCNoDrop", "mlx4_en pfctx/pfcrx"
    std::string from, to;    ///< for Reconcile()'s (object, setting, from, to)
    DscpMap dscp_add{};      ///< dscp_app: entries to add (as planned, for Reconcile())
    DscpMap dscp_remove{};   ///< dscp_app: entries to delete (likewise)
    DscpMap dscp_map{};      ///< dscp_app: the map asked; `value` the trust asked
    bool exclusive = false;  ///< dscp_app: entries not in dscp_map go
    int32_t number = -1;     ///< rdma_cm: the ToS, -1 to leave it; firmware_port_type: <n>
    std::vector<std::string> modules{}; ///< modules_load_file: the names, sorted
    int32_t ifindex = 0;                ///< vf_guids: the PF's IPoIB netdev
    bool operator==(const Action&) const = default;
};

/// True for the actions of the host's kernel modules (module_load, modules_load_file*).
inline bool is_module_action(const Action& a) {
    return a.kind == Action::Kind::module_load || a.kind == Action::Kind::modules_load_file ||
           a.kind == Action::Kind::modules_load_file_remove;
}

/// What a module plan needs: the `[daemon]` keys (rdmad.conf(5)) and the modules as read.
struct ModulePlanInput {
    bool load = false;                ///< load_modules
    std::vector<std::string> modules; ///< modules: user-space access modules to load
    bool persist = false;             ///< persist_modules: keep them in modules-load.d
    KernelModulesActual actual;       ///< actual.read false: no module plan at all
};

/// What one port should be and whether it is.
struct PortPlan {
    std::string desired_port_type;        ///< "" when nothing asked
    std::vector<uint8_t> desired_pfc;     ///< empty when nothing asked
    std::vector<uint8_t> pfc_now;         ///< as read on its netdev, when readable
    std::string desired_trust;            ///< "" when nothing asked
    DscpMap desired_dscp_priority;        ///< empty when nothing asked
    std::string desired_rdma_cm_roce_mode; ///< "" when nothing asked
    int32_t desired_rdma_cm_tos = -1;     ///< -1 when nothing asked
    /// ConnectX-4+ with a firmware reading: the port type now (PortType), next boot, pending
    std::string firmware_port_type;
    std::string next_boot_port_type;
    std::string pending_port_type;
    bool in_sync = true;
};

struct Plan {
    std::vector<Action> actions;                           ///< in the order to run them
    std::map<std::string, std::vector<Problem>> problems;  ///< by device syspath
    std::map<std::string, std::map<uint32_t, PortPlan>> ports; ///< device syspath -> port
    std::map<std::string, DeviceDesired> desired; ///< what the plan was made for, by syspath
    std::map<std::string, PfcActual> pfc;         ///< the PFC it read, by netdev (for a SET's
                                                  ///< read-modify-write)
};

/// mlx4 (ConnectX-3 VPI): port 1 Ethernet needs port 2 Ethernet (rdma-core
/// redhat/rdma.mlx4-setup.sh refuses anything else; older kernels refused eth/ib in
/// mlx4_check_port_params). Returns the 1-based port whose type makes `types` invalid (2 for
/// {"eth", "ib"} and {"eth", "auto"}), or 0 when valid.
uint32_t invalid_mlx4_port(const std::vector<std::string>& types);

/// The port types `device` ends up with when `desired` (per port from port 1) is applied:
/// each port its desired type, else its current one, "auto (eth)" read as "auto"; "" for a
/// port that is neither asked nor readable. Index i is port i + 1.
std::vector<std::string> resulting_port_types(const DeviceState& device,
                                              const std::vector<std::string>& desired);

/// True when the actual mlx4 port type `actual` ("ib", "eth", "auto (ib)", "auto (eth)")
/// satisfies `desired` ("ib", "eth", "auto"): "auto (eth)" satisfies "auto" and "eth".
bool port_type_satisfied(const std::string& desired, const std::string& actual);

/// The plan for `actual` given each device's desired state (by syspath; devices without an
/// entry are left alone), the PFC read per netdev, and the mlx4 module state.
/// mlx4 port type writes go port 2 first when port 1 becomes Ethernet, port 1 first otherwise,
/// so that no step passes through the invalid eth/ib pair (rdma-core redhat/mlx4-setup.sh
/// writes port 2 first for eth/eth).
/// `modules`: the host's kernel modules ([daemon] load_modules); a default one plans nothing.
Plan make_plan(const HostState& actual, const std::map<std::string, DeviceDesired>& desired,
               const std::map<std::string, PfcActual>& pfc, const Mlx4ModuleState& mlx4,
               const ModulePlanInput& modules = {});

} // namespace rdmad
