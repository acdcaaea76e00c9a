// SPDX-License-Identifier: MIT
#include "doctor/doctor.hpp"

#include "doctor/gid_choice.hpp"
#include "doctor/lossless.hpp"
#include "doctor/memlock.hpp"
#include "doctor/modules.hpp"
#include "doctor/node_description.hpp"
#include "doctor/partition.hpp"
#include "doctor/pcie.hpp"
#include "doctor/port_rate.hpp"
#include "doctor/port_state.hpp"
#include "doctor/roce_mtu.hpp"

namespace rdmad::doctor {

std::vector<Problem> run_checks(const DeviceState& d, const Facts& facts) {
    std::vector<Problem> out;
    auto add = [&](std::vector<Problem> ps) {
        for (auto& p : ps)
            out.push_back(std::move(p));
    };
    for (const auto& port : d.ports) {
        const LinkState* netdev = nullptr;
        if (facts.links && !port.netdev.empty())
            if (auto it = facts.links->find(port.netdev); it != facts.links->end())
                netdev = it->second;
        add(check_port_state(d, port, netdev));
        if (port.transport == "unspecified")
            continue;
        add(check_roce_mtu(d, port, netdev));
        add(check_gid(d, port));
        add(check_lossless(d, port));
        add(check_port_rate(d, port));
        add(check_partition(d, port));
    }
    add(check_pcie(d));
    add(check_node_description(d, facts.host));
    add(check_modules(d, facts.host));
    add(check_memlock(facts.host));
    return out;
}

} // namespace rdmad::doctor
