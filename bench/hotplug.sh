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
for f in daemon/rdmad bench/bench-sysfs-read; do
  if [ ! -x "$build/$f" ]; then
    echo "hotplug.sh: $build/$f is missing; build first (ninja -C build)" >&2
    exit 1
  fi
done
if ! ldconfig -p | grep -q libumockdev-preload.so.0; then
  echo "hotplug.sh: libumockdev-preload.so.0 not found (apt-get install umockdev)" >&2
  exit 1
fi
if ! /usr/bin/python3 -c 'import gi; gi.require_version("UMockdev", "1.0"); from gi.repository import UMockdev, Gio' 2>/dev/null; then
  echo "hotplug.sh: the UMockdev GI binding is missing (apt-get install gir1.2-umockdev-1.0 python3-gi)" >&2
  exit 1
fi

# shellcheck source=../tools/private-bus.sh
. "$here/../tools/private-bus.sh"
busdir=$(mktemp -d /tmp/rdmad-hotplug-bus.XXXXXX)
trap 'stop_private_bus; rm -rf "$busdir"' EXIT
start_private_bus "$busdir"

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)," \
  "$(uname -r), rdmad $("$build/daemon/rdmad" --version | awk '{print $2}')" \
  "($(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo '?'))" >&2
# The benchmark process sends the uevents, so it runs under the preload itself.
umockdev-wrapper /usr/bin/python3 "$here/hotplug.py" \
  --rdmad "$build/daemon/rdmad" \
  --sysfs-read "$build/bench/bench-sysfs-read" "$@"
