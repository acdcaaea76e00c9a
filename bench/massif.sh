#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Heap profile of one rdmad at its peak after READY and one Describe(): valgrind's massif on a
# make-tree.py host under the umockdev preload, on a private bus. Builds nothing.
#
#   bench/massif.sh RDMAD TREE OUT.massif [MODE]
#
# MODE: "describe" (default: READY, one Describe(), stop) or "gmo" (also one
# GetManagedObjects). Prints the ms_print summary of the peak to stdout. MASSIF_SETTLE=S
# waits S seconds after READY=1 before the Describe() call (default 0), so that the first
# rdmad.prom write (kept fragments) is over under valgrind's slowness, as it is before a
# Describe() outside valgrind: without it, two runs may order them differently.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
rdmad=$1 tree=$2 out=$3 mode=${4:-describe}
# shellcheck source=common.sh
. "$here/common.sh"
bench_require massif.sh bench/bench-describe
# Under valgrind, rdmad answers the bus only after its scan: 15 minutes to authenticate.
PRIVATE_BUS_AUTH_TIMEOUT_MS=900000 bench_bus rdmad-massif-bus
work=$(mktemp -d /tmp/rdmad-massif.XXXXXX)
rm -f "$tree"/event[0-9]*
/usr/bin/python3 - "$rdmad" "$tree" "$out" "$mode" "$build/bench/bench-describe" "$work" <<'PY'
import os, signal, socket, subprocess, sys, time
rdmad, tree, out, mode, describe, work = sys.argv[1:7]
sock_path = os.path.join(work, "notify.sock")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock_path)
env = dict(os.environ, LD_PRELOAD="libumockdev-preload.so.0", UMOCKDEV_DIR=tree,
           NOTIFY_SOCKET=sock_path)
log = open(os.path.join(work, "valgrind.log"), "w")
p = subprocess.Popen(["valgrind", "--tool=massif", "--massif-out-file=" + out,
                      "--detailed-freq=1000000", "--threshold=" + os.environ.get("MASSIF_THRESHOLD", "0.5"), "--depth=" + os.environ.get("MASSIF_DEPTH", "30"), rdmad], env=env,
                     stdout=log, stderr=subprocess.STDOUT)
deadline = time.monotonic() + 900
s.settimeout(5)
while True:
    if time.monotonic() > deadline or p.poll() is not None:
        sys.exit("no READY=1 (exit %s); see %s" % (p.poll(), log.name))
    try:
        if b"READY=1" in s.recv(65536):
            break
    except socket.timeout:
        pass
time.sleep(float(os.environ.get("MASSIF_SETTLE", "0")))
env = dict(os.environ)
r = subprocess.run([describe], env=env, capture_output=True, text=True, timeout=600)
print("Describe under massif: %s" % r.stdout.strip(), file=sys.stderr)
if mode == "gmo":
    subprocess.run(["busctl", "--system", "call", "--json=short", "org.rdmad1", "/org/rdmad1",
                    "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"],
                   stdout=subprocess.DEVNULL, check=True, timeout=600)
time.sleep(1)
p.send_signal(signal.SIGTERM)
p.wait(timeout=600)
PY
rm -rf "$work"
ms_print "$out" | sed -n '1,40p'
