#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what is needed, build, start rdmad on a private bus over a bundled recorded host
# (or this machine's hardware with --real), print `rdmactl status`, and stop rdmad cleanly.
#
#   tools/demo.sh                 the default recorded host (hwloc-cx3-ib)
#   tools/demo.sh --host NAME     another host of tests/fixtures/hosts/NAME.umockdev
#   tools/demo.sh --real          this machine's /sys (needs /sys/class/infiniband)
#   tools/demo.sh --list-hosts    the bundled hosts
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
host=hwloc-cx3-ib
real=0
while (($#)); do
  case $1 in
    --host) host=${2:?--host needs a NAME}; shift 2 ;;
    --host=*) host=${1#--host=}; shift ;;
    --real) real=1; shift ;;
    --list-hosts) ls "$top/tests/fixtures/hosts" | sed -n 's/\.umockdev$//p'; exit 0 ;;
    -h|--help) sed -n '3,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
file="$top/tests/fixtures/hosts/$host.umockdev"
if ((real)); then
  [ -d /sys/class/infiniband ] || { echo "demo.sh: --real: no /sys/class/infiniband here" >&2; exit 1; }
elif [ ! -f "$file" ]; then
  echo "demo.sh: no bundled host '$host' (try --list-hosts)" >&2; exit 2
fi

"$top/tools/install-deps.sh"
[ -f "$top/build/build.ninja" ] || meson setup "$top/build" >/dev/null
ninja -C "$top/build" >/dev/null

tmp=$(mktemp -d)
. "$top/tools/private-bus.sh"
trap 'stop_private_bus; rm -rf "$tmp"' EXIT
start_private_bus "$tmp"

# rdmad runs in the foreground of a small shell that waits for it to take its name, prints
# the status, then stops it with SIGTERM and returns rdmad's exit status.
run='
  "$RDMAD" & pid=$!
  for i in $(seq 100); do "$RDMACTL" list >/dev/null 2>&1 && break; sleep 0.1; done
  "$RDMACTL" status; rc=$?
  kill -TERM $pid; wait $pid; drc=$?
  [ $drc = 0 ] || echo "rdmad exited with status $drc" >&2
  exit $(( rc ? rc : drc ))'
export RDMAD="$top/build/daemon/rdmad" RDMACTL="$top/build/cli/rdmactl"
if ((real)); then
  echo "== rdmactl status (this machine)"
  bash -c "$run"
else
  echo "== rdmactl status (recorded host $host)"
  umockdev-run -d "$file" -- bash -c "$run"
fi
