// SPDX-License-Identifier: MIT
//
// The node description the fabric's tools show for this host.
#pragma once

#include "doctor/facts.hpp"

#include <vector>

namespace rdmad::doctor {

/// For a device with an InfiniBand or OPA port: "node-description-no-hostname" (info) when
/// `node_desc` does not contain the host name's first label (e.g. still "localhost" or the
/// installer's name), which makes the node hard to find in ibnetdiscover, iblinkinfo and the
/// SM's logs; remedy: rdma-core's rdma-ndd service, which keeps `node_desc` as
/// "<hostname> <device>". "node-description-unknown" (info) when the host name is not known.
/// Nothing for other transports or when `host` is null.
std::vector<Problem> check_node_description(const DeviceState& d, const HostFacts* host);

} // namespace rdmad::doctor
