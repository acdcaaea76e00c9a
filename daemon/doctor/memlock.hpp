// SPDX-License-Identifier: MIT
//
// Whether RDMA applications will be allowed to pin the memory they register.
#pragma once

#include "doctor/facts.hpp"

#include <vector>

namespace rdmad::doctor {

/// Below this soft RLIMIT_MEMLOCK (1 GiB) an RDMA application runs out of registrable memory
/// at the first large buffer: 64 KiB (the kernel's old default) and 8 MiB (its default since
/// Linux 5.16, mm: MLOCK_LIMIT) are the limits admins meet.
constexpr uint64_t kMemlockFloor = uint64_t{1} << 30;

/// "1 GiB", "8 MiB", "64 KiB", "512 bytes", "unlimited".
std::string memlock_text(uint64_t bytes);

/// The launchers' locked-memory limits (HostFacts::memlock), the same on every device:
///  - "memlock-low" (warning), one per launcher name (slurmd, kubelet, ...) with processes
///    whose soft limit is below kMemlockFloor (the lowest named, the first 3 as evidence):
///    what they start inherits it; the remedy a LimitMEMLOCK=infinity drop-in for its unit,
///    then Reload;
///  - "memlock-default-low" (info): systemd's DefaultLimitMEMLOCK= (or, unset, PID 1's own
///    limit, which services get) below kMemlockFloor.
/// Nothing when the facts were not read (`host` null or memlock.read false).
std::vector<Problem> check_memlock(const HostFacts* host);

} // namespace rdmad::doctor
