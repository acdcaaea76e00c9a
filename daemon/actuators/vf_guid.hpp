// SPDX-License-Identifier: MIT
//
// The node and port GUID of an InfiniBand SR-IOV VF, set on its PF's IPoIB netdev through
// rtnetlink, as `ip link set DEV vf N node_guid G port_guid G` (iproute2 ip/iplink.c
// iplink_parse_vf()) does: RTM_SETLINK on the PF netdev's ifindex with IFLA_VFINFO_LIST >
// IFLA_VF_INFO > IFLA_VF_IB_NODE_GUID / IFLA_VF_IB_PORT_GUID, each a `struct ifla_vf_guid
// { __u32 vf; __u64 guid; }` (include/uapi/linux/if_link.h). The kernel's do_setvfinfo()
// (net/core/rtnetlink.c) returns after the first GUID attribute of one IFLA_VF_INFO, so each
// GUID goes in an IFLA_VF_INFO of its own (do_setlink() runs every one of the list);
// handle_vf_guid() answers EOPNOTSUPP for a netdev that is not InfiniBand (dev->type), and a
// driver without ndo_set_vf_guid does too.
//
// mlx5 (drivers/infiniband/hw/mlx5/ib_virt.c set_vf_node_guid()/set_vf_port_guid()) writes the
// GUID into the VF's HCA vport context in the firmware; the VF's RDMA device reads its node GUID
// (sysfs `node_guid`) and port GUID (GID 0) from there when its driver binds it, so a VF that is
// bound shows the new GUIDs only once it is bound again (NVIDIA MLNX_OFED manual, "Single Root
// IO Virtualization (SR-IOV)": unbind and bind the VF after `ip link set ... node_guid`).
#pragma once

#include "actuators/dcb_client.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rdmad {

/// One VF's GUIDs to set.
struct VfGuidRequest {
    int32_t ifindex = 0;   ///< the PF's IPoIB netdev
    std::string netdev;    ///< its name, for messages
    uint32_t vf = 0;       ///< the VF's index on the PF
    uint64_t node = 0;     ///< host order, the first byte of the text most significant
    uint64_t port = 0;
    std::string vf_pci;    ///< the VF's PCI address ("0000:0c:00.1")
    std::string vf_device; ///< its RDMA device ("mlx5_10"), where the GUIDs are read back
};

struct VfGuidWrite {
    int error = 0; ///< errno of the socket or the kernel's answer (EOPNOTSUPP, EINVAL...); 0 ok
    /// The kernel took the GUIDs but the VF's device reads others back (mlx5: until the VF's
    /// driver binds it again)
    bool pending = false;
    std::string message; ///< for the admin; "" when the VF reads back what was asked
    bool ok() const { return error == 0 && !pending; }
};

/// The RTM_SETLINK request for `r` with sequence number `seq`, NLM_F_ACK asked: the bytes to
/// send (each GUID in an IFLA_VF_INFO of its own).
std::vector<uint8_t> vf_guid_request(const VfGuidRequest& r, uint32_t seq);

/// Where RDMA devices are, whatever their parent (the PCI function, or mlx5's auxiliary device
/// mlx5_core.rdma.N below it since Linux 5.11).
inline constexpr const char* kInfinibandClassDir = "/sys/class/infiniband";

/// Send `r` on `transport`, wait for the kernel's ACK (its error becomes `error`), then read
/// back the VF's `<class_dir>/<vf_device>/node_guid` and, when the port has one,
/// `ports/1/gids/0` (its interface ID is the port GUID): a difference is `pending`. Never
/// retries.
VfGuidWrite set_vf_guids(dcb::NetlinkTransport& transport, const VfGuidRequest& r,
                         const std::string& class_dir = kInfinibandClassDir);

} // namespace rdmad
