// SPDX-License-Identifier: MIT
//
// What the kernel's rdma_cm shows in configfs, as files in a umockdev testbed: one
// implementation for the preload that answers rdmad's mkdir (fake_configfs.c) and for the
// harness that plays the kernel re-creating a device (harness.hpp).
//
// Source: kernel drivers/infiniband/core/cma_configfs.c and cma.c.
//   make_cma_dev()        mkdir rdma_cm/<dev>: -ENODEV unless rdma_cm knows an RDMA device of
//                         that name (cma_enum_devices_by_ibdev(filter_by_name)); else the group
//                         with its default group "ports" and, by make_cma_ports(), one default
//                         group per port, named "%u" from 1 to phys_port_cnt
//   cma_port_group_type   each port group's attributes: default_roce_mode (Linux 4.5, commit
//                         045959db65c6 "IB/cma: Add configfs for rdma_cm") and default_roce_tos
//                         (Linux 4.11, Documentation/ABI/testing/configfs-rdma_cm: "Date:
//                         February 7, 2017, KernelVersion: 4.11.0")
//   default_roce_mode     shows sprintf("%s\n", ib_cache_gid_type_str()): "IB/RoCE v1\n" or
//                         "RoCE v2\n"
//   default_roce_tos      shows sprintf("%u\n") of a u8
//   cma_add_one()         a device's values when rdma_cm meets it (boot, driver load, any
//                         re-creation): ToS 0, and per port CMA_PREFERRED_ROCE_GID_TYPE
//                         (IB_GID_TYPE_ROCE_UDP_ENCAP, "RoCE v2") where the port supports it
//                         (roce_gid_type_mask_support()), else the first type it supports
//                         ("IB/RoCE v1" on an InfiniBand or iWARP port). The preference came
//                         with Linux 4.13 (commits 63a5f483af0e "IB/cma: Set default gid type
//                         to RoCEv2" and 3c7f67d1880d "IB/cma: Fix default RoCE type
//                         setting"); before, every port started on its first type, "IB/RoCE v1".
// The values live in the kernel's cma_device, not in the group: the group an admin made stays
// when its device goes (configfs removes a group only on rmdir) and, once a device of that name
// is back, shows that new device's values.
//
// A port's support for RoCE v2 is taken from the testbed's GID table, which the kernel fills
// with one entry per supported type for each address (roce_gid_mgmt.c): a port whose
// gid_attrs/types list "RoCE v2", or an Ethernet port with no typed entry yet. Writes are not
// checked (the files are plain files: a value written stays as written).
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/// Make `<sysroot>/sys/kernel/config/rdma_cm/<device>` (when absent) with `ports/<n>/` for each
/// port of `<sysroot>/sys/class/infiniband/<device>/ports/`, and write each port's files with
/// the values cma_add_one() gives a new device, over what they held. `before_4_11`: the kernel
/// of Linux 4.5 to 4.10, without default_roce_tos and with "IB/RoCE v1" as every port's
/// default. `sysroot` is "" where umockdev's preload maps /sys to the testbed, else the
/// testbed's root. 0, or an errno: ENODEV when the testbed has no such RDMA device, else what
/// mkdir(2), open(2) or write(2) answered.
int rdma_cm_model_fill_group(const char* sysroot, const char* device, int before_4_11);

#ifdef __cplusplus
}
#endif
