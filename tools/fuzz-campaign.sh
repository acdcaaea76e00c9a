#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A fuzz campaign: runs each libFuzzer target of build-fuzz/ until it has used SECONDS of CPU
# time (user + system; wall time is longer on a shared machine), at the lowest CPU priority, in
# runs of at most CHUNK (default 900) seconds of wall time. After each run it merges what it found that
# adds coverage into tests/fuzz/corpus/<target without fuzz_>/, minimised (libFuzzer -merge=1;
# named seed and regression inputs are kept as they are). Crash, leak,
# timeout and OOM inputs are kept in build-fuzz/artifacts/ and the run goes on with the next
# target. One line per target goes to build-fuzz/campaign.tsv: target, CPU seconds, executions,
# final cov: and ft:, findings.
#
#   tools/fuzz-campaign.sh SECONDS [fuzz_target...]     (default: every target built)
#   CHUNK=600 tools/fuzz-campaign.sh 3600 fuzz_rtnl       (shorter runs, merged more often)
#
# Two campaigns on disjoint targets may run at once (one per core); they append to one TSV.
#
# Build first: CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=false && ninja -C build-fuzz
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
seconds=${1:?usage: tools/fuzz-campaign.sh SECONDS [fuzz_target...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for t in build-fuzz/tests/fuzz/fuzz_*; do
    [ -x "$t" ] && [ -f "$t" ] && targets+=("$(basename "$t")")
  done
fi
artifacts=build-fuzz/artifacts
results=build-fuzz/campaign.tsv
mkdir -p "$artifacts"
[ -f "$results" ] || printf 'target\tcpu_s\texecs\tcov\tft\tfindings\n' > "$results"

chunk=${CHUNK:-900}
for name in "${targets[@]}"; do
  bin=build-fuzz/tests/fuzz/$name
  [ -x "$bin" ] || { echo "$name: not built" >&2; continue; }
  corpus=tests/fuzz/corpus/${name#fuzz_}
  mkdir -p "$corpus"
  spent=0
  while [ "$spent" -lt "$seconds" ]; do
  left=$((seconds - spent))
  wall=$((left < chunk ? left : chunk))
  work=$(mktemp -d)
  log=$work.log
  # New inputs go to $work (the first directory); the stored corpus is read as seeds.
  # -rss_limit_mb: the ASan build of a target uses ~500 MB; 2 GB flags a real leak or blow-up.
  # -timeout is wall-clock time (libFuzzer's SIGALRM): at nice 19 beside a build, a 10 ms input
  # waited over 10 s for the CPU and was reported as a timeout; 120 s still catches a hang.
  nice -n 19 /usr/bin/time -o "$work.time" -f '%U %S' "$bin" -max_total_time="$wall" -timeout=120 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$name-" "$work" "$corpus" > "$log" 2>&1
  rc=$?
  cpu=$(awk 'END { printf "%.0f", $1 + $2 }' "$work.time")
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]* ft: [0-9]*' | tail -1)
  cov=$(echo "$last" | awk '{print $2}')
  ft=$(echo "$last" | awk '{print $4}')
  findings=none
  if [ $rc -ne 0 ]; then
    findings=$(grep -m1 -E 'ERROR: |invariant violated|SUMMARY' "$log" | tr '\t' ' ')
    cp "$log" "$artifacts/$name-$(date +%s).log"
    echo "$name: FINDING: $findings (log and input in $artifacts/)"
  fi
  # The stored corpus becomes the smallest set of inputs that covers what it and this run
  # reached (-merge=1 into an empty directory), plus every named file (seed_*, regress_*: kept
  # whatever their coverage); libFuzzer names the others by their SHA-1.
  fresh=$(mktemp -d)
  if nice -n 19 "$bin" -merge=1 -timeout=120 "$fresh" "$corpus" "$work" >> "$log" 2>&1; then
    # find's default regex syntax (emacs) has no \{n\}: name the syntax, or every file matches.
    find "$corpus" -maxdepth 1 -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' \
      -exec cp -t "$fresh/" {} +
    rm -f "$corpus"/*
    cp "$fresh"/* "$corpus/"
  else
    echo "$name: merge failed, see $log" >&2
  fi
  rm -rf "$fresh"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$cpu" "${execs:-0}" "${cov:-?}" "${ft:-?}" \
    "$findings" >> "$results"
  echo "$name: ${cpu}s CPU, ${execs:-0} execs, cov ${cov:-?} ft ${ft:-?}," \
    "corpus $(du -sh --apparent-size "$corpus" | cut -f1), $findings"
  rm -rf "$work" "$work.time"
  [ $rc -eq 0 ] && rm -f "$log"
  spent=$((spent + cpu))
  # A run that used no CPU at all (a machine too busy to give it any) still ends the target
  # after its wall time, rather than looping for ever.
  [ "$cpu" -gt 0 ] || break
  done
  echo "$name: ${spent}s CPU in this campaign"
done
