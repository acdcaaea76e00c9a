#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Soak (issue #14): --events uevents against one rdmad on the recorded host
procfs-hfi1-mlx4-mlx5 (umockdev, private bus; tests/dbus-fuzz/rdmad_rig.py), mixed with D-Bus
calls: port state flips with their change uevents on every port, a ConnectX-5 added and removed
every 500 events, Describe() and GetManagedObjects every 20 events, Reload() and
Reconcile(true) every 200. It samples rdmad's RSS and fd count every --sample events, checks that
every call is answered, and at the end that the bus equals a fresh start's on the same tree.
Run it on an ASan build with --build build-asan. See bench/README.md.

  bench/soak.py [--build build] [--events 100000] [--sample 5000]"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "dbus-fuzz"))
sys.path.insert(0, HERE)
from hotplug import RawSender  # noqa: E402
from rdmad_rig import ROOT, Rig  # noqa: E402
from gi.repository import GLib  # noqa: E402

HOST = os.path.join(HERE, "..", "tests", "fixtures", "hosts", "procfs-hfi1-mlx4-mlx5.umockdev")
PORTS = [  # (RDMA device syspath, port) of the fixture
    ("/sys/devices/pci0000:02/0000:02:00.0/0000:03:00.0/infiniband/mlx4_0", 1),
    ("/sys/devices/pci0000:02/0000:02:00.0/0000:03:00.0/infiniband/mlx4_0", 2),
    ("/sys/devices/pci0000:03/0000:03:00.0/0000:04:00.0/infiniband/mlx5_0", 1),
    ("/sys/devices/pci0000:04/0000:04:00.0/0000:05:00.0/infiniband/hfi1_0", 1),
]
# kernel: drivers/infiniband/core/sysfs.c state_show() prints "<n>: <name>" (IB_PORT_* values).
STATES = ["4: ACTIVE\n", "1: DOWN\n"]
NEW_PCI = "/devices/pci0000:08/0000:08:00.0/0000:09:00.0"


def new_device():
    """A ConnectX-5 function and its RDMA device in umockdev's text format."""
    return ("P: " + NEW_PCI + "\nE: SUBSYSTEM=pci\nE: DRIVER=mlx5_core\nE: PCI_CLASS=20000\n"
            "E: PCI_SLOT_NAME=0000:09:00.0\nA: class=0x020000\\n\nA: device=0x1017\\n\n"
            "L: driver=../../../../bus/pci/drivers/mlx5_core\nA: vendor=0x15b3\\n\n\n"
            "P: " + NEW_PCI + "/infiniband/mlx5_9\nE: SUBSYSTEM=infiniband\nE: NAME=mlx5_9\n"
            "L: device=../../../0000:09:00.0\nA: fw_ver=16.35.2000\\n\n"
            "A: node_guid=0c42:a103:0099:0001\\n\nA: node_type=1: CA\\n\n"
            "A: ports/1/link_layer=Ethernet\\n\nA: ports/1/phys_state=5: LinkUp\\n\n"
            "A: ports/1/rate=25 Gb/sec (1X EDR)\\n\nA: ports/1/state=4: ACTIVE\\n\n\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--events", type=int, default=100000)
    ap.add_argument("--sample", type=int, default=5000)
    args = ap.parse_args()
    rig = Rig(os.path.join(args.build, "daemon", "rdmad"), HOST)
    calls = slowest = 0
    try:
        rig.start()
        sender = RawSender(rig.tbroot)
        t0 = time.monotonic()
        samples = [(0, 0.0, rig.rss_kib(), rig.fds())]
        plugged = False
        for i in range(1, args.events + 1):
            if i % 500 == 0:  # plug or unplug the ConnectX-5 (2 uevents)
                ib = "/sys" + NEW_PCI + "/infiniband/mlx5_9"
                if not plugged:
                    rig.testbed.add_from_string(new_device())
                    sender.send("/sys" + NEW_PCI, "add")
                    sender.send(ib, "add")
                else:
                    sender.send(ib, "remove")
                    sender.send("/sys" + NEW_PCI, "remove")
                    rig.testbed.remove_device(ib)
                    rig.testbed.remove_device("/sys" + NEW_PCI)
                plugged = not plugged
            else:
                dev, port = PORTS[i % len(PORTS)]
                rig.testbed.set_attribute(dev, "ports/%d/state" % port, STATES[(i // 4) % 2])
                sender.send(dev, "change")
            if i % 20 == 0:
                t = time.monotonic()
                rig.call(ROOT, "org.rdmad1.Manager", "Describe", None, 10000)
                rig.managed_objects()
                calls += 2
                if i % 200 == 0:
                    # Calls that change nothing a fresh start would not have: a restart
                    # forgets runtime settings by design.
                    rig.call(ROOT, "org.rdmad1.Manager", "Reload", None, 10000)
                    rig.call(ROOT, "org.rdmad1.Manager", "Reconcile", GLib.Variant("(b)", (True,)),
                             10000)
                    calls += 2
                slowest = max(slowest, time.monotonic() - t)
            if i % args.sample == 0:
                if not rig.alive():
                    raise SystemExit("rdmad died after %d events:\n%s" % (i, rig.log()[-3000:]))
                samples.append((i, time.monotonic() - t0, rig.rss_kib(), rig.fds()))
                print("%7d events %6.0f s  RSS %6d KiB  fds %3d" % samples[-1], flush=True)
        sender.close()
        time.sleep(1.0)
        during = rig.managed_objects()
        st = rig.stop()
        if st != 0:
            raise SystemExit("rdmad exit status %s on SIGTERM" % st)
        rig.start(label="fresh")
        fresh = rig.managed_objects()
        rss = [s[2] for s in samples]
        fds = [s[3] for s in samples]
        print("%d events, %d calls (slowest round %.0f ms) in %.0f s; RSS KiB start %d end %d "
              "max %d; fds start %d end %d max %d; bus equal to a fresh start's: %s"
              % (args.events, calls, slowest * 1000, samples[-1][1], rss[0], rss[-1], max(rss),
                 fds[0], fds[-1], max(fds), during == fresh))
        if during != fresh:
            return 1
    finally:
        rig.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
