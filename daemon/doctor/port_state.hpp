// SPDX-License-Identifier: MIT
//
// Why a port is not ACTIVE, as one named reason.
#pragma once

#include "doctor/facts.hpp"

#include <vector>

namespace rdmad::doctor {

/// Code "port-not-active" (warning, port = the port's number) when `port` of `d` is not ACTIVE
/// (or ACTIVE_DEFER), with one named reason from its link layer, `state`, `phys_state`, `lid`,
/// `sm_lid`, whether `d` is an SR-IOV VF and, for an Ethernet port, its netdev (`netdev`, null
/// when unknown):
///  - InfiniBand/OPA: DOWN + Polling: no link partner; DOWN + Disabled: disabled locally, or on a
///    VF not enabled by the subnet manager; INIT + LinkUp + SM LID 0: no subnet manager;
///    INIT + SM LID set + LID 0 or 0xffff: the SM knows the port but has not configured it;
///    ARMED: waiting for the SM to activate it.
///  - Ethernet (RoCE, iWARP): the netdev administratively down (`flags` without IFF_UP), without
///    carrier (`carrier` 0), or up with carrier (reason unknown, driver side).
///  - Anything else (EFA's "unspecified", unknown transports, unreadable files): the state and
///    "reason unknown", no IB or RoCE advice.
/// Port states: kernel include/rdma/ib_verbs.h enum ib_port_state; physical states: IBTA spec
/// vol. 1 PortPhysicalState, as drivers/infiniband/core/sysfs.c prints them (DOMAIN.md §3.2).
std::vector<Problem> check_port_state(const DeviceState& d, const PortState& port,
                                      const LinkState* netdev);

} // namespace rdmad::doctor
