#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Fault injection against the real rdmad (issue #14). rdmad runs on a recorded host under
umockdev with tests/fault/fault.c preloaded before umockdev's library; each case turns faults
on through the shim's rules file, checks that rdmad survives, reports what failed and keeps
its last good state, then turns them off and checks that one rescan (SIGHUP) makes the bus
equal to what a fresh rdmad exports on the same tree and files.

  test-faults.py --rdmad PATH --fault-lib PATH --host FILE.umockdev [CASE...]"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dbus-fuzz"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from hotplug import RawSender  # noqa: E402  (uevents from a process without the preload)
from rdmad_rig import Failed, Rig, check, eventually  # noqa: E402
from gi.repository import Gio, GLib  # noqa: E402

MLX4_PCI = "/sys/devices/pci0000:02/0000:02:00.0/0000:03:00.0"
MLX5_IB = "/sys/devices/pci0000:03/0000:03:00.0/0000:04:00.0/infiniband/mlx5_0"


def differences(a, b):
    """What differs between two managed_objects() texts: [(path, interface.property, a, b)]."""
    a, b = json.loads(a), json.loads(b)
    out = []
    for path in sorted(set(a) | set(b)):
        if path not in a or path not in b:
            out.append((path, "(object)", path in a, path in b))
            continue
        for iface in sorted(set(a[path]) | set(b[path])):
            pa, pb = a[path].get(iface, {}), b[path].get(iface, {})
            for k in sorted(set(pa) | set(pb)):
                if pa.get(k) != pb.get(k):
                    out.append((path, iface + "." + k, pa.get(k), pb.get(k)))
    return out


class Case:
    """One rig; rdmad with the shim; the rules file at self.spec."""

    def __init__(self, args, config=None):
        self.args = args
        self.rig = Rig(args.rdmad, args.host, config=config)
        self.spec = self.rig.path("faults")

    def faults(self, *rules):
        """Replace the shim's rules (it rereads the file within 10 ms)."""
        tmp = self.spec + ".new"
        with open(tmp, "w") as f:
            f.write("\n".join(rules) + "\n")
        os.rename(tmp, self.spec)
        time.sleep(0.05)

    def start(self, *rules, label="rdmad"):
        self.faults(*rules)
        self.rig.start(preload=[self.args.fault_lib], env={"RDMAD_FAULTS": self.spec},
                       label=label)

    def injected(self, what):
        """Faults the shim told of so far whose line contains `what`."""
        return [l for l in self.rig.log().splitlines() if l.startswith("rdmad-fault:") and what in l]

    def objects(self):
        return self.rig.managed_objects()

    def settled(self, timeout=30):
        """The export once it stays the same for half a second (the pass is over)."""
        deadline = time.monotonic() + timeout
        before = self.objects()
        while True:
            time.sleep(0.5)
            now = self.objects()
            if now == before or time.monotonic() > deadline:
                return now
            before = now

    def fresh(self):
        """Stop this rdmad (exit status 0), start one without faults on the same tree and
        files, and return its export."""
        st = self.rig.stop()
        check(st == 0, "rdmad exit status %s on SIGTERM after the faults (expected 0)" % st)
        self.faults()
        self.rig.start(label="fresh")
        out = self.objects()
        check(self.rig.stop() == 0, "the fresh rdmad did not exit 0")
        return out

    def rescan_equals_fresh(self):
        """Faults off, SIGHUP; the bus settles to what a fresh start exports."""
        self.faults()
        os.kill(self.rig.pid, signal.SIGHUP)
        after = self.settled()
        check(self.rig.alive(), "rdmad died after the rescan")
        fresh = self.fresh()
        check(after == fresh, "after the rescan the bus differs from a fresh start's: %s"
              % differences(after, fresh))
        return after

    def port(self, dev, n):
        for d in self.rig.describe()["Devices"]:
            if d["Name"] == dev:
                for p in d["Ports"]:
                    if p["Number"] == n:
                        return p
        return None

    def device(self, dev):
        for d in self.rig.describe()["Devices"]:
            if d["Name"] == dev:
                return d
        return None

    def close(self, keep=False):
        self.rig.close(keep=keep)


# ---- the cases ---------------------------------------------------------------------------

def case_sysfs_eio_at_start(args):
    """EIO reading every port's rate and the firmware version at start-up: the devices and
    ports stay, those values are unknown; the rescan reads them."""
    c = Case(args)
    try:
        c.start("read EIO */infiniband/*/ports/*/rate", "read EIO */infiniband/*/fw_ver")
        check(c.injected("rate"), "the shim injected no fault on rate")
        names = sorted(d["Name"] for d in c.rig.describe()["Devices"])
        check(names == ["hfi1_0", "mlx4_0", "mlx5_0"], "devices after EIO: %s" % names)
        for dev, n in (("mlx4_0", 1), ("mlx4_0", 2), ("mlx5_0", 1), ("hfi1_0", 1)):
            p = c.port(dev, n)
            check(p is not None, "%s port %d is gone after EIO on its rate" % (dev, n))
            # org.rdmad1(5): Rate empty and RateGbps -1 when unreadable.
            check(p["Rate"] == "" and p["RateGbps"] == -1,
                  "%s port %d: Rate %r, RateGbps %r" % (dev, n, p["Rate"], p["RateGbps"]))
            check(p["State"] == "ACTIVE", "%s port %d State %r" % (dev, n, p["State"]))
        check(c.device("mlx4_0")["FirmwareVersion"] == "", "FirmwareVersion read through EIO")
        warned = [l for l in c.rig.log().splitlines()
                  if "cannot read" in l and "Input/output error" in l]
        check(any("mlx4_0/ports/1/rate: Input/output error" in l for l in warned),
              "no warning for mlx4_0's port 1 rate in the log: %s" % warned[:5])
        c.rescan_equals_fresh()
    finally:
        c.close()


def case_sysfs_short_reads(args):
    """Every sysfs read returns at most one byte: the export is the same as without."""
    c = Case(args)
    try:
        c.start("read short */sys/*")
        check(c.injected("short"), "the shim made no short read")
        during = c.objects()
        fresh = c.fresh()
        check(during == fresh, "short reads changed the export: %s" % differences(during, fresh))
    finally:
        c.close()


def case_device_vanishes_mid_scan(args):
    """mlx5_0's directory is listed, then every open below it fails with ENOENT (the device
    went away during the scan): rdmad comes up, mlx4_0 and hfi1_0 are whole."""
    c = Case(args)
    try:
        c.start("open ENOENT */infiniband/mlx5_0/*", "open ENOENT */0000:03:00.0/0000:04:00.0/*")
        check(c.injected("mlx5_0"), "the shim injected no ENOENT")
        check(c.port("mlx4_0", 2)["Rate"] == "40 Gb/sec (4X QDR)", "mlx4_0 port 2 rate")
        check(c.port("hfi1_0", 1)["State"] == "ACTIVE", "hfi1_0 port 1 state")
        c.rescan_equals_fresh()
    finally:
        c.close()


NEW_PCI = "/devices/pci0000:08/0000:08:00.0/0000:09:00.0"
# A ConnectX-5 RoCE function and its RDMA device, attributes as the kernel prints them
# (drivers/infiniband/core/sysfs.c), in umockdev's text format.
NEW_DEVICE = ("P: " + NEW_PCI + "\nE: SUBSYSTEM=pci\nE: DRIVER=mlx5_core\nE: PCI_CLASS=20000\n"
              "E: PCI_ID=15B3:1017\nE: PCI_SLOT_NAME=0000:09:00.0\nA: class=0x020000\\n\n"
              "A: device=0x1017\\n\nL: driver=../../../../bus/pci/drivers/mlx5_core\n"
              "A: vendor=0x15b3\\n\n\n"
              "P: " + NEW_PCI + "/infiniband/mlx5_9\nE: SUBSYSTEM=infiniband\nE: NAME=mlx5_9\n"
              "L: device=../../../0000:09:00.0\nA: fw_ver=16.35.2000\\n\n"
              "A: hca_type=MT4119\\n\nA: node_guid=0c42:a103:0099:0001\\n\n"
              "A: node_type=1: CA\\n\nA: ports/1/gid_attrs/types/0=IB/RoCE v1\\n\n"
              "A: ports/1/gids/0=fe80:0000:0000:0000:0e42:a1ff:fe99:0001\\n\n"
              "A: ports/1/lid=0x0\\n\nA: ports/1/link_layer=Ethernet\\n\n"
              "A: ports/1/phys_state=5: LinkUp\\n\nA: ports/1/rate=25 Gb/sec (1X EDR)\\n\n"
              "A: ports/1/sm_lid=0x0\\n\nA: ports/1/state=4: ACTIVE\\n\n\n")


def hotplug(c, *rules):
    """Plug NEW_DEVICE (PCI function, then its RDMA device) with `rules` in force; rescan
    without them; the bus equals a fresh start's and has mlx5_9 whole."""
    c.start()
    hotplug_while(c, rules, injected="mlx5_9")


def hotplug_while(c, rules, injected, before_rescan=lambda: None):
    """hotplug() on a started rdmad: the shim must have told of a fault whose line holds
    `injected`; before_rescan() runs its checks on the settled bus."""
    c.faults(*rules)
    c.rig.testbed.add_from_string(NEW_DEVICE)
    sender = RawSender(c.rig.tbroot)
    sender.send("/sys" + NEW_PCI, "add")
    sender.send("/sys" + NEW_PCI + "/infiniband/mlx5_9", "add")
    sender.close()
    check(eventually(lambda: c.injected(injected)), "the shim injected no '%s'" % injected)
    c.settled()
    check(c.rig.alive(), "rdmad died during the hotplug")
    before_rescan()
    after = c.rescan_equals_fresh()
    check('"Name": "mlx5_9"' in after and '"Rate": "25 Gb/sec (1X EDR)"' in after,
          "mlx5_9 is not on the bus whole after the rescan")


def case_guid_unreadable_at_hotplug(args):
    """A device is plugged while its node GUID fails with EIO: after the rescan it has the
    path a fresh start gives it (its GUID's), not one kept from the fault."""
    c = Case(args)
    try:
        hotplug(c, "read EIO */mlx5_9/node_guid")
    finally:
        c.close()


def case_faults_during_hotplug(args):
    """A device is plugged while every third sysfs read fails with EIO, every seventh open
    with ENOENT, and the other reads are short: rdmad stays up; the rescan shows it whole."""
    c = Case(args)
    try:
        hotplug(c, "read EIO */sys/* every 3", "open ENOENT /sys/* every 7", "read short */sys/*")
    finally:
        c.close()


def case_slow_reads_at_start_and_hotplug(args):
    """Sysfs opens and reads that block 10 ms (every fifth open, every third read) at
    start-up and while a device is plugged: rdmad gets READY, stays up and answers; without
    them one rescan equals a fresh start, mlx5_9 whole."""
    c = Case(args)
    try:
        c.start("open slow /sys/* every 5", "read slow */sys/* every 3")
        check(c.injected("slow"), "the shim made no read slow at start-up")
        check(c.port("mlx5_0", 1)["State"] == "ACTIVE", "mlx5_0 port 1 is not ACTIVE after a "
              "slow start")
        hotplug_while(c, ("open slow /sys/* every 5", "read slow */sys/* every 3"), "slow")
    finally:
        c.close()


def case_uevents_reordered(args):
    """Uevents come in the wrong order (every second one swapped with the next) while a
    port goes DOWN and a device is plugged: rdmad stays up, and one rescan equals a fresh
    start."""
    c = Case(args)
    try:
        c.start()
        c.faults("recv reorder uevent every 2")
        c.rig.testbed.set_attribute(MLX5_IB, "ports/1/state", "1: DOWN\n")
        sender = RawSender(c.rig.tbroot)
        sender.send(MLX5_IB, "change")
        sender.close()
        hotplug_while(c, ("recv reorder uevent every 2",), "reorder uevent")
    finally:
        c.close()


def case_rtnetlink_truncated_reordered_slow(args):
    """rtnetlink datagrams cut to 20 bytes (every second), swapped with the next (every
    third) or held 10 ms while a real link comes and goes four times: rdmad stays up, and one
    rescan equals a fresh start."""
    c = Case(args)
    name = "rdmaflt%d" % (os.getpid() % 1000)
    try:
        c.start()
        c.faults("recv truncate route every 2", "recv reorder route every 3",
                 "recv slow route every 5")
        for _ in range(4):
            subprocess.run(["ip", "link", "del", name], capture_output=True)
            r = subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name",
                                name + "p"], capture_output=True)
            check(r.returncode == 0, "ip link add: %s" % r.stderr.decode())
            subprocess.run(["ip", "link", "set", name, "up"], capture_output=True)
            subprocess.run(["ip", "link", "del", name], capture_output=True)
        check(eventually(lambda: c.injected("truncate route")), "the shim truncated nothing")
        check(eventually(lambda: c.injected("reorder route")), "the shim reordered nothing")
        c.settled()
        check(c.rig.alive(), "rdmad died")
        c.rescan_equals_fresh()
    finally:
        subprocess.run(["ip", "link", "del", name], capture_output=True)
        c.close()


def case_uevent_overflow(args):
    """The uevent socket overflows (ENOBUFS, the event lost) while mlx5_0's port goes DOWN:
    rdmad says so in its log, resynchronises and shows the port DOWN."""
    c = Case(args)
    try:
        c.start()
        check(c.port("mlx5_0", 1)["State"] == "ACTIVE", "mlx5_0 port 1 starts ACTIVE")
        c.faults("recv ENOBUFS uevent")
        # kernel: drivers/infiniband/core/sysfs.c prints "<n>: <name>"; 1 is IB_PORT_DOWN.
        c.rig.testbed.set_attribute(MLX5_IB, "ports/1/state", "1: DOWN\n")
        sender = RawSender(c.rig.tbroot)
        sender.send(MLX5_IB, "change")
        sender.close()
        check(eventually(lambda: c.injected("ENOBUFS uevent")), "the shim injected no ENOBUFS")
        check(eventually(lambda: "udev monitor overflowed" in c.rig.log()),
              "rdmad did not report the overflow")
        check(eventually(lambda: c.port("mlx5_0", 1)["State"] == "DOWN"),
              "the resync did not read the port DOWN")
        check(c.rig.alive(), "rdmad died")
        c.rescan_equals_fresh()
    finally:
        c.close()


def case_rtnetlink_overflow(args):
    """rtnetlink overflows (ENOBUFS) while a real link comes and goes: rdmad rereads every
    link, stays up, and its bus stays equal to a fresh start's."""
    c = Case(args)
    name = "rdmaflt%d" % (os.getpid() % 1000)
    try:
        c.start()
        c.faults("recv ENOBUFS route")
        subprocess.run(["ip", "link", "del", name], capture_output=True)
        r = subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", name + "p"],
                           capture_output=True)
        check(r.returncode == 0, "ip link add: %s" % r.stderr.decode())
        subprocess.run(["ip", "link", "del", name], capture_output=True)
        check(eventually(lambda: c.injected("ENOBUFS route")), "the shim injected no ENOBUFS")
        check(eventually(lambda: "rtnetlink overflowed" in c.rig.log()),
              "rdmad did not report the overflow")
        check(c.rig.alive(), "rdmad died")
        c.rescan_equals_fresh()
    finally:
        subprocess.run(["ip", "link", "del", name], capture_output=True)
        c.close()


def set_port_type(c, t, persist=True):
    """SetPortType on mlx4_0 port 1; the error name, "" on success."""
    path = c.port("mlx4_0", 1)["Path"]
    try:
        c.rig.call(path, "org.rdmad1.Port", "SetPortType", GLib.Variant("(sb)", (t, persist)),
                   5000)
        return ""
    except GLib.Error as e:
        name = Gio.DBusError.get_remote_error(e)
        Gio.DBusError.strip_remote_error(e)
        return "%s: %s" % (name, e.message) if name else "local: " + e.message


def kernel_takes_auto(c):
    """What mlx4 does with "auto" written to mlx4_port1: it reads back "auto (ib)" (kernel:
    drivers/net/ethernet/mellanox/mlx4/main.c, show_port_type). umockdev's file keeps what was
    written; once rdmad wrote it, put the kernel's answer there."""
    f = c.rig.tbroot + MLX4_PCI + "/mlx4_port1"
    check(eventually(lambda: open(f).read() == "auto\n"),
          "rdmad did not write auto: %r" % open(f).read())
    with open(f, "w") as fh:
        fh.write("auto (ib)\n")


def state_files(c):
    return sorted(os.listdir(c.rig.path("state")))


def read_state(c):
    with open(c.rig.path("state/state.conf")) as f:
        return f.read()


def case_state_file_faults(args):
    """ENOSPC/EIO on write, fsync and rename of state.conf: the call fails with a named error,
    state.conf keeps its old content (never a part of the new one), no temporary file stays,
    the port keeps its last good desired type; short writes still write it whole; once the
    faults stop, the call succeeds and a fresh start exports the same."""
    c = Case(args)
    try:
        c.start()
        check(set_port_type(c, "ib") == "", "the first persist failed")
        old = read_state(c)
        check('"ib"' in old and '"auto"' not in old, "state.conf after SetPortType(ib): %r" % old)
        for rule in ("write ENOSPC */state/state.conf.*", "write EIO */state/state.conf.*",
                     "fsync EIO */state/state.conf.*", "fsync ENOSPC */state/state.conf.*",
                     "rename EIO */state/state.conf", "rename ENOSPC */state/state.conf"):
            c.faults(rule)
            err = set_port_type(c, "auto")
            check(c.injected(rule.split()[0] + " " + rule.split()[1]),
                  "%s: the shim injected nothing" % rule)
            check(err.startswith("org.rdmad1.Error."),
                  "%s: SetPortType answered %r, not an org.rdmad1.Error" % (rule, err or "success"))
            check(read_state(c) == old, "%s: state.conf changed: %r" % (rule, read_state(c)))
            check(state_files(c) == ["state.conf"], "%s: left %s" % (rule, state_files(c)))
            check(c.port("mlx4_0", 1)["DesiredPortType"] == "ib",
                  "%s: DesiredPortType %r" % (rule, c.port("mlx4_0", 1)["DesiredPortType"]))
            check(c.rig.alive(), "rdmad died after %s" % rule)
        # Syncing the directory fails after the rename: the file is new and whole, the call
        # says so (it said "failed" about a changed file, and rdmad then refused every later
        # persist as "changed since rdmad read it"), and the log warns.
        c.faults("fsync EIO */state")
        check(set_port_type(c, "auto") == "", "a persist whose directory sync failed: error")
        kernel_takes_auto(c)
        check(c.injected("fsync EIO"), "the shim injected no fsync EIO on the directory")
        check('port_type = [ "auto"' in read_state(c), "state.conf: %r" % read_state(c))
        check("syncing its directory failed" in c.rig.log(), "no warning in the log")
        check(c.port("mlx4_0", 1)["DesiredPortType"] == "auto", "DesiredPortType after it")
        # Short writes: the writer loops, the file is whole (the first content again).
        c.faults("write short */state/state.conf.*")
        err = set_port_type(c, "ib")
        check(err == "", "a persist with short writes failed: %s" % err)
        check(c.injected("write short"), "the shim made no short write")
        check(read_state(c) == old, "state.conf after short writes: %r" % read_state(c))
        check(state_files(c) == ["state.conf"], "left %s" % state_files(c))
        c.rescan_equals_fresh()
    finally:
        c.close()


CASES = {n[len("case_"):]: f for n, f in sorted(globals().items()) if n.startswith("case_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rdmad", required=True)
    ap.add_argument("--fault-lib", required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("cases", nargs="*", help="default: all of " + ", ".join(CASES))
    args = ap.parse_args()
    args.fault_lib = os.path.abspath(args.fault_lib)
    if os.getuid() != 0:
        raise SystemExit("test-faults: run as root")
    failed = 0
    for name in args.cases or CASES:
        t = time.monotonic()
        try:
            CASES[name](args)
            print("ok %s (%.1f s)" % (name, time.monotonic() - t), flush=True)
        except Failed as e:
            failed += 1
            print("FAIL %s: %s" % (name, e), flush=True)
        except Exception:
            failed += 1
            print("FAIL %s:\n%s" % (name, traceback.format_exc()), flush=True)
    print("%d passed, %d failed" % (len(args.cases or CASES) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
