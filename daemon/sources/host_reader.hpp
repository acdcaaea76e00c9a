// SPDX-License-Identifier: MIT
//
// Reads the host facts the doctor's checks need: the host name and which RDMA kernel modules
// are loaded or built in.
#pragma once

#include "inventory/model.hpp"

#include <string>

namespace rdmad {

/// Where read_host() looks; tests point them elsewhere.
struct HostPaths {
    std::string sys = "/sys";
    std::string dev = "/dev";
    std::string modules = "/lib/modules"; ///< <modules>/<uname -r>/modules.builtin
    /// The module directory itself (rdmad --module-dir, as libkmod takes it): its
    /// modules.builtin instead of <modules>/<uname -r>'s; "" for that default.
    std::string module_dir;
};

/// The host name (uname(2) nodename) and the state of ib_uverbs, rdma_ucm, ib_umad and
/// ib_ipoib, each "loaded" when its mark exists (ib_uverbs: the class
/// `class/infiniband_verbs` or its `abi_version`; rdma_ucm: `class/misc/rdma_cm` or
/// `/dev/infiniband/rdma_cm`; ib_umad: the class `class/infiniband_mad` or its `abi_version`;
/// ib_ipoib: `module/ib_ipoib`; each also `module/<name>`), "built-in" when it exists and
/// modules.builtin lists `<name>.ko`, "absent" when no mark exists, "unknown" when `<sys>/class`
/// cannot be read. Sources: kernel drivers/infiniband/core/uverbs_main.c (the class, registered
/// by the module's init, and its attribute abi_version; a host whose class lists uverbs
/// devices has the module whatever else is missing), ucma.c (misc device "rdma_cm", node infiniband/rdma_cm), user_mad.c (class
/// infiniband_mad, abi_version); modules.builtin: kbuild's list of built-in modules.
HostFacts read_host(const HostPaths& paths = {});

} // namespace rdmad
