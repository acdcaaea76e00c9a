// SPDX-License-Identifier: MIT
//
// The active MTU of a RoCE port, which follows its netdev's MTU.
#pragma once

#include "doctor/facts.hpp"

#include <cstdint>
#include <vector>

namespace rdmad::doctor {

/// The RoCE active MTU in bytes for a netdev MTU of `netdev_mtu` bytes: the MTU minus the 96
/// bytes of RoCE headers (GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4), rounded
/// down to 4096, 2048, 1024, 512 or 256; 0 below 352 (no IB MTU fits).
/// 1500 -> 1024, 4096 -> 2048, 4200 -> 4096, 9000 -> 4096.
/// Source: kernel include/rdma/ib_addr.h iboe_get_mtu(), include/rdma/ib_pack.h (IB_*_BYTES).
uint32_t roce_active_mtu(uint32_t netdev_mtu);

/// The smallest netdev MTU that gives a RoCE active MTU of 4096 (4096 + 96 = 4192).
constexpr uint32_t kMtuFor4096 = 4192;

/// Fill each port's `netdev_mtu` (its netdev's MTU, 0 when not known) and, for RoCE ports,
/// `active_mtu` (roce_active_mtu() of it; 0 for other transports: an InfiniBand port's active
/// MTU is not in sysfs).
void derive_mtus(DeviceState& d, const Facts& facts);

/// For a RoCE port with a netdev: "roce-mtu-2048" (warning) when the netdev MTU lies in
/// 4096-4191 (it gives 2048; the remedy names 4192 or more); "roce-mtu-unknown" (info) when the
/// port's netdev or its MTU is not known. Nothing for other transports.
std::vector<Problem> check_roce_mtu(const DeviceState& d, const PortState& port,
                                    const LinkState* netdev);

} // namespace rdmad::doctor
