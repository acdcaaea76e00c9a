#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two rdmad binaries (old and new), alternated run by run on the same generated hosts in one
# session: start-up, Describe(), memory, GetManagedObjects, change-event latency and a VF
# burst, each against the bare cost measured in the same run. Builds nothing. See
# bench/bus-compare.py's docstring and bench/README.md.
#
#   bench/bus-compare.sh --old OLD/daemon/rdmad --new NEW/daemon/rdmad [--rounds 3]
#                        [--only startup,latency,burst] [--sizes 64,1024]
#                        [--latency-sizes 1,64,1024] [--events 200] [--vfs 1000] [--json FILE]
#
# BUILD_DIR (default: build/ beside bench/) gives the helpers (bench-sysfs-read, bench-describe).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
# shellcheck source=common.sh
. "$here/common.sh"
bench_require bus-compare.sh bench/bench-sysfs-read bench/bench-describe bench/bench-signal-clock \
  bench/bench-uevent-echo
bench_bus rdmad-cmp-bus
/usr/bin/python3 "$here/bus-compare.py" \
  --sysfs-read "$build/bench/bench-sysfs-read" \
  --describe "$build/bench/bench-describe" \
  --signal-clock "$build/bench/bench-signal-clock" \
  --uevent-echo "$build/bench/bench-uevent-echo" "$@"
