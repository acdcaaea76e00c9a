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
# shellcheck source=common.sh
. "$here/common.sh"
bench_require startup.sh daemon/rdmad bench/bench-sysfs-read bench/bench-describe cli/rdmactl
if [ "$(id -u)" != 0 ]; then
  echo "startup.sh: warning: not root; the ibstat column needs unshare -m and mount" >&2
fi

bench_bus rdmad-bench-bus
/usr/bin/python3 "$here/startup.py" \
  --rdmad "$build/daemon/rdmad" \
  --sysfs-read "$build/bench/bench-sysfs-read" \
  --describe "$build/bench/bench-describe" \
  --rdmactl "$build/cli/rdmactl" "$@"
