#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Driver of bench/sriov.sh (which starts the private bus and runs this under the umockdev
preload): what it costs rdmad to re-create a PF's VFs after a driver reload, against the bare
read of the same files in the same run.

Host: make-tree's host of one mlx5 device (mlx5_0 at 0000:01:00.0), given sriov_totalvfs =
--vfs and sriov_numvfs = 0, and the rule `sriov_numvfs = --vfs` for it. sriov_numvfs answers
writes as the kernel does through tests/integration/fake_sriov.c (preloaded ahead of umockdev's
into rdmad), which logs each write; this script plays the driver: when rdmad's write is logged,
the VFs appear (hotplug.py write_vfs(): per VF a PCI function, an RDMA device with one port, a
uverbs device, an auxiliary device and a netdev) and their uevents are sent.

Each repetition: the driver reload takes mlx5_0 and every VF away ("remove" uevents, their
directories moved aside, sriov_numvfs back to 0), then mlx5_0 comes back ("add"). Timed from
that add to (a) rdmad's write of sriov_numvfs (the shim's log) and (b) the pass that shows the
last VF (STATUS= "N+1 RDMA devices"); the driver's part (moving the VF directories back, giving
each VF its own GUIDs again, sending their uevents) is measured apart and is in (b). rdmad's
CPU from the add to (b), plus 10 ms.

With the VF GUIDs (issue #26, on by default; --no-guids leaves them out): mlx5_0's port 1 and
its netdev are made InfiniBand (link_layer, netdev type 32), the rule asks `vf_guids` as a
range, and tests/integration/fake_vfguid.c (preloaded too) answers rdmad's RTM_SETLINK on the
PF's netdev (ifindex 1002) as the kernel does, logs each and writes the VF's node_guid and
GID 0. Then also timed: (c) the add to the last VF's GUID request logged, and (d) the add to
the last pass of the re-creation (the pass that read the VFs' GUIDs back: rdmad is idle for
0.3 s after it), with rdmad's CPU to (d).
Bare: bench-sysfs-read's fastest pass over the same tree (PF and VFs), under the preload."""

import argparse
import importlib.machinery
import os
import shutil
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
hp = importlib.machinery.SourceFileLoader("hotplug", os.path.join(HERE, "hotplug.py")).load_module()


def summary(values):
    return {"med": statistics.median(values), "p99": hp.pct(values, 99), "max": max(values),
            "min": min(values)}


def writes(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line for line in f.read().split("\n") if line]


def wait(pred, timeout, what, rd):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline or not rd.alive():
            raise SystemExit("%s: not within %.0f s; see %s" % (what, timeout, rd.log_path))
        time.sleep(0.001)
    return time.monotonic_ns()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rdmad", required=True)
    ap.add_argument("--sysfs-read", required=True)
    ap.add_argument("--fake-sriov", required=True)
    ap.add_argument("--fake-vfguid")
    ap.add_argument("--no-guids", action="store_true")
    ap.add_argument("--vfs", type=int, default=64)
    ap.add_argument("--gids", type=int, default=4)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--work", default="/tmp/rdmad-bench-sriov")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    args.export, args.dispatcher = "default", "default"  # hotplug.Rdmad's; rdmad.conf here
    n = args.vfs
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(os.path.join(args.work, "etc"))
    os.makedirs(os.path.join(args.work, "state"))
    guids = not args.no_guids and args.fake_vfguid
    with open(os.path.join(args.work, "etc", "rdmad.conf"), "w") as f:
        f.write('[[rule]]\ndevice = "mlx5_0"\nsriov_numvfs = %d\n' % n)
        if guids:
            f.write('vf_guids = { node = "00:11:22:33:44:55:00:00", '
                    'port = "00:11:22:33:44:56:00:00" }\n')
        f.write('[export]\nprometheus_dir = ""\nnfd_dir = ""\n')
    bed = hp.Bed(1, args.gids)
    pf_sys = "/sys/devices/" + hp.PF_PATH
    pf_dir = hp.make_pf(bed, n)
    numvfs = pf_dir + "/sriov_numvfs"
    if guids:
        # An InfiniBand PF: its port and its netdev (make-tree's enp1s0f0np0, ifindex 1002).
        with open(pf_dir + "/infiniband/mlx5_0/ports/1/link_layer", "w") as f:
            f.write("InfiniBand\n")
        with open(pf_dir + "/net/enp1s0f0np0/type", "w") as f:
            f.write("32\n")
    log = os.path.join(args.work, "sriov.log")
    guid_log = os.path.join(args.work, "vfguid.log")
    preload = [args.fake_sriov] + ([args.fake_vfguid] if guids else []) + [hp.PRELOAD]
    env = {"LD_PRELOAD": " ".join(preload), "FAKE_SRIOV_LOG": log,
           "FAKE_VFGUID_LOG": guid_log, "FAKE_VFGUID_PF": "1002=" + pf_dir,
           "CONFIGURATION_DIRECTORY": os.path.join(args.work, "etc"),
           "STATE_DIRECTORY": os.path.join(args.work, "state")}
    ib_sys = pf_sys + "/infiniband/mlx5_0"
    ib_dir, ib_gone = bed.root + ib_sys, bed.root + ib_sys + ".gone"
    want = "0000:01:00.0 %d 0" % n
    shown = "STATUS=%d RDMA devices" % (n + 1)
    rd = hp.Rdmad(args, bed.root, args.work, env)
    result = {"vfs": n, "reps": args.reps}
    try:
        # Start-up: rdmad asks for the VFs; the driver makes them (written once, in no figure).
        wait(lambda: writes(log) == [want], args.timeout, "the write at start-up", rd)
        t = time.monotonic()
        events = hp.write_vfs(bed, n, args.gids, True)
        # The VFs' PCI functions (write_vfs() sends each one's "add" first): the rest is below.
        vf_dirs = [bed.root + p for p, _ in events if p.count("/") == 5]
        hp.log("%d VFs written in %.1f s (in no figure); %d uevents each time"
               % (n, time.monotonic() - t, len(events)))
        # Each VF's GUIDs as its driver gives them (the driver gives them again on a reload).
        own = {}
        for d in vf_dirs:
            for ib in os.listdir(d + "/infiniband"):
                for name in ("node_guid", "ports/1/gids/0"):
                    path = "%s/infiniband/%s/%s" % (d, ib, name)
                    with open(path) as f:
                        own[path] = f.read()
        sender = hp.RawSender(bed.root)
        for path, action in events:
            sender.send(path, action)
        wait(lambda: any(s[1].startswith(shown[7:]) for s in rd.statuses), args.timeout,
             "the VFs at start-up", rd)
        time.sleep(0.3)
        if guids:
            wait(lambda: len(writes(guid_log)) >= n, args.timeout, "the GUIDs at start-up", rd)
            time.sleep(0.3)
        to_write, to_last, driver, cpu = [], [], [], []
        to_guids, to_idle, cpu_idle = [], [], []
        for i in range(args.reps):
            # The driver goes: the VFs' and the PF's devices, then sriov_numvfs reads 0.
            for path, _ in reversed(events):
                sender.send(path, "remove")
            sender.send(ib_sys, "remove")
            for d in vf_dirs:
                os.rename(d, d + ".gone")
            os.rename(ib_dir, ib_gone)
            with open(numvfs, "w") as f:
                f.write("0\n")
            mark = len(rd.statuses)
            wait(lambda: any(s[1].startswith("0 RDMA devices") for s in rd.statuses[mark:]),
                 args.timeout, "reload %d: the devices gone" % i, rd)
            time.sleep(0.1)
            # The driver is back: mlx5_0 comes, rdmad asks for the VFs, the driver makes them.
            os.rename(ib_gone, ib_dir)
            count = len(writes(log))
            mark = len(rd.statuses)
            c0 = rd.cpu_ns()
            t0 = time.monotonic_ns()
            sender.send(ib_sys, "add")
            t_write = wait(lambda: len(writes(log)) > count, args.timeout,
                           "reload %d: the write" % i, rd)
            if writes(log)[count:] != [want]:
                raise SystemExit("reload %d: rdmad wrote %s" % (i, writes(log)[count:]))
            d0 = time.monotonic_ns()
            for d in vf_dirs:
                os.rename(d + ".gone", d)
            for path, text in own.items():
                with open(path, "w") as f:
                    f.write(text)
            guid_count = len(writes(guid_log))
            for path, action in events:
                sender.send(path, action)
            driver.append((time.monotonic_ns() - d0) / 1e6)
            wait(lambda: any(s[1].startswith(shown[7:]) for s in rd.statuses[mark:]),
                 args.timeout, "reload %d: the last VF on the bus" % i, rd)
            t_last = next(s[0] for s in rd.statuses[mark:] if s[1].startswith(shown[7:]))
            time.sleep(0.01)
            cpu.append((rd.cpu_ns() - c0) / 1e6)
            to_write.append((t_write - t0) / 1e6)
            to_last.append((t_last - t0) / 1e6)
            if guids:
                t_guids = wait(lambda: len(writes(guid_log)) >= guid_count + n, args.timeout,
                               "reload %d: the VFs' GUIDs" % i, rd)
                if len(writes(guid_log)) != guid_count + n:
                    raise SystemExit("reload %d: %d GUID requests for %d VFs"
                                     % (i, len(writes(guid_log)) - guid_count, n))
                time.sleep(0.3)  # idle: the last pass was the read-back
                to_guids.append((t_guids - t0) / 1e6)
                to_idle.append((rd.statuses[-1][0] - t0) / 1e6)
                cpu_idle.append((rd.cpu_ns() - c0) / 1e6)
            time.sleep(0.2)
        sender.close()
        result["to_write_ms"] = summary(to_write)
        result["to_last_vf_ms"] = summary(to_last)
        result["driver_ms"] = summary(driver)
        result["cpu_ms"] = summary(cpu)
        result["writes"] = len(writes(log))
        if guids:
            result["to_guids_ms"] = summary(to_guids)
            result["to_read_back_ms"] = summary(to_idle)
            result["cpu_with_guids_ms"] = summary(cpu_idle)
            result["guid_requests"] = len(writes(guid_log))
    finally:
        rd.stop()
    result.update(hp.bare_read(args, bed.root, 5))
    bed.close()

    bare = result["bare_preload_ms"]
    r = result
    print("| re-creation of %d VFs after a driver reload | median | p99 | ratio to bare |" % n)
    print("|---|---:|---:|---:|")
    print("| bare read of the tree (%d files), ms | %.2f | | 1 |" % (r["bare_files"], bare))
    print("| rdmad: add -> sriov_numvfs written, ms | %.2f | %.2f | %.2f |" % (
        r["to_write_ms"]["med"], r["to_write_ms"]["p99"], r["to_write_ms"]["med"] / bare))
    print("| rdmad: add -> last VF on the bus, ms | %.2f | %.2f | %.2f |" % (
        r["to_last_vf_ms"]["med"], r["to_last_vf_ms"]["p99"], r["to_last_vf_ms"]["med"] / bare))
    print("| of which the driver's part (moves, uevents), ms | %.2f | %.2f | %.2f |" % (
        r["driver_ms"]["med"], r["driver_ms"]["p99"], r["driver_ms"]["med"] / bare))
    print("| rdmad CPU per re-creation, ms | %.2f | %.2f | %.2f |" % (
        r["cpu_ms"]["med"], r["cpu_ms"]["p99"], r["cpu_ms"]["med"] / bare))
    if guids:
        print("| rdmad: add -> last VF's GUIDs sent, ms | %.2f | %.2f | %.2f |" % (
            r["to_guids_ms"]["med"], r["to_guids_ms"]["p99"], r["to_guids_ms"]["med"] / bare))
        print("| rdmad: add -> GUIDs read back (last pass), ms | %.2f | %.2f | %.2f |" % (
            r["to_read_back_ms"]["med"], r["to_read_back_ms"]["p99"],
            r["to_read_back_ms"]["med"] / bare))
        print("| rdmad CPU per re-creation with the GUIDs, ms | %.2f | %.2f | %.2f |" % (
            r["cpu_with_guids_ms"]["med"], r["cpu_with_guids_ms"]["p99"],
            r["cpu_with_guids_ms"]["med"] / bare))
        print("\nVF GUID requests over the run (start-up and %d reloads): %d"
              % (args.reps, r["guid_requests"]))
    print()
    print("sriov_numvfs writes over the run (start-up and %d reloads): %d" % (args.reps,
                                                                             r["writes"]))
    if args.json:
        import json
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
