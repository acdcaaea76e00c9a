#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmad hotplug benchmark: uevent -> PropertiesChanged latency over one-at-a-time "change"
# events, and the time rdmad takes to absorb a burst of 1,000 VF "add" uevents, against the
# bare cost of re-reading the same sysfs files. Builds nothing: run `ninja -C build` first.
# Usage and columns: bench/README.md ("hotplug.sh").
#
#   bench/hotplug.sh [--events 1000] [--latency-sizes 1] [--vfs 1000] [--gids 32]
#                    [--skip-latency] [--skip-burst] [--json FILE]
#
# BUILD_DIR (default: build/ beside bench/) names the build tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
# shellcheck source=common.sh
. "$here/common.sh"
bench_require hotplug.sh daemon/rdmad bench/bench-sysfs-read
if ! /usr/bin/python3 -c 'import gi; gi.require_version("UMockdev", "1.0"); from gi.repository import UMockdev, Gio' 2>/dev/null; then
  echo "hotplug.sh: the UMockdev GI binding is missing (apt-get install gir1.2-umockdev-1.0 python3-gi)" >&2
  exit 1
fi

bench_bus rdmad-hotplug-bus
# The benchmark process sends the uevents, so it runs under the preload itself.
umockdev-wrapper /usr/bin/python3 "$here/hotplug.py" \
  --rdmad "$build/daemon/rdmad" \
  --sysfs-read "$build/bench/bench-sysfs-read" \
  --fake-dcbnl "$build/tests/integration/fake-dcbnl.so" "$@"
