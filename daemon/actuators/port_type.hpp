// SPDX-License-Identifier: MIT
//
// The mlx4 (ConnectX-3 VPI) port type switch: /sys/bus/pci/devices/<pci>/mlx4_port<n>.
// Source: kernel drivers/net/ethernet/mellanox/mlx4/main.c (set_port_type_store) and
// DOMAIN.md §1, §7.1: write "eth\n" with the newline; the file is 0444 in SR-IOV mode.
#pragma once

#include <cstdint>
#include <string>

namespace rdmad {

struct WriteResult {
    int error = 0;       ///< 0, or the errno of open/write (EACCES: read-only in SR-IOV mode)
    std::string message; ///< for the admin
    bool ok() const { return error == 0; }
};

/// Write `type` ("ib", "eth" or "auto") to port `port` of the mlx4 function `pci_address`.
/// A successful write makes the kernel re-create the RDMA device and its netdevs; the caller
/// verifies through the hotplug path. Never retries.
WriteResult write_mlx4_port_type(const std::string& pci_address, uint32_t port,
                                 const std::string& type);

} // namespace rdmad
