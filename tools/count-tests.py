#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Count test cases over meson test logs (testlog.json) and result files (fuzz targets, the
Debian package); print a summary whose last line is "N passed, N failed"; exit 1 when
anything failed or nothing ran.

A meson test whose output carries a Catch2 summary counts its Catch2 test cases; any other
test counts as one case. A build that failed counts as one failed case. A result file has one
line "NAME pass|fail" per case; a missing one counts as one failed case."""
import argparse
import json
import re
import sys

ALL_PASSED = re.compile(r"All tests passed \(\d+ assertions? in (\d+) test cases?\)")
MIXED = re.compile(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed")


def count_log(path):
    passed = failed = 0
    # The build directory's name: build/meson-logs/testlog.json -> build.
    parts = path.split('/')
    label = parts[parts.index('meson-logs') - 1] if 'meson-logs' in parts[1:] else parts[0]
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            t = json.loads(line)
            ok = t.get("result") in ("OK", "EXPECTEDFAIL")
            out = t.get("stdout") or ""
            m = MIXED.findall(out)
            a = ALL_PASSED.findall(out)
            if m:
                _, p, fl = map(int, m[-1])
                passed += p
                failed += fl if fl or ok else 1
            elif a and ok:
                passed += int(a[-1])
            elif ok:
                passed += 1
            else:
                failed += 1
            print(f"  {label}: {t.get('name')}: {t.get('result')}")
    return passed, failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-failures", type=int, default=0)
    ap.add_argument("--cases", action="append", default=[], help="a result file (repeatable)")
    ap.add_argument("logs", nargs="*")
    args = ap.parse_args()
    passed, failed = 0, args.build_failures
    for log in args.logs:
        try:
            p, f = count_log(log)
        except OSError:
            p, f = 0, 1
        passed += p
        failed += f
    for cases in args.cases:
        try:
            with open(cases) as f:
                for line in f:
                    name, result = line.split()
                    passed += result == "pass"
                    failed += result != "pass"
                    print(f"  {name}: {result}")
        except OSError:
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
