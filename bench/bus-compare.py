#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Driver of bench/bus-compare.sh (which starts the private bus): two rdmad binaries, "old"
and "new", alternated run by run (old, new, old, new, ...) on the same generated hosts in one
session, each run set against the bare cost of the same work measured in that run.

  startup  (sizes, default 64,1024): READY=1 and rdmad CPU against one bench-sysfs-read pass
           under the preload; Describe() against node-exporter's scrape of the same tree;
           VmHWM at READY, after Describe() and after GetManagedObjects; smaps_rollup after
           Describe(); GetManagedObjects' round trip and wire size; node-exporter's VmHWM.
  latency  (latency sizes, default 1,64,1024): one port's state file flipped plus one
           `change` uevent for its RDMA device, until PropertiesChanged(Port.State); against
           the bare cost: sending that uevent (same sender, same run) plus
           `bench-sysfs-read --port mlx5_0/1` under the preload; with --uevent-echo also
           against bench-uevent-echo (the uevent, the port's files, one signal) on the same tree.
  burst    (--vfs, default 1000): VFs each with a netdev and an RDMA device added to the
           one-device host, all `add` uevents sent back to back; rdmad CPU against one bare
           read of the host afterwards; InterfacesAdded per object path; time from the last
           uevent sent until every object is on the bus.

The hosts are make-tree.py's plain-directory trees (bench/README.md), read by rdmad under the
umockdev preload with UMOCKDEV_DIR; uevents go straight to the listener sockets rdmad's
preload creates in UMOCKDEV_DIR (hotplug.py's RawSender), so this process needs no testbed
and no preload. Prints progress to stderr, tables to stdout, every run to --json."""

import argparse
import glob
import json
import os
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import proc_cpu  # noqa: E402
import startup  # noqa: E402
import hotplug  # noqa: E402  (Watcher, RawSender, write_vfs, pct, make-tree as hotplug.mt)

PRELOAD = "libumockdev-preload.so.0"
pct = hotplug.pct


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def cpu_ns_all(pid):
    """CPU time of every thread pid has had, ended ones too (proc_cpu.py), ns."""
    return proc_cpu.process_cpu_ns(pid) or 0


def status_kib(pid, keys=("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem")):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k = line.split(":")[0]
            if k in keys:
                out[k] = int(line.split()[1])
    return out


def smaps_rollup(pid):
    out = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    return out


def smaps_by_mapping(pid, top=12):
    """Rss (KiB) per mapping name from /proc/<pid>/smaps, largest first."""
    by, name = {}, None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            parts = line.split()
            if parts and "-" in parts[0] and len(parts) >= 5 and ":" not in parts[0]:
                name = parts[5] if len(parts) > 5 else "[anon]"
            elif parts and parts[0] == "Rss:":
                by[name] = by.get(name, 0) + int(parts[1])
    return sorted(by.items(), key=lambda kv: -kv[1])[:top]


# ---- a minimal D-Bus client on a raw socket: the exact wire size of a reply ----------------

def _pad(b, n):
    return b + b"\0" * (-len(b) % n)


def _str(s, sig=False):
    e = s.encode()
    return (struct.pack("<B", len(e)) if sig else struct.pack("<I", len(e))) + e + b"\0"


def _method_call(serial, dest, path, iface, member):
    fields = b""
    for code, sig, val in ((1, "o", path), (2, "s", iface), (3, "s", member), (6, "s", dest)):
        fields = _pad(fields, 8)
        fields += struct.pack("<B", code) + _str(sig, True)
        fields += _str(val)
    hdr = struct.pack("<cBBBIII", b"l", 1, 0, 1, 0, serial, len(fields)) + fields
    return _pad(hdr, 8)


class RawBus:
    """AUTH EXTERNAL, Hello, then method calls without arguments; a reply is read whole
    (its length from the fixed header) and not unmarshalled."""

    def __init__(self, address):
        path = address.split("unix:path=", 1)[1].split(",")[0]
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.s.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
        if not self._line().startswith(b"OK"):
            raise SystemExit("raw D-Bus client: authentication refused")
        self.s.sendall(b"BEGIN\r\n")
        self.buf = b""
        self.serial = 0
        self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello")

    def _line(self):
        b = b""
        while not b.endswith(b"\r\n"):
            b += self.s.recv(1)
        return b

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise SystemExit("raw D-Bus client: connection closed")
            self.buf += chunk

    def _message(self):
        self._need(16)
        body_len, _, fields_len = struct.unpack_from("<III", self.buf, 4)
        total = 16 + fields_len + (-(16 + fields_len) % 8) + body_len
        self._need(total)
        msg, self.buf = self.buf[:total], self.buf[total:]
        return msg

    @staticmethod
    def _reply_serial(msg):
        mtype = msg[1]
        fields_len = struct.unpack_from("<I", msg, 12)[0]
        i, end = 16, 16 + fields_len
        while i < end:
            i += -i % 8
            code = msg[i]
            slen = msg[i + 1]
            sig = msg[i + 2:i + 2 + slen].decode()
            j = i + 3 + slen
            if sig in ("u",):
                j += -j % 4
                if code == 5:
                    return mtype, struct.unpack_from("<I", msg, j)[0]
                j += 4
            elif sig in ("s", "o"):
                j += -j % 4
                n = struct.unpack_from("<I", msg, j)[0]
                j += 4 + n + 1
            elif sig == "g":
                j += 1 + msg[j] + 1
            else:
                raise SystemExit("raw D-Bus client: header field of signature %r" % sig)
            i = j
        return mtype, None

    def call(self, dest, path, iface, member):
        """(seconds from the send to the last byte of the reply, reply bytes, message type)."""
        self.serial += 1
        m = _method_call(self.serial, dest, path, iface, member)
        t0 = time.monotonic_ns()
        self.s.sendall(m)
        while True:
            msg = self._message()
            mtype, rs = self._reply_serial(msg)
            if mtype in (2, 3) and rs == self.serial:
                return (time.monotonic_ns() - t0) / 1e9, len(msg), mtype

    def close(self):
        self.s.close()


class Watcher(hotplug.Watcher):
    """hotplug.Watcher, but an InterfacesAdded/Removed event's path is the object's (the
    signal's first argument), not the object manager's that sends it."""

    def _filter(self, conn, msg, incoming, _data):
        if incoming and msg.get_message_type() == hotplug.Gio.DBusMessageType.SIGNAL \
                and msg.get_sender() == self.owner \
                and msg.get_member() in ("InterfacesAdded", "InterfacesRemoved"):
            t = time.monotonic_ns()
            body = msg.get_body()
            obj = body.get_child_value(0).get_string()
            if msg.get_member() == "InterfacesAdded":
                detail = tuple(body.get_child_value(1).keys())
            else:
                detail = tuple(body.get_child_value(1).unpack())
            with self.cond:
                self.events.append((t, msg.get_member(), obj, detail))
                self.cond.notify_all()
            return msg
        return super()._filter(conn, msg, incoming, _data)


def start_perf(args, kind, name, pid):
    """--perf DIR: `perf record --call-graph dwarf` of rdmad `pid` into
    DIR/KIND-NAME-PID.data until stop_perf(); None without --perf."""
    if not args.perf:
        return None
    os.makedirs(args.perf, exist_ok=True)
    return subprocess.Popen(["perf", "record", "-q", "-F", "999", "--call-graph", "dwarf,16384",
                             "-p", str(pid), "-o",
                             os.path.join(args.perf, "%s-%s-%d.data" % (kind, name, pid))],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_perf(perf):
    if perf:
        perf.send_signal(signal.SIGINT)
        perf.wait()


class SignalClock:
    """bench-signal-clock: rdmad's InterfacesAdded/Removed and PropertiesChanged, each stamped
    when sd-bus hands it to that client (signal-clock.cpp), as (ns, member, object path,
    interfaces) and (ns, "PropertiesChanged", object path, (interface, names)); the same shape
    and wait_for() as Watcher. A GDBus client with a Python filter takes 0.2 ms a signal: it
    stamped the last of a 1,000-VF burst's 3,000 signals 0.5 s after rdmad had sent it."""

    def __init__(self, binary):
        self.proc = subprocess.Popen([binary], stdout=subprocess.PIPE, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise SystemExit("bench-signal-clock did not start")
        self.events = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = line.split()
            if len(parts) < 3:
                continue
            if parts[1] == "PropertiesChanged":
                detail = (parts[3] if len(parts) > 3 else "",
                          tuple(parts[4].split(",")) if len(parts) > 4 else ())
            else:
                detail = tuple(parts[3].split(",")) if len(parts) > 3 else ()
            e = (int(parts[0]), parts[1], parts[2], detail)
            with self.cond:
                self.events.append(e)
                self.cond.notify_all()

    wait_for = hotplug.Watcher.wait_for

    def close(self):
        self.proc.terminate()
        self.proc.wait()
        self.reader.join(5)


# ---- rdmad on a plain tree --------------------------------------------------------------------

class Rdmad:
    def __init__(self, binary, root, work, timeout):
        for stale in glob.glob(os.path.join(root, "event[0-9]*")):
            os.unlink(stale)  # listener sockets of an earlier rdmad on this tree
        self.sock_path = os.path.join(work, "notify.sock")
        if os.path.exists(self.sock_path):
            os.unlink(self.sock_path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.sock_path)
        env = dict(os.environ)
        env["LD_PRELOAD"] = PRELOAD
        env["UMOCKDEV_DIR"] = root
        env["NOTIFY_SOCKET"] = self.sock_path
        self.log_path = os.path.join(work, "rdmad.log")
        self.logf = open(self.log_path, "w")
        self.t0 = time.monotonic_ns()
        self.proc = subprocess.Popen([binary], env=env, stdout=self.logf, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid
        self.ready_ns = startup.wait_ready(self.sock, self.proc, self.t0, timeout, work)[0]
        self.statuses = 0

    def drain_status(self):
        self.sock.setblocking(False)
        while True:
            try:
                msg = self.sock.recv(65536)
            except BlockingIOError:
                return self.statuses
            self.statuses += msg.count(b"STATUS=")

    def stop(self):
        rc = startup.terminate(self.proc)
        self.sock.close()
        self.logf.close()
        return rc


def bare_pass(args, root, extra=(), passes=1):
    """bench-sysfs-read under the preload: (fastest pass us, files, CPU ms of the process,
    every pass's us with --each)."""
    env = dict(os.environ, LD_PRELOAD=PRELOAD, UMOCKDEV_DIR=root)
    proc = subprocess.Popen([args.sysfs_read, "--passes", str(passes)] + list(extra), env=env,
                            stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("bench-sysfs-read %s failed" % " ".join(extra))
    lines = out.split("\n")
    head = lines[0].split()
    each = [float(x) for x in lines[1:] if x.strip()]
    return int(head[0]), int(head[1]), (usage.ru_utime + usage.ru_stime) * 1e3, each


def order(rounds):
    """old, new, old, new, ...: one (round, name) per run."""
    for r in range(rounds):
        for name in ("old", "new"):
            yield r, name


# ---- startup, Describe, memory, GetManagedObjects --------------------------------------------

def node_exporter(args, root, run_dir):
    port = startup.free_port()
    textdir = os.path.join(run_dir, "textfile")
    os.makedirs(textdir, exist_ok=True)
    logf = open(os.path.join(run_dir, "node-exporter.log"), "w")
    proc = subprocess.Popen([args.node_exporter, "--collector.disable-defaults",
                             "--collector.infiniband", "--collector.textfile",
                             "--collector.textfile.directory=" + textdir,
                             "--path.sysfs=" + os.path.join(root, "sys"),
                             "--web.listen-address=127.0.0.1:%d" % port],
                            stdout=logf, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("node-exporter did not listen")
                time.sleep(0.02)
        metrics = os.path.join(run_dir, "metrics.txt")
        out = subprocess.run(["curl", "-sS", "-o", metrics, "-w", "%{time_total}",
                              "http://127.0.0.1:%d/metrics" % port],
                             capture_output=True, text=True, check=True)
        st = status_kib(proc.pid)
        return {"ne_scrape_ms": float(out.stdout) * 1e3, "ne_hwm_kib": st["VmHWM"],
                "ne_rss_kib": st["VmRSS"]}
    finally:
        proc.terminate()
        proc.wait()
        logf.close()


def run_startup_one(args, name, root, n, run_dir, check_objects):
    binary = args.old if name == "old" else args.new
    r = {"binary": name, "devices": n, "load": loadavg()}
    rd = Rdmad(binary, root, run_dir, args.timeout)
    try:
        r["ready_ms"] = rd.ready_ns / 1e6
        r["cpu_ms"] = cpu_ns_all(rd.pid) / 1e6
        r["hwm_ready_kib"] = status_kib(rd.pid)["VmHWM"]
        json_path = os.path.join(run_dir, "describe-%s.json" % name)
        c0 = cpu_ns_all(rd.pid)
        out = subprocess.run([args.describe, json_path], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit("bench-describe failed: " + out.stderr)
        us, size = out.stdout.split()
        r["describe_ms"] = int(us) / 1e3
        r["describe_cpu_ms"] = (cpu_ns_all(rd.pid) - c0) / 1e6
        r["json_bytes"] = int(size)
        st = status_kib(rd.pid)
        r["hwm_describe_kib"] = st["VmHWM"]
        r["status_after_describe"] = st
        r["smaps_rollup"] = smaps_rollup(rd.pid)
        if n >= 1024:
            r["smaps_top"] = smaps_by_mapping(rd.pid)
        with open(json_path) as f:
            startup.check_describe(json.load(f), n)
        # GetManagedObjects: twice on a raw connection (first and second call).
        bus = RawBus(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
        c0 = cpu_ns_all(rd.pid)
        s1, size1, t1 = bus.call("org.rdmad1", "/org/rdmad1", "org.freedesktop.DBus.ObjectManager",
                                 "GetManagedObjects")
        r["gmo_cpu_ms"] = (cpu_ns_all(rd.pid) - c0) / 1e6
        s2, size2, t2 = bus.call("org.rdmad1", "/org/rdmad1", "org.freedesktop.DBus.ObjectManager",
                                 "GetManagedObjects")
        bus.close()
        if t1 != 2 or t2 != 2:
            raise SystemExit("GetManagedObjects answered with an error (type %d/%d)" % (t1, t2))
        r["gmo_ms"], r["gmo_bytes"], r["gmo2_ms"] = s1 * 1e3, size1, s2 * 1e3
        r["hwm_gmo_kib"] = status_kib(rd.pid)["VmHWM"]
        if check_objects:
            w = Watcher()
            objs = w.managed_objects()
            w.close()
            r["gmo_objects"] = len(objs)
            r["gmo_interfaces"] = sum(len(v) for v in objs.values())
    finally:
        rc = rd.stop()
        r["exit"] = rc
    c = bare_pass(args, root)
    r["bare_ms"], r["bare_files"], r["bare_cpu_ms"] = c[0] / 1e3, c[1], c[2]
    # With the doctor's files too (PCIe link attributes, carrier, flags, mtu, pkeys/0): the
    # bare read of every file rdmad's start-up reads.
    c = bare_pass(args, root, ["--doctor"])
    r["bare_doctor_ms"], r["bare_doctor_files"], r["bare_doctor_cpu_ms"] = \
        c[0] / 1e3, c[1], c[2]
    r.update(node_exporter(args, root, run_dir))
    r["ready_x"] = r["ready_ms"] / r["bare_ms"]
    r["cpu_x"] = r["cpu_ms"] / r["bare_cpu_ms"]
    r["ready_x_doctor"] = r["ready_ms"] / r["bare_doctor_ms"]
    r["cpu_x_doctor"] = r["cpu_ms"] / r["bare_doctor_cpu_ms"]
    r["ne_over_describe"] = r["ne_scrape_ms"] / r["describe_ms"]
    r["hwm_over_ne"] = r["hwm_describe_kib"] / r["ne_hwm_kib"]
    return r


def run_startup(args, sizes, results):
    for n in sizes:
        root = startup.ensure_tree(args.work, n, args.gids, False)
        startup.check_tree_seen(root, n)
        run_dir = os.path.join(args.work, "cmp-run-%d" % n)
        os.makedirs(run_dir, exist_ok=True)
        for rnd, name in order(args.rounds):
            r = run_startup_one(args, name, root, n, run_dir, check_objects=(rnd == 0))
            r["round"] = rnd
            results["startup"].append(r)
            log("  startup %4d %s r%d: READY %.0f ms (%.2fx bare %.0f; %.2fx with the doctor's "
                "files, %.0f), CPU %.0f ms (%.2fx; %.2fx), "
                "Describe %.1f ms (ne %.0f ms, %.1fx), HWM %.1f/%.1f/%.1f MiB, ne HWM %.1f MiB, "
                "GMO %.1f ms %d B; load %s"
                % (n, name, rnd, r["ready_ms"], r["ready_x"], r["bare_ms"],
                   r["ready_x_doctor"], r["bare_doctor_ms"], r["cpu_ms"],
                   r["cpu_x"], r["cpu_x_doctor"], r["describe_ms"], r["ne_scrape_ms"], r["ne_over_describe"],
                   r["hwm_ready_kib"] / 1024, r["hwm_describe_kib"] / 1024,
                   r["hwm_gmo_kib"] / 1024, r["ne_hwm_kib"] / 1024, r["gmo_ms"], r["gmo_bytes"],
                   r["load"]))
            save(args, results)


# ---- latency ----------------------------------------------------------------------------------

def port_object(w, name="mlx5_0"):
    objects = w.managed_objects()
    for path, ifaces in objects.items():
        if "org.rdmad1.Port" in ifaces and "/port/" in path:
            dev = path.rsplit("/port/", 1)[0]
            if objects[dev]["org.rdmad1.Device"].get("Name") == name:
                return path
    raise SystemExit("no port object for %s on the bus" % name)


def time_changes(args, clock, sender, ib_sys, state_file, port_path, who, pid=None):
    """args.events flips of the port's state file, each with its `change` uevent, isolated
    (after the pass's window), each until the PropertiesChanged(State) of `port_path` reaches
    the clock: (latencies in ms, send times in us, CPU ms of `pid` per change, [] without)."""
    state = "4: ACTIVE"
    lat, send_us, cpu = [], [], []
    for i in range(args.events):
        state = "1: DOWN" if state == "4: ACTIVE" else "4: ACTIVE"
        with open(state_file, "w") as f:
            f.write(state + "\n")
        start = len(clock.events)
        # The live threads only: the pass runs on rdmad's loop thread, and the ended start-up
        # threads' share (process_cpu_ns()) is rounded to ticks, 10 ms off now and then.
        c0 = proc_cpu.live_threads_cpu_ns(pid) if pid else 0
        t0 = time.monotonic_ns()
        sender.send(ib_sys, "change")
        t1 = time.monotonic_ns()
        ev = clock.wait_for(lambda e: e[1] == "PropertiesChanged" and e[2] == port_path
                            and "State" in e[3][1], start, args.event_timeout)
        if ev is None:
            raise SystemExit("%s event %d: no PropertiesChanged(State) on %s"
                             % (who, i, port_path))
        lat.append((ev[0] - t0) / 1e6)
        send_us.append((t1 - t0) / 1e3)
        time.sleep(0.002)
        if pid:
            cpu.append((proc_cpu.live_threads_cpu_ns(pid) - c0) / 1e6)
        time.sleep(args.window_ms / 1000 + 0.005)  # isolated: after the pass's window
    return lat, send_us, cpu


def echo_latencies(args, root, ib_sys, state_file, port_path):
    """The latencies of bench-uevent-echo (the least a daemon does for the same change: the
    uevent, the port's files, one PropertiesChanged) for args.events flips of the port, sent
    and stamped as rdmad's are: the floor that also pays the uevent's wake-up and the bus."""
    for stale in glob.glob(os.path.join(root, "event[0-9]*")):
        os.unlink(stale)  # rdmad's listener socket, gone with it
    env = dict(os.environ, LD_PRELOAD=PRELOAD, UMOCKDEV_DIR=root)
    proc = subprocess.Popen([args.uevent_echo, "--port", "mlx5_0/1", "--path", port_path],
                            env=env, stdout=subprocess.PIPE, text=True)
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit("bench-uevent-echo did not start")
    clock = SignalClock(args.signal_clock)
    sender = hotplug.RawSender(root)
    try:
        time.sleep(0.2)
        lat = time_changes(args, clock, sender, ib_sys, state_file, port_path,
                           "bench-uevent-echo")[0]
    finally:
        sender.close()
        clock.close()
        proc.terminate()
        proc.wait()
        with open(state_file, "w") as f:
            f.write("4: ACTIVE\n")
    return lat


def run_latency_one(args, name, root, n, run_dir):
    binary = args.old if name == "old" else args.new
    ib_sys = "/sys/devices/%s/infiniband/mlx5_0" % hotplug.PF_PATH
    state_file = root + ib_sys + "/ports/1/state"
    with open(state_file, "w") as f:
        f.write("4: ACTIVE\n")
    r = {"binary": name, "devices": n, "events": args.events, "load": loadavg()}
    rd = Rdmad(binary, root, run_dir, args.timeout)
    w = Watcher()
    # Its calls only: the signals are stamped by bench-signal-clock (SignalClock).
    w.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
           "RemoveMatch", hotplug.GLib.Variant("(s)", ("type='signal',sender='%s'" % w.owner,)))
    clock = SignalClock(args.signal_clock)
    sender = hotplug.RawSender(root)
    perf = start_perf(args, "latency%d" % n, name, rd.pid)
    try:
        port_path = port_object(w)
        time.sleep(0.2)
        lat, send_us, cpu = time_changes(args, clock, sender, ib_sys, state_file, port_path,
                                         name, rd.pid)
    finally:
        stop_perf(perf)
        sender.close()
        clock.close()
        w.close()
        rd.stop()
        with open(state_file, "w") as f:
            f.write("4: ACTIVE\n")
    if args.uevent_echo:
        echo = echo_latencies(args, root, ib_sys, state_file, port_path)
        r.update({"echo_p50_ms": statistics.median(echo), "echo_p99_ms": pct(echo, 99),
                  "echo_all_ms": echo})
    best, files, _, each = bare_pass(args, root, ["--port", "mlx5_0/1", "--each"], args.events)
    bare = [send_us[i] / 1e3 + each[i] / 1e3 for i in range(len(lat))]
    r.update({
        "lat_p50_ms": statistics.median(lat), "lat_p99_ms": pct(lat, 99),
        "lat_min_ms": min(lat), "lat_max_ms": max(lat),
        "send_p50_us": statistics.median(send_us), "send_p99_us": pct(send_us, 99),
        "port_read_p50_us": statistics.median(each), "port_read_p99_us": pct(each, 99),
        "port_files": files,
        "bare_p50_ms": statistics.median(bare), "bare_p99_ms": pct(bare, 99),
        "cpu_p50_ms": statistics.median(cpu), "cpu_p99_ms": pct(cpu, 99),
        "lat_all_ms": lat, "bare_all_ms": bare, "cpu_all_ms": cpu,
    })
    r["p99_x_bare"] = r["lat_p99_ms"] / r["bare_p99_ms"]
    r["p50_x_bare"] = r["lat_p50_ms"] / r["bare_p50_ms"]
    if args.uevent_echo:
        r["echo_p99_x_bare"] = r["echo_p99_ms"] / r["bare_p99_ms"]
        r["p99_x_echo"] = r["lat_p99_ms"] / r["echo_p99_ms"]
        r["p50_x_echo"] = r["lat_p50_ms"] / r["echo_p50_ms"]
    return r


def run_latency(args, sizes, results):
    # --interleave-sizes: round by round, every size in turn (old, new at each), so that a
    # change of the machine's load over the session does not fall on one size.
    if args.interleave_sizes:
        plan = [(n, rnd, name) for rnd in range(args.rounds) for n in sizes
                for name in ("old", "new")]
    else:
        plan = [(n, rnd, name) for n in sizes for rnd, name in order(args.rounds)]
    for n, rnd, name in plan:
        root = startup.ensure_tree(args.work, n, args.gids, False)
        run_dir = os.path.join(args.work, "cmp-lat-%d" % n)
        os.makedirs(run_dir, exist_ok=True)
        if True:
            r = run_latency_one(args, name, root, n, run_dir)
            r["round"] = rnd
            results["latency"].append(r)
            log("  latency %4d %s r%d: p50 %.2f p99 %.2f ms (bare p50 %.3f p99 %.3f ms: "
                "send %.0f us + port read %.0f us p50), p99 %.1fx bare, CPU/event %.2f ms; load %s"
                % (n, name, rnd, r["lat_p50_ms"], r["lat_p99_ms"], r["bare_p50_ms"],
                   r["bare_p99_ms"], r["send_p50_us"], r["port_read_p50_us"], r["p99_x_bare"],
                   r["cpu_p50_ms"], r["load"]))
            if args.uevent_echo:
                log("                   bench-uevent-echo p50 %.2f p99 %.2f ms (p99 %.1fx bare); "
                    "rdmad p50 %.2fx, p99 %.2fx the echo's"
                    % (r["echo_p50_ms"], r["echo_p99_ms"], r["echo_p99_x_bare"],
                       r["p50_x_echo"], r["p99_x_echo"]))
            save(args, results)


# ---- burst ------------------------------------------------------------------------------------

class PlainBed:
    """A copy of the one-device tree that write_vfs() can extend (it uses .tree only)."""

    def __init__(self, src, parent):
        self.root = tempfile.mkdtemp(prefix="burst-", dir=parent)
        os.rmdir(self.root)
        subprocess.run(["cp", "-a", src, self.root], check=True)
        self.tree = hotplug.mt.Tree(self.root)

    def close(self):
        subprocess.run(["rm", "-rf", self.root], check=False)


def run_burst_one(args, name, src, run_dir):
    binary = args.old if name == "old" else args.new
    r = {"binary": name, "vfs": args.vfs, "load": loadavg()}
    bed = PlainBed(src, args.bed_dir)
    # mlx5_0's function an SR-IOV PF, as hotplug.py's burst makes it (make_pf()).
    pf = hotplug.make_pf(bed, args.vfs)
    rd = w = perf = clock = None
    try:
        rd = Rdmad(binary, bed.root, run_dir, args.timeout)
        perf = start_perf(args, "burst", name, rd.pid)
        w = Watcher()
        # Its calls only: the signals are stamped by bench-signal-clock, and a second client
        # parsing 3,000 signals in Python would take a CPU from rdmad and the bus.
        w.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
               "RemoveMatch", hotplug.GLib.Variant("(s)", ("type='signal',sender='%s'"
                                                           % w.owner,)))
        clock = SignalClock(args.signal_clock)
        before = w.describe()
        # As sriov_numvfs_store() does: NumVFs set, then the VFs added (drivers/pci/iov.c).
        with open(os.path.join(pf, "sriov_numvfs"), "w") as f:
            f.write("%d\n" % args.vfs)
        events = hotplug.write_vfs(bed, args.vfs, args.gids, True)
        time.sleep(0.3)
        start = len(clock.events)
        sender = hotplug.RawSender(bed.root)
        want = args.vfs
        c0 = cpu_ns_all(rd.pid)
        t0 = time.monotonic_ns()
        for path, action in events:
            sender.send(path, action)
        t_sent = time.monotonic_ns()
        sender.close()
        state = {"links": 0, "devices": 0}

        def complete(e):
            if e[1] == "InterfacesAdded":
                state["links"] += "org.rdmad1.Link" in e[3]
                state["devices"] += "org.rdmad1.Device" in e[3]
            return state["links"] >= want and state["devices"] >= want

        done, pos, deadline = None, {"next": start}, time.monotonic() + args.burst_timeout
        while done is None and time.monotonic() < deadline and rd.proc.poll() is None:
            done = clock.wait_for(complete, pos["next"], 1.0, pos)
        if done is None:
            raise SystemExit("%s burst: %s of %d within %.0f s; see %s"
                             % (name, state, want, args.burst_timeout, rd.log_path))
        while True:
            n0 = len(clock.events)
            time.sleep(1.0)
            if len(clock.events) == n0:
                break
        cpu_ms = (cpu_ns_all(rd.pid) - c0) / 1e6
        ev = clock.events[start:]
        after = w.describe()
        ia = [e for e in ev if e[1] == "InterfacesAdded"]
        per_path = {}
        for e in ia:
            per_path[e[2]] = per_path.get(e[2], 0) + 1
        members = {}
        for e in ev:
            members[e[1]] = members.get(e[1], 0) + 1
        ia_t = sorted((e[0] - t_sent) / 1e6 for e in ia)
        r["ia_after_last_uevent_ms"] = {q: ia_t[min(len(ia_t) - 1, int(q / 100 * len(ia_t)))]
                                        for q in (0, 10, 50, 90, 100)} if ia_t else {}
        r.update({
            "uevents": len(events), "send_ms": (t_sent - t0) / 1e6, "eagain": sender.eagain,
            "all_on_bus_ms": (done[0] - t0) / 1e6,
            "after_last_uevent_ms": (done[0] - t_sent) / 1e6,
            "last_signal_ms": (ev[-1][0] - t0) / 1e6,
            "signals": members, "interfaces_added": len(ia),
            "objects_added": len(per_path),
            "objects_added_more_than_once": sum(1 for v in per_path.values() if v > 1),
            "rdmad_cpu_ms": cpu_ms,
            "new_devices": len(after["Devices"]) - len(before["Devices"]),
            "new_links": len(after["Links"]) - len(before["Links"]),
            "passes": rd.drain_status(),
        })
    finally:
        if clock:
            clock.close()
        if w:
            w.close()
        stop_perf(perf)
        if rd:
            rd.stop()
    best, files, bare_cpu, _ = bare_pass(args, bed.root)
    # The same with the doctor's files (PCIe link attributes, carrier, flags, mtu, pkeys/0),
    # which rdmad reads of each device it adds too: the bare read of every file it reads.
    best_d, files_d, bare_cpu_d, _ = bare_pass(args, bed.root, ["--doctor"])
    bed.close()
    r.update({"bare_ms": best / 1e3, "bare_cpu_ms": bare_cpu, "bare_files": files,
              "bare_doctor_ms": best_d / 1e3, "bare_doctor_cpu_ms": bare_cpu_d,
              "bare_doctor_files": files_d})
    r["cpu_x_bare"] = r["rdmad_cpu_ms"] / r["bare_cpu_ms"]
    r["cpu_x_bare_wall"] = r["rdmad_cpu_ms"] / r["bare_ms"]
    r["after_last_x_bare"] = r["after_last_uevent_ms"] / r["bare_ms"]
    r["cpu_x_bare_doctor"] = r["rdmad_cpu_ms"] / r["bare_doctor_cpu_ms"]
    r["after_last_x_bare_doctor"] = r["after_last_uevent_ms"] / r["bare_doctor_ms"]
    return r


def run_burst(args, results):
    src = startup.ensure_tree(args.work, 1, args.gids, False)
    run_dir = os.path.join(args.work, "cmp-burst")
    os.makedirs(run_dir, exist_ok=True)
    for rnd, name in order(args.rounds):
        r = run_burst_one(args, name, src, run_dir)
        r["round"] = rnd
        results["burst"].append(r)
        log("  burst %s r%d: send %.0f ms, all on bus %.0f ms (%.0f ms after the last uevent; "
            "bare read %.0f ms, %.2fx; with the doctor's files %.0f ms, %.2fx), CPU %.0f ms "
            "(bare CPU %.0f ms, %.2fx; with the doctor's files %.0f ms, %.2fx), IA %d over %d "
            "objects (%d more than once), %s; load %s"
            % (name, rnd, r["send_ms"], r["all_on_bus_ms"], r["after_last_uevent_ms"],
               r["bare_ms"], r["after_last_x_bare"], r["bare_doctor_ms"],
               r["after_last_x_bare_doctor"], r["rdmad_cpu_ms"], r["bare_cpu_ms"],
               r["cpu_x_bare"], r["bare_doctor_cpu_ms"], r["cpu_x_bare_doctor"],
               r["interfaces_added"], r["objects_added"],
               r["objects_added_more_than_once"], r["signals"], r["load"]))
        save(args, results)


def save(args, results):
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(args.json + ".tmp", args.json)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the old rdmad binary")
    ap.add_argument("--new", required=True, help="the new rdmad binary")
    ap.add_argument("--sysfs-read", required=True)
    ap.add_argument("--describe", required=True)
    ap.add_argument("--signal-clock", required=True)
    ap.add_argument("--uevent-echo", help="latency: also time bench-uevent-echo on each run's "
                                          "tree, the least a daemon does for the change")
    ap.add_argument("--node-exporter", default=shutil.which("prometheus-node-exporter"))
    ap.add_argument("--only", default="startup,latency,burst")
    ap.add_argument("--sizes", default="64,1024")
    ap.add_argument("--latency-sizes", default="1,64,1024")
    ap.add_argument("--rounds", type=int, default=3, help="old/new pairs per figure (default 3)")
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--interleave-sizes", action="store_true",
                    help="latency: alternate the sizes within each round too")
    ap.add_argument("--window-ms", type=float, default=50)
    ap.add_argument("--vfs", type=int, default=1000)
    ap.add_argument("--gids", type=int, default=32)
    ap.add_argument("--work", default="/tmp/rdmad-bench24")
    ap.add_argument("--bed-dir", default="/dev/shm",
                    help="where each burst's copy of the one-device host is written and removed "
                         "(default /dev/shm: on a busy disk, removing 60,000 files took minutes)")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--event-timeout", type=float, default=10)
    ap.add_argument("--burst-timeout", type=float, default=300)
    ap.add_argument("--json")
    ap.add_argument("--perf", metavar="DIR",
                    help="burst and latency: record each rdmad's CPU profile from READY to its "
                         "stop with `perf record --call-graph dwarf` into "
                         "DIR/KIND-NAME-PID.data")
    args = ap.parse_args()
    if "DBUS_SYSTEM_BUS_ADDRESS" not in os.environ:
        raise SystemExit("DBUS_SYSTEM_BUS_ADDRESS is not set (run bench/bus-compare.sh)")
    os.makedirs(args.work, exist_ok=True)
    only = set(args.only.split(","))
    results = {"startup": [], "latency": [], "burst": [], "old": args.old, "new": args.new}
    if args.json and os.path.exists(args.json):
        with open(args.json) as f:
            prev = json.load(f)
        for k in ("startup", "latency", "burst"):
            if k not in only:
                results[k] = prev.get(k, [])
    if "startup" in only:
        run_startup(args, [int(s) for s in args.sizes.split(",")], results)
    if "latency" in only:
        run_latency(args, [int(s) for s in args.latency_sizes.split(",")], results)
    if "burst" in only:
        run_burst(args, results)
    save(args, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
