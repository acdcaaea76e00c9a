// SPDX-License-Identifier: MIT
#include "doctor/modules.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace rdmad::doctor {
namespace {

const ModuleState* find(const HostFacts& host, const std::string& name) {
    for (const auto& m : host.modules)
        if (m.name == name)
            return &m;
    return nullptr;
}

void need(const HostFacts& host, const std::string& module, const std::string& code,
          const std::string& severity, const std::string& fails, std::vector<Problem>& out) {
    const ModuleState* m = find(host, module);
    if (m && (m->state == "loaded" || m->state == "built-in"))
        return;
    Problem pr;
    if (m)
        pr.evidence.assign(m->evidence.begin(), m->evidence.end());
    if (!m || m->state != "absent") {
        pr.code = "module-unknown";
        pr.severity = "info";
        pr.text = fmt::format("whether {} is loaded is unknown", module);
    } else {
        pr.code = code;
        pr.severity = severity;
        pr.text = fmt::format("kernel module {} is not loaded: {}", module, fails);
        pr.remedy = fmt::format("modprobe {} (and list it in /etc/modules-load.d/ or "
                                "/etc/rdma/modules/rdma.conf to load it at boot)",
                                module);
    }
    out.push_back(std::move(pr));
}

} // namespace

std::vector<Problem> check_modules(const DeviceState& d, const HostFacts* host) {
    std::vector<Problem> out;
    if (!host)
        return out;
    if (d.verbs_device.empty())
        need(*host, "ib_uverbs", "module-ib-uverbs-absent", "warning",
             "verbs applications cannot open /dev/infiniband/uverbsN", out);
    const bool unspecified = std::all_of(d.ports.begin(), d.ports.end(), [](const PortState& p) {
        return p.transport == "unspecified";
    });
    if (unspecified)
        return out;
    need(*host, "rdma_ucm", "module-rdma-ucm-absent", "info",
         "RDMA-CM applications (librdmacm: rping, MPI or NCCL over rdmacm) cannot open "
         "/dev/infiniband/rdma_cm",
         out);
    const bool fabric = std::any_of(d.ports.begin(), d.ports.end(), [](const PortState& p) {
        return is_fabric_transport(p.transport);
    });
    const bool ib = std::any_of(d.ports.begin(), d.ports.end(),
                                [](const PortState& p) { return p.transport == "InfiniBand"; });
    if (fabric)
        need(*host, "ib_umad", "module-ib-umad-absent", "info",
             "InfiniBand management (opensm, ibstat, ibacm, srp_daemon) cannot open "
             "/dev/infiniband/umadN",
             out);
    // An IPoIB netdev on an InfiniBand port is ib_ipoib's own (drivers/infiniband/ulp/ipoib
    // creates them): it is loaded, whatever its marks say (a recorded host without
    // module/ib_ipoib listed ib0 beside "no IPoIB netdevs (ib0 ...)").
    const bool ipoib = std::any_of(d.ports.begin(), d.ports.end(), [](const PortState& p) {
        return p.transport == "InfiniBand" && !p.netdev.empty();
    });
    if (ib && !ipoib)
        need(*host, "ib_ipoib", "module-ib-ipoib-absent", "info",
             "no IPoIB netdevs (ib0 ...) for IP over InfiniBand", out);
    return out;
}

} // namespace rdmad::doctor
