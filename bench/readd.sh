#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmad re-add benchmark (issue #25): a RoCE device re-created by its driver gets
# `profile = "lossless-roce"` again (PFC, DSCP APP entries, RDMA-CM configfs), and another
# tool's APP change is set back; against bench-lossless-write, the same writes made directly
# in the same run and emulation. Builds nothing: run `ninja -C build` first. Usage and
# columns: bench/README.md.
#
#   bench/readd.sh [--reps 50] [--corrections 50] [--work DIR] [--json FILE]
#
# BUILD_DIR (default: build/ beside bench/) names the build tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
# shellcheck source=common.sh
. "$here/common.sh"
bench_require readd.sh daemon/rdmad bench/bench-lossless-write
for f in tests/integration/fake-dcbnl.so tests/integration/fake-configfs.so; do
  if [ ! -f "$build/$f" ]; then
    echo "readd.sh: $build/$f is missing; build first (ninja -C build)" >&2
    exit 1
  fi
done
if ! /usr/bin/python3 -c 'import gi; gi.require_version("UMockdev", "1.0")' 2>/dev/null; then
  echo "readd.sh: /usr/bin/python3 has no UMockdev (apt-get install gir1.2-umockdev-1.0)" >&2
  exit 1
fi

bench_bus rdmad-bench-bus
# The benchmark process sends the uevents, so it runs under the preload itself.
umockdev-wrapper /usr/bin/python3 "$here/readd.py" \
  --rdmad "$build/daemon/rdmad" \
  --lossless-write "$build/bench/bench-lossless-write" \
  --fake-dcbnl "$build/tests/integration/fake-dcbnl.so" \
  --fake-configfs "$build/tests/integration/fake-configfs.so" "$@"
