#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Driver of bench/readd.sh (which starts the private bus and runs this under the umockdev
preload): what it costs rdmad to give a RoCE device that comes back the whole
`profile = "lossless-roce"` again, and to set back another tool's APP table change; both
against the bare cost of the same writes made in the same run, in the same emulation.

Host: make-tree's host of one mlx5 RoCE device (mlx5_0, netdev enp1s0f0np0, GIDs of both RoCE
versions). DCB from tests/integration/fake_dcbnl.c, configfs from fake_configfs.c, both
preloaded ahead of umockdev's into rdmad and into bench-lossless-write.

1. re-add (--reps N): the driver re-creates mlx5_0: "remove", the device's directory goes,
   the netdev's DCB is the driver's default again (FAKE_DCBNL_RESET) and the configfs group
   shows a new device's values (rdma_cm_model_fill_group(): "RoCE v2", ToS 0); then the
   directory is back and "add" is sent. Timed from the add to (a) the shim's notification of
   rdmad's APP SET (the last DCB write) and (b) PropertiesChanged(RDMACMToS) on the port: the
   pass that verifies the writes through the read path, which comes a coalescing window after
   the writes by design. rdmad's CPU per re-add, from the add until (b) and 10 ms more.
2. bare: bench-lossless-write makes the same requests N times (IEEE_GET, PFC SET + GET, APP
   SET + GET, the group's read, the ToS write and its read-back).
3. corrections (--corrections N): another tool deletes DSCP 48 -> 6 (a multicast
   notification, as the kernel sends after `dcb app del`); timed until the shim's
   notification of rdmad's APP SET; GETs and SETs per correction counted by the shim.
   A Reconcile every third keeps the port from becoming contested (3 a minute)."""

import argparse
import ctypes
import importlib.machinery
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
hp = importlib.machinery.SourceFileLoader("hotplug", os.path.join(HERE, "hotplug.py")).load_module()
from gi.repository import GLib  # noqa: E402  (hotplug.py required the versions)

RTM_SETDCB = 79
DCB_CMD_IEEE_SET = 20
DCB_ATTR_IFNAME, DCB_ATTR_IEEE, DCB_ATTR_DCBX = 1, 13, 15
DCB_ATTR_IEEE_PFC, DCB_ATTR_IEEE_APP_TABLE, DCB_ATTR_IEEE_APP = 2, 3, 1
NLA_F_NESTED = 1 << 15
RTNLGRP_DCB = 23
IFNAME = "enp1s0f0np0"  # make-tree's netdev of mlx5_0
APP_48_6 = struct.pack("=BBH", 5, 6, 48)  # struct dcb_app {IEEE_8021QAZ_APP_SEL_DSCP, 6, 48}
PROFILE = '[[rule]]\ndevice = "mlx5_0"\nprofile = "lossless-roce"\n' \
          '[export]\nprometheus_dir = ""\nnfd_dir = ""\n'


def attr(t, data):
    pad = (4 - len(data) % 4) % 4
    return struct.pack("=HH", 4 + len(data), t) + data + b"\0" * pad


def notification(pfc_en, apps):
    """What net/dcb/dcbnl.c dcbnl_ieee_notify() multicasts after a SET: IFNAME,
    IEEE { IEEE_PFC, IEEE_APP_TABLE { IEEE_APP... } }, DCBX; laid out by hand."""
    pfc = struct.pack("=BBBxH2x", 8, pfc_en, 0, 0) + bytes(128)  # struct ieee_pfc, 136 bytes
    table = b"".join(attr(DCB_ATTR_IEEE_APP, struct.pack("=BBH", 5, p, d)) for d, p in apps)
    ieee = attr(DCB_ATTR_IEEE_PFC, pfc) + attr(DCB_ATTR_IEEE_APP_TABLE, table)
    body = struct.pack("=BBH", 0, DCB_CMD_IEEE_SET, 0)
    body += attr(DCB_ATTR_IFNAME, IFNAME.encode() + b"\0")
    body += attr(DCB_ATTR_IEEE | NLA_F_NESTED, ieee)
    body += attr(DCB_ATTR_DCBX, bytes([0x05]))  # DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE
    return struct.pack("=IHHII", 16 + len(body), RTM_SETDCB, 0, 0, 0) + body


def wait_app_set(rx, timeout):
    """The monotonic ns of the shim's notification of an APP SET that put 48 -> 6 in."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = rx.recv(65536)
        except socket.timeout:
            break
        if len(data) > 20 and struct.unpack_from("=H", data, 4)[0] == RTM_SETDCB \
                and APP_48_6 in data[20:]:
            return time.monotonic_ns()
    return None


def requests(path):
    with open(path) as f:
        return [line for line in f.read().split("\n") if line]


def summary(values):
    return {"med": statistics.median(values), "p99": hp.pct(values, 99), "max": max(values),
            "min": min(values)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rdmad", required=True)
    ap.add_argument("--lossless-write", required=True)
    ap.add_argument("--fake-dcbnl", required=True)
    ap.add_argument("--fake-configfs", required=True)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--corrections", type=int, default=50)
    ap.add_argument("--work", default="/tmp/rdmad-bench-readd")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--event-timeout", type=float, default=10.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    args.export, args.dispatcher = "default", "default"  # hotplug.Rdmad's; rdmad.conf here
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(os.path.join(args.work, "etc"))
    os.makedirs(os.path.join(args.work, "state"))
    with open(os.path.join(args.work, "etc", "rdmad.conf"), "w") as f:
        f.write(PROFILE)
    bed = hp.Bed(1, 4)
    os.makedirs(os.path.join(bed.root, "sys/kernel/config/rdma_cm"))
    model = ctypes.CDLL(args.fake_configfs)  # rdma_cm_model_fill_group(), for the re-creation
    dcb_log = os.path.join(args.work, "dcb.log")
    reset = os.path.join(args.work, "dcb-reset")
    preload = "%s %s %s" % (args.fake_configfs, args.fake_dcbnl, hp.PRELOAD)
    env = {"LD_PRELOAD": preload, "FAKE_DCBNL_NETDEVS": IFNAME, "FAKE_DCBNL_LOG": dcb_log,
           "FAKE_DCBNL_RESET": reset,
           "CONFIGURATION_DIRECTORY": os.path.join(args.work, "etc"),
           "STATE_DIRECTORY": os.path.join(args.work, "state")}
    ib_sys = "/sys/devices/%s/infiniband/mlx5_0" % hp.PF_PATH
    ib_dir, gone_dir = bed.root + ib_sys, bed.root + ib_sys + ".gone"
    tos_file = bed.root + "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos"
    rd = hp.Rdmad(args, bed.root, args.work, env)
    w = hp.Watcher()
    rx = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE
    rx.bind((0, 1 << (RTNLGRP_DCB - 1)))
    rx.settimeout(args.event_timeout)
    tx = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    tx.bind((0, 0))
    result = {"reps": args.reps, "corrections": args.corrections}
    try:
        deadline = time.monotonic() + args.timeout
        while not (os.path.exists(tos_file) and open(tos_file).read() == "106\n"):
            if time.monotonic() > deadline:
                raise SystemExit("the profile was not applied at start-up; see " + rd.log_path)
            time.sleep(0.01)
        time.sleep(0.2)
        hp.log("re-add: %d repetitions" % args.reps)
        to_dcb, to_verified, cpu, dcb_per = [], [], [], []
        for i in range(args.reps):
            start = len(w.events)
            bed.tb.uevent(ib_sys, "remove")
            os.rename(ib_dir, gone_dir)
            if w.wait_for(lambda e: e[1] == "InterfacesRemoved", start,
                          args.event_timeout) is None:
                raise SystemExit("remove %d: no InterfacesRemoved; see %s" % (i, rd.log_path))
            time.sleep(0.1)  # the coalescing window and the pass of the removal
            os.rename(gone_dir, ib_dir)  # before "add", with cma_add_one()'s values below
            with open(reset, "w") as f:
                f.write(IFNAME + "\n")
            if model.rdma_cm_model_fill_group(bed.root.encode(), b"mlx5_0", 0) != 0:
                raise SystemExit("cannot reset the configfs group")
            n_req = len(requests(dcb_log))
            start = len(w.events)
            c0 = rd.cpu_ns()
            t0 = time.monotonic_ns()
            bed.tb.uevent(ib_sys, "add")
            t_dcb = wait_app_set(rx, args.event_timeout)
            ev = w.wait_for(lambda e: e[1] == "PropertiesChanged" and e[3]
                            and e[3][0] == "org.rdmad1.Port" and "RDMACMToS" in e[3][1],
                            start, args.event_timeout)
            if t_dcb is None or ev is None:
                raise SystemExit("re-add %d: the profile was not applied again; see %s"
                                 % (i, rd.log_path))
            time.sleep(0.01)
            cpu.append((rd.cpu_ns() - c0) / 1e6)
            to_dcb.append((t_dcb - t0) / 1e6)
            to_verified.append((ev[0] - t0) / 1e6)
            if open(tos_file).read() != "106\n":
                raise SystemExit("re-add %d: default_roce_tos is not 106" % i)
            dcb_per.append(requests(dcb_log)[n_req:])
            time.sleep(0.1)
        result["readd"] = {"to_dcb_ms": summary(to_dcb), "to_verified_ms": summary(to_verified),
                           "cpu_ms": summary(cpu), "dcb_requests_first": dcb_per[0],
                           "dcb_requests_same": all(r == dcb_per[0] for r in dcb_per)}
        hp.log("  to the last DCB write: median %.2f ms, p99 %.2f ms; verified on the bus: "
               "median %.2f ms; CPU median %.3f ms" % (
                   result["readd"]["to_dcb_ms"]["med"], result["readd"]["to_dcb_ms"]["p99"],
                   result["readd"]["to_verified_ms"]["med"], result["readd"]["cpu_ms"]["med"]))

        hp.log("corrections: %d" % args.corrections)
        # The re-add's PFC and APP SETs on the same netdev count the second as a correction
        # (ContestGuard): start the corrections from a Reconcile, as an admin would.
        w.call(hp.BUS, hp.MANAGER, "org.rdmad1.Manager", "Reconcile",
               GLib.Variant("(b)", (False,)))
        time.sleep(0.1)
        n_req = len(requests(dcb_log))
        lat, ccpu = [], []
        for i in range(args.corrections):
            c0 = rd.cpu_ns()
            t0 = time.monotonic_ns()
            tx.sendto(notification(0x08, [(26, 3)]), (0, 1 << (RTNLGRP_DCB - 1)))
            t1 = wait_app_set(rx, args.event_timeout)
            if t1 is None:
                raise SystemExit("correction %d: no APP SET; see %s" % (i, rd.log_path))
            lat.append((t1 - t0) / 1e6)
            time.sleep(0.002)
            ccpu.append((rd.cpu_ns() - c0) / 1e6)
            time.sleep(0.06)
            if (i + 1) % 3 == 0:
                w.call(hp.BUS, hp.MANAGER, "org.rdmad1.Manager", "Reconcile",
                       GLib.Variant("(b)", (False,)))
                time.sleep(0.06)
        time.sleep(0.2)
        done = requests(dcb_log)[n_req:]
        count = {k: sum(r.split(" ")[0] == k for r in done) for k in ("GET", "SET", "APPSET",
                                                                       "APPDEL")}
        result["correction"] = {"lat_ms": summary(lat), "cpu_ms": summary(ccpu),
                                "per_correction": {k: v / args.corrections
                                                   for k, v in count.items()}}
        hp.log("  median %.2f ms, p99 %.2f ms; per correction %s" % (
            result["correction"]["lat_ms"]["med"], result["correction"]["lat_ms"]["p99"],
            result["correction"]["per_correction"]))
    finally:
        rx.close()
        tx.close()
        w.close()
        rd.stop()

    hp.log("bare: %d repetitions of the same writes" % args.reps)
    benv = dict(os.environ)
    benv.update({"LD_PRELOAD": preload, "UMOCKDEV_DIR": bed.root,
                 "FAKE_DCBNL_NETDEVS": IFNAME, "FAKE_DCBNL_RESET": reset,
                 "FAKE_DCBNL_LOG": os.path.join(args.work, "bare-dcb.log")})
    out = subprocess.run([args.lossless_write, "--netdev", IFNAME, "--device", "mlx5_0",
                          "--reps", str(args.reps)], env=benv, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("bench-lossless-write failed: %s%s" % (out.stdout, out.stderr))
    bare = json.loads(out.stdout)
    bare_req = requests(os.path.join(args.work, "bare-dcb.log"))
    result["bare"] = {"wall_ms": summary([v / 1e3 for v in bare["wall_us"]]),
                      "cpu_ms": summary([v / 1e3 for v in bare["cpu_us"]]),
                      "dcb_requests_first": bare_req[:len(bare_req) // args.reps]}
    bed.close()

    r, b, c = result["readd"], result["bare"], result["correction"]
    print("| re-add of mlx5_0, lossless-roce | median | p99 | ratio to bare (median) |")
    print("|---|---:|---:|---:|")
    print("| bare writes, wall ms | %.3f | %.3f | 1 |" % (b["wall_ms"]["med"], b["wall_ms"]["p99"]))
    print("| bare writes, CPU ms | %.3f | %.3f | 1 |" % (b["cpu_ms"]["med"], b["cpu_ms"]["p99"]))
    print("| rdmad: add -> last DCB write, ms | %.3f | %.3f | %.1f |" % (
        r["to_dcb_ms"]["med"], r["to_dcb_ms"]["p99"], r["to_dcb_ms"]["med"] / b["wall_ms"]["med"]))
    print("| rdmad: add -> verified on the bus, ms | %.3f | %.3f | %.1f |" % (
        r["to_verified_ms"]["med"], r["to_verified_ms"]["p99"],
        r["to_verified_ms"]["med"] / b["wall_ms"]["med"]))
    print("| rdmad CPU per re-add, ms | %.3f | %.3f | %.1f |" % (
        r["cpu_ms"]["med"], r["cpu_ms"]["p99"], r["cpu_ms"]["med"] / b["cpu_ms"]["med"]))
    print()
    print("DCB requests per re-add, rdmad: %s (the same every time: %s)" % (
        " / ".join(r["dcb_requests_first"]), r["dcb_requests_same"]))
    print("DCB requests per repetition, bare: %s" % " / ".join(b["dcb_requests_first"]))
    print("correction of another tool's APP change: median %.3f ms, p99 %.3f ms, CPU median "
          "%.3f ms; per correction %s" % (c["lat_ms"]["med"], c["lat_ms"]["p99"],
                                          c["cpu_ms"]["med"], c["per_correction"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
