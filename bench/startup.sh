#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmad start-up benchmark: READY=1 time, Describe() time, peak RSS, against bare sysfs reads,
# prometheus-node-exporter's infiniband collector and ibstat, on generated hosts of 1, 64 and
# 1,024 RDMA devices. Builds nothing: run `ninja -C build` first. Usage and columns:
# bench/README.md.
#
#   bench/startup.sh [--sizes 1,64,1024] [--runs 5] [--big-runs 3] [--gids 32] [--work DIR]
#                    [--regen] [--json FILE]
#
# BUILD_DIR (default: build/ beside bench/) names the build tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
for f in daemon/rdmad bench/bench-sysfs-read bench/bench-describe; do
  if [ ! -x "$build/$f" ]; then
    echo "startup.sh: $build/$f is missing; build first (ninja -C build)" >&2
    exit 1
  fi
done
if ! ldconfig -p | grep -q libumockdev-preload.so.0; then
  echo "startup.sh: libumockdev-preload.so.0 not found (apt-get install umockdev)" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "startup.sh: warning: not root; the ibstat column needs unshare -m and mount" >&2
fi

# shellcheck source=../tools/private-bus.sh
. "$here/../tools/private-bus.sh"
busdir=$(mktemp -d /tmp/rdmad-bench-bus.XXXXXX)
trap 'stop_private_bus; rm -rf "$busdir"' EXIT
start_private_bus "$busdir"

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)," \
  "$(uname -r), rdmad $("$build/daemon/rdmad" --version | awk '{print $2}')" \
  "($(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo '?'))" >&2
/usr/bin/python3 "$here/startup.py" \
  --rdmad "$build/daemon/rdmad" \
  --sysfs-read "$build/bench/bench-sysfs-read" \
  --describe "$build/bench/bench-describe" "$@"
