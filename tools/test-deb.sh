#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package end to end, on this machine (as root, Debian 12): build it with
# dpkg-buildpackage in a copy of the tree, check it with lintian, install it with apt-get,
# compare `dpkg -L` with tests/install/expected-files.txt, run the installed rdmad on a
# recorded host on a private bus, upgrade, remove and purge it, checking what each step
# leaves. systemd need not be PID 1 (it is not in CI).
#
#   tools/test-deb.sh [RESULTS]   one line "NAME pass|fail" per case appended to RESULTS
#                                 (tools/count-tests.py --cases reads it)
#
# It installs and purges the package rdmad, so it refuses to run where rdmad is installed or
# left /etc/rdmad, /var/lib/rdmad or /etc/modprobe.d/rdmad-mlx4.conf behind. DEB_JOBS sets
# the build's parallel jobs (default: all cores); DEB_BUILT_DIR=DIR skips the build and tests
# the packages built before in DIR; DEB_WITH_CHECK=1 builds them with the test suites (as a
# Debian build daemon does; about 15 minutes more on 2 cores). Needs debhelper, dpkg-dev, lintian
# (tools/install-deps.sh).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
results=${1:-/dev/null}
host=procfs-hfi1-mlx4-mlx5 # a ConnectX-3 (mlx4_0) whose port type rdmad can set
# The name of the mlx4_en module options file rdmad writes, as the code has it (it also writes
# rdmad-ib_core.conf for [daemon] rdma_netns_mode).
own_modprobe=/etc/modprobe.d/$(sed -n 's|.*modprobe_dir + "/\(rdmad-mlx4[^"]*\)".*|\1|p' \
  "$top/daemon/actuators/modprobe.cpp")
admin_modprobe=/etc/modprobe.d/zz-rdmad-test-admin.conf
admin_dropin=/etc/rdmad/conf.d/zz-rdmad-test-admin.conf
started=$(date +%s)
passed=0
failed=0

say() { echo "== $*"; }
# record NAME STATUS [WHY]: one result line; a failure prints WHY.
record() {
  if [ "$2" = 0 ]; then
    echo "ok: $1"; echo "deb-$1 pass" >> "$results"; passed=$((passed + 1))
  else
    echo "FAIL: $1${3:+: $3}"; echo "deb-$1 fail" >> "$results"; failed=$((failed + 1))
  fi
}
# check NAME COMMAND...: the case passes when COMMAND exits 0.
check() { local name=$1; shift; "$@"; record "$name" $? "exit status $?"; }
# expect WHY COMMAND...: inside a case, COMMAND must succeed, else WHY is printed.
expect() { local why=$1; shift; "$@" && return 0; echo "  not so: $why"; return 1; }

case $own_modprobe in
  */rdmad*.conf) ;;
  *) echo "test-deb: no modprobe.d file name found in daemon/actuators/modprobe.cpp" >&2; exit 1 ;;
esac
if dpkg-query -W -f='${Status}' rdmad 2>/dev/null | grep -qv 'not-installed'; then
  echo "test-deb: the package rdmad is on this machine already; not touching it" >&2
  exit 1
fi
for p in /etc/rdmad /var/lib/rdmad "$own_modprobe" "$admin_modprobe"; do
  if [ -e "$p" ]; then
    echo "test-deb: $p exists; the purge test would remove or misjudge it" >&2
    exit 1
  fi
done

work=$(mktemp -d /tmp/rdmad-deb.XXXXXX)
daemon_pid=
runner_pid=
made_modprobe_d=
cleanup() {
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$runner_pid"
  stop_private_bus 2>/dev/null
  # Leave the machine as found, whatever failed.
  dpkg-query -W rdmad >/dev/null 2>&1 && dpkg --purge rdmad >/dev/null 2>&1
  rm -rf /etc/rdmad /var/lib/rdmad "$own_modprobe" "$admin_modprobe" "$work"
  [ -n "$made_modprobe_d" ] && rmdir /etc/modprobe.d
}
trap cleanup EXIT

# --- version: debian/changelog names meson.build's version --------------------------------
version=$(cd "$top" && dpkg-parsechangelog -SVersion)
check version bash -c "cd '$top' && debian/check-version '${version%-*}'" # upstream part

# --- build ----------------------------------------------------------------------------------
# In a copy, so that dpkg-buildpackage's output (written to the parent directory) and its
# obj-* build directory stay out of the tree; the copy is at least 150 characters deep, so
# that nothing of the build depends on a short path (AF_UNIX paths hold 108 bytes). nocheck:
# CI runs the test suites on its own builds; the package build does not build them again.
# DEB_WITH_CHECK=1 builds as a Debian build daemon does, with the test suites.
if [ -n "${DEB_BUILT_DIR:-}" ]; then
  # A developer's shortcut: test the packages built before in DEB_BUILT_DIR.
  say "packages from $DEB_BUILT_DIR (not built again)"
  cp "$DEB_BUILT_DIR"/rdmad*_"$version"_* "$work/"
else
  src=$work/build
  while [ ${#src} -lt 150 ]; do src=$src/a-source-tree-150-characters-deep; done
  src=$src/rdmad
  if [ "${DEB_WITH_CHECK:-0}" = 1 ]; then
    options="parallel=${DEB_JOBS:-$(nproc)}" profiles=
  else
    options="nocheck parallel=${DEB_JOBS:-$(nproc)}" profiles=nocheck
  fi
  say "dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS=$options, in a directory ${#src} characters deep)"
  mkdir -p "$src"
  tar -C "$top" --exclude='./build*' --exclude='./obj-*' --exclude=./.git -cf - . |
    tar -C "$src" -xf -
  build_start=$(date +%s)
  (cd "$src" && DEB_BUILD_OPTIONS="$options" DEB_BUILD_PROFILES="$profiles"       dpkg-buildpackage -us -uc -b) > "$work/build.log" 2>&1
  rc=$?
  echo "build: $(($(date +%s) - build_start)) s"
  [ $rc = 0 ] || tail -40 "$work/build.log"
  # What dpkg-buildpackage wrote beside the tree, where the rest of this script looks.
  mv "$(dirname "$src")"/*.deb "$(dirname "$src")"/*.changes "$(dirname "$src")"/*.buildinfo \
    "$work/" 2>/dev/null
  rm -rf "$work/build"
  record build $rc "dpkg-buildpackage exited $rc (log above)"
fi
deb=$(ls "$work"/rdmad_"$version"_*.deb 2>/dev/null)
changes=$(ls "$work"/rdmad_"$version"_*.changes 2>/dev/null)
if [ -z "$deb" ] || [ -z "$changes" ]; then
  echo "test-deb: no package built; the remaining cases are not run" >&2
  record not-built 1
  echo "deb: $passed passed, $failed failed ($(($(date +%s) - started)) s)"
  exit 1
fi

# --- lintian --------------------------------------------------------------------------------
say "lintian --fail-on error,warning"
check lintian lintian --fail-on error,warning --display-info "$changes"

# --- the example rdmad.conf documents exactly the keys of rdmad.conf(5) ---------------------
example_keys() {
  local man shipped
  man=$(sed -n 's/^\*\([a-z_]*\)\* = .*/\1/p' "$top/man/rdmad.conf.5.scd" | sort)
  shipped=$(sed -n 's/^# \([a-z_]*\) = .*/\1/p' "$top/debian/rdmad.conf" | sort)
  if [ -z "$man" ] || [ "$man" != "$shipped" ]; then
    echo "  not so: keys of rdmad.conf(5) [$(echo $man)] = keys of debian/rdmad.conf" \
      "[$(echo $shipped)]"
    return 1
  fi
  expect "no key is set in debian/rdmad.conf" \
    bash -c "! grep -Ev '^(#|\$)' '$top/debian/rdmad.conf'"
}
check example-conf-keys example_keys

# --- install --------------------------------------------------------------------------------
say "apt-get install ./$(basename "$deb")"
install_deb() {
  (cd "$(dirname "$1")" && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    "./$(basename "$1")") > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; return 1; }
}
installed() {
  expect "rdmad $1 is installed" \
    [ "$(dpkg-query -W -f='${Status} ${Version}' rdmad 2>/dev/null)" = "install ok installed $1" ]
}
# deb-systemd-helper enables the unit (and its Alias=) without a running systemd.
enabled() {
  expect "rdmad.service enabled" [ -L /etc/systemd/system/multi-user.target.wants/rdmad.service ] &&
  expect "its alias in place" [ -L /etc/systemd/system/dbus-org.rdmad1.service ] &&
  expect "rdmad-wait-online.service not enabled (the admin enables it, rdmad-wait-online(8))" \
    [ ! -e /etc/systemd/system/network-online.target.wants/rdmad-wait-online.service ]
}
install_case() {
  install_deb "$deb" && installed "$version" && enabled &&
  expect "the conffile /etc/rdmad/rdmad.conf" \
    grep -qx /etc/rdmad/rdmad.conf /var/lib/dpkg/info/rdmad.conffiles
}
check install install_case

# --- dpkg -L: the install test's list ------------------------------------------------------
# expected-files.txt lists what `meson install` places, and on "deb " lines what only the
# package has. dpkg -L lists directories too: only files and symbolic links count.
files_case() {
  local want have
  want=$(sed -n -e '/^#/d' -e 's/^deb //' -e '/^\//p' "$top/tests/install/expected-files.txt" |
    sort)
  # dh_compress gzips the man pages; the list names them as meson installs them.
  have=$(dpkg -L rdmad | while read -r f; do [ -d "$f" ] || echo "$f"; done |
    sed 's|^\(/usr/share/man/.*\)\.gz$|\1|' | sort)
  diff <(echo "$want") <(echo "$have") > "$work/files.diff" && return 0
  echo "  expected-files.txt (<) and dpkg -L rdmad (>) differ:"
  sed 's/^/  /' "$work/files.diff"
  return 1
}
check files files_case

# --- run the installed rdmad on a recorded host on a private bus ----------------------------
# Its configuration is the installed /etc/rdmad, its state /var/lib/rdmad (created as
# StateDirectory= would); modprobe.d and the legacy mlx4.conf are kept in $work.
. "$top/tools/private-bus.sh"
say "/usr/libexec/rdmad on the recorded host $host"
start_private_bus "$work"
mkdir -p "$work/modprobe.d" && install -d -m 0755 /var/lib/rdmad
# rdmad is exec'd by a shell under umockdev-run, so that $daemon_pid is rdmad's own.
env -u CONFIGURATION_DIRECTORY -u STATE_DIRECTORY \
  umockdev-run -d "$top/tests/fixtures/hosts/$host.umockdev" -- sh -c 'echo $$ > "$1/pid"
    exec /usr/libexec/rdmad --modprobe-dir="$1/modprobe.d" --legacy-mlx4-conf="$1/mlx4.conf"' \
    _ "$work" 2> "$work/rdmad.log" &
runner_pid=$!
for _ in $(seq 200); do rdmactl list >/dev/null 2>&1 && break; sleep 0.1; done
daemon_pid=$(cat "$work/pid" 2>/dev/null)
manager_state() {
  busctl --system get-property org.rdmad1 /org/rdmad1 org.rdmad1.Manager State
}
run_case() {
  rdmactl status > "$work/status.txt"
  local rc=$?
  cat "$work/status.txt"
  expect "rdmactl status exits 0 (it did $rc)" [ $rc = 0 ] &&
  expect "it shows mlx4_0" grep -q mlx4_0 "$work/status.txt" &&
  expect "the shipped rdmad.conf leaves rdmad running" [ "$(manager_state)" = 's "running"' ] &&
    return 0
  echo "  rdmad's log:"; sed 's/^/  /' "$work/rdmad.log"
  return 1
}
check run run_case

# An admin uncomments every key of the example: rdmad reads it again and accepts it (the
# example is valid as it stands), and persisting a setting writes rdmad's state file.
edit_case() {
  sed -i -E 's/^# (\[|[a-z_]+ = )/\1/' /etc/rdmad/rdmad.conf &&
  expect "rdmactl reload accepts the uncommented example" rdmactl reload &&
  expect "rdmad is still running" [ "$(manager_state)" = 's "running"' ] &&
  expect "set-port-type --persist" rdmactl set-port-type mlx4_0 2 eth --persist &&
  expect "rdmad wrote /var/lib/rdmad/state.conf" [ -s /var/lib/rdmad/state.conf ]
}
check conffile-edit edit_case

stop_case() {
  kill -TERM "$daemon_pid" && wait "$runner_pid"
  local rc=$?
  daemon_pid=
  [ $rc = 0 ] || { echo "  rdmad exited $rc; its log:"; cat "$work/rdmad.log"; }
  return $rc
}
check stop stop_case
stop_private_bus

# The README's way to try the installed package without systemd.
demo_case() {
  "$top/tools/demo.sh" --installed > "$work/demo.txt" 2>&1
  local rc=$?
  sed 's/^/  /' "$work/demo.txt"
  expect "tools/demo.sh --installed exits 0 (it did $rc)" [ $rc = 0 ] &&
  expect "it shows the recorded host's mlx4_0" grep -q mlx4_0 "$work/demo.txt"
}
check demo-installed demo_case

# --- upgrade --------------------------------------------------------------------------------
# The same files under a higher version (repacked: no second build), so that dpkg runs the
# upgrade path of the maintainer scripts and keeps the edited conffile without asking.
up_version="$version+upgradetest"
upgrade_case() {
  local tree=$work/upgrade
  dpkg-deb -R "$deb" "$tree" &&
  sed -i "s/^Version: .*/Version: $up_version/" "$tree/DEBIAN/control" &&
  dpkg-deb --root-owner-group -b "$tree" "$work/rdmad_${up_version}_up.deb" >/dev/null &&
  cp /etc/rdmad/rdmad.conf "$work/edited.conf" &&
  install_deb "$work/rdmad_${up_version}_up.deb" && installed "$up_version" && enabled &&
  expect "the admin's edit of rdmad.conf kept" cmp -s /etc/rdmad/rdmad.conf "$work/edited.conf" &&
  expect "state.conf kept" [ -s /var/lib/rdmad/state.conf ] &&
  # Where systemd runs, postinst restarts rdmad after an upgrade (dh_installsystemd's
  # default in compat 13); here it cannot, so check the script says so.
  expect "postinst restarts rdmad on upgrade" \
    grep -q '_dh_action=restart' /var/lib/dpkg/info/rdmad.postinst
}
check upgrade upgrade_case

# --- remove keeps configuration and state ---------------------------------------------------
remove_case() {
  DEBIAN_FRONTEND=noninteractive apt-get remove -y -q rdmad > "$work/apt.log" 2>&1 ||
    { cat "$work/apt.log"; return 1; }
  expect "rdmad is removed, its configuration kept" \
    [ "$(dpkg-query -W -f='${Status}' rdmad)" = "deinstall ok config-files" ] &&
  expect "/usr/libexec/rdmad gone" [ ! -e /usr/libexec/rdmad ] &&
  expect "/etc/rdmad/rdmad.conf kept" cmp -s /etc/rdmad/rdmad.conf "$work/edited.conf" &&
  expect "/var/lib/rdmad/state.conf kept" [ -s /var/lib/rdmad/state.conf ]
}
check remove remove_case

# --- purge removes rdmad's own files, never an admin's ---------------------------------------
purge_case() {
  # rdmad's own module options file (as rdmad writes it), and an admin's files beside
  # rdmad's in /etc/modprobe.d and /etc/rdmad/conf.d.
  [ -d /etc/modprobe.d ] || { mkdir /etc/modprobe.d && made_modprobe_d=1; }
  printf '# Written by rdmad from its desired state (rdmad.conf(5)); do not edit.\noptions mlx4_en pfctx=0x08 pfcrx=0x08\n' > "$own_modprobe"
  echo "# an admin's file" > "$admin_modprobe"
  mkdir -p /etc/rdmad/conf.d && echo "# an admin's file" > "$admin_dropin"
  expect "debian/rdmad.postrm names $own_modprobe, as daemon/actuators/modprobe.cpp does" \
    grep -q "/etc/modprobe.d/$(basename "$own_modprobe")\"" "$top/debian/rdmad.postrm" &&
  expect "and rdmad's header line, as modprobe.cpp writes it" \
    grep -q "$(grep -o '# Written by rdmad from its desired state' \
      "$top/daemon/actuators/modprobe.cpp")" "$top/debian/rdmad.postrm" || return 1
  dpkg --purge rdmad > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; return 1; }
  expect "rdmad is purged" \
    bash -c "! dpkg-query -W -f='\${Status}' rdmad 2>/dev/null | grep -qv not-installed" &&
  expect "/var/lib/rdmad gone" [ ! -e /var/lib/rdmad ] &&
  expect "$own_modprobe gone" [ ! -e "$own_modprobe" ] &&
  expect "the conffile gone" [ ! -e /etc/rdmad/rdmad.conf ] &&
  expect "the admin's $admin_modprobe kept" [ -f "$admin_modprobe" ] &&
  expect "the admin's $admin_dropin kept" [ -f "$admin_dropin" ] &&
  expect "the unit's enablement links gone" \
    [ ! -e /etc/systemd/system/multi-user.target.wants/rdmad.service ] &&
  expect "the alias link gone" [ ! -L /etc/systemd/system/dbus-org.rdmad1.service ]
}
check purge purge_case

# An admin's own file named like rdmad's (no rdmad header), or a symlink there, and an admin's
# file in /var/lib/rdmad, which is a mount point on some hosts: purge keeps them and succeeds.
purge_admin_case() {
  install_deb "$deb" || return 1
  echo "options mlx4_en pfctx=0x18 pfcrx=0x18 # the admin's" > "$own_modprobe"
  mkdir -p /var/lib/rdmad && echo "admin notes" > /var/lib/rdmad/NOTES
  echo "x" > /var/lib/rdmad/state.conf
  dpkg --purge rdmad > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; return 1; }
  expect "the admin's $own_modprobe kept" grep -q "the admin's" "$own_modprobe" &&
  expect "the admin's /var/lib/rdmad/NOTES kept" [ -f /var/lib/rdmad/NOTES ] &&
  expect "rdmad's state.conf gone" [ ! -e /var/lib/rdmad/state.conf ] &&
  rm -f "$own_modprobe" &&
  ln -s "$admin_modprobe" "$own_modprobe" &&
  install_deb "$deb" &&
  dpkg --purge rdmad > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; return 1; }
  expect "an admin's symlink named $own_modprobe kept" [ -L "$own_modprobe" ]
  local rc=$?
  rm -rf "$own_modprobe" /var/lib/rdmad
  return $rc
}
check purge-admin-files purge_admin_case

echo "deb: $passed passed, $failed failed ($(($(date +%s) - started)) s)"
[ "$failed" = 0 ]
