#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions (valgrind's callgrind, Ir) of one rdmad start-up on a make-tree.py host under the
# umockdev preload, on a private bus, against the bare read of the same files
# (bench-sysfs-read --doctor) counted the same way. Instruction counts do not depend on the
# machine's load, so two binaries compare in runs minutes apart. Builds nothing.
#
#   bench/callgrind.sh RDMAD TREE [OUT_DIR]
#
# rdmad runs until READY=1, then 1 s more (what the loop does once idle), then SIGTERM.
# Prints the totals and the main phases; the profiles stay in OUT_DIR (default: a new
# directory under /tmp) for callgrind_annotate.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
rdmad=$1 tree=$2 out=${3:-$(mktemp -d /tmp/rdmad-callgrind.XXXXXX)}
mkdir -p "$out"
# shellcheck source=common.sh
. "$here/common.sh"
bench_require callgrind.sh bench/bench-sysfs-read
# Under valgrind, rdmad answers the bus only after its scan: 15 minutes to authenticate.
PRIVATE_BUS_AUTH_TIMEOUT_MS=900000 bench_bus rdmad-callgrind-bus
rm -f "$tree"/event[0-9]*
/usr/bin/python3 - "$rdmad" "$tree" "$out" <<'PY'
import os, signal, socket, subprocess, sys, tempfile, time
rdmad, tree, out = sys.argv[1:4]
work = tempfile.mkdtemp(prefix="rdmad-callgrind.")
sock_path = os.path.join(work, "notify.sock")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock_path)
env = dict(os.environ, LD_PRELOAD="libumockdev-preload.so.0", UMOCKDEV_DIR=tree,
           NOTIFY_SOCKET=sock_path)
log = open(os.path.join(out, "rdmad.valgrind.log"), "w")
p = subprocess.Popen(["valgrind", "--tool=callgrind",
                      "--callgrind-out-file=" + os.path.join(out, "rdmad.callgrind"), rdmad],
                     env=env, stdout=log, stderr=subprocess.STDOUT)
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
time.sleep(1)
p.send_signal(signal.SIGTERM)
p.wait(timeout=600)
os.unlink(sock_path)
os.rmdir(work)
PY
LD_PRELOAD=libumockdev-preload.so.0 UMOCKDEV_DIR=$tree valgrind --tool=callgrind \
  --callgrind-out-file="$out/bare.callgrind" "$build/bench/bench-sysfs-read" --doctor \
  > "$out/bare.valgrind.log" 2>&1
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }
phase() { # profile, function name as callgrind_annotate prints it
  # awk reads to the end: leaving at the first match would kill callgrind_annotate with
  # SIGPIPE, and pipefail would end the script (common.sh says the same of grep -q).
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
    awk -v f="$2" 'index($0, f) && /\[/ && !n {gsub(",", "", $1); n = $1} END {print n + 0}'
}
r=$(total "$out/rdmad.callgrind") b=$(total "$out/bare.callgrind")
scan=$(phase "$out/rdmad.callgrind" "rdmad::Scanner::full_scan()")
pub=$(phase "$out/rdmad.callgrind" "rdmad::Daemon::publish")
awk -v r="$r" -v b="$b" -v s="${scan:-0}" -v p="${pub:-0}" 'BEGIN {
  printf "rdmad, start to exit: %.1f M instructions (%.2fx the bare read)\n", r / 1e6, r / b
  printf "  full_scan() %.1f M (%.2fx), publish() %.1f M; the two, before READY=1: %.2fx\n",
         s / 1e6, s / b, p / 1e6, (s + p) / b
  printf "bare read (bench-sysfs-read --doctor): %.1f M instructions\n", b / 1e6
}'
echo "profiles: $out/rdmad.callgrind $out/bare.callgrind (callgrind_annotate)"
