#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite, as CI runs it: install what is needed, build, run the unit and
# integration suites, again under ASan+UBSan from a copy of the tree 150 characters deep (the
# tests must not depend on the checkout's path: AF_UNIX paths hold 108 bytes), each libFuzzer
# target on its stored corpus and then for $FUZZ_SECONDS (default 20), as many at once as
# there are cores, and the Debian package (tools/test-deb.sh: built from a directory 150
# characters deep, lintian, install, run, upgrade, remove, purge).
#
# One line per step with its time; a step's output goes to build-logs/STEP.log, and the end
# of it is shown when the step fails. The last line is "N passed, N failed" (test cases).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
fuzz_seconds=${FUZZ_SECONDS:-20}
jobs=$(nproc)
run_start=$(date +%s)
logdir=$top/build-logs
rm -rf "$logdir" && mkdir -p "$logdir"
fail_build=0

# step NAME COMMAND...: run COMMAND, its output to build-logs/NAME.log; print one line with
# the outcome, the step's time and the run's so far; on failure, the end of the log (a test
# step names its failed tests and cases instead: test_step).
step() {
  local name=$1; shift
  local log=$logdir/$name.log t0 rc
  t0=$(date +%s)
  "$@" > "$log" 2>&1
  rc=$?
  local now; now=$(date +%s)
  printf '== %-34s %-7s %5d s  (run: %d:%02d)\n' "$name" "$([ $rc = 0 ] && echo ok || echo FAILED)" \
    $((now - t0)) $(((now - run_start) / 60)) $(((now - run_start) % 60))
  if [ $rc != 0 ] && [ -z "${quiet_failure:-}" ]; then
    echo "   --- the last 60 lines of $log ---"
    tail -n 60 "$log" | sed 's/^/   /'
  fi
  return $rc
}

# test_step NAME BUILDDIR SUITE [MESON TEST ARGS...]: `meson test` of SUITE ("all": every
# suite) in BUILDDIR as a step, counted at the end from what the build says it should run
# (tools/count-tests.py), so a test that never ran is a failure; on failure the step names the
# tests and cases that failed, and the log to read.
runs=()
test_step() {
  local name=$1 dir=$2 suite=$3; shift 3
  local testlog=$dir/meson-logs/testlog.json kept=$dir/meson-logs/testlog-$name.json rc
  local suite_args=()
  [ "$suite" = all ] || suite_args=(--suite "$suite")
  rm -f "$testlog" "$kept" # never count an earlier run's log
  quiet_failure=1 step "$name" meson test -C "$dir" --print-errorlogs --no-rebuild \
    "${suite_args[@]}" "$@"
  rc=$?
  [ -f "$testlog" ] && cp "$testlog" "$kept"
  runs+=(--meson "$dir" "$suite" "$kept" "$rc")
  if [ $rc != 0 ]; then
    /usr/bin/python3 "$top/tools/count-tests.py" --meson "$dir" "$suite" "$kept" "$rc" |
      grep -v ': passed' | sed '$d; s/^ */   /'
    echo "   (the whole output: $logdir/$name.log; each test's: $dir/meson-logs/testlog.txt)"
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

if ! step install-deps "$top/tools/install-deps.sh"; then
  echo "== total $(( ($(date +%s) - run_start) / 60 )) min $(( ($(date +%s) - run_start) % 60 )) s; nothing was built or tested"
  echo "0 passed, 1 failed"
  exit 1
fi

# --- gcc, -Werror -----------------------------------------------------------------------------
if step build-gcc build build -Dwerror=true; then
  # Each integration file is a meson test of its own; $jobs of them at a time.
  test_step suites "$top/build" all --num-processes "$jobs"
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
# -O1 -g1, not the default -O2 -g: instrumented code at -O2 with full debug information is
# what made this the run's longest step (daemon/reconcile/reconciler.cpp: 56 CPU-s at -O2 -g,
# 21 at -O1 -g1, 14 for the plain build). -O1 is what AddressSanitizer's documentation
# suggests for reasonable speed, and -g1 keeps the line tables its reports print.
if step copy-150-deep copy_tree &&
   step build-asan build "$deep/build-asan" -Db_sanitize=address,undefined -Db_lundef=false \
     -Dwerror=false -Doptimization=1 -Ddebug=false -Dcpp_args=-g1; then
  # The umockdev preload comes before the ASan runtime in the library list. Leaks are checked
  # in the unit suite; the integration suite runs rdmad under strace once, where
  # LeakSanitizer cannot run (it needs ptrace itself). Sanitized code is about 3x slower:
  # the timeouts too.
  export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
  ASAN_OPTIONS=verify_asan_link_order=0:halt_on_error=1:abort_on_error=1:detect_leaks=1 \
    test_step suites-asan-unit "$deep/build-asan" unit --num-processes "$jobs" \
      --timeout-multiplier 3
  ASAN_OPTIONS=verify_asan_link_order=0:halt_on_error=1:abort_on_error=1:detect_leaks=0 \
    test_step suites-asan-integration "$deep/build-asan" integration --num-processes "$jobs" \
      --timeout-multiplier 3
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
  --cases "$fuzz_results" --cases "$deb_results" "${runs[@]}" > "$logdir/count.log"
rc=$?
grep -v ': passed\| pass$' "$logdir/count.log" | sed '$d'
echo "== total $(( ($(date +%s) - run_start) / 60 )) min $(( ($(date +%s) - run_start) % 60 )) s; every case: $logdir/count.log"
tail -1 "$logdir/count.log"
rm -f "$fuzz_results" "$deb_results"
exit $rc
