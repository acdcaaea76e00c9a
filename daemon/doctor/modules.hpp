// SPDX-License-Identifier: MIT
//
// Which kernel modules each RDMA consumer needs, and whether the host has them.
#pragma once

#include "doctor/facts.hpp"

#include <vector>

namespace rdmad::doctor {

/// One problem per module a consumer of `d` needs and the host lacks (state "absent"), or
/// cannot tell (state "unknown" or the module missing from `host`: "module-unknown", info):
///  - "module-ib-uverbs-absent" (warning): every verbs application (libibverbs opens
///    /dev/infiniband/uverbsN) fails; only when `d` has no verbs device either;
///  - "module-rdma-ucm-absent" (info): RDMA-CM applications (rdma_cm, MPI and NCCL over rdmacm,
///    NFS over RDMA tools) fail to open /dev/infiniband/rdma_cm;
///  - "module-ib-umad-absent" (info, InfiniBand/OPA ports only): opensm, ibstat, ibacm and
///    srp_daemon fail (no /dev/infiniband/umadN);
///  - "module-ib-ipoib-absent" (info, InfiniBand ports only, none with a netdev): no IPoIB
///    netdevs.
/// Not for transport "unspecified" (EFA) beyond ib_uverbs. `host` null: nothing.
std::vector<Problem> check_modules(const DeviceState& d, const HostFacts* host);

} // namespace rdmad::doctor
