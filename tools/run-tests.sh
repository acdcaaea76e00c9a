#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite, as CI runs it: install what is needed, build, run the unit and
# integration suites, again under ASan+UBSan from a copy of the tree 150 characters deep (the
# tests must not depend on the checkout's path: AF_UNIX paths hold 108 bytes), each libFuzzer
# target on its stored corpus and then for $FUZZ_SECONDS (default 30), as many at once as
# there are cores, and the Debian package (tools/test-deb.sh: built from a directory 150
# characters deep, lintian, install, run, upgrade, remove, purge).
#
# One line per step with its time; a step's output goes to build-logs/STEP.log, and the end
# of it is shown when the step fails. The last line is "N passed, N failed" (test cases).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
fuzz_seconds=${FUZZ_SECONDS:-30}
jobs=$(nproc)
run_start=$(date +%s)
logdir=$top/build-logs
rm -rf "$logdir" && mkdir -p "$logdir"
logs=()
fail_build=0

# step NAME COMMAND...: run COMMAND, its output to build-logs/NAME.log; print one line with
# the outcome, the step's time and the run's so far; on failure, the end of the log.
step() {
  local name=$1; shift
  local log=$logdir/$name.log t0 rc
  t0=$(date +%s)
  "$@" > "$log" 2>&1
  rc=$?
  local now; now=$(date +%s)
  printf '== %-34s %-7s %5d s  (run: %d:%02d)\n' "$name" "$([ $rc = 0 ] && echo ok || echo FAILED)" \
    $((now - t0)) $(((now - run_start) / 60)) $(((now - run_start) % 60))
  if [ $rc != 0 ]; then
    # meson test names its failed tests in its summary; the rest is the end of the log.
    grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT|ERROR) ' "$log" | sed 's/^/   /'
    echo "   --- the last 150 lines of $log ---"
    tail -n 150 "$log" | sed 's/^/   /'
  fi
  return $rc
}

setup() { # dir, meson args...
  local dir=$1; shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@"
  else
    meson setup "$dir" "$@"
  fi
}
build() { # dir, meson args...
  setup "$@" && ninja -C "$1"
}

step install-deps "$top/tools/install-deps.sh" || exit 1

# umockdev 0.17's uevent sender aborts the test when a listener's queue is full (EAGAIN);
# the default queue is 10 datagrams (net.unix.max_dgram_qlen), too few for a slow (ASan)
# daemon during the SR-IOV bursts. Raise it for this run (root; per network namespace).
{ echo 4096 > /proc/sys/net/unix/max_dgram_qlen; } 2>/dev/null || echo "note: cannot raise net.unix.max_dgram_qlen"

# --- gcc, -Werror -----------------------------------------------------------------------------
if step build-gcc build build -Dwerror=true; then
  # Each integration file is a meson test of its own; $jobs of them at a time.
  step suites meson test -C build --print-errorlogs --no-rebuild --num-processes "$jobs"
  logs+=(build/meson-logs/testlog.json)
else
  fail_build=$((fail_build + 1))
fi

# --- ASan+UBSan, from a copy of the tree at least 150 characters deep -------------------------
# The copy keeps its build directory between runs (tar keeps the files' times, so ninja
# rebuilds only what changed); everything else in it is replaced. Its length is what matters.
deep=$top/build-deep/checkout
while [ ${#deep} -lt 150 ]; do deep=$deep/a-checkout-150-characters-deep; done
deep=$deep/rdmad
copy_tree() {
  mkdir -p "$deep" &&
  find "$deep" -mindepth 1 -maxdepth 1 ! -name build-asan -exec rm -rf {} + &&
  tar -C "$top" --exclude='./build*' --exclude='./obj-*' --exclude=./.git -cf - . |
    tar -C "$deep" -xf -
}
# -Werror is off here: GCC 12 warns maybe-uninitialized inside <regex> (used by Catch2)
# when -fsanitize is on, a known false positive; the plain build above keeps -Werror.
if step copy-150-deep copy_tree &&
   step build-asan build "$deep/build-asan" -Db_sanitize=address,undefined -Db_lundef=false \
     -Dwerror=false; then
  # The umockdev preload comes before the ASan runtime in the library list. Leaks are checked
  # in the unit suite; the integration suite runs rdmad under strace once, where
  # LeakSanitizer cannot run (it needs ptrace itself). Sanitized code is about 3x slower:
  # the timeouts too.
  export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
  asan_logs=$deep/build-asan/meson-logs
  ASAN_OPTIONS=verify_asan_link_order=0:halt_on_error=1:abort_on_error=1:detect_leaks=1 \
    step suites-asan-unit meson test -C "$deep/build-asan" --print-errorlogs --no-rebuild \
      --num-processes "$jobs" --timeout-multiplier 3 --suite unit
  cp "$asan_logs/testlog.json" "$asan_logs/testlog-unit.json"
  ASAN_OPTIONS=verify_asan_link_order=0:halt_on_error=1:abort_on_error=1:detect_leaks=0 \
    step suites-asan-integration meson test -C "$deep/build-asan" --print-errorlogs \
      --no-rebuild --num-processes "$jobs" --timeout-multiplier 3 --suite integration
  logs+=("$asan_logs/testlog-unit.json" "$asan_logs/testlog.json")
else
  fail_build=$((fail_build + 1))
fi

# --- libFuzzer ----------------------------------------------------------------------------------
# fuzz_one TARGET: its stored corpus (copied: new inputs stay out of the tree) is run first
# (libFuzzer's INITED line), then it fuzzes until $fuzz_seconds; "NAME pass|fail" on stdout.
fuzz_one() {
  local target=$1 name work
  name=$(basename "$target")
  work=$(mktemp -d)
  cp -r "tests/fuzz/corpus/${name#fuzz_}/." "$work/" 2>/dev/null || true
  if "$target" -max_total_time="$fuzz_seconds" -artifact_prefix="$work/" "$work" \
       > "$work.log" 2>&1 && grep -q INITED "$work.log"; then
    echo "$name pass $(grep -o 'Done [0-9]* runs' "$work.log" | tail -1)" \
      "corpus $(ls "tests/fuzz/corpus/${name#fuzz_}" 2>/dev/null | wc -l)"
  else
    echo "$name fail"
    tail -30 "$work.log" >&2
    # Keep the input that failed, to reproduce it: <target> build-fuzz/artifacts/<file>.
    mkdir -p build-fuzz/artifacts
    for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
      [ -f "$a" ] && cp "$a" "build-fuzz/artifacts/$name-$(basename "$a")" &&
        echo "kept build-fuzz/artifacts/$name-$(basename "$a")" >&2
    done
  fi
  rm -rf "$work" "$work.log"
}
fuzz_all() {
  local targets=() t
  for t in build-fuzz/tests/fuzz/fuzz_*; do
    [ -x "$t" ] && [ -f "$t" ] && targets+=("$t")
  done
  export -f fuzz_one
  export fuzz_seconds
  printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'fuzz_one "$1"' _ {} |
    tee -a "$fuzz_results"
  # Every tests/fuzz/fuzz_*.cpp must have been built and run.
  local expected
  expected=$(ls tests/fuzz/fuzz_*.cpp | wc -l)
  if [ "${#targets[@]}" != "$expected" ]; then
    echo "fuzz: built ${#targets[@]} targets, expected $expected"
    echo "fuzz-targets fail" >> "$fuzz_results"
  fi
  ! grep -q ' fail' "$fuzz_results"
}
# Only the fuzz targets are built (ninja names them by their paths): nothing runs the rest
# of the tree built with clang.
build_fuzz() {
  CXX=clang++ setup build-fuzz -Dfuzz=true -Dtests=false &&
    ninja -C build-fuzz $(ls tests/fuzz/fuzz_*.cpp | sed 's/\.cpp$//')
}
fuzz_results=$(mktemp)
if ls tests/fuzz/fuzz_*.cpp >/dev/null && step build-fuzz build_fuzz; then
  step "fuzz-${fuzz_seconds}s-each" fuzz_all
  # The results file has one "NAME pass|fail" per target: drop the figures after them.
  sed -i 's/^\([^ ]* [a-z]*\) .*/\1/' "$fuzz_results"
else
  fail_build=$((fail_build + 1))
fi

# --- the Debian package -----------------------------------------------------------------------
deb_results=$(mktemp)
# A run that stops before recording a failure (it refuses a machine where rdmad is installed)
# still counts as one.
step debian-package tools/test-deb.sh "$deb_results" || grep -q ' fail$' "$deb_results" ||
  echo "deb-test-deb fail" >> "$deb_results"

/usr/bin/python3 "$top/tools/count-tests.py" --build-failures "$fail_build" \
  --cases "$fuzz_results" --cases "$deb_results" "${logs[@]}" > "$logdir/count.log"
rc=$?
grep -v ': OK$\| pass$' "$logdir/count.log" | sed '$d'
echo "== total $(( ($(date +%s) - run_start) / 60 )) min $(( ($(date +%s) - run_start) % 60 )) s; every case: $logdir/count.log"
tail -1 "$logdir/count.log"
rm -f "$fuzz_results" "$deb_results"
exit $rc
