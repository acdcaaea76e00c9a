#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Where rdmad's resident memory is, mapping by mapping (/proc/PID/smaps), at three moments:
right after READY=1, inside the first Describe() with its reply built (gdb stops rdmad at
sd_bus_send() inside Manager.Describe(), the call that hands the reply to the bus: the peak a
Describe() adds),
and after that call returned. Run by bench/smaps.sh, which starts the private bus.

    bench/smaps.py RDMAD TREE DESCRIBE [--json FILE] [--describe-json FILE]

Each moment prints the mappings grouped: every file by name and permissions (text r-x,
read-only data and RELRO r--, writable data rw-), [heap], [stack], and each unnamed
anonymous mapping alone (a thread's stack, a malloc arena of another thread, an mmap()ed
chunk), with Rss, Private_Dirty (relocated or written pages of a file, every touched
anonymous page) and Anonymous in KiB, then the totals and VmHWM.
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

PRELOAD = "libumockdev-preload.so.0"
HEADER = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")


def read_smaps(path):
    maps = []
    cur = None
    with open(path) as f:
        for line in f:
            m = HEADER.match(line)
            if m:
                cur = {"start": int(m.group(1), 16), "end": int(m.group(2), 16),
                       "perms": m.group(3), "path": m.group(4).strip()}
                maps.append(cur)
                continue
            key, _, rest = line.partition(":")
            parts = rest.split()
            if len(parts) == 2 and parts[1] == "kB":
                cur[key] = int(parts[0])
    return maps


def status(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem"):
                out[k] = int(v.split()[0])
    return out


def group(maps):
    """Rows (name, perms, size KiB, Rss, Private_Dirty, Anonymous)."""
    rows = {}
    for m in maps:
        path = m["path"]
        if not path:
            name = "anon %x (%d KiB)" % (m["start"], (m["end"] - m["start"]) // 1024)
        else:
            name = os.path.basename(path) if path.startswith("/") else path
        key = (name, m["perms"][:3])
        r = rows.setdefault(key, [0, 0, 0, 0])
        r[0] += (m["end"] - m["start"]) // 1024
        r[1] += m.get("Rss", 0)
        r[2] += m.get("Private_Dirty", 0)
        r[3] += m.get("Anonymous", 0)
    return rows


def report(title, proc_dir, out):
    """proc_dir: /proc/PID, or a directory holding copies of its smaps and status."""
    maps = read_smaps(os.path.join(proc_dir, "smaps"))
    st = status(os.path.join(proc_dir, "status"))
    rows = group(maps)
    file_rss = sum(m.get("Rss", 0) for m in maps if m["path"].startswith("/"))
    file_dirty = sum(m.get("Private_Dirty", 0) for m in maps if m["path"].startswith("/"))
    heap = sum(m.get("Rss", 0) for m in maps if m["path"] == "[heap]")
    anon_other = sum(m.get("Rss", 0) for m in maps if not m["path"])
    stack = sum(m.get("Rss", 0) for m in maps if m["path"] == "[stack]")
    print("== %s: VmRSS %d KiB, VmHWM %d KiB (RssAnon %d, RssFile %d)" %
          (title, st["VmRSS"], st["VmHWM"], st["RssAnon"], st["RssFile"]))
    print("   files %d KiB (of which private dirty %d), [heap] %d, unnamed anonymous %d, "
          "[stack] %d" % (file_rss, file_dirty, heap, anon_other, stack))
    print("   %-44s %-4s %9s %7s %7s %7s" % ("mapping", "perm", "size", "Rss", "PrivDty", "Anon"))
    for (name, perms), (size, rss, dirty, anon) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        if rss == 0:
            continue
        print("   %-44s %-4s %9d %7d %7d %7d" % (name[:44], perms, size, rss, dirty, anon))
    out[title] = {"status": st, "files_rss": file_rss, "files_private_dirty": file_dirty,
                  "heap": heap, "anon_unnamed": anon_other, "stack": stack,
                  "rows": [[n, p] + v for (n, p), v in rows.items()]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rdmad")
    ap.add_argument("tree")
    ap.add_argument("describe")
    ap.add_argument("--json", help="write the three moments' figures here")
    ap.add_argument("--describe-json", help="keep Describe()'s document here")
    args = ap.parse_args()
    for stale in os.listdir(args.tree):
        if re.match(r"event[0-9]", stale):
            os.unlink(os.path.join(args.tree, stale))
    work = tempfile.mkdtemp(prefix="rdmad-smaps.")
    sock_path = os.path.join(work, "notify.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sock_path)
    env = dict(os.environ, LD_PRELOAD=PRELOAD, UMOCKDEV_DIR=args.tree, NOTIFY_SOCKET=sock_path)
    log = open(os.path.join(work, "rdmad.log"), "w")
    p = subprocess.Popen([args.rdmad], env=env, stdout=log, stderr=subprocess.STDOUT)
    out = {}
    try:
        s.settimeout(5)
        deadline = time.monotonic() + 600
        while True:
            if time.monotonic() > deadline or p.poll() is not None:
                sys.exit("no READY=1")
            try:
                if b"READY=1" in s.recv(65536):
                    break
            except socket.timeout:
                pass
        time.sleep(0.5)  # the export write after READY
        report("READY", "/proc/%d" % p.pid, out)
        # gdb stops rdmad at the reply's send, reads smaps there, and lets it go on.
        gdb = subprocess.Popen(
            ["gdb", "-q", "-batch", "-p", str(p.pid),
             "-ex", "break rdmad::ManagerObject::describe", "-ex", "continue",
             "-ex", "break sd_bus_send", "-ex", "continue", "-ex", "bt 3",
             "-ex", "shell cp /proc/%d/smaps /proc/%d/status %s/"
             % (p.pid, p.pid, work),
             "-ex", "delete", "-ex", "detach"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # Wait until gdb has attached and set its breakpoint (rdmad is then traced).
        deadline = time.monotonic() + 60
        while True:
            with open("/proc/%d/status" % p.pid) as f:
                if re.search(r"TracerPid:\s*[1-9]", f.read()):
                    break
            if time.monotonic() > deadline:
                sys.exit("gdb did not attach")
            time.sleep(0.05)
        time.sleep(2)
        r = subprocess.run([args.describe] + ([args.describe_json] if args.describe_json else []),
                           capture_output=True, text=True, timeout=600)
        gdb_out, _ = gdb.communicate(timeout=120)
        if "describe" not in gdb_out:
            print(gdb_out, file=sys.stderr)
            sys.exit("gdb did not stop in Describe()")
        print("Describe: %s" % r.stdout.strip())
        report("inside Describe(), at sd_bus_send()", work, out)
        time.sleep(0.5)
        report("after Describe()", "/proc/%d" % p.pid, out)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
