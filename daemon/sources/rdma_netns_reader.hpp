// SPDX-License-Identifier: MIT
//
// The RDMA network namespace mode as a source (DOMAIN.md, settings table: "RDMA netns mode"):
// whether every RDMA device is visible in every network namespace ("shared", the kernel's
// default) or only in the one it belongs to ("exclusive").
//
//   /sys/module/ib_core/parameters/netns_mode   kernel drivers/infiniband/core/device.c:
//                                                `bool ib_devices_shared_netns = true;
//                                                module_param_named(netns_mode,
//                                                ib_devices_shared_netns, bool, 0444)`, printed
//                                                "Y\n" (shared) or "N\n" (exclusive) by
//                                                kernel/params.c param_get_bool(); `rdma system
//                                                set netns` changes it at run time (EBUSY while
//                                                other namespaces exist); absent while ib_core is
//                                                not loaded
//   <modprobe_dir>/rdmad-ib_core.conf           `options ib_core netns_mode=0|1`, rdmad's own
//                                                file (actuators/modprobe.hpp), taken at the next
//                                                load of ib_core (a reboot, or every RDMA module
//                                                unloaded and loaded again)
#pragma once

#include "inventory/model.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace rdmad {

/// "shared" for true, "exclusive" for false.
std::string netns_mode_name(bool shared);

/// The mode rdmad's modprobe.d file asks ("shared", "exclusive"); nullopt when the file is
/// absent, unreadable (read like an admin's file: no FIFO, at most 4 KiB) or sets no valid
/// netns_mode.
std::optional<std::string> read_ib_core_modprobe(const std::string& modprobe_dir);

/// The mode the loaded ib_core runs with; nullopt when ib_core is not loaded or the value
/// does not parse.
std::optional<std::string> loaded_netns_mode();

/// Both, whether rdmad's file carries its header, with `desired` (`[daemon] rdma_netns_mode`) as given: what a plan compares.
RdmaNetnsState read_rdma_netns(const std::string& modprobe_dir, const std::string& desired);

} // namespace rdmad
