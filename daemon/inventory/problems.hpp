// SPDX-License-Identifier: MIT
//
// What keeps an RDMA device from working, as (code, severity, text) with the remedy.
#pragma once

#include "inventory/model.hpp"

#include <vector>

namespace rdmad {

/// The problems of one device, from its already-read state:
///  - "provider-missing" (error): the provider is known but not installed; text names the
///    package ("install ibverbs-providers");
///  - "no-provider" (warning): rdma-core has no provider for the kernel driver;
///  - "no-verbs-device" (warning): no /dev/infiniband/uverbsN (ib_uverbs not loaded);
///  - "port-not-active" (warning): one per port whose state is not ACTIVE.
/// Libibverbs silently drops a device for the first three (DOMAIN.md §4.1, §7.6).
std::vector<Problem> device_problems(const DeviceState& device);

} // namespace rdmad
