// SPDX-License-Identifier: MIT
//
// A libmnl netlink socket, closed when it goes (rtnetlink monitor, DCB transport).
#pragma once

#include <libmnl/libmnl.h>
#include <memory>

namespace rdmad {

struct MnlSocketClose {
    void operator()(mnl_socket* s) const { mnl_socket_close(s); }
};
using MnlSocket = std::unique_ptr<mnl_socket, MnlSocketClose>;

} // namespace rdmad
