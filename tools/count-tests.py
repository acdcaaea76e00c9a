#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Count test cases over meson test runs and result files (fuzz targets, the Debian package);
print one line per meson test and per failed case, then "N passed, N failed" as the last line;
exit 1 when anything failed or nothing ran.

A meson test run is given as --meson BUILDDIR SUITE TESTLOG RC: the build directory, the suite
the step ran ("all" for every test), its testlog.json and `meson test`'s exit status. What the
run should have had comes from the build itself (`meson introspect --tests`), not from the log:
- a Catch2 executable (unit-tests, integration-tests) counts its test cases, listed by the
  executable with the test's own arguments (--list-test-names-only); any other test counts as
  one case;
- a test missing from the log (the step was interrupted, or never got to it) counts all its
  cases as failed, "not run";
- a test that did not pass counts as passed only the cases its Catch2 summary says passed; every
  other case of it is failed (a test killed mid-way prints no summary: none of its cases is
  known to have passed);
- a failed `meson test` whose log shows no failure counts one failed case more.
The failed Catch2 cases are named, from Catch2's console output, and so is the case a signal
interrupted (tests/kill_cleanup.cpp prints it).

A build that failed counts as one failed case (--build-failures). A result file (--cases) has
one line "NAME pass|fail" per case; a missing one counts as one failed case, and so does each
line of it that is not "NAME RESULT" and each line of a testlog.json that is not a test's
result (a log cut short). The count line is printed whatever the input."""
import argparse
import json
import os
import re
import subprocess
import sys

ALL_PASSED = re.compile(r"All tests passed \(\d+ assertions? in (\d+) test cases?\)")
MIXED = re.compile(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed")
# Catch2 2.x's console reporter opens every reported failure with the test case's name (then
# its sections) between two lines of 79 dashes.
RULE = "-" * 79
SIGNALLED = re.compile(r'^\*\*\* signal (\d+) ended the test during test case "(.*)"$', re.M)
# meson's result names, as an admin reads them.
RESULT_WORDS = {"OK": "passed", "EXPECTEDFAIL": "passed (expected failure)",
                "FAIL": "FAILED", "TIMEOUT": "TIMED OUT", "INTERRUPT": "interrupted, not finished",
                "SKIP": "SKIPPED", "ERROR": "ERROR (did not run)", "UNEXPECTEDPASS": "FAILED"}


def is_catch2(path):
    """True for an executable built with Catch2's main (it knows --list-test-names-only)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[:4] == b"\x7fELF" and b"list-test-names-only" in data


def expected_tests(builddir, suite):
    """{meson test name: its number of cases} for the tests of `suite` ("all": every test)."""
    r = subprocess.run(["meson", "introspect", builddir, "--tests"], capture_output=True,
                       text=True, check=True)
    out = {}
    for t in json.loads(r.stdout):
        suites = [s.split(":")[-1] for s in t.get("suite", [])]
        if suite != "all" and suite not in suites:
            continue
        cmd = t["cmd"]
        cases = 1
        for i, arg in enumerate(cmd):
            # meson names a target in a test's arguments relative to the build directory.
            arg = arg if os.path.isabs(arg) else os.path.join(builddir, arg)
            if is_catch2(arg):
                lst = subprocess.run([arg] + cmd[i + 1:] + ["--list-test-names-only"],
                                     capture_output=True, text=True)
                names = [n for n in lst.stdout.splitlines() if n.strip()]
                cases = max(1, len(names))
                break
        out[t["name"]] = cases
    return out


def is_section(line):
    """True for the first line of a section's name under a test case's name in Catch2 2.x's
    console report (ConsoleReporter::printHeaderString in catch.hpp): a section is indented by
    two spaces. The lines a long name is wrapped onto are indented past the first ": " of the
    name (three spaces or more), or not at all when the name has no ": "."""
    return line.startswith("  ") and not line.startswith("   ")


def failed_cases(output):
    """The names of the Catch2 test cases that failed, in order, from console output."""
    names = []
    lines = output.splitlines()
    i = 0
    while i < len(lines):
        if lines[i] == RULE and i + 2 < len(lines):
            j = i + 1
            while j < len(lines) and lines[j] != RULE:
                j += 1
            if j < len(lines) and j > i + 1:
                name = lines[i + 1].strip()
                for cont in lines[i + 2:j]:
                    if is_section(cont):
                        break
                    # Catch2 wraps at a space (dropped) or after a break character such as
                    # '-', '/' or '.' (kept at the end of the line): no space to put back then.
                    glue = "" if name and name[-1] in "-/.,:;=&]" else " "
                    name += glue + cont.strip()
                k = j + 1
                while k < len(lines) and lines[k] != RULE:
                    if ("FAILED" in lines[k] or "FATAL ERROR" in lines[k]
                            or "due to unexpected exception" in lines[k]):
                        if name not in names:
                            names.append(name)
                        break
                    k += 1
                i = j + 1
                continue
        i += 1
    for _, name in SIGNALLED.findall(output):
        if name not in names:
            names.append(name)
    return names


def finding_lines(output, most=3, width=240):
    """The first `most` lines of a test's output that report a failure ("FAIL", "Error",
    "Traceback"), each cut to `width` characters."""
    found = []
    for line in output.splitlines():
        text = line.strip()
        if any(w in text for w in ("FAIL", "Error", "Traceback", "error:")):
            found.append(text if len(text) <= width else text[:width] + "...")
            if len(found) >= most:
                break
    return found


def count_run(builddir, suite, testlog, rc):
    label = os.path.basename(os.path.normpath(builddir))
    try:
        expected = expected_tests(builddir, suite)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        print(f"  {label}: cannot list its tests ({e}): 1 failed")
        return 0, 1
    seen = {}
    passed = failed = 0
    try:
        with open(testlog, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    t = json.loads(line)
                    if not isinstance(t, dict):
                        raise ValueError(f"a JSON {type(t).__name__}, not an object")
                    # "rdmad:unit / unit": the project and suite, then the test's own name.
                    seen[str(t.get("name", "")).split(" / ")[-1]] = t
                except ValueError as e:
                    # A log cut short (the step was killed while meson wrote it): its tests
                    # count as not run below, and the line itself as one failed case.
                    print(f"  {label}: {testlog}:{number}: not a test result ({e}): 1 failed")
                    failed += 1
    except OSError:
        pass  # every expected test is "not run" below
    for name in list(expected) + [n for n in seen if n not in expected]:
        cases = expected.get(name, 1)
        t = seen.get(name)
        if t is None:
            failed += cases
            print(f"  {label}: {name}: NOT RUN ({cases} case{'s' if cases != 1 else ''})")
            continue
        # Every field is read as text: a record of the wrong shape is that test's failure,
        # never a reason to drop the run's other counts.
        result = str(t.get("result"))
        ok = result in ("OK", "EXPECTEDFAIL")
        out = str(t.get("stdout") or "") + str(t.get("stderr") or "")
        m = MIXED.findall(out)
        a = ALL_PASSED.findall(out)
        if m:
            p = int(m[-1][1])
        elif a and ok:
            p = int(a[-1])
        else:
            p = cases if ok else 0
        f_ = max(cases - p, 0 if ok else 1)
        passed += p
        failed += f_
        word = RESULT_WORDS.get(result, result)
        detail = f" ({p} passed, {f_} failed)" if cases > 1 or f_ else ""
        print(f"  {label}: {name}: {word}{detail}")
        if not ok or f_:
            cases_failed = failed_cases(out)
            for case in cases_failed:
                print(f"  {label}: {name}: failed case: {case}")
            if not cases_failed:
                # A script's test (dbus-fuzz, fleet, the Cockpit page) names no Catch2 case:
                # its first findings, so that a failure seen only in this summary (CI) says
                # what failed.
                for line in finding_lines(out):
                    print(f"  {label}: {name}: {line}")
    if rc != 0 and failed == 0:
        print(f"  {label}: meson test exited {rc} with no failed test in its log: 1 failed")
        failed += 1
    return passed, failed


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error still ends with the count line (one failed case)."""

    def error(self, message):
        self.print_usage(sys.stdout)
        print(f"  {self.prog}: {message}: 1 failed")
        print("0 passed, 1 failed")
        sys.exit(2)


def main():
    ap = Parser()
    ap.add_argument("--build-failures", type=int, default=0)
    ap.add_argument("--cases", action="append", default=[], help="a result file (repeatable)")
    ap.add_argument("--meson", nargs=4, action="append", default=[],
                    metavar=("BUILDDIR", "SUITE", "TESTLOG", "RC"),
                    help="a meson test run (repeatable)")
    args = ap.parse_args()
    passed, failed = 0, args.build_failures
    for builddir, suite, testlog, rc in args.meson:
        try:
            rc = int(rc)
        except ValueError:
            print(f"  {builddir}: meson test's exit status {rc!r} is not a number: 1 failed")
            failed += 1
            rc = 1
        try:
            p, f = count_run(builddir, suite, testlog, rc)
        except Exception as e:  # noqa: BLE001  (the count line is printed all the same)
            print(f"  {builddir}: cannot count {testlog}: {e!r}: 1 failed")
            p, f = 0, 1
        passed += p
        failed += f
    for cases in args.cases:
        try:
            with open(cases, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    fields = line.split()
                    if not fields:
                        continue  # a blank line, as testlog.json's are skipped
                    if len(fields) != 2:
                        print(f"  {cases}:{number}: not \"NAME pass|fail\": {line.rstrip()!r}:"
                              " 1 failed")
                        failed += 1
                        continue
                    name, result = fields
                    passed += result == "pass"
                    failed += result != "pass"
                    print(f"  {name}: {result}")
        except OSError:
            print(f"  {cases}: missing: 1 failed")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
