#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmad reconciliation benchmark: mlx4 (ConnectX-3 VPI) port types "ib" -> "eth" on generated
# hosts of 1, 64 and 1,024 cards: READY=1 with and without a rule, time to convergence, a
# converged restart (no writes), Manager.Reconcile(true), against the bare sysfs writes.
# Builds nothing: run `ninja -C build` first. Usage and columns: bench/README.md.
#
#   bench/reconcile.sh [--sizes 1,64,1024] [--runs 5] [--big-runs 3] [--gids 32]
#                      [--poll-ms 10] [--dry-run-calls 5] [--work DIR] [--regen] [--json FILE]
#
# BUILD_DIR (default: build/ beside bench/) names the build tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
# shellcheck source=common.sh
. "$here/common.sh"
bench_require reconcile.sh daemon/rdmad bench/bench-port-write bench/bench-reconcile-call
if ! /usr/bin/python3 -c 'import gi; gi.require_version("Gio", "2.0")' 2>/dev/null; then
  echo "reconcile.sh: /usr/bin/python3 has no Gio (apt-get install python3-gi)" >&2
  exit 1
fi

bench_bus rdmad-bench-bus
/usr/bin/python3 "$here/reconcile.py" \
  --rdmad "$build/daemon/rdmad" \
  --port-write "$build/bench/bench-port-write" \
  --reconcile-call "$build/bench/bench-reconcile-call" "$@"
