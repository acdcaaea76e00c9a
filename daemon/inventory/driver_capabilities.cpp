// SPDX-License-Identifier: MIT
#include "inventory/driver_capabilities.hpp"

namespace rdmad {

DriverCapabilities driver_capabilities(std::string_view kernel_driver) {
    if (kernel_driver == "mlx4_core")
        return {PortTypeSwitch::sysfs, true};
    if (kernel_driver == "mlx5_core")
        return {PortTypeSwitch::firmware, false};
    return {};
}

} // namespace rdmad
