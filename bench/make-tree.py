#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write a generated sysfs tree of N ConnectX-5-like mlx5 RoCE PCI functions as plain
directories, in the layout umockdev's testbed uses, for rdmad's scale benchmarks:

    /usr/bin/python3 bench/make-tree.py --devices 1024 --out /tmp/rdmad-bench/tree-1024

then run a program under the umockdev preload against it:

    LD_PRELOAD=libumockdev-preload.so.0 UMOCKDEV_DIR=/tmp/rdmad-bench/tree-1024 ls /sys/class/infiniband

Why not a .umockdev file: umockdev 0.17.16 loads those super-linearly (64 devices ~4 s,
1,024 ~220 s; /work/shared/DESIGN.md "Pitfalls"), so the benchmark writes the testbed
directory itself, once, and keeps that time out of every figure.

The layout copies what `umockdev-run -d tests/fixtures/hosts/constructed-mlx5-roce.umockdev`
builds in $UMOCKDEV_DIR (checked with `ls -laR`):

  sys/devices/<path>/              real directories; attribute files; a `uevent` file holding
                                   the E: properties (SUBSYSTEM, DRIVER, NAME, INTERFACE,
                                   IFINDEX, MAJOR, MINOR, DEVNAME without /dev/)
  .../subsystem                    -> sys/bus/pci for PCI functions, sys/class/<subsys> for
                                   every other subsystem (auxiliary included)
  .../driver                       -> sys/bus/<bus>/drivers/<driver> (left dangling, as umockdev
                                   leaves it)
  .../device                       -> the parent PCI function
  sys/class/<subsys>/<name>        -> the device directory
  sys/bus/pci/devices/<bdf>        -> the PCI function
  sys/dev/char/<maj>:<min>         -> char devices (uverbs, umad)
  dev/                             empty (no device nodes: nothing here opens /dev)

Per RDMA device i (0 <= i < N), all one port, RoCE on Ethernet, LinkUp/ACTIVE at 100 Gb/s:

  PCI function    15b3:1017 (ConnectX-5), bound to mlx5_core; two functions per card
                  (function 0/1 on one bus), cards spread over PCI domains of 128 buses;
                  current/max_link_speed "8.0 GT/s PCIe" and current/max_link_width 16, on
                  the function and in its root port's directory
  RDMA device     mlx5_<i>, node type 1: CA, node/sys-image GUID from the MAC (mlx5 style)
  port 1          state, phys_state, link_layer, rate, lid, sm_lid, sm_sl, lid_mask_count,
                  cap_mask, pkeys/0 (a RoCE port's one-entry P_Key table);
                  counters/ (the 21 PMA counters) and hw_counters/ (29 mlx5 RoCE counters),
                  which rdmad never reads but node-exporter's infiniband collector does
  GID table       --gids entries (default 32; real mlx5 RoCE ports have 256): index 0/1 the
                  link-local GID as IB/RoCE v1 and RoCE v2, 2/3 an IPv4-mapped GID as v1/v2,
                  with gid_attrs/types/<i> and gid_attrs/ndevs/<i>; the rest all-zero GIDs
                  whose gid_attrs files are absent (a real kernel's read() fails with EINVAL;
                  a plain file cannot, so they are left out as the fixtures do)
  uverbs          uverbs<i> (231:192+i for the first 32, then dynamic major 238)
  umad            umad<i> (231:i for the first 64, then dynamic major 239), and
                  sys/class/infiniband_mad/abi_version (ibstat's libibumad needs it)
  auxiliary       mlx5_core.rdma.<i> bound to mlx5_ib.rdma
  netdev          en[P<dom>]p<bus>s0f<fn>np<fn>, ifindex 1002+i, type 1, operstate up,
                  carrier 1, flags 0x1003, mtu 1500, dev_port 0; plus lo (ifindex 1001)
                  under devices/virtual/net

With --kind mlx4, each RDMA device i is a ConnectX-3 VPI card (one PCI function, two ports)
instead, for bench/reconcile.sh (rdmad writes the port type into mlx4_port<n>):

  PCI function    15b3:1003 (ConnectX-3), class 0x028000, bound to mlx4_core, one function
                  per card, cards spread over PCI domains of 128 buses; `mlx4_port1` and
                  `mlx4_port2` read "ib\n" (plain files here: a write does not truncate)
  RDMA device     mlx4_<i>, node type 1: CA, node GUID 0002:c903:00a0:0000 + 4i, port GUIDs
                  +1/+2, sys-image GUID +3 (the mlx4 pattern of the hwloc-cx3-ib fixture);
                  fw_ver 2.42.5000, hca_type MT4099
  ports 1 and 2   InfiniBand, "4: ACTIVE", "5: LinkUp", "56 Gb/sec (4X FDR)", lid 2i+port,
                  sm_lid 0x1, sm_sl, lid_mask_count, cap_mask, pkeys/0; no counters (rdmad
                  never reads them and no other program runs on this tree)
  GID table       --gids entries: index 0 is fe80::<port GUID> with gid_attrs/types/0 "IB/RoCE
                  v1" (an IB port has no ndevs: read() fails, so the file is absent); the rest
                  all-zero GIDs without gid_attrs files
  uverbs          uverbs<i>, numbered as for mlx5
  umad            umad<2i+p-1> for port p (231:k for the first 64, then dynamic major 239)
  auxiliary       mlx4_core.ib.<i> bound to mlx4_ib.ib (kernels >= 6.6 bind mlx4_ib so)
  netdevs         IPoIB ib[P<dom>]p<bus>s0 (port 1) and ...s0d1 (port 2), type 32, ifindex
                  1002+2i and 1003+2i, dev_port 0/1; plus lo (ifindex 1001)

Deterministic; stdlib only. The default --kind mlx5 writes the same bytes as before --kind
existed.
"""

import argparse
import os
import shutil
import sys

ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"

PMA_COUNTERS = [
    "VL15_dropped", "excessive_buffer_overrun_errors", "link_downed", "link_error_recovery",
    "local_link_integrity_errors", "multicast_rcv_packets", "multicast_xmit_packets",
    "port_rcv_constraint_errors", "port_rcv_data", "port_rcv_errors", "port_rcv_packets",
    "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
    "port_xmit_constraint_errors", "port_xmit_data", "port_xmit_discards", "port_xmit_packets",
    "port_xmit_wait", "symbol_error", "unicast_rcv_packets", "unicast_xmit_packets",
]

HW_COUNTERS = [
    "duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err",
    "np_cnp_sent", "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence",
    "packet_seq_err", "req_cqe_error", "req_cqe_flush_error", "req_remote_access_errors",
    "req_remote_invalid_request", "resp_cqe_error", "resp_cqe_flush_error",
    "resp_local_length_error", "resp_remote_access_errors", "rnr_nak_retry_err",
    "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps",
    "roce_slow_restart_trans", "rp_cnp_handled", "rp_cnp_ignored", "rx_atomic_requests",
    "rx_icrc_encapsulated", "rx_read_requests", "rx_write_requests",
]


# PCIe link attributes of every mlx5 function and of its root port (drivers/pci/pci-sysfs.c;
# speeds as pci_speed_string() prints them): Gen3 x16 at Gen3 x16, as a ConnectX-5 runs.
PCIE_LINK = {"current_link_speed": "8.0 GT/s PCIe", "current_link_width": "16",
             "max_link_speed": "8.0 GT/s PCIe", "max_link_width": "16"}


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def attrs(directory, values):
    """values: {relative path: text}; a trailing newline is added, as sysfs prints it."""
    for rel, text in values.items():
        path = os.path.join(directory, rel)
        parent = os.path.dirname(path)
        if not os.path.isdir(parent):
            os.makedirs(parent)
        write(path, text + "\n")


def uevent(directory, props):
    write(os.path.join(directory, "uevent"), "".join("%s=%s\n" % kv for kv in props))


def symlink(target_abs, link_abs):
    parent = os.path.dirname(link_abs)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    os.symlink(os.path.relpath(target_abs, parent), link_abs)


class Tree:
    def __init__(self, root):
        self.root = root
        self.sys = os.path.join(root, "sys")

    def device(self, devpath, subsystem, name, props, values, bus=False):
        """A device directory at sys/devices/<devpath> with its uevent, subsystem link and
        sys/class (or sys/bus/<bus>/devices) entry."""
        d = os.path.join(self.sys, "devices", devpath)
        os.makedirs(d, exist_ok=True)
        attrs(d, values)
        uevent(d, [("SUBSYSTEM", subsystem)] + props)
        if bus:
            home = os.path.join(self.sys, "bus", subsystem)
            symlink(home, os.path.join(d, "subsystem"))
            symlink(d, os.path.join(home, "devices", name))
        else:
            home = os.path.join(self.sys, "class", subsystem)
            symlink(home, os.path.join(d, "subsystem"))
            symlink(d, os.path.join(home, name))
        return d

    def link(self, d, name, target_rel_sys):
        symlink(os.path.join(self.sys, target_rel_sys), os.path.join(d, name))

    def char(self, d, major, minor):
        symlink(d, os.path.join(self.sys, "dev", "char", "%d:%d" % (major, minor)))

    def uverbs(self, pci, pci_path, i, ibdev):
        """uverbs<i> of ibdev under the PCI function (231:192+i for the first 32, then 238)."""
        major, minor = (231, 192 + i) if i < 32 else (238, i - 32)
        uv = self.device(pci_path + "/infiniband_verbs/uverbs%d" % i, "infiniband_verbs",
                         "uverbs%d" % i, [("MAJOR", str(major)), ("MINOR", str(minor)),
                                          ("DEVNAME", "infiniband/uverbs%d" % i)],
                         {"abi_version": "1", "dev": "%d:%d" % (major, minor), "ibdev": ibdev})
        symlink(pci, os.path.join(uv, "device"))
        self.char(uv, major, minor)

    def umad(self, pci, pci_path, k, ibdev, port):
        """umad<k> of ibdev's port (231:k for the first 64, then 239)."""
        major, minor = (231, k) if k < 64 else (239, k - 64)
        um = self.device(pci_path + "/infiniband_mad/umad%d" % k, "infiniband_mad", "umad%d" % k,
                         [("MAJOR", str(major)), ("MINOR", str(minor)),
                          ("DEVNAME", "infiniband/umad%d" % k)],
                         {"dev": "%d:%d" % (major, minor), "ibdev": ibdev, "port": str(port)})
        symlink(pci, os.path.join(um, "device"))
        self.char(um, major, minor)

    def aux(self, pci_path, name, driver):
        """A bound auxiliary device <name> (modalias auxiliary:<name less its id>)."""
        modalias = "auxiliary:" + name.rsplit(".", 1)[0]
        a = self.device(pci_path + "/" + name, "auxiliary", name,
                        [("DRIVER", driver), ("MODALIAS", modalias)], {"modalias": modalias})
        self.link(a, "driver", "bus/auxiliary/drivers/" + driver)


def gid_str(b16):
    return ":".join("%02x%02x" % (b16[i], b16[i + 1]) for i in range(0, 16, 2))


def new_tree(root):
    t = Tree(root)
    os.makedirs(os.path.join(root, "dev"))
    os.makedirs(os.path.join(t.sys, "class", "infiniband_mad"))
    write(os.path.join(t.sys, "class", "infiniband_mad", "abi_version"), "5\n")
    return t


def add_lo(t):
    t.device("virtual/net/lo", "net", "lo", [("INTERFACE", "lo"), ("IFINDEX", "1001")], {
        "addr_len": "6", "address": "00:00:00:00:00:00", "carrier": "1", "dev_port": "0",
        "ifindex": "1001", "iflink": "1001", "mtu": "65536", "operstate": "unknown",
        "type": "772",
    })


def pci_place(card):
    """(domain, bus, root port) of card number `card`: 128 buses per PCI domain."""
    dom, slot = divmod(card, 128)
    return dom, 1 + slot, "%04x:00:%02x.%d" % (dom, 1 + slot // 8, slot % 8)


def make_host(root, n, gids):
    t = new_tree(root)

    for i in range(n):
        card, fn = divmod(i, 2)
        dom, bus, rootport = pci_place(card)
        bdf = "%04x:%02x:00.%d" % (dom, bus, fn)
        pci_path = "pci%04x:00/%s/%s" % (dom, rootport, bdf)
        mac = [0x0C, 0x42, 0xA1, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF]
        mac_s = ":".join("%02x" % b for b in mac)
        guid = mac[:3] + [0x03, 0x00] + mac[3:]
        guid_s = ":".join("%02x%02x" % (guid[k], guid[k + 1]) for k in range(0, 8, 2))
        netdev = ("enp%ds0f%dnp%d" % (bus, fn, fn) if dom == 0
                  else "enP%dp%ds0f%dnp%d" % (dom, bus, fn, fn))
        ifindex = 1002 + i
        ibdev = "mlx5_%d" % i
        modalias = "pci:v000015B3d00001017sv000015B3sd00000008bc02sc00i00"

        pci = t.device(pci_path, "pci", bdf, [
            ("DRIVER", "mlx5_core"), ("PCI_CLASS", "20000"), ("PCI_ID", "15B3:1017"),
            ("PCI_SUBSYS_ID", "15B3:0008"), ("PCI_SLOT_NAME", bdf), ("MODALIAS", modalias),
        ], {
            "class": "0x020000", "device": "0x1017", "vendor": "0x15b3",
            "subsystem_device": "0x0008", "subsystem_vendor": "0x15b3", "modalias": modalias,
            **PCIE_LINK,
        }, bus=True)
        t.link(pci, "driver", "bus/pci/drivers/mlx5_core")
        # The root port directory holds its own link attributes (not a device of its own).
        attrs(os.path.dirname(pci), PCIE_LINK)

        link_local = gid_str([0xFE, 0x80, 0, 0, 0, 0, 0, 0, mac[0] ^ 2, mac[1], mac[2],
                              0xFF, 0xFE, mac[3], mac[4], mac[5]])
        ipv4 = gid_str([0] * 10 + [0xFF, 0xFF, 10, (i >> 8) & 0xFF, i & 0xFF, 1])
        port = {
            "cap_mask": "0x00010000", "lid": "0x0", "sm_lid": "0x0", "sm_sl": "0",
            "lid_mask_count": "0", "pkeys/0": "0xffff",
            "link_layer": "Ethernet", "phys_state": "5: LinkUp", "state": "4: ACTIVE",
            "rate": "100 Gb/sec (4X EDR)",
        }
        for c in PMA_COUNTERS:
            port["counters/" + c] = "0"
        for c in HW_COUNTERS:
            port["hw_counters/" + c] = "0"
        used = [(link_local, "IB/RoCE v1"), (link_local, "RoCE v2"),
                (ipv4, "IB/RoCE v1"), (ipv4, "RoCE v2")]
        for g in range(gids):
            if g < len(used):
                port["gids/%d" % g] = used[g][0]
                port["gid_attrs/types/%d" % g] = used[g][1]
                port["gid_attrs/ndevs/%d" % g] = netdev
            else:
                port["gids/%d" % g] = ZERO_GID
        values = {
            "board_id": "MT_0000000008", "fw_ver": "16.35.2000", "hca_type": "MT4119",
            "hw_rev": "0", "node_desc": "bench-host %s" % ibdev, "node_guid": guid_s,
            "node_type": "1: CA", "sys_image_guid": guid_s,
        }
        values.update({"ports/1/" + k: v for k, v in port.items()})
        ib = t.device(pci_path + "/infiniband/" + ibdev, "infiniband", ibdev,
                      [("NAME", ibdev)], values)
        symlink(pci, os.path.join(ib, "device"))

        t.uverbs(pci, pci_path, i, ibdev)

        t.umad(pci, pci_path, i, ibdev, 1)

        t.aux(pci_path, "mlx5_core.rdma.%d" % i, "mlx5_ib.rdma")

        net = t.device(pci_path + "/net/" + netdev, "net", netdev, [
            ("INTERFACE", netdev), ("IFINDEX", str(ifindex)),
        ], {
            "addr_len": "6", "address": mac_s, "carrier": "1", "dev_port": "0",
            "ifindex": str(ifindex), "iflink": str(ifindex), "mtu": "1500",
            "operstate": "up", "type": "1", "flags": "0x1003",
        })
        symlink(pci, os.path.join(net, "device"))

    add_lo(t)


def make_host_mlx4(root, n, gids):
    """N ConnectX-3 VPI cards in InfiniBand mode (see the docstring, --kind mlx4)."""
    t = new_tree(root)
    modalias = "pci:v000015B3d00001003sv000015B3sd00000050bc02sc80i00"
    for i in range(n):
        dom, bus, rootport = pci_place(i)
        bdf = "%04x:%02x:00.0" % (dom, bus)
        pci_path = "pci%04x:00/%s/%s" % (dom, rootport, bdf)
        base = 0x0002C90300A00000 + 4 * i
        guids = [":".join("%04x" % ((g >> s) & 0xFFFF) for s in (48, 32, 16, 0))
                 for g in (base, base + 1, base + 2, base + 3)]
        ibdev = "mlx4_%d" % i
        netdev_base = "ibp%ds0" % bus if dom == 0 else "ibP%dp%ds0" % (dom, bus)

        pci = t.device(pci_path, "pci", bdf, [
            ("DRIVER", "mlx4_core"), ("PCI_CLASS", "28000"), ("PCI_ID", "15B3:1003"),
            ("PCI_SUBSYS_ID", "15B3:0050"), ("PCI_SLOT_NAME", bdf), ("MODALIAS", modalias),
        ], {
            "class": "0x028000", "device": "0x1003", "vendor": "0x15b3",
            "subsystem_device": "0x0050", "subsystem_vendor": "0x15b3", "modalias": modalias,
            "mlx4_port1": "ib", "mlx4_port2": "ib",
        }, bus=True)
        t.link(pci, "driver", "bus/pci/drivers/mlx4_core")

        values = {
            "board_id": "MT_1090120019", "fw_ver": "2.42.5000", "hca_type": "MT4099",
            "hw_rev": "1", "node_desc": "bench-host %s" % ibdev, "node_guid": guids[0],
            "node_type": "1: CA", "sys_image_guid": guids[3],
        }
        for p in (1, 2):
            port = {
                "cap_mask": "0x02514868", "lid": "0x%x" % (2 * i + p), "sm_lid": "0x1",
                "sm_sl": "0", "lid_mask_count": "0", "pkeys/0": "0xffff",
                "link_layer": "InfiniBand", "phys_state": "5: LinkUp", "state": "4: ACTIVE",
                "rate": "56 Gb/sec (4X FDR)",
                "gids/0": "fe80:0000:0000:0000:" + guids[p],
                "gid_attrs/types/0": "IB/RoCE v1",
            }
            for g in range(1, gids):
                port["gids/%d" % g] = ZERO_GID
            values.update({"ports/%d/%s" % (p, k): v for k, v in port.items()})
        ib = t.device(pci_path + "/infiniband/" + ibdev, "infiniband", ibdev,
                      [("NAME", ibdev)], values)
        symlink(pci, os.path.join(ib, "device"))

        t.uverbs(pci, pci_path, i, ibdev)

        t.aux(pci_path, "mlx4_core.ib.%d" % i, "mlx4_ib.ib")

        for p in (1, 2):
            k = 2 * i + p - 1
            t.umad(pci, pci_path, k, ibdev, p)

            netdev = netdev_base + ("" if p == 1 else "d1")
            ifindex = 1002 + k
            guid_bytes = ":".join("%02x" % ((base + p) >> (8 * b) & 0xFF) for b in range(7, -1, -1))
            net = t.device(pci_path + "/net/" + netdev, "net", netdev, [
                ("INTERFACE", netdev), ("IFINDEX", str(ifindex)),
            ], {
                "addr_len": "20",
                "address": "80:00:02:%02x:fe:80:00:00:00:00:00:00:%s" % (0x08 + p - 1,
                                                                          guid_bytes),
                "carrier": "1", "dev_id": "0x%x" % (p - 1), "dev_port": str(p - 1),
                "ifindex": str(ifindex), "iflink": str(ifindex), "mtu": "2044",
                "operstate": "up", "type": "32",
            })
            symlink(pci, os.path.join(net, "device"))

    add_lo(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", type=int, required=True, help="number of RDMA devices")
    ap.add_argument("--gids", type=int, default=32,
                    help="GID table entries per port, 4 of them used (default 32)")
    ap.add_argument("--kind", choices=("mlx5", "mlx4"), default="mlx5",
                    help="mlx5: ConnectX-5 RoCE functions (default); mlx4: ConnectX-3 VPI "
                         "cards with two InfiniBand ports")
    ap.add_argument("--out", required=True, help="testbed directory to create (UMOCKDEV_DIR)")
    ap.add_argument("--force", action="store_true", help="replace --out if it exists")
    a = ap.parse_args()
    if a.devices < 1 or a.gids < 4:
        ap.error("need --devices >= 1 and --gids >= 4")
    if os.path.lexists(a.out):
        if not a.force:
            ap.error("%s exists (use --force)" % a.out)
        shutil.rmtree(a.out)
    tmp = a.out + ".tmp"
    if os.path.lexists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    (make_host_mlx4 if a.kind == "mlx4" else make_host)(tmp, a.devices, a.gids)
    # Links inside are relative, so the finished tree can move into place.
    os.rename(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
