// SPDX-License-Identifier: MIT
#include "inventory/problems.hpp"

#include "doctor/doctor.hpp"
#include "doctor/gid_choice.hpp"
#include "doctor/roce_mtu.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace rdmad {

std::vector<Problem> device_problems(const DeviceState& d, const doctor::Facts& facts) {
    std::vector<Problem> problems;
    const std::string dev = "/sys/class/infiniband/" + d.name;
    if (!d.provider.empty() && !d.provider_installed) {
        problems.push_back({"provider-missing",
                            "error",
                            fmt::format("verbs provider {} is not installed: install {}",
                                        d.provider, d.provider_package),
                            {fmt::format("/etc/libibverbs.d/{}.driver = absent", d.provider)},
                            fmt::format("install {}", d.provider_package)});
    } else if (d.provider.empty()) {
        problems.push_back(
            {"no-provider",
             "warning",
             d.kernel_driver.empty()
                 ? std::string("kernel driver unknown: no verbs provider can be chosen")
                 : fmt::format("rdma-core has no verbs provider for kernel driver {}",
                               d.kernel_driver),
             {dev + "/device/driver = " + (d.kernel_driver.empty() ? "absent" : d.kernel_driver)},
             ""});
    }
    auto checks = doctor::run_checks(d, facts);
    // One fault, one problem: when the doctor knows ib_uverbs is not loaded, its
    // "module-ib-uverbs-absent" says why there is no verbs device, with the module's evidence.
    const bool explained = std::any_of(checks.begin(), checks.end(), [](const Problem& p) {
        return p.code == "module-ib-uverbs-absent";
    });
    if (d.verbs_device.empty() && !explained)
        problems.push_back({"no-verbs-device",
                            "warning",
                            "no /dev/infiniband/uverbs device: load ib_uverbs",
                            {"/sys/class/infiniband_verbs/uverbs*/ibdev = none names " + d.name},
                            "modprobe ib_uverbs"});
    for (auto& p : checks) {
        p.details_only = p.severity == "info";
        problems.push_back(std::move(p));
    }
    return problems;
}

void diagnose(DeviceState& d, const doctor::Facts& facts) {
    doctor::derive_mtus(d, facts);
    doctor::derive_recommended_gids(d, facts);
    d.problems = device_problems(d, facts);
}

bool in_problems_property(const Problem& p) {
    return !p.details_only;
}

} // namespace rdmad
