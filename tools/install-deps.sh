#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what building, running and testing rdmad needs on Debian 12 (as root).
set -euo pipefail
packages=(
  meson ninja-build pkg-config g++ clang libclang-rt-14-dev
  libsdbus-c++-dev libsdbus-c++-bin libsystemd-dev libudev-dev libibverbs-dev ibverbs-providers
  libmnl-dev libkmod-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
  catch2 umockdev libumockdev-dev dbus-daemon scdoc strace python3 python3-dbusmock
  python3-dbus python3-gi gir1.2-umockdev-1.0 util-linux
  systemd udev libxml2-utils man-db polkitd iproute2 bash-completion zsh packagekit
  prometheus prometheus-node-exporter openssh-server openssh-client
  cockpit-ws cockpit-bridge chromium chromium-driver python3-selenium
  debhelper dpkg-dev lintian
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages (run as root): ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
