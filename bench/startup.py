#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Driver of bench/startup.sh (which starts the private bus and sets the paths): for each
host size, start rdmad on a generated sysfs tree under the umockdev preload and time it
against the bare sysfs reads, prometheus-node-exporter's infiniband collector and ibstat on
the same tree. Prints a table of medians. See bench/README.md."""

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

import proc_cpu  # noqa: E402  (bench/, beside this file)

HERE = os.path.dirname(os.path.abspath(__file__))
PRELOAD = "libumockdev-preload.so.0"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def proc_status(pid, key):
    """VmHWM / VmRSS in KiB from /proc/<pid>/status."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def cpu_ns(pid):
    """Time on CPU of the process, all its threads (proc_cpu.py), ns; None once it is gone."""
    return proc_cpu.process_cpu_ns(pid)


def ensure_tree(work, n, gids, regen, kind="mlx5"):
    """make-tree.py's host of n devices in work/, written once and reused while make-tree.py
    is unchanged. kind: make-tree.py --kind (mlx5, or mlx4 for bench/reconcile.py)."""
    name = "tree-%d-g%d" % (n, gids) if kind == "mlx5" else "tree-%s-%d-g%d" % (kind, n, gids)
    root = os.path.join(work, name)
    gen = os.path.join(HERE, "make-tree.py")
    with open(gen, "rb") as f:
        stamp = hashlib.sha256(f.read()).hexdigest() + " %d %d\n" % (n, gids)
    stamp_file = root + ".stamp"
    if not regen and os.path.isdir(root) and os.path.exists(stamp_file):
        with open(stamp_file) as f:
            if f.read() == stamp:
                return root
    t0 = time.monotonic()
    subprocess.run(["/usr/bin/python3", gen, "--kind", kind, "--devices", str(n),
                    "--gids", str(gids), "--out", root, "--force"], check=True)
    with open(stamp_file, "w") as f:
        f.write(stamp)
    log("  tree of %d devices generated in %.1f s (in no figure)" % (n, time.monotonic() - t0))
    return root


def preload_env(root):
    env = dict(os.environ)
    env["LD_PRELOAD"] = PRELOAD
    env["UMOCKDEV_DIR"] = root
    return env


def check_tree_seen(root, n):
    out = subprocess.run(["ls", "/sys/class/infiniband"], env=preload_env(root),
                         capture_output=True, text=True, check=True).stdout.split()
    if len(out) != n:
        raise SystemExit("the preload shows %d RDMA devices in %s, not %d" % (len(out), root, n))


def check_describe(doc, n):
    devices = doc.get("Devices", [])
    problems = []
    if len(devices) != n:
        problems.append("%d devices, not %d" % (len(devices), n))
    for d in devices:
        ports = d.get("Ports", [])
        if len(ports) != 1 or ports[0].get("Transport") != "RoCE" \
                or ports[0].get("RoCEVersions") != ["v1", "v2"] or len(ports[0].get("GIDs", [])) != 4 \
                or ports[0].get("Link", "/") == "/":
            problems.append("%s: ports %s" % (d.get("Name"), json.dumps(ports)[:200]))
            break
    links = doc.get("Links", [])
    served = sum(1 for l in links if l.get("RdmaCapable") == "yes")
    if len(links) != n + 1 or served != n:
        problems.append("%d links (%d served), not %d (%d)" % (len(links), served, n + 1, n))
    if problems:
        raise SystemExit("Describe() does not match the generated host: " + "; ".join(problems))


def wait_ready(sock, proc, t0, timeout, run_dir):
    """Wait for READY=1 from proc on the bound NOTIFY_SOCKET datagram socket sock. Returns
    (ns from t0 to its arrival, the STATUS= datagrams that came before it)."""
    deadline = time.monotonic() + timeout
    statuses = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            raise SystemExit("rdmad did not send READY=1 (exit %s); see %s/rdmad.log"
                             % (proc.poll(), run_dir))
        sock.settimeout(min(left, 1.0))
        try:
            msg = sock.recv(65536)
        except socket.timeout:
            continue
        lines = msg.decode(errors="replace").split("\n")
        statuses += sum(1 for line in lines if line.startswith("STATUS="))
        if "READY=1" in lines:
            return time.monotonic_ns() - t0, statuses


def terminate(proc):
    """SIGTERM, then SIGKILL after 60 s; returns the exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def run_rdmad(args, root, n, run_dir):
    """Start rdmad, time READY=1, read its peak RSS, time Describe(), stop it."""
    sock_path = os.path.join(run_dir, "notify.sock")
    if os.path.exists(sock_path):
        os.unlink(sock_path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    env = preload_env(root)
    env["NOTIFY_SOCKET"] = sock_path
    logf = open(os.path.join(run_dir, "rdmad.log"), "w")
    t0 = time.monotonic_ns()
    proc = subprocess.Popen([args.rdmad], env=env, stdout=logf, stderr=subprocess.STDOUT)
    try:
        ready_ns = wait_ready(sock, proc, t0, args.timeout, run_dir)[0]
        r = {"ready_ms": ready_ns / 1e6, "hwm_ready_kib": proc_status(proc.pid, "VmHWM")}
        c = cpu_ns(proc.pid)
        r["cpu_ms"] = c / 1e6 if c is not None else None
        json_path = os.path.join(run_dir, "describe.json")
        out = subprocess.run([args.describe, json_path], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit("bench-describe failed: " + out.stderr)
        us, size = out.stdout.split()
        r["describe_ms"] = int(us) / 1e3
        r["json_bytes"] = int(size)
        r["hwm_describe_kib"] = proc_status(proc.pid, "VmHWM")
        with open(json_path) as f:
            check_describe(json.load(f), n)
        r.update(run_doctor(args, proc.pid, n))
        return r
    finally:
        terminate(proc)
        sock.close()
        logf.close()


def run_doctor(args, pid, n):
    """Wall time of `rdmactl --json doctor` against the running rdmad, and rdmad's CPU time
    for the call (its Describe(): doctor's problems are derived with the inventory, not per
    call). Checks that every device is in the answer (each has module-rdma-ucm-absent)."""
    if not args.rdmactl:
        return {}
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    c0 = cpu_ns(pid)
    t0 = time.monotonic_ns()
    out = subprocess.run([args.rdmactl, "--json", "doctor"], env=env, capture_output=True,
                         text=True)
    wall = time.monotonic_ns() - t0
    c1 = cpu_ns(pid)
    if out.returncode not in (0, 3):
        raise SystemExit("rdmactl doctor failed (%d): %s" % (out.returncode, out.stderr))
    # Every generated device lacks rdma_ucm (no misc/rdma_cm in the tree): one info each.
    objects = {p["object"] for p in json.loads(out.stdout)}
    if len(objects - {"rdmad"}) != n:
        raise SystemExit("rdmactl doctor names %d devices, not %d" % (len(objects), n))
    return {"doctor_ms": wall / 1e6,
            "doctor_cpu_ms": (c1 - c0) / 1e6 if c0 is not None and c1 is not None else None}


def run_bare(args, root):
    """One pass of bench-sysfs-read, under the preload (as rdmad reads) and directly."""
    r = {}
    # Popen + wait4 rather than run(): the pass's CPU time (user + system, the whole process
    # with its exec and the preload's set-up) is the load-proof floor for rdmad CPU.
    proc = subprocess.Popen([args.sysfs_read], env=preload_env(root), stdout=subprocess.PIPE,
                            text=True)
    stdout = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit("bench-sysfs-read failed: exit %d" % proc.returncode)
    out = stdout.split()
    r["bare_preload_ms"] = int(out[0]) / 1e3
    r["bare_cpu_ms"] = (usage.ru_utime + usage.ru_stime) * 1e3
    r["bare_files"] = int(out[1])
    out = subprocess.run([args.sysfs_read, "--root", root], capture_output=True, text=True,
                         check=True).stdout.split()
    r["bare_direct_ms"] = int(out[0]) / 1e3
    out = subprocess.run([args.sysfs_read, "--doctor"], env=preload_env(root),
                         capture_output=True, text=True, check=True).stdout.split()
    r["bare_doctor_ms"] = int(out[0]) / 1e3
    r["bare_doctor_files"] = int(out[1])
    return r


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_node_exporter(args, root, n, run_dir):
    if not args.node_exporter:
        return {}
    port = free_port()
    logf = open(os.path.join(run_dir, "node-exporter.log"), "w")
    proc = subprocess.Popen([args.node_exporter, "--collector.disable-defaults",
                             "--collector.infiniband", "--path.sysfs=" + os.path.join(root, "sys"),
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
                    raise SystemExit("node-exporter did not listen; see %s/node-exporter.log"
                                     % run_dir)
                time.sleep(0.02)
        metrics = os.path.join(run_dir, "metrics.txt")
        out = subprocess.run(["curl", "-sS", "-o", metrics, "-w", "%{time_total}",
                              "http://127.0.0.1:%d/metrics" % port],
                             capture_output=True, text=True, check=True)
        with open(metrics) as f:
            infos = sum(1 for line in f if line.startswith("node_infiniband_info{"))
        if infos != n:
            raise SystemExit("node-exporter reports %d devices, not %d (%s)" % (infos, n, metrics))
        return {"ne_scrape_ms": float(out.stdout) * 1e3,
                "ne_hwm_kib": proc_status(proc.pid, "VmHWM")}
    finally:
        proc.terminate()
        proc.wait()
        logf.close()


# ibstat reads /sys/class/infiniband through libibumad, which lists each device's ports with
# scandir(3); glibc's scandir opens the directory internally, out of reach of the umockdev
# preload (0.17.16 wraps opendir, not scandir), so under the preload ibstat fails with
# "stat of IB device 'mlx5_0' failed". It runs instead in a private mount namespace with the
# tree's sys bind-mounted over /sys. The clock runs inside the namespace, around ibstat alone.
IBSTAT_TIMER = r"""
import subprocess, sys, time
t = time.monotonic_ns()
r = subprocess.run([sys.argv[1]], stdout=open(sys.argv[2], "w"), stderr=subprocess.STDOUT)
print((time.monotonic_ns() - t) // 1000, r.returncode)
"""


def run_ibstat(args, root, n, run_dir):
    if not args.ibstat:
        return {}
    out_path = os.path.join(run_dir, "ibstat.txt")
    cmd = ["unshare", "-m", "sh", "-c",
           'mount --bind "$1/sys" /sys && exec /usr/bin/python3 -c "$2" "$3" "$4"', "_",
           root, IBSTAT_TIMER, args.ibstat, out_path]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("ibstat in a mount namespace failed: " + out.stderr)
    us, rc = out.stdout.split()
    with open(out_path) as f:
        cas = sum(1 for line in f if line.startswith("CA '"))
    if rc != "0" or cas != n:
        raise SystemExit("ibstat exit %s, %d CAs, not %d (%s)" % (rc, cas, n, out_path))
    return {"ibstat_ms": int(us) / 1e3}


COLUMNS = [
    ("devices", "devices", "{:d}"),
    ("ready_ms", "READY ms", "{:.1f}"),
    ("cpu_ms", "rdmad CPU ms", "{:.1f}"),
    ("describe_ms", "Describe ms", "{:.2f}"),
    ("json_bytes", "JSON bytes", "{:d}"),
    ("hwm_ready_kib", "HWM@READY MiB", "{:.1f}"),
    ("hwm_describe_kib", "HWM+Describe MiB", "{:.1f}"),
    ("bare_preload_ms", "bare read ms (preload)", "{:.2f}"),
    ("bare_cpu_ms", "bare CPU ms (preload)", "{:.1f}"),
    ("bare_direct_ms", "bare read ms (direct)", "{:.2f}"),
    ("bare_files", "files read", "{:d}"),
    ("bare_doctor_ms", "bare+doctor ms (preload)", "{:.2f}"),
    ("bare_doctor_files", "files read +doctor", "{:d}"),
    ("doctor_ms", "rdmactl doctor ms", "{:.1f}"),
    ("doctor_cpu_ms", "rdmad CPU doctor ms", "{:.1f}"),
    ("ne_scrape_ms", "node-exp scrape ms", "{:.1f}"),
    ("ne_hwm_kib", "node-exp HWM MiB", "{:.1f}"),
    ("ibstat_ms", "ibstat ms", "{:.1f}"),
    ("ready_x", "READY / bare", "{:.2f}"),
    ("cpu_x", "rdmad CPU / bare CPU", "{:.2f}"),
    ("describe_x", "node-exp / Describe", "{:.1f}"),
]
# The last three columns are ratios of one run's figures (then the median over runs): bare
# read ms (preload) and its CPU time are the floors of READY and rdmad CPU.


def ratios(r):
    """READY / bare read, rdmad CPU / bare CPU and node-exporter scrape / Describe of run r."""
    def div(a, b):
        return r[a] / r[b] if r.get(a) is not None and r.get(b) else None
    r["ready_x"] = div("ready_ms", "bare_preload_ms")
    r["cpu_x"] = div("cpu_ms", "bare_cpu_ms")
    r["describe_x"] = div("ne_scrape_ms", "describe_ms")


def fmt(key, value, spec):
    if value is None:
        return "-"
    if key.endswith("_kib"):
        value = value / 1024
    if spec == "{:d}":
        value = int(round(value))
    return spec.format(value)


def print_table(rows, columns):
    """rows as a Markdown table, right-aligned, in the order and formats of columns."""
    head = [h for _, h, _ in columns]
    body = [[fmt(k, row.get(k), spec) for k, _, spec in columns] for row in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    print("| " + " | ".join(h.rjust(w) for h, w in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|")
    for b in body:
        print("| " + " | ".join(c.rjust(w) for c, w in zip(b, widths)) + " |")


def host_args(ap):
    """The options startup.py and reconcile.py share: sizes, runs, GIDs, work directory."""
    ap.add_argument("--sizes", default="1,64,1024", help="RDMA device counts (default 1,64,1024)")
    ap.add_argument("--runs", type=int, default=5, help="runs per size (default 5)")
    ap.add_argument("--big-runs", type=int, default=3,
                    help="runs for sizes >= 1024 (default 3)")
    ap.add_argument("--gids", type=int, default=32, help="GID table entries per port (default 32)")
    ap.add_argument("--work", default=os.environ.get("RDMAD_BENCH_DIR", "/tmp/rdmad-bench"))
    ap.add_argument("--regen", action="store_true", help="rewrite the trees")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    host_args(ap)
    ap.add_argument("--rdmad", required=True)
    ap.add_argument("--sysfs-read", required=True)
    ap.add_argument("--describe", required=True)
    ap.add_argument("--rdmactl", help="time `rdmactl --json doctor` with this rdmactl")
    ap.add_argument("--node-exporter", default=shutil.which("prometheus-node-exporter"))
    ap.add_argument("--ibstat", default=shutil.which("ibstat"))
    ap.add_argument("--timeout", type=float, default=900,
                    help="seconds to wait for READY=1 (default 900)")
    ap.add_argument("--json", help="also write every run's figures to this file")
    args = ap.parse_args()
    if "DBUS_SYSTEM_BUS_ADDRESS" not in os.environ:
        raise SystemExit("DBUS_SYSTEM_BUS_ADDRESS is not set (run bench/startup.sh)")
    if not args.node_exporter:
        log("prometheus-node-exporter not found: its columns stay empty")
    if not args.ibstat:
        log("ibstat not found: its column stays empty")

    sizes = [int(s) for s in args.sizes.split(",")]
    os.makedirs(args.work, exist_ok=True)
    rows, every = [], {}
    for n in sizes:
        log("%d devices:" % n)
        root = ensure_tree(args.work, n, args.gids, args.regen)
        check_tree_seen(root, n)
        run_dir = os.path.join(args.work, "run-%d" % n)
        os.makedirs(run_dir, exist_ok=True)
        runs = args.big_runs if n >= 1024 else args.runs
        results = []
        for i in range(runs):
            r = {}
            r.update(run_rdmad(args, root, n, run_dir))
            r.update(run_bare(args, root))
            r.update(run_node_exporter(args, root, n, run_dir))
            r.update(run_ibstat(args, root, n, run_dir))
            ratios(r)
            results.append(r)
            log("  run %d: %s" % (i + 1, ", ".join(
                "%s %s" % (h, fmt(k, r[k], spec)) for k, h, spec in COLUMNS[1:] if k in r)))
        row = {"devices": n}
        for key, _, _ in COLUMNS[1:]:
            values = [r[key] for r in results if r.get(key) is not None]
            row[key] = statistics.median(values) if values else None
        rows.append(row)
        every[n] = results

    print_table(rows, COLUMNS)
    print("medians of %d runs (%d for >= 1024 devices); %d GID entries per port, 4 used"
          % (args.runs, args.big_runs, args.gids))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gids": args.gids, "rows": rows, "runs": every}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
