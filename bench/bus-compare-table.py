#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Tables of a bench/bus-compare.sh --json file: each run's figures, and the medians per binary
(ratios are medians of each run's ratio)."""
import json
import statistics
import sys

d = json.load(open(sys.argv[1]))
med = statistics.median
MiB = 1024.0


def show(title, rows, cols):
    print("\n### " + title)
    print("| " + " | ".join(h for h, _ in cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f(r) for _, f in cols) + " |")


def medrow(rs, key):
    return med([r[key] for r in rs if key in r])


st = d.get("startup", [])
if st:
    cols = [("binary", lambda r: r["binary"]), ("devices", lambda r: str(r["devices"])),
            ("round", lambda r: str(r["round"])),
            ("READY ms", lambda r: "%.0f" % r["ready_ms"]), ("bare ms", lambda r: "%.0f" % r["bare_ms"]),
            ("READY/bare", lambda r: "%.2f" % r["ready_x"]),
            ("CPU ms", lambda r: "%.0f" % r["cpu_ms"]), ("bare CPU ms", lambda r: "%.0f" % r["bare_cpu_ms"]),
            ("CPU/bare CPU", lambda r: "%.2f" % r["cpu_x"]),
            ("Describe ms", lambda r: "%.1f" % r["describe_ms"]),
            ("rdmad CPU Describe ms", lambda r: "%.1f" % r["describe_cpu_ms"]),
            ("ne scrape ms", lambda r: "%.0f" % r["ne_scrape_ms"]),
            ("ne/Describe", lambda r: "%.1f" % r["ne_over_describe"]),
            ("HWM READY MiB", lambda r: "%.1f" % (r["hwm_ready_kib"] / MiB)),
            ("HWM +Describe MiB", lambda r: "%.1f" % (r["hwm_describe_kib"] / MiB)),
            ("HWM +GMO MiB", lambda r: "%.1f" % (r["hwm_gmo_kib"] / MiB)),
            ("ne HWM MiB", lambda r: "%.1f" % (r["ne_hwm_kib"] / MiB)),
            ("HWM/ne", lambda r: "%.2f" % r["hwm_over_ne"]),
            ("GMO ms", lambda r: "%.1f" % r["gmo_ms"]), ("GMO 2nd ms", lambda r: "%.1f" % r["gmo2_ms"]),
            ("rdmad CPU GMO ms", lambda r: "%.1f" % r["gmo_cpu_ms"]),
            ("GMO bytes", lambda r: str(r["gmo_bytes"])), ("load", lambda r: r["load"])]
    show("startup: every run", st, cols)
    meds = []
    for n in sorted({r["devices"] for r in st}):
        for b in ("old", "new"):
            rs = [r for r in st if r["devices"] == n and r["binary"] == b]
            m = {"binary": b, "devices": n, "round": "med of %d" % len(rs), "load": "-"}
            for k in rs[0]:
                if isinstance(rs[0][k], (int, float)) and k not in ("devices", "round", "exit"):
                    m[k] = medrow(rs, k)
            meds.append(m)
    cols[2] = ("runs", lambda r: r["round"])
    show("startup: medians", meds, cols)
    by = {(m["binary"], m["devices"]): m for m in meds}
    if all((b, n) in by for b in ("old", "new") for n in (64, 1024)):
        print()
        for b in ("old", "new"):
            per = (by[(b, 1024)]["hwm_describe_kib"] - by[(b, 64)]["hwm_describe_kib"]) * 1024 / 960
            per_r = (by[(b, 1024)]["hwm_ready_kib"] - by[(b, 64)]["hwm_ready_kib"]) * 1024 / 960
            print("%s: per device (HWM+Describe 1024 - 64)/960 = %.0f bytes; at READY %.0f bytes"
                  % (b, per, per_r))

lat = d.get("latency", [])
if lat:
    cols = [("binary", lambda r: r["binary"]), ("devices", lambda r: str(r["devices"])),
            ("round", lambda r: str(r["round"])), ("events", lambda r: str(r["events"])),
            ("p50 ms", lambda r: "%.2f" % r["lat_p50_ms"]), ("p99 ms", lambda r: "%.2f" % r["lat_p99_ms"]),
            ("bare p50 ms", lambda r: "%.3f" % r["bare_p50_ms"]),
            ("bare p99 ms", lambda r: "%.3f" % r["bare_p99_ms"]),
            ("send p50 us", lambda r: "%.0f" % r["send_p50_us"]),
            ("port read p50 us", lambda r: "%.0f" % r["port_read_p50_us"]),
            ("p50/bare p50", lambda r: "%.1f" % r["p50_x_bare"]),
            ("p99/bare p99", lambda r: "%.2f" % r["p99_x_bare"]),
            ("CPU/event p50 ms", lambda r: "%.2f" % r["cpu_p50_ms"]), ("load", lambda r: r["load"])]
    show("latency: every run", lat, cols)
    meds = []
    pooled = {}
    for n in sorted({r["devices"] for r in lat}):
        for b in ("old", "new"):
            rs = [r for r in lat if r["devices"] == n and r["binary"] == b]
            m = {"binary": b, "devices": n, "round": "med of %d" % len(rs), "load": "-",
                 "events": sum(r["events"] for r in rs)}
            for k in rs[0]:
                if isinstance(rs[0][k], (int, float)) and k not in ("devices", "round", "events"):
                    m[k] = medrow(rs, k)
            meds.append(m)



    show("latency: medians of the runs", meds, cols)
    import importlib.machinery, os
    here = os.path.dirname(os.path.abspath(__file__))
    print("\npooled over the runs (all events of a binary and size):")
    def pct(v, p):
        s = sorted(v); k = (len(s) - 1) * p / 100.0; lo = int(k); hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (k - lo)
    p99_1 = {}
    for n in sorted({r["devices"] for r in lat}):
        for b in ("old", "new"):
            rs = [r for r in lat if r["devices"] == n and r["binary"] == b]
            a = [x for r in rs for x in r["lat_all_ms"]]
            c = [x for r in rs for x in r["bare_all_ms"]]
            if n == 1:
                p99_1[b] = pct(a, 99)
            print("  %s %4d: %d events, p50 %.2f p99 %.2f ms; bare p50 %.3f p99 %.3f ms; "
                  "p50/bare %.1f, p99/bare %.2f%s"
                  % (b, n, len(a), pct(a, 50), pct(a, 99), pct(c, 50), pct(c, 99),
                     pct(a, 50) / pct(c, 50), pct(a, 99) / pct(c, 99),
                     "; p99 / p99 at 1 device %.2f" % (pct(a, 99) / p99_1[b]) if b in p99_1 and n != 1 else ""))

bu = d.get("burst", [])
if bu:
    cols = [("binary", lambda r: r["binary"]), ("round", lambda r: str(r["round"])),
            ("uevents", lambda r: str(r["uevents"])), ("send ms", lambda r: "%.0f" % r["send_ms"]),
            ("all on bus ms", lambda r: "%.0f" % r["all_on_bus_ms"]),
            ("after last uevent ms", lambda r: "%.0f" % r["after_last_uevent_ms"]),
            ("bare read ms", lambda r: "%.0f" % r["bare_ms"]),
            ("after last / bare", lambda r: "%.2f" % r["after_last_x_bare"]),
            ("rdmad CPU ms", lambda r: "%.0f" % r["rdmad_cpu_ms"]),
            ("bare CPU ms", lambda r: "%.0f" % r["bare_cpu_ms"]),
            ("CPU/bare CPU", lambda r: "%.2f" % r["cpu_x_bare"]),
            ("InterfacesAdded", lambda r: str(r["interfaces_added"])),
            ("objects", lambda r: str(r["objects_added"])),
            ("objects >1 IA", lambda r: str(r["objects_added_more_than_once"])),
            ("signals", lambda r: json.dumps(r["signals"])),
            ("passes", lambda r: str(r["passes"])), ("load", lambda r: r["load"])]
    show("burst: every run", bu, cols)
    for b in ("old", "new"):
        rs = [r for r in bu if r["binary"] == b]
        print("%s medians: after last uevent %.0f ms (%.2fx bare read %.0f ms), CPU %.0f ms "
              "(%.2fx bare CPU %.0f ms)" % (b, medrow(rs, "after_last_uevent_ms"),
                                            medrow(rs, "after_last_x_bare"), medrow(rs, "bare_ms"),
                                            medrow(rs, "rdmad_cpu_ms"), medrow(rs, "cpu_x_bare"),
                                            medrow(rs, "bare_cpu_ms")))
