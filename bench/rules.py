#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Large configurations (issue #14): how long Manager.Reload() takes for one file of as many
rules as fit in rdmad's 1 MiB per file, for a 1 MiB file whose last line makes toml++ fail an
internal check (the error's line must be found), and for --rules rules over conf.d/, and
rdmad's RSS before, at the peak and after the large configuration is replaced by a small one.
rdmad runs on a recorded host (tests/fixtures/hosts) under umockdev on a private bus; see
bench/README.md.

  bench/rules.py [--build build] [--rules 100000] [--runs 3] [--only check-failure]"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "dbus-fuzz"))
from rdmad_rig import ROOT, Rig, proc_status  # noqa: E402

MIB = 1 << 20  # kMaxConfigFileBytes (daemon/config/file_read.hpp)
SMALL = '[[rule]]\ndriver = "mlx5_core"\npfc_no_drop = [3]\n'


def rule(i):
    # Distinct matches (a device name glob each), no duplicate: every rule is kept.
    return '[[rule]]\ndevice = "d%06d"\npfc_no_drop = [3]\n' % i


def files_of(n):
    """n rules as [text], each text below 1 MiB."""
    out, cur, size = [], [], 0
    for i in range(n):
        r = rule(i)
        if size + len(r) > MIB - 64:
            out.append("".join(cur))
            cur, size = [], 0
        cur.append(r)
        size += len(r)
    if cur:
        out.append("".join(cur))
    return out


def check_failure_text():
    """Just under 1 MiB of nested inline tables, then a line on which toml++ 3.3 fails its
    check "!is_value_terminator(*cp)" (tests/unit/test_config.cpp has the same file)."""
    return "".join("a%x={b={c=[[[1]]]}}\n" % i for i in range(47860)) + "x=1979-05-2= 0\n"


def reload_error_ms(rig):
    """The time to Reload's error reply; the error must name line 47,861."""
    t = time.monotonic()
    try:
        rig.call(ROOT, "org.rdmad1.Manager", "Reload", None, 600000)
    except Exception as e:  # GLib.Error: the named D-Bus error
        ms = (time.monotonic() - t) * 1000
        if "rdmad.conf:47861:1: not TOML that rdmad can read" not in str(e):
            raise SystemExit("unexpected Reload error: %s" % e)
        return ms
    raise SystemExit("Reload of the bad file succeeded")


def reload_ms(rig):
    t = time.monotonic()
    rig.call(ROOT, "org.rdmad1.Manager", "Reload", None, 600000)
    # The pass the Reload schedules: a Describe() is answered after it.
    rig.call(ROOT, "org.rdmad1.Manager", "Describe", None, 600000)
    return (time.monotonic() - t) * 1000


def settle_rss(rig):
    time.sleep(1.0)
    return rig.rss_kib()


def clear_dropins(rig):
    d = rig.path("config/conf.d")
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--host", default=os.path.join(HERE, "..", "tests", "fixtures", "hosts",
                                                   "procfs-hfi1-mlx4-mlx5.umockdev"))
    ap.add_argument("--rules", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=["check-failure"], help="run only this part")
    args = ap.parse_args()
    rig = Rig(os.path.join(args.build, "daemon", "rdmad"), args.host, config=SMALL)
    os.makedirs(rig.path("config/conf.d"))
    try:
        rig.start()
        rss0 = settle_rss(rig)
        times = []
        for _ in range(args.runs):
            rig.write("config/rdmad.conf", check_failure_text())
            times.append(reload_error_ms(rig))
        rig.write("config/rdmad.conf", SMALL)
        reload_ms(rig)
        print("Reload error for a 1 MiB file failing a toml++ check on its last line: median "
              "%.0f ms (%s)" % (statistics.median(times), ", ".join("%.0f" % t for t in times)))
        if args.only == "check-failure":
            rig.stop()
            return
        one = files_of(40000)[0]
        n_one = one.count("[[rule]]")
        times = []
        for _ in range(args.runs):
            rig.write("config/rdmad.conf", one)
            times.append(reload_ms(rig))
            rig.write("config/rdmad.conf", SMALL)
            reload_ms(rig)
        print("Reload of one file of %d rules (%d bytes): median %.0f ms (%s)"
              % (n_one, len(one), statistics.median(times), ", ".join("%.0f" % t for t in times)))

        texts = files_of(args.rules)
        for i, t in enumerate(texts):
            rig.write("config/conf.d/%03d.conf" % i, t)
        big_ms = reload_ms(rig)
        rss_big = settle_rss(rig)
        hwm = proc_status(rig.pid, "VmHWM")
        clear_dropins(rig)
        small_ms = reload_ms(rig)
        rss_after = settle_rss(rig)
        print("Reload of %d rules in %d conf.d files: %.0f ms; back to 1 rule: %.0f ms"
              % (args.rules, len(texts), big_ms, small_ms))
        print("RSS: %d KiB before, %d KiB with %d rules (peak %d KiB), %d KiB after the small "
              "config" % (rss0, rss_big, args.rules, hwm, rss_after))
        status = rig.stop()
        if status != 0:
            raise SystemExit("rdmad exit status %s on SIGTERM" % status)
    finally:
        rig.close()


if __name__ == "__main__":
    main()
