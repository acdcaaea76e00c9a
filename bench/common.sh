# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by bench/startup.sh, hotplug.sh and reconcile.sh after they set `here` (bench/) and
# `build` (BUILD_DIR, default build/ beside bench/).
# shellcheck disable=SC2154  # here and build: set by the sourcing script

# bench_require NAME FILE...: exit 1 unless every FILE of the build tree is there and the
# umockdev preload is installed; NAME prefixes the message.
bench_require() {
  local name=$1 f
  shift
  for f in "$@"; do
    if [ ! -x "$build/$f" ]; then
      echo "$name: $build/$f is missing; build first (ninja -C build)" >&2
      exit 1
    fi
  done
  # Not `grep -q`: it exits at the first match, ldconfig then dies of SIGPIPE, and pipefail
  # makes the test fail at random.
  if ! ldconfig -p | grep libumockdev-preload.so.0 >/dev/null; then
    echo "$name: libumockdev-preload.so.0 not found (apt-get install umockdev)" >&2
    exit 1
  fi
}

# bench_bus PREFIX: a private system bus (tools/private-bus.sh) in a fresh /tmp/PREFIX.XXXXXX,
# stopped and removed on exit; prints the machine line on stderr.
bench_bus() {
  # shellcheck source=../tools/private-bus.sh
  . "$here/../tools/private-bus.sh"
  busdir=$(mktemp -d "/tmp/$1.XXXXXX")
  trap 'stop_private_bus; rm -rf "$busdir"' EXIT
  start_private_bus "$busdir"
  echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)," \
    "$(uname -r), rdmad $("$build/daemon/rdmad" --version | awk '{print $2}')" \
    "($(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo '?'))" >&2
}
