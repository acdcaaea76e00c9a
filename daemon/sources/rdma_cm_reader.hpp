// SPDX-License-Identifier: MIT
//
// RDMA-CM defaults per port as a source: the RoCE mode and ToS that rdma_cm gives a connection
// whose application did not choose them, read from configfs (DOMAIN.md §3.6, "Settings an RDMA
// host needs after every boot"). Sources, by the layout they give:
//
//   <root>/rdma_cm/                      kernel drivers/infiniband/core/cma_configfs.c
//                                        (cma_subsys "rdma_cm"), there when the rdma_cm module
//                                        is loaded, CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS=y and
//                                        configfs is mounted on <root>
//   <root>/rdma_cm/<dev>/                made by the admin with mkdir(2) (make_cma_dev(); ENODEV
//                                        for a name the kernel does not know); never by a read
//   <root>/rdma_cm/<dev>/ports/<n>/      made by the kernel with the group, n = 1..phys_port_cnt
//                                        (make_cma_ports())
//     default_roce_mode                  "IB/RoCE v1\n" or "RoCE v2\n" (default_roce_mode_show():
//                                        sprintf("%s\n", ib_cache_gid_type_str()); drivers/
//                                        infiniband/core/cache.c gid_type_str[]), since Linux 4.5
//     default_roce_tos                   "%u\n" of a u8 (default_roce_tos_show()), since Linux
//                                        4.11 (Documentation/ABI/testing/configfs-rdma_cm)
//
// The values live in the kernel's cma_device, not in the configfs group: removing the group
// (rmdir) keeps them, and they go when the device goes (cma_remove_one()). A group left from a
// device that went answers every read and write with ENODEV (cma_configfs_params_get()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inventory/model.hpp"

namespace rdmad {

/// Where configfs is mounted: systemd's sys-kernel-config.mount, the path the kernel makes
/// for it (fs/configfs/mount.c configfs_init(): sysfs_create_mount_point(kernel_kobj, "config")).
inline constexpr std::string_view kConfigfsRoot = "/sys/kernel/config";

/// The two values default_roce_mode shows and takes (drivers/infiniband/core/cache.c
/// gid_type_str[]; the same strings as `gid_attrs/types/<i>` and libibverbs' V1_TYPE, V2_TYPE).
inline constexpr std::string_view kRoceModeV1 = "IB/RoCE v1";
inline constexpr std::string_view kRoceModeV2 = "RoCE v2";

/// "ok", "no_group", "no_configfs", "unsupported", "failed".
std::string_view to_string(RdmaCmStatus status);

// RdmaCmStatus and RdmaCmActual are the Inventory's (inventory/model.hpp, PortState::rdma_cm).


/// default_roce_mode's text as the kernel prints it: exactly kRoceModeV1 or kRoceModeV2, with
/// the one trailing newline the kernel adds (or none: ib_cache_gid_parse_type_str() accepts
/// both on a write). nullopt for anything else ("Invalid GID type" included).
std::optional<std::string> parse_roce_mode(std::string_view text);

/// default_roce_tos's text as the kernel prints it ("%u\n" of a u8): decimal digits without a
/// sign or leading zero, at most 255, the trailing newline optional. nullopt otherwise.
std::optional<uint8_t> parse_roce_tos(std::string_view text);

/// A name the kernel could give an RDMA device and safe to join into a path: 1-63 bytes
/// (IB_DEVICE_NAME_MAX is 64 with the NUL), no '/' or NUL, not "." or "..".
bool is_rdma_device_name(std::string_view device);

/// `<root>/rdma_cm/<device>`.
std::string rdma_cm_group_path(const std::string& root, const std::string& device);

/// Whether `<root>` can hold rdma_cm groups: ok when `<root>/rdma_cm` is a directory, else
/// no_configfs or unsupported with a message naming the cure (`mount -t configfs none
/// /sys/kernel/config`, systemd's sys-kernel-config.mount; `modprobe rdma_cm`). A `<root>`
/// with no entry at all is taken as mounted only when statfs(2) says configfs (CONFIGFS_MAGIC
/// 0x62656570, private to fs/configfs/mount.c): an empty configfs and the bare mount point look
/// alike otherwise. Only `status`, `error` and `message` are set.
RdmaCmActual probe_rdma_cm(const std::string& root);

/// Port `port` of `device`, read from `<root>` without creating anything.
RdmaCmActual read_rdma_cm_port(const std::string& root, const std::string& device, uint32_t port);

/// read_rdma_cm_port() for each of `ports`, in their order (the probe of `<root>` done once).
std::vector<RdmaCmActual> read_rdma_cm(const std::string& root, const std::string& device,
                                       const std::vector<uint32_t>& ports);

} // namespace rdmad
