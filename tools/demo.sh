#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what is needed, build, start rdmad on a private bus over a bundled recorded host
# (or this machine's hardware with --real), print `rdmactl status`, and stop rdmad cleanly.
# rdmad gets empty configuration, state and modprobe.d directories of its own: the demo
# never applies this machine's /etc/rdmad nor writes to /etc.
#
#   tools/demo.sh                 the default recorded host (hwloc-cx3-ib)
#   tools/demo.sh --host NAME     another host of tests/fixtures/hosts/NAME.umockdev
#   tools/demo.sh --real          this machine's /sys (needs /sys/class/infiniband)
#   tools/demo.sh --shell         then a shell with rdmactl on PATH, talking to that rdmad
#   tools/demo.sh --installed     the installed /usr/libexec/rdmad and rdmactl (the package),
#                                 no build
#   tools/demo.sh --list-hosts    the bundled hosts, one line each from their notes
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
host=hwloc-cx3-ib
list_hosts=0
real=0
shell=0
installed=0
while (($#)); do
  case $1 in
    --host) host=${2:?--host needs a NAME}; shift 2 ;;
    --host=*) host=${1#--host=}; shift ;;
    --real) real=1; shift ;;
    --shell) shell=1; shift ;;
    --installed) installed=1; shift ;;
    --list-hosts) list_hosts=1; shift ;;
    -h|--help) sed -n '3,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
# --list-hosts: "NAME  (recorded|constructed)  what it holds", from each host's notes file
# (tests/fixtures/hosts/NAME.umockdev.notes: "# Host: NAME (kind)", then "# Holds: ..." or
# "# Models:" and indented lines: that paragraph's first sentence, at most 90 characters).
if ((list_hosts)); then
  for f in "$top"/tests/fixtures/hosts/*.umockdev; do
    awk -v name="$(basename "$f" .umockdev)" '
      /^# Host: / { kind = $4; next }
      # The paragraph after "Holds:" or "Models:", its lines joined, to a line of its own or
      # the next "# Word:" heading.
      /^# (Holds|Models):/ && !done {
        sub(/^# (Holds|Models):[ \t]*/, ""); what = $0; inpara = 1; next
      }
      inpara && (/^#[ \t]*$/ || /^# [A-Z][a-z]+:/ || !/^#/) { inpara = 0; done = 1 }
      inpara { sub(/^#[ \t]*/, ""); what = what (what == "" ? "" : " ") $0 }
      END {
        # Without its parentheses, up to the end of its first sentence, at most 90
        # characters cut at a word ("..." then): a line each, never cut without a mark.
        out = ""; depth = 0
        for (i = 1; i <= length(what); i++) {
          c = substr(what, i, 1)
          if (c == "(") { depth++; continue }
          if (c == ")" && depth > 0) { depth--; continue }
          if (depth == 0) out = out c
        }
        gsub(/ +/, " ", out); gsub(/ ,/, ",", out); gsub(/ ;/, ";", out); gsub(/ :/, ":", out)
        gsub(/ \./, ".", out)
        if (match(out, /\.( |$)/)) out = substr(out, 1, RSTART - 1)
        if (length(out) > 90) {
          out = substr(out, 1, 90); sub(/ [^ ]*$/, "", out); sub(/[,;: ]+$/, "", out)
          out = out "..."
        }
        printf "%-28s %-13s %s\n", name, kind, out
      }' "$f.notes" 2>/dev/null || echo "$(basename "$f" .umockdev)"
  done
  exit 0
fi
# What the demo makes goes below tools/short-tmpdir.sh's directory, not any TMPDIR: the bus
# socket's path must fit sun_path (108 bytes; dbus-daemon: "Socket name too long"), and so
# must umockdev's sockets in its testbed (TMPDIR is that directory for what the demo starts).
TMPDIR=$("$top/tools/short-tmpdir.sh")
export TMPDIR
file="$top/tests/fixtures/hosts/$host.umockdev"
if ((real)); then
  [ -d /sys/class/infiniband ] || { echo "demo.sh: --real: no /sys/class/infiniband here" >&2; exit 1; }
elif [ ! -f "$file" ]; then
  echo "demo.sh: no bundled host '$host' (try --list-hosts)" >&2; exit 2
fi

# Every process below this shell (umockdev-run, its bash -c, rdmad, rdmactl, the --shell
# shell) by /proc/PID/task/*/children, into the array `tree`.
tree_below() {
  local f kids c
  for f in /proc/"$1"/task/*/children; do
    kids=()
    read -ra kids < "$f" 2>/dev/null || true
    for c in "${kids[@]}"; do
      tree+=("$c")
      tree_below "$c"
    done
  done
}
# True while PID runs (a zombie has ended).
running() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}
# A signal (SIGTERM, SIGINT, SIGHUP) ends this shell while the demo runs: bash runs the EXIT
# trap then, but what it started would run on without a bus, and print errors after the
# demo ended. So the whole tree is stopped first: SIGTERM, and SIGKILL after 2 s for what
# ignores it (an interactive bash does). After a normal end the tree is empty. The trap
# is set before the first step, so a signal during the install or the build stops apt or
# ninja too.
stop_tree() {
  local tree=() pid alive i
  tree_below $$
  ((${#tree[@]})) || return 0
  kill -TERM "${tree[@]}" 2>/dev/null || true
  for i in $(seq 20); do
    alive=()
    for pid in "${tree[@]}"; do running "$pid" && alive+=("$pid"); done
    ((${#alive[@]})) || return 0
    sleep 0.1
  done
  kill -KILL "${alive[@]}" 2>/dev/null || true
}
trap stop_tree EXIT

if ((installed)); then
  RDMAD=/usr/libexec/rdmad RDMACTL=$(command -v rdmactl || echo /usr/bin/rdmactl)
  [ -x "$RDMAD" ] && [ -x "$RDMACTL" ] ||
    { echo "demo.sh: --installed: no $RDMAD or rdmactl (install the package first)" >&2; exit 1; }
  command -v umockdev-run >/dev/null && command -v dbus-daemon >/dev/null ||
    { echo "demo.sh: --installed needs umockdev and dbus-daemon (apt-get install umockdev dbus-daemon)" >&2; exit 1; }
else
  # One line per step, with what it takes on a 2-core machine (README).
  # apt's output goes to a log of its own, shown only when it fails, and kept when it failed or
  # installed something (install-deps.sh prints nothing otherwise).
  deps_log=$(mktemp -t rdmad-demo-deps.XXXXXX.log)
  echo "== checking the build dependencies (tools/install-deps.sh: a few minutes when it must install packages, about 4 s otherwise)"
  if ! "$top/tools/install-deps.sh" > "$deps_log" 2>&1; then
    cat "$deps_log" >&2
    echo "demo.sh: tools/install-deps.sh failed; its output is above and in $deps_log" >&2
    exit 1
  fi
  if [ -s "$deps_log" ]; then
    echo "   it installed packages; its output is in $deps_log"
  else
    rm -f "$deps_log"
  fi
  # meson's and ninja's output go to a log of their own too: when a step fails, the end of the
  # log is shown and the log kept; it is removed once the build is done.
  build_log=$(mktemp -t rdmad-demo-build.XXXXXX.log)
  build_step() {
    if ! "$@" >> "$build_log" 2>&1; then
      tail -n 40 "$build_log" >&2
      echo "demo.sh: '$*' failed; the end of its output is above, all of it in $build_log" >&2
      exit 1
    fi
  }
  # Configured as tools/run-tests.sh does (-Dwerror=true), so that the test run reuses this build.
  if [ ! -f "$top/build/build.ninja" ]; then
    echo "== configuring the build in build/ (meson setup: about 5 s; its output in $build_log, kept if it fails)"
    build_step meson setup "$top/build" -Dwerror=true
  fi
  # ninja -n's whole output first: with pipefail, `grep -q` leaving at its first match made
  # ninja die of SIGPIPE and the test say "up to date" before a 20-minute build.
  pending=$(ninja -C "$top/build" -n 2>/dev/null || true)
  if grep -q '^\[' <<<"$pending"; then
    echo "== building rdmad, rdmactl and the tests (ninja: about 6 minutes the first time on 2 cores, seconds after a change; its output in $build_log, kept if it fails)"
  else
    echo "== the build in build/ is up to date"
  fi
  build_step ninja -C "$top/build"
  rm -f "$build_log"
  RDMAD="$top/build/daemon/rdmad" RDMACTL="$top/build/cli/rdmactl"
fi

tmp=$(mktemp -d -p "$TMPDIR" rdmad-demo.XXXXXX)
. "$top/tools/private-bus.sh"
trap 'stop_tree; stop_private_bus; rm -rf "$tmp"' EXIT
start_private_bus "$tmp"
mkdir -p "$tmp/etc/conf.d" "$tmp/state" "$tmp/modprobe.d" "$tmp/prometheus" "$tmp/nfd" \
  "$tmp/dispatcher.d" "$tmp/modules-load.d" "$tmp/modules"
export CONFIGURATION_DIRECTORY="$tmp/etc" STATE_DIRECTORY="$tmp/state"
# The exports go to the demo's own directories, never to this machine's node-exporter or
# Kubernetes directories (rdmad.conf(5), [export]).
cat > "$tmp/etc/conf.d/00-demo-exports.conf" <<EOF
# tools/demo.sh: the exports stay in the demo's directory, and the dispatcher scripts run
# are the demo's own (none unless you add some), never this machine's.
[export]
prometheus_dir = "$tmp/prometheus"
nfd_dir = "$tmp/nfd"

[dispatcher]
directories = ["$tmp/dispatcher.d"]

# Never this machine's firmware tool: a recorded host's PCI address may name one of this
# machine's own adapters. A ConnectX-4+ port type asked in the demo reads "mstconfig-missing".
[daemon]
mstconfig = "$tmp/mstconfig-not-run-by-the-demo"
EOF

# rdmad runs in the foreground of a small shell that waits for it to take its name, prints
# the status (or opens a shell), then stops it with SIGTERM and returns rdmad's exit status.
# Its log goes to $tmp/rdmad.log, shown when it fails.
run='
  "$RDMAD" --modprobe-dir="$DEMO_DIR/modprobe.d" --legacy-mlx4-conf="$DEMO_DIR/mlx4.conf" \
    --modules-load-dir="$DEMO_DIR/modules-load.d" --module-dir="$DEMO_DIR/modules" \
    2> "$DEMO_DIR/rdmad.log" & pid=$!
  for i in $(seq 100); do "$RDMACTL" list >/dev/null 2>&1 && break; sleep 0.1; done
  "$RDMACTL" status; rc=$?
  if [ "$DEMO_SHELL" = 1 ]; then
    echo
    echo "rdmad runs on a private bus (DBUS_SYSTEM_BUS_ADDRESS=$DBUS_SYSTEM_BUS_ADDRESS)."
    echo "Try: rdmactl links; rdmactl doctor; rdmactl monitor; busctl --system tree org.rdmad1"
    echo "Desired state: write $CONFIGURATION_DIRECTORY/rdmad.conf, then rdmactl reload."
    echo "Exports: $DEMO_DIR/prometheus/rdmad.prom (node-exporter textfile), $DEMO_DIR/nfd/rdmad (NFD)."
    echo "Its log: $DEMO_DIR/rdmad.log. Leave the shell (exit) to stop it."
    # Interactive on a terminal; commands piped in are read as a script (an interactive bash
    # without a terminal complains about job control).
    if [ -t 0 ]; then
      PATH="$(dirname "$RDMACTL"):$WAIT_ONLINE_DIR:$PATH" PS1="rdmad-demo# " bash --norc -i; rc=0
    else
      PATH="$(dirname "$RDMACTL"):$WAIT_ONLINE_DIR:$PATH" bash --norc -s; rc=0
    fi
  fi
  kill -TERM $pid; wait $pid; drc=$?
  if [ $drc != 0 ]; then echo "rdmad exited with status $drc; its log:" >&2; cat "$DEMO_DIR/rdmad.log" >&2; fi
  exit $(( rc ? rc : drc ))'
export RDMAD RDMACTL DEMO_DIR="$tmp" DEMO_SHELL="$shell" WAIT_ONLINE_DIR="$top/build/wait-online"
if ((real)); then
  echo "== starting rdmad on a private bus over this machine's /sys (about 3 s), then rdmactl status"
  bash -c "$run"
else
  echo "== starting rdmad on a private bus over the recorded host $host (about 3 s), then rdmactl status"
  umockdev-run -d "$file" -- bash -c "$run"
fi
