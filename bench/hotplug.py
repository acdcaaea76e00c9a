#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Driver of bench/hotplug.sh (which starts the private bus and runs this under the umockdev
preload): time rdmad's answer to uevents on a umockdev testbed created in this process.

1. latency: flip one port's `state` file (4: ACTIVE <-> 1: DOWN), send a "change" uevent for
   its RDMA device, time until the PropertiesChanged(State) for that port arrives here;
   one event at a time.
2. burst: write N VF-like PCI functions (with a netdev each, or also an RDMA device each),
   send all their "add" uevents at once, time until InterfacesAdded has shown all of them.

Both are set against bench-sysfs-read, the bare re-read of the same files. See
bench/README.md. Prints progress to stderr and the tables to stdout."""

import argparse
import importlib.machinery
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

import proc_cpu  # noqa: E402  (bench/, beside this file)

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import Gio, GLib, UMockdev  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PRELOAD = "libumockdev-preload.so.0"
BUS = "org.rdmad1"
MANAGER = "/org/rdmad1"

mt = importlib.machinery.SourceFileLoader("make_tree", os.path.join(HERE, "make-tree.py")).load_module()

PF_PATH = "pci0000:00/0000:00:01.0/0000:01:00.0"  # make-tree's device 0 (mlx5_0)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def cpu_ns(pid):
    """Time on CPU of the process, all its threads (proc_cpu.py), ns."""
    ns = proc_cpu.process_cpu_ns(pid)
    if ns is None:
        raise ProcessLookupError(pid)
    return ns


def pct(values, p):
    s = sorted(values)
    if not s:
        return None
    k = (len(s) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def merge(src, dst):
    """Move src's entries into dst, descending into directories both have."""
    for name in os.listdir(src):
        a, b = os.path.join(src, name), os.path.join(dst, name)
        if os.path.isdir(b) and not os.path.islink(b) and os.path.isdir(a) \
                and not os.path.islink(a):
            merge(a, b)
        else:
            os.rename(a, b)


class Bed:
    """A umockdev testbed in this process holding make-tree's host of n devices."""

    def __init__(self, n, gids):
        self.tb = UMockdev.Testbed.new()
        self.root = self.tb.get_root_dir()
        gen = os.path.join(self.root, "gen")
        mt.make_host(gen, n, gids)
        merge(gen, self.root)  # the testbed already has sys/ (and maybe dev/) of its own
        shutil.rmtree(gen)
        self.tree = mt.Tree(self.root)

    def close(self):
        root = self.root
        self.tb = None
        # rm without the preload: shutil.rmtree here pays umockdev's sigprocmask pair on
        # every call and takes minutes for the 1,000-RDMA-VF tree.
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "UMOCKDEV_DIR")}
        subprocess.run(["rm", "-rf", root], env=env, check=False)


class Rdmad:
    """rdmad on a testbed; READY=1 and every later STATUS= (one per pass) over NOTIFY_SOCKET."""

    def __init__(self, args, root, work, extra_env=None):
        self.sock_path = os.path.join(work, "notify.sock")
        if os.path.exists(self.sock_path):
            os.unlink(self.sock_path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.sock_path)
        env = dict(os.environ)
        env["LD_PRELOAD"] = PRELOAD
        env["UMOCKDEV_DIR"] = root  # set by the testbed with setenv(), not in os.environ
        env["NOTIFY_SOCKET"] = self.sock_path
        env.update(extra_env or {})
        # --export on|off: rdmad.conf(5) [export] pointing into `work` (on) or "" (off);
        # "default" leaves rdmad's built-in directories (on when they exist on this machine).
        self.export_files = []
        conf = ""
        if args.export != "default" and "CONFIGURATION_DIRECTORY" not in (extra_env or {}):
            prom, nfd = os.path.join(work, "prom"), os.path.join(work, "nfd")
            for d in (prom, nfd):
                os.makedirs(d, exist_ok=True)
                for name in os.listdir(d):
                    os.unlink(os.path.join(d, name))
            on = args.export == "on"
            conf += ('[export]\nprometheus_dir = "%s"\nnfd_dir = "%s"\n'
                     % (prom if on else "", nfd if on else ""))
            if on:
                self.export_files = [os.path.join(prom, "rdmad.prom"), os.path.join(nfd, "rdmad")]
        # --dispatcher none|noop: rdmad.conf(5) [dispatcher] naming a directory in `work`,
        # empty (none) or with one script that exits 0 (noop); "default" leaves rdmad's own.
        if args.dispatcher != "default" and "CONFIGURATION_DIRECTORY" not in (extra_env or {}):
            scripts = os.path.join(work, "dispatcher.d")
            os.makedirs(scripts, exist_ok=True)
            for name in os.listdir(scripts):
                os.unlink(os.path.join(scripts, name))
            if args.dispatcher == "noop":
                noop = os.path.join(scripts, "10-noop")
                with open(noop, "w") as f:
                    f.write("#!/bin/sh\nexit 0\n")
                os.chmod(noop, 0o755)
            conf += '[dispatcher]\ndirectories = ["%s"]\n' % scripts
        if conf:
            etc = os.path.join(work, "export-etc")
            os.makedirs(etc, exist_ok=True)
            with open(os.path.join(etc, "rdmad.conf"), "w") as f:
                f.write(conf)
            env["CONFIGURATION_DIRECTORY"] = etc
        self.log_path = os.path.join(work, "rdmad.log")
        self.logf = open(self.log_path, "w")
        self.proc = subprocess.Popen([args.rdmad], env=env, stdout=self.logf,
                                     stderr=subprocess.STDOUT)
        self.statuses = []  # (monotonic ns, text)
        deadline = time.monotonic() + args.timeout
        while True:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit("rdmad did not send READY=1 (exit %s); see %s"
                                 % (self.proc.poll(), self.log_path))
            self.sock.settimeout(1.0)
            try:
                msg = self.sock.recv(65536).decode(errors="replace").split("\n")
            except socket.timeout:
                continue
            if "READY=1" in msg:
                break
        self.sock.setblocking(False)
        self.stop_reader = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        import select
        while not self.stop_reader:
            r, _, _ = select.select([self.sock], [], [], 0.2)
            if not r:
                continue
            while True:
                try:
                    msg = self.sock.recv(65536)
                except BlockingIOError:
                    break
                t = time.monotonic_ns()
                for line in msg.decode(errors="replace").split("\n"):
                    if line.startswith("STATUS="):
                        self.statuses.append((t, line[7:]))

    def alive(self):
        return self.proc.poll() is None

    def cpu_ns(self):
        return cpu_ns(self.proc.pid)

    def stop(self):
        self.stop_reader = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join()
        self.sock.close()
        self.logf.close()


class WriteCounter:
    """Counts the renames onto each export file (a new inode each) by polling stat() every
    millisecond in a thread; rdmad writes each at most every 250 ms, so none is missed."""

    def __init__(self, paths):
        self.paths, self.counts, self.stop_now = paths, [0] * len(paths), False
        self.ino = [self._ino(p) for p in paths]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @staticmethod
    def _ino(path):
        try:
            return os.stat(path).st_ino
        except FileNotFoundError:
            return None

    def _run(self):
        while not self.stop_now:
            for i, p in enumerate(self.paths):
                ino = self._ino(p)
                if ino is not None and ino != self.ino[i]:
                    self.counts[i] += 1
                    self.ino[i] = ino
            time.sleep(0.001)

    def stop(self):
        self.stop_now = True
        self.thread.join()
        return self.counts


class Watcher:
    """A Gio client on the private bus recording every signal rdmad emits, time-stamped in
    GDBus's worker thread (a connection filter), so the stamps do not wait for this
    process's main loop."""

    def __init__(self):
        addr = os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
        self.conn = Gio.DBusConnection.new_for_address_sync(
            addr, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
            | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
        self.owner = self.call("org.freedesktop.DBus", "/org/freedesktop/DBus",
                               "org.freedesktop.DBus", "GetNameOwner",
                               GLib.Variant("(s)", (BUS,)))[0]
        self.lock = threading.Lock()
        self.events = []  # (ns, member, path, detail)
        self.cond = threading.Condition(self.lock)
        self.filter_id = self.conn.add_filter(self._filter, None)
        self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                  "AddMatch", GLib.Variant("(s)", ("type='signal',sender='%s'" % self.owner,)))

    def call(self, dest, path, iface, method, params, timeout_ms=120000):
        return self.conn.call_sync(dest, path, iface, method, params, None,
                                   Gio.DBusCallFlags.NONE, timeout_ms, None).unpack()

    def _filter(self, conn, msg, incoming, _data):
        if incoming and msg.get_message_type() == Gio.DBusMessageType.SIGNAL \
                and msg.get_sender() == self.owner:
            t = time.monotonic_ns()
            member = msg.get_member()
            detail = None
            if member == "PropertiesChanged":
                body = msg.get_body()
                detail = (body.get_child_value(0).get_string(),
                          tuple(body.get_child_value(1).keys()))
            elif member == "InterfacesAdded":
                body = msg.get_body()
                detail = tuple(body.get_child_value(1).keys())
            with self.cond:
                self.events.append((t, member, msg.get_path(), detail))
                self.cond.notify_all()
        return msg

    def wait_for(self, pred, start, timeout, pos=None):
        """Block until pred(event) holds for an event at index >= start; return it. pred sees
        each event once; pos["next"], if given, is where a later call should resume."""
        deadline = time.monotonic() + timeout
        i = start
        with self.cond:
            while True:
                while i < len(self.events):
                    i += 1
                    if pos is not None:
                        pos["next"] = i
                    if pred(self.events[i - 1]):
                        return self.events[i - 1]
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def managed_objects(self):
        return self.call(BUS, MANAGER, "org.freedesktop.DBus.ObjectManager",
                         "GetManagedObjects", None)[0]

    def describe(self):
        return json.loads(self.call(BUS, MANAGER, "org.rdmad1.Manager", "Describe", None)[0])

    def close(self):
        self.conn.remove_filter(self.filter_id)
        self.conn.close_sync(None)


def bare_read(args, root, passes):
    """bench-sysfs-read: fastest of `passes` passes, under the preload and directly (ms)."""
    env = dict(os.environ)
    env["LD_PRELOAD"] = PRELOAD
    env["UMOCKDEV_DIR"] = root
    pre = subprocess.run([args.sysfs_read, "--passes", str(passes)], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    env.pop("LD_PRELOAD")
    env.pop("UMOCKDEV_DIR")
    direct = subprocess.run([args.sysfs_read, "--root", root, "--passes", str(passes)], env=env,
                            capture_output=True, text=True, check=True).stdout.split()
    return {"bare_preload_ms": int(pre[0]) / 1e3, "bare_direct_ms": int(direct[0]) / 1e3,
            "bare_files": int(pre[1]), "bare_devices": int(pre[4])}


# ---- 1. one "change" at a time ------------------------------------------------------------

def run_latency(args, n):
    log("latency: %d RDMA device(s), %d change events" % (n, args.events))
    t = time.monotonic()
    bed = Bed(n, args.gids)
    log("  testbed written in %.1f s (in no figure)" % (time.monotonic() - t))
    work = os.path.join(args.work, "latency-%d" % n)
    os.makedirs(work, exist_ok=True)
    rd = Rdmad(args, bed.root, work)
    w = Watcher()
    try:
        ib_sys = "/sys/devices/%s/infiniband/mlx5_0" % PF_PATH
        state_file = bed.root + ib_sys + "/ports/1/state"
        # The port object of mlx5_0.
        port_path = None
        objects = w.managed_objects() # once: GetManagedObjects per port was O(n^2) at 1,024
        for path, ifaces in objects.items():
            if "org.rdmad1.Port" in ifaces and "/port/" in path:
                dev = path.rsplit("/port/", 1)[0]
                if objects[dev]["org.rdmad1.Device"].get("Name") == "mlx5_0":
                    port_path = path
                    break
        if not port_path:
            raise SystemExit("no port object for mlx5_0 on the bus")
        state = "4: ACTIVE"
        lat, send_us, cpu, seen_states = [], [], [], set()
        c_start = rd.cpu_ns()
        for i in range(args.events):
            state = "1: DOWN" if state == "4: ACTIVE" else "4: ACTIVE"
            with open(state_file, "w") as f:
                f.write(state + "\n")
            start = len(w.events)
            c0 = rd.cpu_ns()
            t0 = time.monotonic_ns()
            bed.tb.uevent(ib_sys, "change")
            t1 = time.monotonic_ns()
            ev = w.wait_for(lambda e: e[1] == "PropertiesChanged" and e[2] == port_path
                            and "State" in e[3][1], start, args.event_timeout)
            if ev is None:
                raise SystemExit("event %d: no PropertiesChanged(State) on %s within %.0f s; "
                                 "see %s" % (i, port_path, args.event_timeout, rd.log_path))
            lat.append((ev[0] - t0) / 1e6)
            send_us.append((t1 - t0) / 1e3)
            # let the pass finish (STATUS= follows the signals) before reading rdmad's CPU
            time.sleep(0.002)
            cpu.append((rd.cpu_ns() - c0) / 1e6)
            # Isolated events: the next one after the coalescing window that this pass opened
            # (changes in quick succession share one pass per window by design).
            time.sleep(args.window_ms / 1000 + 0.005)
            if (i + 1) % 100 == 0:
                log("  %d events, median so far %.1f ms" % (i + 1, statistics.median(lat)))
        # Everything rdmad spent over the run, per event: includes work done after an event's
        # signal (a deferred export write), which the per-event figure above does not see.
        time.sleep(0.3)
        cpu_total_per_event = (rd.cpu_ns() - c_start) / 1e6 / args.events
        cur = w.call(BUS, port_path, "org.freedesktop.DBus.Properties", "Get",
                     GLib.Variant("(ss)", ("org.rdmad1.Port", "State")))[0]
        seen_states.add(cur)
        bare = bare_read(args, bed.root, 20)
        window = args.window_ms
        r = {
            "devices": n, "events": args.events,
            "lat_min_ms": min(lat), "lat_med_ms": statistics.median(lat),
            "lat_p99_ms": pct(lat, 99), "lat_max_ms": max(lat),
            "over_window_med_ms": statistics.median(lat) - window,
            "over_window_p99_ms": pct(lat, 99) - window,
            "over_window_min_ms": min(lat) - window,
            "send_med_us": statistics.median(send_us),
            "cpu_med_ms": statistics.median(cpu),
            "cpu_total_per_event_ms": cpu_total_per_event,
            "export": args.export,
            "dispatcher": args.dispatcher,
            "export_bytes_prom": (os.path.getsize(rd.export_files[0])
                                  if rd.export_files and os.path.exists(rd.export_files[0])
                                  else None),
            "export_bytes_nfd": (os.path.getsize(rd.export_files[1])
                                 if rd.export_files and os.path.exists(rd.export_files[1])
                                 else None),
            "final_state": cur,
            "lat_all_ms": lat,
        }
        r.update(bare)
        return r
    finally:
        w.close()
        rd.stop()
        bed.close()


# ---- 1a. nothing happens ---------------------------------------------------------------------

def ctxt_switches(pid):
    """voluntary + nonvoluntary context switches of every thread of pid (proc(5))."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            for line in f:
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
    return total


def run_idle(args, n):
    """rdmad on a quiet testbed of n devices: its wake-ups (context switches) and CPU over
    args.idle_seconds, after a second to settle. No watchdog here (WATCHDOG_USEC unset)."""
    log("idle: %d RDMA device(s), %.0f s" % (n, args.idle_seconds))
    bed = Bed(n, args.gids)
    work = os.path.join(args.work, "idle-%d" % n)
    os.makedirs(work, exist_ok=True)
    rd = Rdmad(args, bed.root, work)
    try:
        time.sleep(1.0)
        s0, c0 = ctxt_switches(rd.proc.pid), rd.cpu_ns()
        time.sleep(args.idle_seconds)
        s1, c1 = ctxt_switches(rd.proc.pid), rd.cpu_ns()
        return {"devices": n, "seconds": args.idle_seconds, "wakeups": s1 - s0,
                "cpu_ms": (c1 - c0) / 1e6}
    finally:
        rd.stop()
        bed.close()


# ---- 1b. another tool changes a port's PFC ---------------------------------------------------

RTM_SETDCB = 79            # uapi linux/rtnetlink.h
DCB_CMD_IEEE_SET = 21      # uapi linux/dcbnl.h enum dcbnl_commands
DCB_ATTR_IFNAME, DCB_ATTR_DCBX, DCB_ATTR_IEEE = 1, 11, 13
DCB_ATTR_IEEE_PFC, DCB_ATTR_IEEE_APP_TABLE = 2, 3  # uapi linux/dcbnl.h enum ieee_attrs
DCB_ATTR_IEEE_APP = 1      # enum ieee_attrs_app
IEEE_8021QAZ_APP_SEL_DSCP = 5
NLA_F_NESTED = 1 << 15
RTNLGRP_DCB = 23


def dcb_notification(ifname, pfc_en, dscp=None):
    """What the kernel multicasts to RTNLGRP_DCB after a PFC SET on ifname (net/dcb/dcbnl.c
    dcbnl_ieee_notify() -> dcbnl_ieee_fill()), laid out by hand. With `dscp`, a list of
    (DSCP, priority), the APP table too (`dcb app` changes: DCB_ATTR_IEEE_APP_TABLE, nested
    without the flag as dcbnl_ieee_fill() makes it, one struct dcb_app per entry)."""
    import struct

    def attr(t, data):
        a = struct.pack("=HH", 4 + len(data), t) + data
        return a + b"\0" * (-len(a) % 4)
    pfc = struct.pack("=BBBxH2x", 8, pfc_en, 0, 0) + bytes(128)  # struct ieee_pfc, 136 bytes
    ieee = attr(DCB_ATTR_IEEE_PFC, pfc)
    if dscp is not None:
        ieee += attr(DCB_ATTR_IEEE_APP_TABLE, b"".join(
            attr(DCB_ATTR_IEEE_APP, struct.pack("=BBH", IEEE_8021QAZ_APP_SEL_DSCP, prio, code))
            for code, prio in dscp))
    body = struct.pack("=BBH", 0, DCB_CMD_IEEE_SET, 0)  # struct dcbmsg
    body += attr(DCB_ATTR_IFNAME, ifname.encode() + b"\0")
    body += attr(DCB_ATTR_IEEE | NLA_F_NESTED, ieee)
    body += attr(DCB_ATTR_DCBX, bytes([0x05]))  # DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE
    return struct.pack("=IHHII", 16 + len(body), RTM_SETDCB, 0, 0, 0) + body


def run_pfc(args, n):
    """Another tool's PFC change on mlx5_0's netdev, DCB emulated by tests/integration/
    fake_dcbnl.c in rdmad: (a) without a rule, multicast -> PropertiesChanged(PFCNoDrop);
    (b) with a rule, multicast -> rdmad's corrective SET (the shim's own notification)."""
    import struct
    if not args.fake_dcbnl or not os.path.exists(args.fake_dcbnl):
        raise SystemExit("--fake-dcbnl: build/tests/integration/fake-dcbnl.so is needed")
    log("pfc: %d RDMA device(s), %d changes each without and with a rule" % (n, args.events))
    bed = Bed(n, args.gids)
    ifname = "enp1s0f0np0"  # make-tree's netdev of mlx5_0
    results = {"devices": n, "events": args.events}
    for mode in ("observe", "correct"):
        work = os.path.join(args.work, "pfc-%s-%d" % (mode, n))
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(os.path.join(work, "etc"))
        os.makedirs(os.path.join(work, "state"))
        if mode == "correct":
            with open(os.path.join(work, "etc", "rdmad.conf"), "w") as f:
                f.write('[[rule]]\ndevice = "mlx5_0"\npfc_no_drop = [3]\n')
        env = {"LD_PRELOAD": args.fake_dcbnl + " " + PRELOAD, "FAKE_DCBNL_NETDEVS": ifname,
               "FAKE_DCBNL_LOG": os.path.join(work, "dcb.log"),
               "CONFIGURATION_DIRECTORY": os.path.join(work, "etc"),
               "STATE_DIRECTORY": os.path.join(work, "state")}
        rd = Rdmad(args, bed.root, work, env)
        w = Watcher()
        tx = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE
        tx.bind((0, 0))
        rx = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        rx.bind((0, 1 << (RTNLGRP_DCB - 1)))
        rx.settimeout(args.event_timeout)
        try:
            objects = w.managed_objects()
            port_path = None
            for path, ifaces in objects.items():
                if "org.rdmad1.Port" in ifaces and "/port/" in path:
                    dev = path.rsplit("/port/", 1)[0]
                    if objects[dev]["org.rdmad1.Device"].get("Name") == "mlx5_0":
                        port_path = path
            lat, cpu = [], []
            for i in range(args.events):
                # observe: alternate 0x18 / 0x00; correct: always drop priority 3 (0x00)
                pfc_en = (0x18 if i % 2 == 0 else 0x00) if mode == "observe" else 0x00
                start = len(w.events)
                c0 = rd.cpu_ns()
                t0 = time.monotonic_ns()
                tx.sendto(dcb_notification(ifname, pfc_en), (0, 1 << (RTNLGRP_DCB - 1)))
                if mode == "observe":
                    ev = w.wait_for(lambda e: e[1] == "PropertiesChanged" and e[2] == port_path
                                    and "PFCNoDrop" in e[3][1], start, args.event_timeout)
                    if ev is None:
                        raise SystemExit("pfc change %d: no PropertiesChanged(PFCNoDrop) on %s; "
                                         "see %s" % (i, port_path, rd.log_path))
                    t1 = ev[0]
                else:
                    while True:  # the shim's notification of rdmad's SET (pfc_en 0x08)
                        data = rx.recv(65536)
                        t1 = time.monotonic_ns()
                        if len(data) > 20 and struct.unpack_from("=H", data, 4)[0] == RTM_SETDCB \
                                and b"\x08" in data[20:] and pfc_en_of(data) == 0x08:
                            break
                lat.append((t1 - t0) / 1e6)
                time.sleep(0.002)
                cpu.append((rd.cpu_ns() - c0) / 1e6)
                time.sleep(args.window_ms / 1000 + 0.005)
                if mode == "correct" and (i + 1) % 3 == 0:
                    # 3 corrections a minute make a port contested: ask again (Reconcile)
                    w.call(BUS, MANAGER, "org.rdmad1.Manager", "Reconcile",
                           GLib.Variant("(b)", (False,)))
                    time.sleep(args.window_ms / 1000 + 0.005)
            with open(os.path.join(work, "dcb.log")) as f:
                requests = f.read().split("\n")
            results[mode] = {"lat_med_ms": statistics.median(lat), "lat_p99_ms": pct(lat, 99),
                             "lat_max_ms": max(lat), "cpu_med_ms": statistics.median(cpu),
                             "gets": sum(r.startswith("GET") for r in requests),
                             "sets": sum(r.startswith("SET") for r in requests)}
            log("  %s: median %.2f ms, p99 %.2f ms, %d GET, %d SET" % (
                mode, results[mode]["lat_med_ms"], results[mode]["lat_p99_ms"],
                results[mode]["gets"], results[mode]["sets"]))
        finally:
            tx.close()
            rx.close()
            w.close()
            rd.stop()
    bed.close()
    return results


def pfc_en_of(data):
    """pfc_en of DCB_ATTR_IEEE { DCB_ATTR_IEEE_PFC } in one DCB notification, or None."""
    import struct
    off = 16 + 4
    while off + 4 <= len(data):
        ln, t = struct.unpack_from("=HH", data, off)
        if ln < 4:
            return None
        if t & 0x3fff == DCB_ATTR_IEEE:
            inner = off + 4
            while inner + 4 <= off + ln:
                iln, it = struct.unpack_from("=HH", data, inner)
                if iln < 4:
                    return None
                if it & 0x3fff == DCB_ATTR_IEEE_PFC:
                    return data[inner + 4 + 1]
                inner += (iln + 3) & ~3
        off += (ln + 3) & ~3
    return None


# ---- 2. a burst of VF adds ------------------------------------------------------------------

def make_pf(bed, total):
    """Make mlx5_0's PCI function an SR-IOV PF with `total` VFs at most and none enabled: its
    sriov_totalvfs and sriov_numvfs, which the kernel shows on every PF and only there
    (drivers/pci/iov.c sriov_pf_dev_attrs, visible where dev_is_pf()). rdmad takes a VF's
    physfn for its PF only where that function has sriov_totalvfs. Returns the PF's directory."""
    pf = os.path.join(bed.root, "sys", "devices", PF_PATH)
    for name, value in (("sriov_totalvfs", total), ("sriov_numvfs", 0)):
        with open(os.path.join(pf, name), "w") as f:
            f.write("%d\n" % value)
    return pf


def write_vfs(bed, count, gids, rdma):
    """count VFs of mlx5_0's PCI function (PF at 0000:01:00.0), each with a netdev and, with
    rdma, an RDMA device (one RoCE port), a uverbs device and an mlx5_core.rdma auxiliary
    device. Returns the uevents (syspath, action) in the order the kernel would send them."""
    t = bed.tree
    pf = os.path.join(t.sys, "devices", PF_PATH)
    events = []
    modalias = "pci:v000015B3d00001018sv000015B3sd00000008bc02sc00i00"
    for j in range(count):
        bus, devfn = 0x02 + j // 256, j % 256
        bdf = "0000:%02x:%02x.%d" % (bus, devfn >> 3, devfn & 7)
        vf_path = "pci0000:00/0000:00:01.0/" + bdf
        vf = t.device(vf_path, "pci", bdf, [
            ("DRIVER", "mlx5_core"), ("PCI_CLASS", "20000"), ("PCI_ID", "15B3:1018"),
            ("PCI_SUBSYS_ID", "15B3:0008"), ("PCI_SLOT_NAME", bdf), ("MODALIAS", modalias),
        ], {
            "class": "0x020000", "device": "0x1018", "vendor": "0x15b3",
            "subsystem_device": "0x0008", "subsystem_vendor": "0x15b3", "modalias": modalias,
        }, bus=True)
        t.link(vf, "driver", "bus/pci/drivers/mlx5_core")
        mt.symlink(pf, os.path.join(vf, "physfn"))
        mt.symlink(vf, os.path.join(pf, "virtfn%d" % j))
        events.append(("/sys/devices/" + vf_path, "add"))

        mac = [0x0E, 0x42, 0xA1, 0x80 | ((j >> 16) & 0x7F), (j >> 8) & 0xFF, j & 0xFF]
        netdev = "enp1s0f0v%d" % j
        ifindex = 5000 + j
        if rdma:
            aux_name = "mlx5_core.rdma.%d" % (1000 + j)
            aux = t.device(vf_path + "/" + aux_name, "auxiliary", aux_name, [
                ("DRIVER", "mlx5_ib.rdma"), ("MODALIAS", "auxiliary:mlx5_core.rdma"),
            ], {"modalias": "auxiliary:mlx5_core.rdma"})
            t.link(aux, "driver", "bus/auxiliary/drivers/mlx5_ib.rdma")
            events.append(("/sys/devices/%s/%s" % (vf_path, aux_name), "add"))
        net = t.device(vf_path + "/net/" + netdev, "net", netdev, [
            ("INTERFACE", netdev), ("IFINDEX", str(ifindex)),
        ], {
            "addr_len": "6", "address": ":".join("%02x" % b for b in mac), "carrier": "1",
            "dev_port": "0", "ifindex": str(ifindex), "iflink": str(ifindex), "mtu": "1500",
            "operstate": "up", "type": "1",
        })
        mt.symlink(vf, os.path.join(net, "device"))
        events.append(("/sys/devices/%s/net/%s" % (vf_path, netdev), "add"))
        if not rdma:
            continue
        ibdev = "mlx5_%d" % (1000 + j)
        guid = mac[:3] + [0x03, 0x00] + mac[3:]
        guid_s = ":".join("%02x%02x" % (guid[k], guid[k + 1]) for k in range(0, 8, 2))
        link_local = mt.gid_str([0xFE, 0x80, 0, 0, 0, 0, 0, 0, mac[0] ^ 2, mac[1], mac[2],
                                 0xFF, 0xFE, mac[3], mac[4], mac[5]])
        ipv4 = mt.gid_str([0] * 10 + [0xFF, 0xFF, 10, 128 + ((j >> 8) & 0x7F), j & 0xFF, 1])
        port = {
            "cap_mask": "0x00010000", "lid": "0x0", "sm_lid": "0x0", "sm_sl": "0",
            "lid_mask_count": "0", "pkeys/0": "0xffff", "link_layer": "Ethernet",
            "phys_state": "5: LinkUp", "state": "4: ACTIVE", "rate": "100 Gb/sec (4X EDR)",
        }
        used = [(link_local, "IB/RoCE v1"), (link_local, "RoCE v2"),
                (ipv4, "IB/RoCE v1"), (ipv4, "RoCE v2")]
        for g in range(gids):
            if g < len(used):
                port["gids/%d" % g] = used[g][0]
                port["gid_attrs/types/%d" % g] = used[g][1]
                port["gid_attrs/ndevs/%d" % g] = netdev
            else:
                port["gids/%d" % g] = mt.ZERO_GID
        values = {
            "board_id": "MT_0000000008", "fw_ver": "16.35.2000", "hca_type": "MT4120",
            "hw_rev": "0", "node_desc": "bench-host %s" % ibdev, "node_guid": guid_s,
            "node_type": "1: CA", "sys_image_guid": guid_s,
        }
        values.update({"ports/1/" + k: v for k, v in port.items()})
        ib = t.device(vf_path + "/infiniband/" + ibdev, "infiniband", ibdev,
                      [("NAME", ibdev)], values)
        mt.symlink(vf, os.path.join(ib, "device"))
        events.append(("/sys/devices/%s/infiniband/%s" % (vf_path, ibdev), "add"))
        major, minor = 238, 1000 + j
        uv = t.device(vf_path + "/infiniband_verbs/uverbs%d" % (1000 + j), "infiniband_verbs",
                      "uverbs%d" % (1000 + j),
                      [("MAJOR", str(major)), ("MINOR", str(minor)),
                       ("DEVNAME", "infiniband/uverbs%d" % (1000 + j))],
                      {"abi_version": "1", "dev": "%d:%d" % (major, minor), "ibdev": ibdev})
        mt.symlink(vf, os.path.join(uv, "device"))
        t.char(uv, major, minor)
        events.append(("/sys/devices/%s/infiniband_verbs/uverbs%d" % (vf_path, 1000 + j), "add"))
    return events


def murmur2(data):
    """MurmurHash2 as libudev's netlink header filter uses it (seed = length)."""
    m, h = 0x5BD1E995, len(data) & 0xFFFFFFFF
    n = len(data) - len(data) % 4
    for i in range(0, n, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    rest = data[n:]
    if len(rest) == 3:
        h ^= rest[2] << 16
    if len(rest) >= 2:
        h ^= rest[1] << 8
    if len(rest) >= 1:
        h ^= rest[0]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


class RawSender:
    """What umockdev_testbed_uevent() sends (a libudev netlink message to every
    $UMOCKDEV_DIR/event<N> socket), but waiting on EAGAIN instead of aborting: umockdev
    0.17.16's uevent_sender aborts the process when the listener's queue is full
    (net.unix.max_dgram_qlen datagrams), which a burst reaches within 200 uevents here.
    This is the harness's send_uevent() (tests/integration/harness.cpp) in Python."""

    def __init__(self, root):
        import glob
        import select
        self.select = select
        self.root = root
        self.socks = []
        for path in glob.glob(os.path.join(root, "event[0-9]*")):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK)
            s.connect(path)
            self.socks.append(s)
        if not self.socks:
            raise SystemExit("no uevent listener socket in %s" % root)
        self.seqnum = 2000000
        self.eagain = 0

    def send(self, syspath, action):
        import struct
        props = []
        with open(self.root + syspath + "/uevent") as f:
            extra = [line.rstrip("\n") for line in f if "=" in line]
        subsystem = next(l.split("=", 1)[1] for l in extra if l.startswith("SUBSYSTEM="))
        props = ["ACTION=" + action, "DEVPATH=" + syspath[4:], "SUBSYSTEM=" + subsystem,
                 "SEQNUM=%d" % self.seqnum] + [l for l in extra if not l.startswith("SUBSYSTEM=")]
        self.seqnum += 1
        body = b"".join(p.encode() + b"\0" for p in props)
        hdr = struct.pack("=8sIIIIIIII", b"libudev\0", socket.htonl(0xFEEDCAFE), 40, 40,
                          len(body), socket.htonl(murmur2(subsystem.encode())), 0, 0, 0)
        for s in self.socks:
            while True:
                try:
                    s.sendmsg([hdr, body])
                    break
                except BlockingIOError:
                    self.eagain += 1
                    self.select.select([], [s], [], 0.1)

    def close(self):
        for s in self.socks:
            s.close()


def run_burst(args, kind):
    rdma = kind == "rdma"
    count = args.vfs
    log("burst: %d VFs with a netdev%s" % (count, " and an RDMA device" if rdma else ""))
    bed = Bed(1, args.gids)
    pf = make_pf(bed, count)
    work = os.path.join(args.work, "burst-%s" % kind)
    os.makedirs(work, exist_ok=True)
    rd = Rdmad(args, bed.root, work)
    w = Watcher()
    try:
        before = w.describe()
        t = time.monotonic()
        # As sriov_numvfs_store() does: NumVFs set, then the VFs added (drivers/pci/iov.c).
        with open(os.path.join(pf, "sriov_numvfs"), "w") as f:
            f.write("%d\n" % count)
        events = write_vfs(bed, count, args.gids, rdma)
        log("  %d VFs written in %.1f s (in no figure); %d uevents to send"
            % (count, time.monotonic() - t, len(events)))
        want_links = count
        want_devices = count if rdma else 0

        def added(e, iface):
            return e[1] == "InterfacesAdded" and iface in e[3]

        start = len(w.events)
        passes0 = len(rd.statuses)
        writes = WriteCounter(rd.export_files) if rd.export_files else None
        c0 = rd.cpu_ns()
        t0 = time.monotonic_ns()
        sender = RawSender(bed.root) if args.sender == "raw" else None
        for i, (path, action) in enumerate(events):
            if sender:
                sender.send(path, action)
            else:
                bed.tb.uevent(path, action)
            if args.pace_us:
                time.sleep(args.pace_us / 1e6)
        t_sent = time.monotonic_ns()
        log("  sent in %.1f ms%s" % ((t_sent - t0) / 1e6, ", %d waits on EAGAIN" % sender.eagain
                                     if sender else ""))
        eagain = sender.eagain if sender else 0
        if sender:
            sender.close()
        state = {"links": 0, "devices": 0}

        def complete(e):  # called once per event, in order, under the watcher's lock
            state["links"] += added(e, "org.rdmad1.Link")
            state["devices"] += added(e, "org.rdmad1.Device")
            return state["links"] >= want_links and state["devices"] >= want_devices

        done, pos, deadline = None, {"next": start}, time.monotonic() + args.burst_timeout
        while done is None and time.monotonic() < deadline and rd.alive():
            done = w.wait_for(complete, pos["next"], 1.0, pos)
        if not rd.alive():
            raise SystemExit("burst: rdmad exited (status %s) after %s; see %s"
                             % (rd.proc.returncode, state, rd.log_path))
        if done is None:
            raise SystemExit("burst: the bus showed %s of %d VFs within %.0f s (rdmad %s); see %s"
                             % (state, count, args.burst_timeout,
                                "alive" if rd.alive() else "dead", rd.log_path))
        t_all = done[0]
        # Count what follows until rdmad is quiet for args.quiet seconds.
        while True:
            n0 = len(w.events)
            time.sleep(args.quiet)
            if len(w.events) == n0:
                break
        ev = w.events[start:]
        t_last = ev[-1][0]
        cpu_ms = (rd.cpu_ns() - c0) / 1e6
        export = {}
        if writes:
            counts = writes.stop()
            export = {"export_writes_prom": counts[0], "export_writes_nfd": counts[1],
                      "export_bytes_prom": os.path.getsize(rd.export_files[0]),
                      "export_bytes_nfd": os.path.getsize(rd.export_files[1])}
            log("  export: %d writes of rdmad.prom (%d bytes), %d of the NFD file (%d bytes)"
                % (counts[0], export["export_bytes_prom"], counts[1], export["export_bytes_nfd"]))
        passes = [s for s in rd.statuses[passes0:]]
        after = w.describe()
        got_links = len(after.get("Links", [])) - len(before.get("Links", []))
        got_devs = len(after.get("Devices", [])) - len(before.get("Devices", []))
        if got_links != want_links or got_devs != want_devices:
            raise SystemExit("burst: Describe() shows %d new links and %d new devices, not %d and %d"
                             % (got_links, got_devs, want_links, want_devices))
        members = {}
        for e in ev:
            members[e[1]] = members.get(e[1], 0) + 1
        ia = [e for e in ev if e[1] == "InterfacesAdded"]
        first_sig = ev[0][0] if ev else None
        bare = bare_read(args, bed.root, 3)
        r = {
            "kind": kind, "vfs": count, "uevents": len(events),
            "send_ms": (t_sent - t0) / 1e6, "sender": args.sender, "eagain_waits": eagain,
            "first_signal_ms": (first_sig - t0) / 1e6,
            "all_on_bus_ms": (t_all - t0) / 1e6,
            "last_signal_ms": (t_last - t0) / 1e6,
            "signals": len(ev), "signals_by_member": members,
            "interfaces_added": len(ia),
            "passes": len(passes),
            "rdmad_cpu_ms": cpu_ms,
            "export": args.export,
            "devices_after": len(after.get("Devices", [])),
            "links_after": len(after.get("Links", [])),
        }
        r.update(bare)
        r.update(export)
        return r
    finally:
        w.close()
        rd.stop()
        bed.close()


def table(head, rows):
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    out = ["| " + " | ".join(h.rjust(w) for h, w in zip(head, widths)) + " |",
           "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|"]
    for r in rows:
        out.append("| " + " | ".join(c.rjust(w) for c, w in zip(r, widths)) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1000, help="change events (default 1000)")
    ap.add_argument("--latency-sizes", default="1",
                    help="RDMA devices on the latency testbed, comma-separated (default 1)")
    ap.add_argument("--vfs", type=int, default=1000, help="VFs in the burst (default 1000)")
    ap.add_argument("--bursts", default="netdev,rdma",
                    help="burst kinds: netdev, rdma or both (default netdev,rdma)")
    ap.add_argument("--gids", type=int, default=32, help="GID table entries per port (default 32)")
    ap.add_argument("--sender", choices=("raw", "umockdev"), default="raw",
                    help="burst uevents through umockdev_testbed_uevent() (aborts on EAGAIN) or "
                    "the same datagrams sent here, waiting on EAGAIN (default raw)")
    ap.add_argument("--pace-us", type=float, default=0,
                    help="sleep between burst uevents (default 0: as fast as umockdev sends)")
    ap.add_argument("--window-ms", type=float, default=50,
                    help="rdmad's coalescing window (CoalescerTiming::window_usec, 50 ms)")
    ap.add_argument("--idle-sizes", default="",
                    help="RDMA devices on the idle testbed, comma-separated (default: none)")
    ap.add_argument("--idle-seconds", type=float, default=60)
    ap.add_argument("--pfc-sizes", default="",
                    help="RDMA devices on the PFC testbed, comma-separated (default: none)")
    ap.add_argument("--fake-dcbnl", help="tests/integration/fake-dcbnl.so (DCB emulation)")
    ap.add_argument("--export", choices=("default", "on", "off"), default="default",
                    help="rdmad.conf [export]: files in the work directory (on), none (off), "
                         "or rdmad's built-in directories (default)")
    ap.add_argument("--dispatcher", choices=("default", "none", "noop"), default="default",
                    help="rdmad.conf [dispatcher]: a directory in the work directory, empty "
                         "(none) or with one script that exits 0 (noop), or rdmad's built-in "
                         "directories (default)")
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--skip-burst", action="store_true")
    ap.add_argument("--work", default=os.environ.get("RDMAD_BENCH_DIR", "/tmp/rdmad-hotplug"))
    ap.add_argument("--rdmad", required=True)
    ap.add_argument("--sysfs-read", required=True)
    ap.add_argument("--timeout", type=float, default=600, help="seconds to wait for READY=1")
    ap.add_argument("--event-timeout", type=float, default=10)
    ap.add_argument("--burst-timeout", type=float, default=600)
    ap.add_argument("--quiet", type=float, default=1.0,
                    help="seconds without a signal that end a burst's count (default 1)")
    ap.add_argument("--json", help="also write every figure (and each latency) to this file")
    args = ap.parse_args()
    if "DBUS_SYSTEM_BUS_ADDRESS" not in os.environ:
        raise SystemExit("DBUS_SYSTEM_BUS_ADDRESS is not set (run bench/hotplug.sh)")
    if PRELOAD not in os.environ.get("LD_PRELOAD", ""):
        raise SystemExit("run under the umockdev preload (bench/hotplug.sh uses umockdev-wrapper)")
    os.makedirs(args.work, exist_ok=True)
    results = {"latency": [], "burst": [], "pfc": [], "idle": []}
    for n in [int(x) for x in args.idle_sizes.split(",") if x]:
        results["idle"].append(run_idle(args, n))
    for n in [int(x) for x in args.pfc_sizes.split(",") if x]:
        results["pfc"].append(run_pfc(args, n))
    if not args.skip_latency:
        for n in [int(s) for s in args.latency_sizes.split(",")]:
            r = run_latency(args, n)
            results["latency"].append(r)
            log("  median %.2f ms, p99 %.2f ms" % (r["lat_med_ms"], r["lat_p99_ms"]))
    if not args.skip_burst:
        for kind in args.bursts.split(","):
            r = run_burst(args, kind)
            results["burst"].append(r)
            log("  all on the bus after %.1f ms, %d signals, %d passes"
                % (r["all_on_bus_ms"], r["signals"], r["passes"]))

    if results["latency"]:
        print("uevent -> PropertiesChanged(State), one change at a time "
              "(window = %.0f ms coalescing timer):" % args.window_ms)
        head = ["devices", "events", "min ms", "median ms", "p99 ms", "max ms",
                "median-window ms", "p99-window ms", "rdmad CPU/event ms",
                "rdmad CPU/event ms (whole run)", "uevent send us",
                "bare re-read ms (preload)", "bare re-read ms (direct)", "files"]
        rows = [[str(r["devices"]), str(r["events"]), "%.2f" % r["lat_min_ms"],
                 "%.2f" % r["lat_med_ms"], "%.2f" % r["lat_p99_ms"], "%.2f" % r["lat_max_ms"],
                 "%.2f" % r["over_window_med_ms"], "%.2f" % r["over_window_p99_ms"],
                 "%.3f" % r["cpu_med_ms"], "%.3f" % r["cpu_total_per_event_ms"],
                 "%.0f" % r["send_med_us"],
                 "%.3f" % r["bare_preload_ms"], "%.3f" % r["bare_direct_ms"],
                 str(r["bare_files"])] for r in results["latency"]]
        print(table(head, rows))
        print()
    if results["idle"]:
        print("quiet testbed: rdmad's wake-ups (context switches of all its threads):")
        print(table(["devices", "seconds", "wake-ups", "rdmad CPU ms"],
                    [[str(r["devices"]), "%.0f" % r["seconds"], str(r["wakeups"]),
                      "%.2f" % r["cpu_ms"]] for r in results["idle"]]))
        print()
    if results["pfc"]:
        print("another tool's PFC change (RTNLGRP_DCB) -> on the bus (no rule) / set back "
              "(rule pfc_no_drop = [3]):")
        head = ["devices", "changes", "seen med ms", "seen p99 ms", "seen CPU ms",
                "set back med ms", "set back p99 ms", "set back CPU ms", "GETs", "SETs"]
        rows = [[str(r["devices"]), str(r["events"]), "%.2f" % r["observe"]["lat_med_ms"],
                 "%.2f" % r["observe"]["lat_p99_ms"], "%.3f" % r["observe"]["cpu_med_ms"],
                 "%.2f" % r["correct"]["lat_med_ms"], "%.2f" % r["correct"]["lat_p99_ms"],
                 "%.3f" % r["correct"]["cpu_med_ms"],
                 "%d+%d" % (r["observe"]["gets"], r["correct"]["gets"]),
                 "%d+%d" % (r["observe"]["sets"], r["correct"]["sets"])] for r in results["pfc"]]
        print(table(head, rows))
        print()
    if results["burst"]:
        print("burst of VF add uevents (times from the first uevent sent):")
        head = ["VFs with", "VFs", "uevents", "send ms", "first signal ms", "all on bus ms",
                "last signal ms", "signals", "InterfacesAdded", "PropertiesChanged", "passes",
                "rdmad CPU ms", "bare read ms (preload)", "bare read ms (direct)", "files"]
        rows = [[r["kind"], str(r["vfs"]), str(r["uevents"]), "%.1f" % r["send_ms"],
                 "%.1f" % r["first_signal_ms"], "%.1f" % r["all_on_bus_ms"],
                 "%.1f" % r["last_signal_ms"], str(r["signals"]), str(r["interfaces_added"]),
                 str(r["signals_by_member"].get("PropertiesChanged", 0)), str(r["passes"]),
                 "%.1f" % r["rdmad_cpu_ms"], "%.2f" % r["bare_preload_ms"],
                 "%.2f" % r["bare_direct_ms"], str(r["bare_files"])] for r in results["burst"]]
        print(table(head, rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
