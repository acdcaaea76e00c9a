#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmad's resident memory mapping by mapping (/proc/PID/smaps) at READY, inside the first
# Describe() (stopped by gdb at the reply's sd_bus_send()) and after it, on a make-tree.py host
# under the umockdev preload, on a private bus. Builds nothing. See bench/smaps.py.
#
#   bench/smaps.sh RDMAD TREE [--json FILE] [--describe-json FILE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
rdmad=$1 tree=$2
shift 2
# shellcheck source=common.sh
. "$here/common.sh"
bench_require smaps.sh bench/bench-describe
bench_bus rdmad-smaps-bus
/usr/bin/python3 "$here/smaps.py" "$rdmad" "$tree" "$build/bench/bench-describe" "$@"
