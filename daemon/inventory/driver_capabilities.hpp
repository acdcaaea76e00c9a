// SPDX-License-Identifier: MIT
//
// What a device's kernel driver lets rdmad do, decided in one place: the rest of the daemon
// asks for a capability, never for a driver name.
#pragma once

#include <string_view>

namespace rdmad {

/// Where a VPI adapter's port type (InfiniBand or Ethernet) is switched.
enum class PortTypeSwitch {
    none,     ///< the hardware has no such switch
    sysfs,    ///< `mlx4_port<n>` on the PCI function, at run time (ConnectX-3: mlx4_core,
              ///< drivers/net/ethernet/mellanox/mlx4/main.c)
    firmware, ///< a firmware setting (mstconfig LINK_TYPE_P<n>), applied at the next reset
              ///< (ConnectX-4 and later: mlx5_core)
};

struct DriverCapabilities {
    PortTypeSwitch port_type = PortTypeSwitch::none;
    /// PFC is also a module option of the Ethernet driver (mlx4_en pfctx/pfcrx, written to
    /// modprobe.d), one value for every such card of the host: planning for one device
    /// means planning for the whole host.
    bool host_wide_pfc_option = false;

    /// A VPI adapter: its ports may be InfiniBand or Ethernet, now or after a switch.
    bool vpi() const { return port_type != PortTypeSwitch::none; }
};

/// The capabilities of a device bound to `kernel_driver` (DeviceState::kernel_driver, the
/// basename of `device/driver`, or a rule's `driver`); none for a driver not known here.
DriverCapabilities driver_capabilities(std::string_view kernel_driver);

} // namespace rdmad
