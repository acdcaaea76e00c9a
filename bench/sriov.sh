#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmad SR-IOV re-creation benchmark (issue #26): after a driver reload, rdmad writes
# `sriov_numvfs = N` to the PF again and the N VFs (PCI function, RDMA device, uverbs device,
# netdev each) arrive as a burst; against bench-sysfs-read, the bare read of the same tree's
# files in the same run; with the VFs' InfiniBand GUIDs set (vf_guids, issue #26) unless
# --no-guids. Builds nothing: run `ninja -C build` first. Usage and columns:
# bench/README.md.
#
#   bench/sriov.sh [--vfs 64] [--reps 10] [--work DIR] [--json FILE]
#
# BUILD_DIR (default: build/ beside bench/) names the build tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
# shellcheck source=common.sh
. "$here/common.sh"
bench_require sriov.sh daemon/rdmad bench/bench-sysfs-read
if [ ! -f "$build/tests/integration/fake-sriov.so" ]; then
  echo "sriov.sh: $build/tests/integration/fake-sriov.so is missing; build first (ninja -C build)" >&2
  exit 1
fi
if ! /usr/bin/python3 -c 'import gi; gi.require_version("UMockdev", "1.0")' 2>/dev/null; then
  echo "sriov.sh: /usr/bin/python3 has no UMockdev (apt-get install gir1.2-umockdev-1.0)" >&2
  exit 1
fi

bench_bus rdmad-bench-bus
# The benchmark process sends the uevents, so it runs under the preload itself.
umockdev-wrapper /usr/bin/python3 "$here/sriov.py" \
  --rdmad "$build/daemon/rdmad" \
  --sysfs-read "$build/bench/bench-sysfs-read" \
  --fake-sriov "$build/tests/integration/fake-sriov.so" \
  --fake-vfguid "$build/tests/integration/fake-vfguid.so" "$@"
