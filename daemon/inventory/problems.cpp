// SPDX-License-Identifier: MIT
#include "inventory/problems.hpp"

#include <fmt/format.h>

namespace rdmad {

std::vector<Problem> device_problems(const DeviceState& d) {
    std::vector<Problem> problems;
    if (!d.provider.empty() && !d.provider_installed) {
        problems.push_back({"provider-missing", "error",
                            fmt::format("verbs provider {} is not installed: install {}",
                                        d.provider, d.provider_package)});
    } else if (d.provider.empty()) {
        problems.push_back(
            {"no-provider", "warning",
             d.kernel_driver.empty()
                 ? std::string("kernel driver unknown: no verbs provider can be chosen")
                 : fmt::format("rdma-core has no verbs provider for kernel driver {}",
                               d.kernel_driver)});
    }
    if (d.verbs_device.empty())
        problems.push_back({"no-verbs-device", "warning",
                            "no /dev/infiniband/uverbs device: load ib_uverbs"});
    for (const auto& p : d.ports) {
        if (p.state == "ACTIVE")
            continue;
        problems.push_back(
            {"port-not-active", "warning",
             fmt::format("port {} is {}{}", p.number, p.state.empty() ? "unreadable" : p.state,
                         p.phys_state.empty() ? "" : fmt::format(" ({})", p.phys_state))});
    }
    return problems;
}

} // namespace rdmad
