#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Driver of bench/reconcile.sh (which starts the private bus and sets the paths): for each
host size, start rdmad on a generated tree of ConnectX-3 VPI cards (make-tree.py --kind mlx4,
both ports "ib") under the umockdev preload with a rule asking both ports "eth", and time and
check the reconciliation: READY, convergence, a converged restart, Manager.Reconcile(true),
against the bare writes. Prints a table of medians. See bench/README.md."""

import argparse
import ctypes
import ctypes.util
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import startup  # noqa: E402  (same folder: the tree cache, READY wait, /proc readers)

import gi  # noqa: E402

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

log = startup.log

RULE = '[[rule]]\ndriver = "mlx4_core"\nport_type = ["eth", "eth"]\n'
CONFIGS = {
    "none": "",
    "rule": RULE,
    "observe": "[daemon]\napply = false\n\n" + RULE,
}

# ---- inotify (ctypes: no package needed) ---------------------------------------------------

IN_MODIFY = 0x00000002
IN_CLOSE_WRITE = 0x00000008
IN_Q_OVERFLOW = 0x00004000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
EVENT = struct.Struct("iIII")


class WriteWatch:
    """IN_MODIFY and IN_CLOSE_WRITE on every PCI function directory of the tree, so every
    write to mlx4_port<n> is seen, in order. The watch is on the real tree files (this
    process runs without the preload); rdmad's writes through the preload land there."""

    def __init__(self, pci_dirs):
        self.libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self.fd = self.libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.wd = {}
        for bdf, d in pci_dirs.items():
            wd = self.libc.inotify_add_watch(self.fd, d.encode(), IN_MODIFY | IN_CLOSE_WRITE)
            if wd < 0:
                e = ctypes.get_errno()
                raise OSError(e, "inotify_add_watch %s: %s (fs.inotify.max_user_watches?)"
                              % (d, os.strerror(e)))
            self.wd[wd] = bdf
        self.events = []  # (bdf, file name, mask), in the order the kernel queued them

    def drain(self):
        while True:
            try:
                buf = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return
            off = 0
            while off < len(buf):
                wd, mask, _, length = EVENT.unpack_from(buf, off)
                name = buf[off + EVENT.size:off + EVENT.size + length].split(b"\0")[0].decode()
                off += EVENT.size + length
                if mask & IN_Q_OVERFLOW:
                    raise SystemExit("inotify queue overflow: raise fs.inotify.max_queued_events")
                self.events.append((self.wd.get(wd, "?"), name, mask))

    def writes(self):
        """Completed writes (IN_CLOSE_WRITE) of mlx4_port files, in order: [(bdf, port)]."""
        self.drain()
        return [(b, int(n[len("mlx4_port"):])) for b, n, m in self.events
                if m & IN_CLOSE_WRITE and n.startswith("mlx4_port")]

    def other_writes(self):
        self.drain()
        return [(b, n) for b, n, m in self.events if not n.startswith("mlx4_port")]

    def close(self):
        os.close(self.fd)


# ---- the tree ------------------------------------------------------------------------------

def pci_functions(root, n):
    """{bdf: real directory} of every mlx4 function in the tree."""
    bus = os.path.join(root, "sys", "bus", "pci", "devices")
    out = {}
    for bdf in sorted(os.listdir(bus)):
        d = os.path.realpath(os.path.join(bus, bdf))
        if os.path.exists(os.path.join(d, "mlx4_port1")):
            out[bdf] = d
    if len(out) != n:
        raise SystemExit("%s has %d mlx4 functions, not %d" % (root, len(out), n))
    return out


def port_files(pci):
    return [(bdf, p, os.path.join(d, "mlx4_port%d" % p)) for bdf, d in pci.items() for p in (1, 2)]


def reset(pci, value="ib"):
    """Every mlx4_port<n> back to `value`, truncated (untimed)."""
    for _, _, path in port_files(pci):
        with open(path, "w") as f:
            f.write(value + "\n")


def read_ports(pci):
    out = {}
    for bdf, p, path in port_files(pci):
        with open(path) as f:
            out[(bdf, p)] = f.read()
    return out


# ---- rdmad ---------------------------------------------------------------------------------

class Rdmad:
    """One rdmad on the tree with one of CONFIGS, a fresh state directory, READY awaited;
    its output goes to run_dir/rdmad-<label>.log."""

    def __init__(self, args, root, config, run_dir, label=None):
        self.run_dir = run_dir
        conf_dir = os.path.join(run_dir, "conf-" + config)
        state_dir = os.path.join(run_dir, "state")
        for d in (conf_dir, state_dir):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        if CONFIGS[config]:
            with open(os.path.join(conf_dir, "rdmad.conf"), "w") as f:
                f.write(CONFIGS[config])
        sock_path = os.path.join(run_dir, "notify.sock")
        if os.path.exists(sock_path):
            os.unlink(sock_path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(sock_path)
        env = startup.preload_env(root)
        env.update({"NOTIFY_SOCKET": sock_path, "CONFIGURATION_DIRECTORY": conf_dir,
                    "STATE_DIRECTORY": state_dir})
        self.logf = open(os.path.join(run_dir, "rdmad-%s.log" % (label or config)), "w")
        # No legacy /etc/rdma/mlx4.conf of this machine, no /etc/modprobe.d.
        cmd = [args.rdmad, "--legacy-mlx4-conf", os.path.join(run_dir, "no-mlx4.conf"),
               "--modprobe-dir", os.path.join(run_dir, "modprobe.d")]
        self.t0 = time.monotonic_ns()
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.logf, stderr=subprocess.STDOUT)
        try:
            ready_ns, self.statuses = startup.wait_ready(self.sock, self.proc, self.t0,
                                                         args.timeout, run_dir)
        except BaseException:
            self.stop()
            raise
        self.ready_ms = ready_ns / 1e6
        self.hwm_ready_kib = startup.proc_status(self.proc.pid, "VmHWM")
        c = startup.cpu_ns(self.proc.pid)
        self.cpu_ms = c / 1e6 if c is not None else None

    def since_start_ms(self):
        return (time.monotonic_ns() - self.t0) / 1e6

    def count_statuses(self):
        """STATUS= datagrams so far (one per Daemon::publish(), i.e. per pass)."""
        self.sock.settimeout(0)
        while True:
            try:
                msg = self.sock.recv(65536)
            except (BlockingIOError, socket.timeout):
                return self.statuses
            self.statuses += sum(1 for line in msg.decode(errors="replace").split("\n")
                                 if line.startswith("STATUS="))

    def stop(self):
        status = startup.terminate(self.proc)
        self.sock.close()
        self.logf.close()
        if status != 0:
            raise SystemExit("rdmad exited with %s on SIGTERM; see %s" % (status, self.logf.name))


def describe(bus):
    v = bus.call_sync("org.rdmad1", "/org/rdmad1", "org.rdmad1.Manager", "Describe", None,
                      GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 600000, None)
    return json.loads(v.unpack()[0])


def ports_of(doc):
    return [(d.get("PCIAddress"), p) for d in doc.get("Devices", []) for p in d.get("Ports", [])]


def check_ports(doc, n, port_type, desired, in_sync):
    """Every one of the 2n ports has these PortType, DesiredPortType and InSync; returns the
    first mismatch as text, or None."""
    ports = ports_of(doc)
    if len(doc.get("Devices", [])) != n or len(ports) != 2 * n:
        return "%d devices, %d ports, not %d, %d" % (len(doc.get("Devices", [])), len(ports),
                                                     n, 2 * n)
    for pci, p in ports:
        got = (p.get("PortType"), p.get("DesiredPortType"), p.get("InSync"))
        if got != (port_type, desired, in_sync):
            return "%s port %s: PortType/DesiredPortType/InSync %s, not %s" % (
                pci, p.get("Number"), got, (port_type, desired, in_sync))
    return None


def dry_run(args, n_calls, dump):
    out = subprocess.run([args.reconcile_call, "--calls", str(n_calls), "--dump", dump],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("bench-reconcile-call failed: " + out.stderr)
    calls = [tuple(int(x) for x in line.split()) for line in out.stdout.splitlines()]
    with open(dump) as f:
        changes = [tuple(line.rstrip("\n").split("\t")) for line in f if line.strip()]
    return [us / 1e3 for us, _ in calls], [c for _, c in calls], changes


def check_order(writes, pci):
    """Exactly one write to each file, port 2 before port 1 on every card."""
    seen = {}
    for i, (bdf, p) in enumerate(writes):
        if (bdf, p) in seen:
            return "%s mlx4_port%d written twice" % (bdf, p)
        seen[(bdf, p)] = i
    for bdf in pci:
        for p in (1, 2):
            if (bdf, p) not in seen:
                return "%s mlx4_port%d not written" % (bdf, p)
        if seen[(bdf, 2)] > seen[(bdf, 1)]:
            return "%s: mlx4_port1 written before mlx4_port2" % bdf
    return None


# ---- one run -------------------------------------------------------------------------------

def run_once(args, root, n, pci, bus, run_dir):
    r = {}
    calls = args.dry_run_calls

    # (a) no config: READY, CPU, peak RSS; nothing may be written.
    reset(pci)
    w = WriteWatch(pci)
    d = Rdmad(args, root, "none", run_dir)
    try:
        r.update(ready_none_ms=d.ready_ms, cpu_none_ms=d.cpu_ms, hwm_none_kib=d.hwm_ready_kib)
        err = check_ports(describe(bus), n, "ib", "", True)
    finally:
        d.stop()
    if err:
        raise SystemExit("no config: " + err)
    if w.writes() or w.other_writes():
        raise SystemExit("no config: rdmad wrote %s" % (w.writes() + w.other_writes())[:5])
    w.close()

    # (a, b, f) the rule on an "ib" tree: READY, then poll until converged.
    reset(pci)
    w = WriteWatch(pci)
    d = Rdmad(args, root, "rule", run_dir)
    try:
        r.update(ready_rule_ms=d.ready_ms, cpu_rule_ms=d.cpu_ms, hwm_rule_kib=d.hwm_ready_kib,
                 writes_at_ready=len(w.writes()))
        files_ms = converged_ms = None
        polls = 0
        while converged_ms is None:
            if d.since_start_ms() > args.timeout * 1e3:
                raise SystemExit("rule: not converged after %d s; see %s"
                                 % (args.timeout, d.logf.name))
            polls += 1
            if all(v == "eth\n" for v in read_ports(pci).values()):
                if files_ms is None:
                    files_ms = d.since_start_ms()
                if check_ports(describe(bus), n, "eth", "eth", True) is None:
                    converged_ms = d.since_start_ms()
                    break
            time.sleep(args.poll_ms / 1e3)
        r.update(files_eth_ms=files_ms, converged_ms=converged_ms, polls=polls,
                 passes=d.count_statuses(), hwm_converged_kib=startup.proc_status(d.proc.pid,
                                                                                 "VmHWM"))
        # Checks: the files hold exactly "eth\n"; one write each, port 2 before port 1.
        time.sleep(args.settle_ms / 1e3)
        bad = {k: v for k, v in read_ports(pci).items() if v != "eth\n"}
        if bad:
            raise SystemExit("rule: files not reading eth: %s" % list(bad.items())[:3])
        writes = w.writes()
        err = check_order(writes, pci) or (w.other_writes() and
                                            "other writes %s" % w.other_writes()[:3])
        if err:
            raise SystemExit("rule: " + err)
        r["writes"] = len(writes)
        with open(os.path.join(run_dir, "write-order.txt"), "w") as f:
            f.write("".join("%s %d\n" % wr for wr in writes))
        # (d) dry run on the converged tree: no changes.
        ms, counts, _ = dry_run(args, calls, os.path.join(run_dir, "changes-converged.tsv"))
        if any(counts):
            raise SystemExit("Reconcile(true) on a converged tree returned %s changes" % counts)
        r["dry_converged_ms"] = statistics.median(ms)
    finally:
        d.stop()
    w.close()

    # (c) restart on the converged tree: READY, still in sync, no write at all.
    w = WriteWatch(pci)
    d = Rdmad(args, root, "rule", run_dir, "restart")
    try:
        r.update(ready_restart_ms=d.ready_ms, cpu_restart_ms=d.cpu_ms)
        err = check_ports(describe(bus), n, "eth", "eth", True)
        if err:
            raise SystemExit("restart: the first Describe() after READY: " + err)
        time.sleep(args.settle_ms / 1e3)  # past the coalescing window: a second pass would show
        r["restart_passes"] = d.count_statuses()
    finally:
        d.stop()
    w.drain()
    r["restart_writes"] = len(w.writes())
    if r["restart_writes"] or w.other_writes():
        raise SystemExit("restart on a converged tree wrote %s" % (w.writes() +
                                                                   w.other_writes())[:5])
    w.close()

    # (d) dry run on an unconverged tree (apply = false): 2n changes, no write.
    reset(pci)
    w = WriteWatch(pci)
    d = Rdmad(args, root, "observe", run_dir)
    try:
        err = check_ports(describe(bus), n, "ib", "eth", False)
        if err:
            raise SystemExit("apply = false: " + err)
        ms, counts, changes = dry_run(args, calls,
                                      os.path.join(run_dir, "changes-unconverged.tsv"))
        want = sorted("%s %d" % (bdf, p) for bdf in pci for p in (1, 2))
        if any(c != 2 * n for c in counts) or any(ch[1:] != ("PortType", "ib", "eth")
                                                  for ch in changes) \
                or len({ch[0] for ch in changes}) != 2 * n:
            raise SystemExit("Reconcile(true) with apply = false: %s changes, first %s; "
                             "want %d (PortType ib -> eth), e.g. %s"
                             % (counts, changes[:2], 2 * n, want[:1]))
        r["dry_unconverged_ms"] = statistics.median(ms)
        r["dry_changes"] = counts[-1]
    finally:
        d.stop()
    if w.writes() or w.other_writes():
        raise SystemExit("apply = false: rdmad wrote %s" % (w.writes() + w.other_writes())[:5])
    w.close()

    # (e) the bare writes and read-back, same files, same order as rdmad wrote them.
    order = os.path.join(run_dir, "write-order.txt")
    for key, extra, env in (("bare_preload_ms", [], startup.preload_env(root)),
                            ("bare_direct_ms", ["--root", root], None)):
        reset(pci)
        out = subprocess.run([args.port_write, "--list", order] + extra, env=env,
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit("bench-port-write failed (%s): %s %s" % (key, out.stdout, out.stderr))
        write_us, read_us, files, wrong = (int(x) for x in out.stdout.split())
        bad = [k for k, v in read_ports(pci).items() if v != "eth\n"]
        if files != 2 * n or wrong or bad:
            raise SystemExit("bench-port-write: %d files, %d wrong, %s" % (files, wrong, bad[:3]))
        r[key] = (write_us + read_us) / 1e3
        r[key.replace("_ms", "_write_ms")] = write_us / 1e3
    reset(pci)
    return r


COLUMNS = [
    ("devices", "devices", "{:d}"),
    ("ready_none_ms", "READY ms (no config)", "{:.1f}"),
    ("ready_rule_ms", "READY ms (rule)", "{:.1f}"),
    ("cpu_none_ms", "CPU ms (no config)", "{:.1f}"),
    ("cpu_rule_ms", "CPU ms (rule)", "{:.1f}"),
    ("writes_at_ready", "writes at READY", "{:d}"),
    ("converged_ms", "converged ms", "{:.1f}"),
    ("passes", "passes", "{:d}"),
    ("ready_restart_ms", "restart READY ms", "{:.1f}"),
    ("restart_writes", "restart writes", "{:d}"),
    ("dry_converged_ms", "dry run ms (converged)", "{:.2f}"),
    ("dry_unconverged_ms", "dry run ms (unconverged)", "{:.2f}"),
    ("dry_changes", "changes", "{:d}"),
    ("bare_preload_ms", "bare write+read ms (preload)", "{:.2f}"),
    ("bare_direct_ms", "bare write+read ms (direct)", "{:.2f}"),
    ("hwm_none_kib", "HWM MiB (no config)", "{:.1f}"),
    ("hwm_rule_kib", "HWM MiB (rule)", "{:.1f}"),
    ("hwm_converged_kib", "HWM MiB (converged)", "{:.1f}"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    startup.host_args(ap)
    ap.add_argument("--poll-ms", type=float, default=10,
                    help="sleep between two convergence polls (default 10)")
    ap.add_argument("--settle-ms", type=float, default=300,
                    help="wait after convergence / READY before counting writes (default 300)")
    ap.add_argument("--dry-run-calls", type=int, default=5,
                    help="Reconcile(true) calls per tree state; the median counts (default 5)")
    ap.add_argument("--rdmad", required=True)
    ap.add_argument("--port-write", required=True)
    ap.add_argument("--reconcile-call", required=True)
    ap.add_argument("--timeout", type=float, default=900,
                    help="seconds to wait for READY=1 and for convergence (default 900)")
    ap.add_argument("--json", help="also write every run's figures to this file")
    args = ap.parse_args()
    if "DBUS_SYSTEM_BUS_ADDRESS" not in os.environ:
        raise SystemExit("DBUS_SYSTEM_BUS_ADDRESS is not set (run bench/reconcile.sh)")
    bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)

    sizes = [int(s) for s in args.sizes.split(",")]
    os.makedirs(args.work, exist_ok=True)
    rows, every = [], {}
    for n in sizes:
        log("%d devices:" % n)
        root = startup.ensure_tree(args.work, n, args.gids, args.regen, kind="mlx4")
        startup.check_tree_seen(root, n)
        pci = pci_functions(root, n)
        run_dir = os.path.join(args.work, "reconcile-%d" % n)
        os.makedirs(run_dir, exist_ok=True)
        runs = args.big_runs if n >= 1024 else args.runs
        results = []
        for i in range(runs):
            r = run_once(args, root, n, pci, bus, run_dir)
            results.append(r)
            log("  run %d: %s" % (i + 1, ", ".join(
                "%s %s" % (h, startup.fmt(k, r[k], spec)) for k, h, spec in COLUMNS[1:]
                if k in r)))
        row = {"devices": n}
        for key in results[0]:
            values = [r[key] for r in results if r.get(key) is not None]
            row[key] = statistics.median(values) if values else None
        rows.append(row)
        every[n] = results

    startup.print_table(rows, COLUMNS)
    print("medians of %d runs (%d at >= 1024 devices); convergence polled every %g ms + the "
          "poll's own time; %d Reconcile(true) calls per tree state; %d GID entries per port"
          % (args.runs, args.big_runs, args.poll_ms, args.dry_run_calls, args.gids))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gids": args.gids, "poll_ms": args.poll_ms, "rows": rows, "runs": every},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
