// SPDX-License-Identifier: MIT
//
// What keeps an RDMA device from working, as (code, severity, text) with the remedy.
#pragma once

#include "doctor/facts.hpp"
#include "inventory/model.hpp"

#include <vector>

namespace rdmad {

/// The problems of one device, from its already-read state:
///  - "provider-missing" (error): the provider is known but not installed; text names the
///    package ("install ibverbs-providers");
///  - "no-provider" (warning): rdma-core has no provider for the kernel driver;
///  - "no-verbs-device" (warning): no /dev/infiniband/uverbsN, unless the doctor's
///    "module-ib-uverbs-absent" says why (ib_uverbs known not loaded): one problem per fault;
///  - then every doctor check (doctor/doctor.hpp run_checks()), among them "port-not-active"
///    (warning), one per port whose state is not ACTIVE, with the reason.
/// Libibverbs silently drops a device for the first three (DOMAIN.md §4.1, §7.6). `facts`
/// carries the netdevs and the host; without them the checks that need them say "unknown".
/// Each problem has evidence and a remedy where one can be given.
std::vector<Problem> device_problems(const DeviceState& device, const doctor::Facts& facts = {});

/// What the doctor derives and finds on `device`, in place: its ports' netdev and active
/// MTUs (doctor/roce_mtu.hpp derive_mtus()), then `problems` = device_problems().
void diagnose(DeviceState& device, const doctor::Facts& facts);

/// True for every problem but the doctor's own info-level findings (Problem::details_only):
/// what the `Problems` D-Bus property shows. `ProblemDetails` shows them all.
bool in_problems_property(const Problem& p);

} // namespace rdmad
