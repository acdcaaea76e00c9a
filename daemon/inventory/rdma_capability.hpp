// SPDX-License-Identifier: MIT
//
// Whether each netdev can do RDMA: "yes" (an RDMA device serves it), "module-not-loaded" (the
// hardware can but its RDMA driver is not bound), "no", "unknown"; with a hint naming the
// module or package. Pure: the caller supplies the auxiliary devices and module lookups.
// Source: DOMAIN.md §5 (NIC -> RDMA companion drivers, "capable but not loaded" recipe).
#pragma once

#include "inventory/model.hpp"

#include <functional>
#include <string>
#include <vector>

namespace rdmad {

/// One device on the auxiliary bus (`/sys/bus/auxiliary/devices/<name>`).
struct AuxDevice {
    std::string name;        ///< "mlx5_core.rdma.0"
    std::string pci_address; ///< its PCI function, "" when not on PCI
    std::string driver;      ///< bound driver ("mlx5_ib"), "" when none
    std::string modalias;    ///< "auxiliary:mlx5_core.rdma" (drivers/base/auxiliary.c)
};

/// Module lookups, injected so the classification stays pure.
struct ModuleLookup {
    /// modalias -> kernel module name (libkmod, as `modprobe -R`), "" when unresolved.
    std::function<std::string(const std::string& modalias)> resolve;
    /// true when the module is loaded (`/sys/module/<name>` exists).
    std::function<bool(const std::string& module)> loaded;
};

/// True for auxiliary devices that carry an RDMA function: "<drv>.{rdma,roce,iwarp,ib}.<n>".
bool is_rdma_aux_device(const std::string& name);

/// True for the auxiliary devices classify_links() reads: an RDMA one (is_rdma_aux_device())
/// of a PCI function with no driver bound. The others need not be kept for it.
bool is_unbound_rdma_aux(const AuxDevice& aux);

/// The RDMA module for an auxiliary RDMA device when libkmod cannot resolve its modalias
/// (no module index for it on this kernel): "mlx5_core.rdma.0" -> "mlx5_ib",
/// "ice.iwarp.0" -> "irdma", "bnxt_en.rdma.0" -> "bnxt_re", ...; "" when unknown.
std::string fallback_aux_module(const std::string& aux_name);

/// The RDMA module that a NIC driver without an auxiliary RDMA device pairs with
/// ("cxgb4" -> "iw_cxgb4", "qede" -> "qedr", "be2net" -> "ocrdma", ...); "" when none.
std::string companion_rdma_module(const std::string& nic_driver);

/// Fill `rdma_capable`, `rdma_device` and `hint` of every link in `inventory`, and each
/// port's `netdev` where the GID table does not name one (mlx4: `dev_port` = port - 1 is not
/// read here; a PCI function's only netdev serves every port).
void classify_links(HostState& inventory, const std::vector<AuxDevice>& aux,
                    const ModuleLookup& modules);

} // namespace rdmad
