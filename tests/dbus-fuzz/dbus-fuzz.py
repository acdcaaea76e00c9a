#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""D-Bus fuzzer for the live rdmad (issue #14).

Starts a private system-like dbus-daemon, a umockdev testbed loaded from a recorded host, and
the real rdmad under the umockdev preload (as tests/integration/harness.cpp does), then calls
every method and Properties.Get/Set/GetAll of every object, with the members and signatures
read from the interface XML in dbus/ (the single source of the API): valid, boundary and
hostile arguments, wrong signatures, unknown objects and interfaces, many calls in flight at
once, from root and from an unprivileged uid (65534) with polkit absent and mocked by
python-dbusmock's polkitd template.

It checks that every call is answered within --max-reply (1 s, issue #14) with a reply or an
error named org.rdmad1.Error.* or a standard org.freedesktop.DBus.Error.*; that a denied
caller changes nothing (Describe(), the objects, state.conf, the testbed's sysfs files and the
modprobe.d file are the same after its phase); that rdmad stays alive and exits 0 on SIGTERM;
and that its RSS and fd count stay bounded.

Worker processes make the calls (`--worker`), so that one of them can run under setpriv as
another uid; the driver watches rdmad and compares snapshots between phases.

Environment: RDMAD_DBUS_FUZZ_SECONDS (total, default 60), RDMAD_DBUS_FUZZ_SEED (default:
random, printed so that a failure can be replayed)."""

import argparse
import json
import os
import random
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rdmad_rig import (NAME, ROOT, Proc, Rig, call_sync, clean_env, connect, fd_count,  # noqa: E402
                       proc_status, tree_digest, wait_name)
from gi.repository import Gio, GLib  # noqa: E402

NOBODY = 65534
STD_ERRORS = {
    # Errors sd-bus itself answers for bad calls (systemd: src/libsystemd/sd-bus/bus-objects.c)
    # and the bus daemon (dbus-specification "Message Bus Messages"); AccessDenied is rdmad's
    # answer to an unauthorized caller (DESIGN.md, "Errors").
    "org.freedesktop.DBus.Error.AccessDenied",
    "org.freedesktop.DBus.Error.InvalidArgs",
    "org.freedesktop.DBus.Error.UnknownMethod",
    "org.freedesktop.DBus.Error.UnknownObject",
    "org.freedesktop.DBus.Error.UnknownInterface",
    "org.freedesktop.DBus.Error.UnknownProperty",
    "org.freedesktop.DBus.Error.PropertyReadOnly",
}
RDMAD_ERRORS = {"org.rdmad1.Error." + n
                for n in ("NoSuchObject", "InvalidArgument", "NotSupported", "Busy", "Failed")}
STANDARD_IFACES = {
    "org.freedesktop.DBus.Introspectable": {"Introspect": []},
    "org.freedesktop.DBus.Peer": {"Ping": [], "GetMachineId": []},
    "org.freedesktop.DBus.ObjectManager": {"GetManagedObjects": []},
}


def log(msg):
    print("dbus-fuzz: " + msg, file=sys.stderr, flush=True)


# ---- the API, from dbus/*.xml ----------------------------------------------------------------

def load_api(xml_dir):
    """{interface: {"methods": {name: [(arg name, type)]}, "props": {name: (type, access)}}}"""
    api = {}
    for f in sorted(os.listdir(xml_dir)):
        if not f.endswith(".xml"):
            continue
        for iface in ET.parse(os.path.join(xml_dir, f)).getroot().iter("interface"):
            methods, props = {}, {}
            for m in iface.findall("method"):
                methods[m.get("name")] = [(a.get("name"), a.get("type")) for a in m.findall("arg")
                                          if a.get("direction", "in") == "in"]
            for p in iface.findall("property"):
                props[p.get("name")] = (p.get("type"), p.get("access"))
            api[iface.get("name")] = {"methods": methods, "props": props}
    if not api:
        raise SystemExit("no interface in " + xml_dir)
    return api


MUTATING = {("org.rdmad1.Manager", "Reload"), ("org.rdmad1.Manager", "InstallProviders"),
            ("org.rdmad1.Port", "SetPortType"), ("org.rdmad1.Port", "SetPFCNoDrop"),
            ("org.rdmad1.Port", "SetTrust"), ("org.rdmad1.Port", "SetDSCPPriority"),
            ("org.rdmad1.Port", "SetRDMACM"), ("org.rdmad1.Port", "Revert")}


def mutating(iface, method, args):
    """Calls that need authorization (man/org.rdmad1.5: org.rdmad1.configure, and
    org.rdmad1.install-providers for InstallProviders): Reconcile(false) acts too."""
    if (iface, method) in MUTATING:
        return True
    return iface == "org.rdmad1.Manager" and method == "Reconcile" and args == (False,)


# ---- argument generation -------------------------------------------------------------------

ODD = ["", " ", "\t", "\n", "\x01", "\x1b[31m", "\x7f", "\u00e9", "\u200b", "\u202e", "\ufeff",
       "\ufffd", "\U0001f600", "*", "?", "[", "]", "[!a]", "\\", "/", "../", "%s%n", "{}", "{0}",
       "\"", "'", "$(id)", "`id`", ";", "=", "#", "\u0085", "\u2028"]
BASIC = "ybnqiuxtdsog"
# Long strings, made once: 64 KiB to 1 MiB of a name with odd characters (a worker spends its
# time calling, not building values).
BIG_STRINGS = [("mlx4_0" + ODD[i % len(ODD)]) * (8 << i) * 1024 for i in range(5)]
BIG_BYTES = [GLib.Variant.new_from_bytes(GLib.VariantType("ay"), GLib.Bytes(bytes(range(256)) * n),
                                         True) for n in (4, 256, 4096)]


def rand_string(rng, names, big_ok=True):
    pick = rng.random()
    if pick < 0.3 and names:
        base = rng.choice(names)
    else:
        base = "".join(rng.choice(ODD + ["a", "mlx", "0", "_"]) for _ in range(rng.randint(0, 8)))
    r = rng.random()
    if r < 0.03 and big_ok:
        return rng.choice(BIG_STRINGS)
    if r < 0.4 and base:
        i = rng.randint(0, len(base))
        return base[:i] + rng.choice(ODD) + base[i:]
    if r < 0.5:
        return base.upper()
    return base


def rand_path(rng, paths):
    if paths and rng.random() < 0.6:
        p = rng.choice(paths)
    else:
        p = rng.choice([ROOT + "/device/nope", ROOT + "/link/0", ROOT + "/link/99999",
                        ROOT + "/device/_30000_3a03_3a00_2e0/port/0", "/", "/org", ROOT + "/x" * 50])
    return p


def split_types(sig):
    """Complete types of a signature string: "a(ss)bs" -> ["a(ss)", "b", "s"]."""
    out, i = [], 0
    while i < len(sig):
        j = complete_end(sig, i)
        out.append(sig[i:j])
        i = j
    return out


def complete_end(sig, i):
    c = sig[i]
    if c == "a":
        return complete_end(sig, i + 1)
    if c in "({":
        close = ")" if c == "(" else "}"
        j = i + 1
        while sig[j] != close:
            j = complete_end(sig, j)
        return j + 1
    return i + 1


def value_of(rng, t, ctx, depth=0):
    """A Python value GLib.Variant(t, value) accepts, often at a boundary."""
    names = ctx["names"]
    if t == "y":
        return rng.choice([0, 1, 7, 8, 9, 127, 128, 255, rng.randint(0, 255)])
    if t == "b":
        return rng.random() < 0.5
    if t == "n":
        return rng.choice([0, -1, 1, -32768, 32767])
    if t == "q":
        return rng.choice([0, 1, 2, 65535])
    if t == "i":
        return rng.choice([0, -1, 1, 1000, -2**31, 2**31 - 1])
    if t == "u":
        return rng.choice([0, 1, 2, 3, 255, 256, 2**32 - 1])
    if t == "x":
        return rng.choice([0, -1, -2**63, 2**63 - 1])
    if t == "t":
        return rng.choice([0, 1, 2**64 - 1])
    if t == "d":
        return rng.choice([0.0, -1.0, 1e308, float("inf"), float("-inf"), float("nan")])
    if t == "s":
        return rand_string(rng, names, big_ok=depth == 0)
    if t == "o":
        return rand_path(rng, ctx["paths"])
    if t == "g":
        return rng.choice(["", "s", "a{sv}", "(ii)", "aaaaaaaay"])
    if t == "v":
        inner = rng.choice(["s", "u", "b", "ay", "as", "(ss)"]) if depth < 3 else "s"
        return GLib.Variant(inner, value_of(rng, inner, ctx, depth + 1))
    if t.startswith("a{"):
        kt, vt = split_types(t[2:-1])
        return {value_of(rng, kt, ctx, depth + 1): value_of(rng, vt, ctx, depth + 1)
                for _ in range(rng.randint(0, 3))}
    if t.startswith("a"):
        inner = t[1:]
        if inner == "y":  # priorities and bytes: short and valid, or long and odd
            r = rng.random()
            if r < 0.5:
                return rng.sample(range(8), rng.randint(0, 8))
            if r < 0.7:
                return [rng.randint(0, 7) for _ in range(rng.randint(2, 12))]  # duplicates
            if r < 0.8:
                return [rng.randint(0, 255) for _ in range(rng.randint(0, 300))]
            return [rng.choice([8, 9, 15, 16, 255])] + rng.sample(range(8), rng.randint(0, 3))
        n = rng.choice([0, 1, 2, 3]) if depth or rng.random() < 0.9 else rng.randint(100, 1000)
        return [value_of(rng, inner, ctx, depth + 1) for _ in range(n)]
    if t.startswith("("):
        return tuple(value_of(rng, x, ctx, depth + 1) for x in split_types(t[1:-1]))
    raise ValueError("no generator for " + t)


def random_type(rng, depth=0):
    r = rng.random()
    if depth > 2 or r < 0.6:
        return rng.choice(BASIC + "v")
    if r < 0.8:
        return "a" + random_type(rng, depth + 1)
    if r < 0.9:
        return "a{" + rng.choice("sy") + random_type(rng, depth + 1) + "}"
    return "(" + "".join(random_type(rng, depth + 1) for _ in range(rng.randint(1, 3))) + ")"


def meaningful(rng, name, t, ctx):
    """An argument a real client would send, by the XML's argument name."""
    if name == "name":
        return rng.choice(ctx["names"]) if ctx["names"] else "mlx4_0"
    if name == "type":
        return rng.choice(["ib", "eth", "auto", "IB", "Eth", "", "ib ", "roce"])
    if name == "priorities":
        return sorted(rng.sample(range(8), rng.randint(1, 3)))
    if name in ("persist", "dry_run"):
        return rng.random() < 0.5
    return value_of(rng, t, ctx)


def make_call(rng, api, ctx):
    """(path, interface, method, GLib.Variant or None, description)"""
    objs = ctx["objects"]  # [(path, [interfaces])]
    path, ifaces = rng.choice(objs)
    r = rng.random()
    if r < 0.05:
        path = rand_path(rng, [])  # an object that does not exist
    ours = [i for i in ifaces if i in api]
    iface = rng.choice(ours) if ours and rng.random() < 0.9 else rng.choice(list(api))
    if rng.random() < 0.03:
        iface = rng.choice(["org.rdmad1.Nope", "org.freedesktop.DBus.Foo"])
    spec = api.get(iface, {"methods": {}, "props": {}})
    r = rng.random()
    if r < 0.35 and spec["props"]:  # Properties
        prop = rng.choice(list(spec["props"]))
        if rng.random() < 0.05:
            prop = rand_string(rng, ["Name", "State"])[:200]
        ptype = spec["props"].get(prop, ("s", "read"))[0]
        op = rng.choice(["Get", "Set", "Set", "GetAll"])
        if op == "Get":
            args = GLib.Variant("(ss)", (iface, prop))
        elif op == "GetAll":
            args = GLib.Variant("(s)", (iface,))
        else:
            vt = ptype if rng.random() < 0.5 else random_type(rng)
            args = GLib.Variant("(ssv)", (iface, prop, GLib.Variant(vt, value_of(rng, vt, ctx))))
        return path, "org.freedesktop.DBus.Properties", op, args, "%s %s.%s" % (op, iface, prop)
    if r < 0.42:
        std = rng.choice(list(STANDARD_IFACES))
        method = rng.choice(list(STANDARD_IFACES[std]))
        return path, std, method, None, std + "." + method
    if not spec["methods"]:
        return path, "org.freedesktop.DBus.Properties", "GetAll", GLib.Variant("(s)", (iface,)), \
            "GetAll " + iface
    method = rng.choice(list(spec["methods"]))
    in_args = spec["methods"][method]
    r = rng.random()
    if r < 0.45:
        sig = "".join(t for _, t in in_args)
        vals = tuple(meaningful(rng, n, t, ctx) for n, t in in_args)
    elif r < 0.8:
        sig = "".join(t for _, t in in_args)
        vals = tuple(value_of(rng, t, ctx) for _, t in in_args)
    else:  # a wrong signature: other types, or too few or too many arguments
        types = [random_type(rng) for _ in range(rng.randint(0, 3))]
        sig = "".join(types)
        vals = tuple(value_of(rng, t, ctx) for t in types)
    if sig:
        children = [GLib.Variant(t, v) for t, v in zip(split_types(sig), vals)]
        for i, t in enumerate(split_types(sig)):
            if t == "ay" and rng.random() < 0.05:  # 1 KiB to 1 MiB of bytes
                children[i] = rng.choice(BIG_BYTES)
        args = GLib.Variant.new_tuple(*children)
    else:
        args = None
    return path, iface, method, args, "%s.%s(%s)" % (iface, method, sig)


# ---- a worker: one connection, many calls in flight ----------------------------------------

def discover(conn):
    """Objects on the bus (GetManagedObjects plus the root) and the names they carry."""
    v = call_sync(conn, ROOT, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects").unpack()[0]
    objects = [(ROOT, ["org.rdmad1.Manager", "org.freedesktop.DBus.ObjectManager"])]
    names = []
    for path, ifaces in sorted(v.items()):
        objects.append((path, sorted(ifaces)))
        for props in ifaces.values():
            if isinstance(props.get("Name"), str):
                names.append(props["Name"])
    return objects, names


def worker(args):
    rng = random.Random(args.seed)
    api = load_api(args.xml_dir)
    conn = connect(args.address)
    objects, names = discover(conn)
    ctx = {"objects": objects, "names": names, "paths": [p for p, _ in objects]}
    deadline = time.monotonic() + args.seconds
    loop = GLib.MainLoop()
    stats = {"uid": os.getuid(), "calls": 0, "replies": 0, "errors": {}, "bad": [],
             "slowest_ms": 0.0, "slowest": "", "mutating_allowed": 0, "mutating_denied": 0}
    state = {"inflight": 0}

    # Latency is taken on GDBus's worker thread as messages leave and arrive (a filter), not
    # when this thread gets round to the callback: building a large argument here must not
    # count as rdmad's time.
    sent_at, reply_at = {}, {}

    def on_message(c, msg, incoming):
        now = time.monotonic()
        if incoming:
            if msg.get_message_type() in (Gio.DBusMessageType.METHOD_RETURN,
                                           Gio.DBusMessageType.ERROR):
                reply_at[msg.get_reply_serial()] = now
        elif msg.get_message_type() == Gio.DBusMessageType.METHOD_CALL:
            sent_at[msg.get_serial()] = now
        return msg

    conn.add_filter(on_message)

    def done(c, res, data):
        desc, is_mut, t_call = data
        state["inflight"] -= 1
        try:
            reply = c.send_message_with_reply_finish(res)
        except GLib.Error as e:  # a local error: no answer in time, or the bus is gone
            ms = (time.monotonic() - t_call) * 1000
            stats["bad"].append("%s: no answer (%s) after %.0f ms" % (desc, e.message, ms))
            fill()
            return
        serial = reply.get_reply_serial()
        ms = (reply_at.pop(serial, 0) - sent_at.pop(serial, 0)) * 1000
        if ms > stats["slowest_ms"]:
            stats["slowest_ms"], stats["slowest"] = ms, desc
        if reply.get_message_type() == Gio.DBusMessageType.ERROR:
            name = reply.get_error_name()
            stats["errors"][name] = stats["errors"].get(name, 0) + 1
            if name not in STD_ERRORS and name not in RDMAD_ERRORS:
                body = reply.get_body()
                stats["bad"].append("%s: unnamed error %s: %s"
                                    % (desc, name, body.print_(False)[:300] if body else ""))
            if is_mut and name == "org.freedesktop.DBus.Error.AccessDenied":
                stats["mutating_denied"] += 1
        else:
            stats["replies"] += 1
            if is_mut:
                stats["mutating_allowed"] += 1
        if ms > args.max_reply * 1000:
            stats["bad"].append("%s: answered after %.0f ms (limit %.0f)"
                                % (desc, ms, args.max_reply * 1000))
        fill()

    def fill():
        while state["inflight"] < args.inflight and time.monotonic() < deadline \
                and len(stats["bad"]) < 20:
            path, iface, method, params, desc = make_call(rng, api, ctx)
            sig = params.get_type_string() if params is not None else "()"
            want = "(" + "".join(t for _, t in api.get(iface, {"methods": {}})["methods"]
                                 .get(method, [])) + ")"
            is_mut = sig == want and mutating(iface, method,
                                              params.unpack() if params is not None else ())
            msg = Gio.DBusMessage.new_method_call(NAME, path, iface, method)
            if params is not None:
                msg.set_body(params)
            state["inflight"] += 1
            stats["calls"] += 1
            # The client's own timeout is far above the limit: a late answer is told apart
            # from none at all.
            conn.send_message_with_reply(msg, Gio.DBusSendMessageFlags.NONE,
                                         int(args.max_reply * 1000) + 10000, None, done,
                                         (desc[:200], is_mut, time.monotonic()))
        if state["inflight"] == 0:
            loop.quit()

    GLib.idle_add(lambda: (fill(), False)[1])
    loop.run()
    print(json.dumps(stats))
    return 0


# ---- the driver ----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--address")
    ap.add_argument("--seed", type=int,
                    default=int(os.environ.get("RDMAD_DBUS_FUZZ_SEED") or 0) or None)
    ap.add_argument("--seconds", type=float,
                    default=float(os.environ.get("RDMAD_DBUS_FUZZ_SECONDS") or 60))
    ap.add_argument("--inflight", type=int, default=16, help="calls in flight per worker")
    ap.add_argument("--max-reply", type=float, default=1.0, help="seconds (issue #14: 1 s)")
    ap.add_argument("--xml-dir", required=True)
    ap.add_argument("--rdmad")
    ap.add_argument("--host", help="a tests/fixtures/hosts/*.umockdev file")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    args.xml_dir = os.path.abspath(args.xml_dir)
    if args.worker:
        return worker(args)
    if args.seed is None:
        args.seed = random.SystemRandom().randint(1, 2**31)
    if os.getuid() != 0:
        raise SystemExit("dbus-fuzz: run as root (it runs a worker as uid %d)" % NOBODY)
    log("seed %d (RDMAD_DBUS_FUZZ_SEED=%d replays it), %.0f s" % (args.seed, args.seed, args.seconds))
    return Driver(args).run()


class Driver:
    def __init__(self, args):
        self.args = args
        self.failures = []
        self.samples = []  # (t, rss KiB, fds)
        self.calls = 0
        self.slowest = (0.0, "")
        self.errors = {}

    def fail(self, msg):
        log("FAIL: " + msg)
        self.failures.append(msg)

    def run(self):
        a = self.args
        polkit = None
        rig = self.rig = Rig(a.rdmad, a.host,
                             # One rule, so that Reload and Reconcile have something to read.
                             config='[[rule]]\ndriver = "mlx5_core"\npfc_no_drop = [3]\n')
        self.work, self.address, self.conn = rig.work, rig.address, rig.conn
        try:
            rig.start()
            self.daemon_proc = rig.daemon.p
            self.objects, self.names = discover(self.conn)
            log("%d objects, %d names; rdmad pid %d" % (len(self.objects), len(self.names),
                                                         rig.pid))
            self.sample()
            base = self.samples[-1]
            share = a.seconds / 4
            # 1. uid 65534, no polkit on the bus: root-only, so every change is denied.
            self.phase("nobody, no polkit (denied)", [NOBODY], share, denied=True)
            # 2. root, no polkit: allowed; the state changes.
            self.phase("root, no polkit", [0, 0], share)
            # 3. polkit allowing nothing: root and nobody denied alike.
            polkit = Proc(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template",
                           "polkitd"],
                          clean_env(DBUS_SYSTEM_BUS_ADDRESS=self.address),
                          os.path.join(self.work, "polkitd.log"))
            wait_name(self.conn, "org.freedesktop.PolicyKit1")
            self.set_allowed([])
            self.phase("root and nobody, polkit allows nothing (denied)", [0, NOBODY], share,
                       denied=True)
            # 4. polkit allowing org.rdmad1.configure: nobody may configure.
            self.set_allowed(["org.rdmad1.configure"])
            self.phase("nobody, polkit allows org.rdmad1.configure", [NOBODY, NOBODY], share)
            if rig.alive():
                self.check_bounds(base)
                status = rig.stop()
                if status != 0:
                    self.fail("rdmad exit status %s on SIGTERM (expected 0)" % status)
        finally:
            if polkit:
                polkit.stop()
            rig.close(keep=True)
        self.report()
        if self.failures:
            for name in ("rdmad.log", "polkitd.log"):
                p = os.path.join(self.work, name)
                if os.path.exists(p):
                    with open(p, errors="replace") as f:
                        text = f.read()
                    log("---- %s (last 60 lines)\n%s" % (name, "\n".join(text.splitlines()[-60:])))
            log("work directory kept: " + self.work)
            log("replay: RDMAD_DBUS_FUZZ_SEED=%d RDMAD_DBUS_FUZZ_SECONDS=%g"
                % (self.args.seed, self.args.seconds))
            return 1
        if not self.args.keep:
            rig.workdir.remove()
        return 0

    def set_allowed(self, actions):
        self.conn.call_sync("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                            "org.freedesktop.DBus.Mock", "SetAllowed",
                            GLib.Variant("(as)", (actions,)), None, 0, 5000, None)

    def snapshot(self):
        """What a denied caller must leave as it was."""
        doc = json.loads(call_sync(self.conn, ROOT, "org.rdmad1.Manager", "Describe").unpack()[0])
        return {"describe": doc, "objects": self.rig.managed_objects(),
                "state": tree_digest(os.path.join(self.work, "state")),
                "modprobe": tree_digest(os.path.join(self.work, "modprobe.d")),
                "sysfs": tree_digest(os.path.join(self.rig.tbroot, "sys", "devices"))}

    def settle(self):
        """Let a pass that a call scheduled finish before a snapshot."""
        time.sleep(0.5)

    def settled_snapshot(self):
        """A snapshot once two taken 0.5 s apart agree: what the last phase's calls started
        (a pass, a query of mstconfig, a PackageKit transaction) may end later than 0.5 s
        under load, and would then be counted against the next phase. After 30 s the last
        one is returned as it is."""
        self.settle()
        last = self.snapshot()
        t0 = time.monotonic()
        while time.monotonic() < t0 + 30:
            self.settle()
            now = self.snapshot()
            if now == last:
                break
            last = now
            log("the state still changes %.1f s after the last phase" % (time.monotonic() - t0))
        return last

    def sample(self):
        pid = self.daemon_pid
        self.samples.append((time.monotonic(), proc_status(pid, "VmRSS"), fd_count(pid)))

    @property
    def daemon_pid(self):
        return self.rig.pid

    def phase(self, title, uids, seconds, denied=False):
        if self.failures:
            return
        log("phase: %s, %d worker(s), %.0f s" % (title, len(uids), seconds))
        if denied:
            before = self.settled_snapshot()
        else:
            self.settle()
            before = None
        workers = []
        try:
            for i, uid in enumerate(uids):
                argv = ["/usr/bin/python3", os.path.abspath(__file__), "--worker",
                        "--address", self.address, "--xml-dir", self.args.xml_dir,
                        "--seconds", str(seconds), "--inflight", str(self.args.inflight),
                        "--max-reply", str(self.args.max_reply),
                        "--seed", str(self.args.seed * 1000 + len(self.samples) * 10 + i)]
                if uid != 0:
                    argv = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid,
                            "--clear-groups"] + argv
                workers.append(subprocess.Popen(argv, env=clean_env(HOME="/"),
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                cwd="/"))
            end = time.monotonic() + seconds + 60
            while any(w.poll() is None for w in workers) and time.monotonic() < end:
                time.sleep(1)
                self.sample()
                if self.daemon_proc.poll() is not None:
                    self.fail("rdmad died during '%s': status %s" % (title,
                                                                      self.daemon_proc.returncode))
                    break
        except BaseException:  # a signal that ends the run: no worker outlives it
            for w in workers:
                w.kill()
                w.wait()
            raise
        for uid, w in zip(uids, workers):
            if w.poll() is None:
                w.kill()
                self.fail("a worker (uid %d) did not finish in '%s'" % (uid, title))
            out, err = w.communicate()
            try:
                st = json.loads(out.decode().strip().splitlines()[-1])
            except (ValueError, IndexError):
                self.fail("worker uid %d in '%s' gave no result: %s" % (uid, title,
                                                                        err.decode()[-2000:]))
                continue
            self.calls += st["calls"]
            for k, v in st["errors"].items():
                self.errors[k] = self.errors.get(k, 0) + v
            if st["slowest_ms"] > self.slowest[0]:
                self.slowest = (st["slowest_ms"], st["slowest"])
            log("  uid %d: %d calls, %d replies, errors %s, slowest %.1f ms (%s), mutating calls "
                "allowed %d, denied %d" % (st["uid"], st["calls"], st["replies"], st["errors"],
                                           st["slowest_ms"], st["slowest"], st["mutating_allowed"],
                                           st["mutating_denied"]))
            for b in st["bad"]:
                self.fail("'%s' uid %d: %s" % (title, uid, b))
            if denied and st["mutating_allowed"]:
                self.fail("'%s' uid %d: %d mutating calls were allowed"
                          % (title, uid, st["mutating_allowed"]))
            if denied and not st["mutating_denied"]:
                self.fail("'%s' uid %d: no mutating call was tried and denied" % (title, uid))
            if not denied and not st["mutating_allowed"]:
                self.fail("'%s' uid %d: no mutating call was allowed" % (title, uid))
        if self.daemon_proc.poll() is not None:
            return
        # rdmad still answers.
        try:
            call_sync(self.conn, ROOT, "org.freedesktop.DBus.Peer", "Ping", None, 2000)
        except GLib.Error as e:
            self.fail("rdmad does not answer Ping after '%s': %s" % (title, e.message))
            return
        if denied:
            after = self.settled_snapshot()
            for k in before:
                if before[k] != after[k]:
                    self.fail("'%s' changed %s" % (title, k))

    def check_bounds(self, base):
        _, rss0, fd0 = base
        self.settle()
        self.sample()
        _, rss1, fd1 = self.samples[-1]
        rss_max = max(s[1] or 0 for s in self.samples)
        fd_max = max(s[2] or 0 for s in self.samples)
        log("rdmad RSS %d KiB at start, %d max, %d at the end; fds %d at start, %d max, %d at "
            "the end" % (rss0, rss_max, rss1, fd0, fd_max, fd1))
        # Bounded: nothing the callers did may stay behind. The pending polkit and bus-driver
        # calls of 16 callers in flight take a few fds at most; RSS may grow by what the
        # allocator keeps of the largest messages (a few MiB).
        if fd1 > fd0 + 8:
            self.fail("fd count grew from %d to %d" % (fd0, fd1))
        if rss1 > max(2 * rss0, rss0 + 64 * 1024):
            self.fail("RSS grew from %d KiB to %d KiB" % (rss0, rss1))

    def report(self):
        log("%d calls; errors by name: %s; slowest answer %.1f ms (%s)"
            % (self.calls, json.dumps(self.errors, sort_keys=True), self.slowest[0],
               self.slowest[1]))
        log("%s" % ("FAILED: %d finding(s)" % len(self.failures) if self.failures else "OK"))


if __name__ == "__main__":
    sys.exit(main())
