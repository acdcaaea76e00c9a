#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""rdmad-notify against the real rdmad (issue #10 §2). rdmad runs on a recorded host under
umockdev on a private system bus (tests/dbus-fuzz/rdmad_rig.py); python3-dbusmock's
notification_daemon template runs on a private session bus and records every Notify call
(org.freedesktop.DBus.Mock.GetCalls). One scenario, in order: start-up is quiet; a port down
is one notification; the port back up replaces it; 100 devices plugged at once are one
notification; an rdmad restart gives none; a configuration error is one; a second agent
exits; a new notification server (without, then with "body-markup") is asked again and gets
no old replaces_id; SIGTERM ends the agent; an agent started during that error notifies only
what changes next; a hung server costs a dropped, reported notification and does not delay
SIGTERM.

Then, with a stand-in rdmad (run_actions()), the install action of a notification about a
missing verbs provider: offered with "ask" to a server with "actions"; one InstallProviders
call per click from the server, none on spoofed signals; its outcome replaces the notification.

Then, on a RoCE host with DCB emulated (tests/integration/fake_dcbnl.c), the lossless-RoCE
settings: a port out of sync names each setting, its value, the desired one and its rule's
line; in sync again replaces it; another tool's DSCP change is told.

  test-notify.py --rdmad PATH --rdmad-notify PATH --host FILE.umockdev [--devices N]
                 [--host-lossless FILE.umockdev --fake-dcbnl fake-dcbnl.so]

Prints the figures (latency, the agent's CPU time for the burst) and exits 1 on a failure."""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dbus-fuzz"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from hotplug import RawSender  # noqa: E402  (uevents from a process without the preload)
from hotplug import RTNLGRP_DCB, dcb_notification  # noqa: E402
from rdmad_rig import (Failed, Proc, Rig, SessionBus, check, clean_env, connect,  # noqa: E402
                       eventually)
from gi.repository import GLib  # noqa: E402

# mlx5_0 in procfs-hfi1-mlx4-mlx5.umockdev: its PCI function is 0000:04:00.0, port 1
# InfiniBand, "4: ACTIVE".
MLX5_IB = "/sys/devices/pci0000:03/0000:03:00.0/0000:04:00.0/infiniband/mlx5_0"
NOTIFICATIONS = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"
# How long "no more notifications" is watched for: the agent's window is 1 s and at most 5 s
# after the first change.
SETTLE = 6.0


def cpu_ns(pid):
    """Time `pid` spent on a CPU, in ns (the first field of /proc/<pid>/schedstat, kernel
    Documentation/scheduler/sched-stats.rst)."""
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0])


def device_text(j):
    """RDMA device mlx5_<1000+j> on PCI function 0000:<41+j/256>:<dev>.<fn> (a ConnectX-5,
    one RoCE port, ACTIVE), in umockdev's text format; attributes as the kernel prints them
    (drivers/infiniband/core/sysfs.c). PCI: 32 devices of 8 functions per bus."""
    bdf = "0000:%02x:%02x.%d" % (0x41 + j // 256, (j % 256) // 8, j % 8)
    pci = "/devices/pci0000:40/0000:40:00.0/" + bdf
    name = "mlx5_%d" % (1000 + j)
    return ("P: %s\nE: SUBSYSTEM=pci\nE: DRIVER=mlx5_core\nE: PCI_CLASS=20000\n"
            "E: PCI_ID=15B3:1017\nE: PCI_SLOT_NAME=%s\nA: class=0x020000\\n\n"
            "A: device=0x1017\\n\nL: driver=../../../../bus/pci/drivers/mlx5_core\n"
            "A: vendor=0x15b3\\n\n\n"
            "P: %s/infiniband/%s\nE: SUBSYSTEM=infiniband\nE: NAME=%s\n"
            "L: device=../../../%s\nA: fw_ver=16.35.2000\\n\n"
            "A: hca_type=MT4119\\n\nA: node_guid=0c42:a103:00a1:%04x\\n\n"
            "A: node_type=1: CA\\n\nA: ports/1/gid_attrs/types/0=IB/RoCE v1\\n\n"
            "A: ports/1/gids/0=fe80:0000:0000:0000:0e42:a1ff:fea1:%04x\\n\n"
            "A: ports/1/lid=0x0\\n\nA: ports/1/link_layer=Ethernet\\n\n"
            "A: ports/1/phys_state=5: LinkUp\\n\nA: ports/1/rate=25 Gb/sec (1X EDR)\\n\n"
            "A: ports/1/sm_lid=0x0\\n\nA: ports/1/state=4: ACTIVE\\n\n\n"
            % (pci, bdf, pci, name, name, bdf, j, j)), "/sys" + pci, name


class Session:
    """A private session bus with dbusmock's notification daemon on it (children of this
    process, owned by rdmad_rig: nothing outlives a run)."""

    def __init__(self, work):
        self.work = work
        self.bus = SessionBus(os.path.join(work, "session.socket"))
        self.address = self.bus.address
        self.servers = 0
        self.mock = self.server(["/usr/bin/python3", "-m", "dbusmock", "--template",
                                 "notification_daemon"])
        self.conn = connect(self.address)
        check(eventually(lambda: self.has_owner(NOTIFICATIONS)),
              "dbusmock's notification daemon did not appear")

    def server(self, argv):
        """`argv` on the session bus, its output in dbusmock.log (then dbusmock-<n>.log)."""
        self.servers += 1
        log = "dbusmock.log" if self.servers == 1 else "dbusmock-%d.log" % self.servers
        return Proc(argv, clean_env(DBUS_SESSION_BUS_ADDRESS=self.address),
                    os.path.join(self.work, log))

    def replace_server(self, argv):
        """Stops the notification server and starts `argv` in its place on the session bus
        (a new owner of org.freedesktop.Notifications, as after a desktop shell restart)."""
        self.mock.stop(10)
        check(eventually(lambda: not self.has_owner(NOTIFICATIONS)), "the old server stays")
        self.mock = self.server(argv)
        check(eventually(lambda: self.has_owner(NOTIFICATIONS)), "the new server did not appear")

    def dbusmock(self, capabilities=None):
        """dbusmock's notification daemon; `capabilities` "a b c" instead of its default ones
        (which include "body-markup")."""
        argv = ["/usr/bin/python3", "-m", "dbusmock", "--template", "notification_daemon"]
        if capabilities is not None:
            argv += ["-p", json.dumps({"capabilities": capabilities})]
        self.replace_server(argv)

    def has_owner(self, name):
        v = self.conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                "org.freedesktop.DBus", "NameHasOwner",
                                GLib.Variant("(s)", (name,)), None, 0, 5000, None)
        return v.unpack()[0]

    def notifications(self):
        """Every Notify call so far: (app_name, replaces_id, icon, summary, body, actions,
        hints, expire_timeout)."""
        v = self.conn.call_sync(NOTIFICATIONS, NOTIFICATIONS_PATH, "org.freedesktop.DBus.Mock",
                                "GetCalls", None, None, 0, 5000, None)
        return [tuple(args) for _, method, args in v.unpack()[0] if method == "Notify"]

    def close(self):
        self.mock.stop(10)
        self.bus.stop()


class Agent:
    def __init__(self, exe, rig, session, label="rdmad-notify"):
        self.log_path = rig.path(label + ".log")
        self.proc = Proc([exe], clean_env(DBUS_SYSTEM_BUS_ADDRESS=rig.address,
                                          DBUS_SESSION_BUS_ADDRESS=session.address),
                         self.log_path)
        self.p = self.proc.p

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        """SIGTERM (SIGKILL after 10 s); its exit status."""
        return self.proc.stop(10)


# A notification server that takes org.freedesktop.Notifications and never answers a call (a
# hung desktop shell): the calls are held, unanswered, until it exits.
HUNG_SERVER = r'''
from gi.repository import Gio, GLib
XML = """<node><interface name="org.freedesktop.Notifications">
<method name="GetCapabilities"><arg type="as" direction="out"/></method>
<method name="Notify"><arg type="s"/><arg type="u"/><arg type="s"/><arg type="s"/>
<arg type="s"/><arg type="as"/><arg type="a{sv}"/><arg type="i"/><arg type="u" direction="out"/>
</method></interface></node>"""
held = []
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
bus.register_object("/org/freedesktop/Notifications",
                    Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0],
                    lambda conn, sender, path, iface, method, params, call: held.append(call),
                    None, None)
Gio.bus_own_name_on_connection(bus, "org.freedesktop.Notifications", 0, None, None)
GLib.MainLoop().run()
'''


# A stand-in rdmad (on the rig's private system bus, without the real daemon): org.rdmad1 at
# /org/rdmad1 with the ObjectManager's GetManagedObjects (no objects at first), the Manager's
# Problems and InstallProvidersMode (dbus/org.rdmad1.Manager.xml) and InstallProviders, which
# records its caller and whether the call's header allows interactive authorization (D-Bus
# Specification, "Message Format": flag 0x4), then answers after 1 s. org.rdmad1.Test drives
# it: AddDevice(id, name) announces a device whose provider is missing (ProviderInstalled
# false, ProviderPackage "ibverbs-providers", its provider-missing problem as
# daemon/inventory/problems.cpp words it); SetMode(mode) changes InstallProvidersMode;
# FailWith(name, message) makes the next answers that D-Bus error; Calls() gives (sender,
# interactive) of every InstallProviders so far.
STANDIN_RDMAD = r'''
import sys
from gi.repository import Gio, GLib
XML = """<node>
<interface name="org.rdmad1.Manager">
<property name="Problems" type="a(sss)" access="read"/>
<property name="InstallProvidersMode" type="s" access="read"/>
<method name="InstallProviders"><arg type="as" direction="out"/></method></interface>
<interface name="org.freedesktop.DBus.ObjectManager">
<method name="GetManagedObjects"><arg type="a{oa{sa{sv}}}" direction="out"/></method></interface>
<interface name="org.rdmad1.Test">
<method name="AddDevice"><arg type="s" direction="in"/><arg type="s" direction="in"/></method>
<method name="SetMode"><arg type="s" direction="in"/></method>
<method name="FailWith"><arg type="s" direction="in"/><arg type="s" direction="in"/></method>
<method name="Calls"><arg type="a(sb)" direction="out"/></method></interface></node>"""
PACKAGE = "ibverbs-providers"
state = {"mode": "ask", "fail": None, "calls": []}
flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
bus = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
node = Gio.DBusNodeInfo.new_for_xml(XML)

def device(name):
    return {"org.rdmad1.Device": {
        "Name": GLib.Variant("s", name), "PCIAddress": GLib.Variant("s", "0000:09:00.0"),
        "ProviderInstalled": GLib.Variant("b", False),
        "ProviderPackage": GLib.Variant("s", PACKAGE),
        "Problems": GLib.Variant("a(sss)", [("provider-missing", "error",
            "verbs provider mlx5 is not installed: install " + PACKAGE)])}}

def answer(inv):
    if state["fail"]:
        inv.return_dbus_error(*state["fail"])
    else:
        inv.return_value(GLib.Variant("(as)", ([PACKAGE],)))
    return False

def call(conn, sender, path, iface, method, params, inv):
    if method == "InstallProviders":
        interactive = bool(inv.get_message().get_flags() &
                           Gio.DBusMessageFlags.ALLOW_INTERACTIVE_AUTHORIZATION)
        state["calls"].append((sender, interactive))
        GLib.timeout_add(1000, answer, inv)
    elif method == "GetManagedObjects":
        inv.return_value(GLib.Variant("(a{oa{sa{sv}}})", ({},)))
    elif method == "AddDevice":
        conn.emit_signal(None, "/org/rdmad1", "org.freedesktop.DBus.ObjectManager",
                         "InterfacesAdded", GLib.Variant("(oa{sa{sv}})", (
                             "/org/rdmad1/device/" + params[0], device(params[1]))))
        inv.return_value(None)
    elif method == "SetMode":
        state["mode"] = params[0]
        conn.emit_signal(None, "/org/rdmad1", "org.freedesktop.DBus.Properties",
                         "PropertiesChanged", GLib.Variant("(sa{sv}as)", (
                             "org.rdmad1.Manager",
                             {"InstallProvidersMode": GLib.Variant("s", params[0])}, [])))
        inv.return_value(None)
    elif method == "FailWith":
        state["fail"] = (params[0], params[1])
        inv.return_value(None)
    elif method == "Calls":
        inv.return_value(GLib.Variant("(a(sb))", (state["calls"],)))

def get(conn, sender, path, iface, prop):
    if prop == "InstallProvidersMode":
        return GLib.Variant("s", state["mode"])
    return GLib.Variant("a(sss)", [])

for iface in node.interfaces:
    bus.register_object("/org/rdmad1", iface, call, get, None)
Gio.bus_own_name_on_connection(bus, "org.rdmad1", 0, None, None)
GLib.MainLoop().run()
'''


def reload(rig):
    """Manager.Reload(). It answers with the first configuration error, if any; the Problems
    property is what counts."""
    try:
        rig.call("/org/rdmad1", "org.rdmad1.Manager", "Reload")
    except GLib.Error:
        pass


def config_error(rig, key):
    """rdmad's configuration gets the unknown key `key`; Reload makes it a config-error."""
    rig.write("config/rdmad.conf", '[daemon]\n"%s" = 1\n' % key)
    reload(rig)


def set_port_state(rig, state):
    """mlx5_0 port 1's state file, then a "change" uevent."""
    rig.testbed.set_attribute(MLX5_IB, "ports/1/state", state)
    sender = RawSender(rig.tbroot)
    sender.send(MLX5_IB, "change")
    sender.close()


def wait_new(session, before, what, timeout=15.0):
    """Waits for a first new Notify call, then SETTLE s more; returns the new calls and when
    the first came."""
    check(eventually(lambda: len(session.notifications()) > before, timeout),
          "no notification for %s within %.0f s" % (what, timeout))
    first = time.monotonic()
    time.sleep(SETTLE)
    return session.notifications()[before:], first


def run(args):
    rig = Rig(args.rdmad, args.host)
    session = Session(rig.work)
    agent = None
    figures = {}
    try:
        rig.start()
        agent = Agent(args.rdmad_notify, rig, session)
        check(eventually(lambda: session.has_owner("org.rdmad1.Notify")),
              "rdmad-notify did not take org.rdmad1.Notify:\n" + agent.log())

        # 1. Start-up is quiet: what rdmad exports at start (devices, ports, problems) is no
        # news.
        time.sleep(SETTLE)
        check(session.notifications() == [],
              "notifications at start-up: %s" % session.notifications())
        print("ok start-up: no notification in %.0f s" % SETTLE, flush=True)

        # 2. mlx5_0 port 1 goes DOWN (kernel: "1: DOWN", IB_PORT_DOWN).
        rig.testbed.set_attribute(MLX5_IB, "ports/1/state", "1: DOWN\n")
        sender = RawSender(rig.tbroot)
        t0 = time.monotonic()
        sender.send(MLX5_IB, "change")
        sender.close()
        new, first = wait_new(session, 0, "the port down")
        figures["port_down_latency_s"] = first - t0
        check(len(new) == 1, "port down: %d notifications: %s" % (len(new), new))
        app, replaces, icon, summary, body, actions, hints, expire = new[0]
        check(app == "RDMA" and replaces == 0, "port down: app %r, replaces_id %r"
              % (app, replaces))
        check(summary == "mlx5_0 port 1 is down", "port down: summary %r" % summary)
        check(body == "Port 1 of mlx5_0 (PCI 0000:04:00.0) is DOWN, was ACTIVE.",
              "port down: body %r" % body)
        check(hints.get("urgency") == 2 and hints.get("category") == "network.disconnected"
              and hints.get("desktop-entry") == "rdmad-notify", "port down: hints %r" % hints)
        print("ok port down: one notification, %r / %r" % (summary, body), flush=True)

        # 3. Back to ACTIVE: one notification that replaces the first (dbusmock's first id
        # is 1).
        rig.testbed.set_attribute(MLX5_IB, "ports/1/state", "4: ACTIVE\n")
        sender = RawSender(rig.tbroot)
        sender.send(MLX5_IB, "change")
        sender.close()
        new, _ = wait_new(session, 1, "the port up")
        check(len(new) == 1, "port up: %d notifications: %s" % (len(new), new))
        check(new[0][1] == 1, "port up: replaces_id %r, not the down one's id 1" % new[0][1])
        check(new[0][3] == "mlx5_0 port 1 is up" and
              new[0][4] == "Port 1 of mlx5_0 (PCI 0000:04:00.0) is ACTIVE, was DOWN.",
              "port up: %r / %r" % (new[0][3], new[0][4]))
        print("ok port up: replaces notification 1, %r" % new[0][3], flush=True)

        # 4. A burst: N RDMA devices plugged at once.
        n = args.devices
        events = []
        for j in range(n):
            text, pci, name = device_text(j)
            check(rig.testbed.add_from_string(text), "cannot add %s to the testbed" % name)
            events += [(pci, "add"), (pci + "/infiniband/" + name, "add")]
        before = len(session.notifications())
        cpu0 = cpu_ns(agent.p.pid)
        sender = RawSender(rig.tbroot)
        t0 = time.monotonic()
        for path, action in events:
            sender.send(path, action)
        sender.close()
        new, first = wait_new(session, before, "the burst", timeout=60)
        figures["burst_cpu_ms"] = (cpu_ns(agent.p.pid) - cpu0) / 1e6
        figures["burst_latency_s"] = first - t0
        check(len(new) == 1, "burst: %d notifications: %s" % (len(new), [x[3] for x in new]))
        summary, body = new[0][3], new[0][4]
        check(summary == "%d RDMA devices added" % n, "burst: summary %r" % summary)
        check(body.startswith("mlx5_1000, mlx5_1001, mlx5_1002, mlx5_1003, mlx5_1004 and "
                              "%d more." % (n - 5)), "burst: body %r" % body)
        check(agent.p.poll() is None, "rdmad-notify exited during the burst:\n" + agent.log())
        print("ok burst: %d devices, one notification %r" % (n, summary), flush=True)

        # 5. rdmad restarts on the same host: nothing differs, nothing is told.
        before = len(session.notifications())
        check(rig.stop() == 0, "rdmad did not exit 0 on SIGTERM")
        rig.start(label="rdmad-again")
        time.sleep(SETTLE)
        check(session.notifications()[before:] == [],
              "notifications after the restart: %s" % session.notifications()[before:])
        check(agent.p.poll() is None, "rdmad-notify exited on rdmad's restart:\n" + agent.log())
        print("ok restart: no notification", flush=True)

        # 6. A new error-level problem: a configuration error after Reload is rdmad's
        # ("config-error", severity "error", text "file:line:column: reason"; org.rdmad1(5)).
        before = len(session.notifications())
        conf = rig.path("config/rdmad.conf")
        rig.write("config/rdmad.conf", "[daemon]\nspeed = 1\n")
        reload(rig)
        new, _ = wait_new(session, before, "the configuration error")
        check(len(new) == 1, "config error: %d notifications: %s" % (len(new), new))
        check(new[0][3] == "RDMA error on rdmad: config-error", "config error: summary %r"
              % new[0][3])
        check(new[0][4].startswith(conf + ":2:1: unknown key"), "config error: body %r"
              % new[0][4])
        check(new[0][6].get("urgency") == 2 and new[0][6].get("category") == "device.error",
              "config error: hints %r" % new[0][6])
        print("ok config error: one notification, %r" % new[0][4], flush=True)

        # 7. A second agent in the session leaves at once, status 0.
        second = Agent(args.rdmad_notify, rig, session, label="second")
        try:
            second.p.wait(10)
        except subprocess.TimeoutExpired:
            pass
        rc = second.stop()
        check(rc == 0 and "another rdmad-notify runs" in second.log(),
              "second agent: status %s, %r" % (rc, second.log()))
        print("ok second agent: exits 0", flush=True)

        # 8. The notification server is replaced by one without "body-markup": the body goes
        # as it is, and nothing replaces the old server's ids (replaces_id 0).
        session.dbusmock("body")
        config_error(rig, "<b>plain</b>")
        new, _ = wait_new(session, 0, "the error on a plain-text server")
        check(len(new) == 1, "plain server: %d notifications: %s" % (len(new), new))
        check(new[0][1] == 0, "plain server: replaces_id %r of the old server" % new[0][1])
        check(new[0][3] == "RDMA error on rdmad: config-error", "plain server: summary %r"
              % new[0][3])
        check(new[0][4].startswith(conf + ':2:1: unknown key "<b>plain</b>"'),
              "plain server: body %r" % new[0][4])
        print("ok server replaced (no body-markup): body as is, %r" % new[0][4], flush=True)

        # 9. And again by one with "body-markup" (dbusmock's default capabilities): the agent
        # asks again and escapes &, < and >.
        session.dbusmock()
        config_error(rig, "<a href='x'>k</a> & more")
        new, _ = wait_new(session, 0, "the error on a markup server")
        check(len(new) == 1, "markup server: %d notifications: %s" % (len(new), new))
        check(new[0][1] == 0, "markup server: replaces_id %r" % new[0][1])
        check(new[0][3] == "RDMA error on rdmad: config-error", "markup server: summary %r"
              % new[0][3])
        check(new[0][4].startswith(
            conf + ':2:1: unknown key "&lt;a href=\'x\'&gt;k&lt;/a&gt; &amp; more"'),
            "markup server: body %r" % new[0][4])
        print("ok server replaced (body-markup): body escaped, %r" % new[0][4], flush=True)

        # 10. SIGTERM: exit status 0, nothing on stderr.
        rc = agent.stop()
        check(rc == 0, "rdmad-notify exit status %s on SIGTERM:\n%s" % (rc, agent.log()))
        check(agent.log() == "", "rdmad-notify wrote: %r" % agent.log())
        agent = None
        print("ok SIGTERM: exit status 0", flush=True)

        # 10b. An agent started while rdmad has a configuration error (the one of step 9) takes
        # it as known: its first snapshot holds the Manager's Problems (GetManagedObjects does
        # not give /org/rdmad1 itself). An error in rdmad's state file then adds a second
        # config-error to Problems (rdmad.conf(5): the two are read apart), and only that one
        # is news.
        agent = Agent(args.rdmad_notify, rig, session, label="rdmad-notify-late")
        check(eventually(lambda: session.has_owner("org.rdmad1.Notify")),
              "rdmad-notify did not take org.rdmad1.Notify:\n" + agent.log())
        time.sleep(2)  # its first snapshot
        before = len(session.notifications())
        state = rig.path("state/state.conf")
        rig.write("state/state.conf", '[daemon]\n"late" = 1\n')
        reload(rig)
        new, _ = wait_new(session, before, "a second configuration error after a late start")
        check(len(new) == 1 and new[0][4].startswith(state + ':2:1: unknown key "late"'),
              "late start: notifications %s" % [(n[3], n[4][:90]) for n in new])
        rc = agent.stop()
        check(rc == 0, "rdmad-notify exit status %s on SIGTERM:\n%s" % (rc, agent.log()))
        agent = None
        os.unlink(state)
        reload(rig)
        print("ok late start during a configuration error: only the second error is notified",
              flush=True)

        # 11. A hung notification server: a notification it does not take is reported and
        # dropped after the 2 s timeout; the agent still follows rdmad and obeys SIGTERM at
        # once while calls are held.
        session.replace_server(["/usr/bin/python3", "-c", HUNG_SERVER])
        agent = Agent(args.rdmad_notify, rig, session, label="rdmad-notify-hung")
        check(eventually(lambda: session.has_owner("org.rdmad1.Notify")),
              "rdmad-notify did not take org.rdmad1.Notify:\n" + agent.log())
        time.sleep(2)  # its first snapshot
        set_port_state(rig, "1: DOWN\n")
        check(eventually(lambda: 'cannot post "mlx5_0 port 1 is down"' in agent.log(), 10),
              "no report of the dropped notification: %r" % agent.log())
        set_port_state(rig, "4: ACTIVE\n")
        time.sleep(1.5)  # the window (1 s) closed: a call is held by the server now
        t0 = time.monotonic()
        agent.p.send_signal(signal.SIGTERM)
        try:
            agent.p.wait(10)
        except subprocess.TimeoutExpired:
            pass
        figures["hung_sigterm_s"] = time.monotonic() - t0
        rc = agent.stop()
        check(rc == 0 and figures["hung_sigterm_s"] < 1.0,
              "SIGTERM with a hung server: status %s after %.1f s" % (rc, figures["hung_sigterm_s"]))
        agent = None
        print("ok hung server: notification dropped and reported, SIGTERM exits in %.2f s"
              % figures["hung_sigterm_s"], flush=True)
        print("figures: port down notified after %.2f s (window 1 s); %d devices notified "
              "%.2f s after the first uevent; rdmad-notify CPU for the burst %.1f ms"
              % (figures["port_down_latency_s"], n, figures["burst_latency_s"],
                 figures["burst_cpu_ms"]), flush=True)
    finally:
        if agent:
            agent.stop()
        session.close()
        rig.close(keep=args.keep)


INSTALL_ACTIONS = ["install-providers", "Install ibverbs-providers"]


def run_actions(args):
    """The install action (issue #27): rdmad is the stand-in STANDIN_RDMAD on the rig's private
    system bus, dbusmock's notification daemon has the "actions" capability. A device added
    without its provider, install_providers "ask": its notification offers
    ("install-providers", "Install ibverbs-providers"). ActionInvoked from anyone but the
    server, for an id the agent did not get, or for another action calls nothing; the server's
    for that id, twice at once, makes exactly one InstallProviders call, interactive
    authorization allowed, whose outcome replaces the notification; a D-Bus error is told by
    name. "auto", or a server without "actions", gets no action."""
    rig = Rig(args.rdmad, args.host)  # its bus only: the real rdmad is not started here
    session = Session(rig.work)
    agent = standin = None

    def test(method, sig=None, *values):
        return rig.conn.call_sync("org.rdmad1", "/org/rdmad1", "org.rdmad1.Test", method,
                                  GLib.Variant(sig, values) if sig else None, None, 0, 5000,
                                  None).unpack()

    def calls():
        return test("Calls")[0]

    def server_emits(nid, action):
        """ActionInvoked(nid, action) from the notification server itself (dbusmock's
        EmitSignal)."""
        session.conn.call_sync(NOTIFICATIONS, NOTIFICATIONS_PATH, "org.freedesktop.DBus.Mock",
                               "EmitSignal", GLib.Variant("(sssav)", (
                                   NOTIFICATIONS, "ActionInvoked", "us",
                                   [GLib.Variant("u", nid), GLib.Variant("s", action)])),
                               None, 0, 5000, None)

    try:
        standin = Proc(["/usr/bin/python3", "-c", STANDIN_RDMAD, rig.address], clean_env(),
                       rig.path("standin-rdmad.log"))
        check(eventually(lambda: rig.conn.call_sync(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
            "NameHasOwner", GLib.Variant("(s)", ("org.rdmad1",)), None, 0, 5000,
            None).unpack()[0]), "the stand-in rdmad did not appear")
        session.dbusmock("body actions")
        agent = Agent(args.rdmad_notify, rig, session, label="rdmad-notify-actions")
        check(eventually(lambda: session.has_owner("org.rdmad1.Notify")),
              "rdmad-notify did not take org.rdmad1.Notify:\n" + agent.log())
        time.sleep(2)  # its first snapshot

        # A device without its provider: one notification offering the install (dbusmock's
        # first id is 1).
        test("AddDevice", "(ss)", "d1", "mlx5_9")
        new, _ = wait_new(session, 0, "a device without its provider")
        check(len(new) == 1, "provider missing: %d notifications: %s" % (len(new), new))
        check(new[0][3] == "RDMA device mlx5_9 added" and new[0][5] == INSTALL_ACTIONS,
              "provider missing: %r, actions %r" % (new[0][3], new[0][5]))
        print("ok provider missing: %r offers %r" % (new[0][3], new[0][5]), flush=True)

        # Spoofs: another connection's ActionInvoked for id 1, broadcast and sent to the agent
        # alone; the server's for an id the agent did not get, and for another action.
        agent_name = session.conn.call_sync(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
            "GetNameOwner", GLib.Variant("(s)", ("org.rdmad1.Notify",)), None, 0, 5000,
            None).unpack()[0]
        for dest in (None, agent_name):
            session.conn.emit_signal(dest, NOTIFICATIONS_PATH, NOTIFICATIONS, "ActionInvoked",
                                     GLib.Variant("(us)", (1, "install-providers")))
        session.conn.flush_sync(None)
        server_emits(7, "install-providers")
        server_emits(1, "default")
        time.sleep(2)
        check(calls() == [], "InstallProviders called on a spoofed or unknown action: %s"
              % calls())
        print("ok spoofed ActionInvoked, unknown id, other action: no call", flush=True)

        # The server's ActionInvoked for id 1, twice while the call is out (the stand-in
        # answers after 1 s): one call; its outcome replaces notification 1.
        server_emits(1, "install-providers")
        server_emits(1, "install-providers")
        new, _ = wait_new(session, 1, "the install's outcome")
        check(len(calls()) == 1 and calls()[0][1],
              "InstallProviders calls (sender, interactive): %s" % calls())
        check(len(new) == 1, "outcome: %d notifications: %s" % (len(new), new))
        want = ("Installing ibverbs-providers",
                "PackageKit is installing ibverbs-providers. The devices' problems show how it "
                "ends (rdmactl doctor).")
        check(new[0][1] == 1 and (new[0][3], new[0][4]) == want and new[0][5] == [],
              "outcome: replaces_id %r, %r / %r, actions %r"
              % (new[0][1], new[0][3], new[0][4], new[0][5]))
        # Notification 1 offers nothing any more: a click on it calls nothing.
        server_emits(1, "install-providers")
        time.sleep(2)
        check(len(calls()) == 1, "a click on the outcome called again: %s" % calls())
        print("ok action: one InstallProviders call (interactive), %r replaces notification 1"
              % new[0][3], flush=True)

        # A refused call: the D-Bus error by name replaces the notification clicked.
        test("FailWith", "(ss)", "org.freedesktop.DBus.Error.AccessDenied",
             "not authorized for org.rdmad1.install-providers")
        test("AddDevice", "(ss)", "d2", "mlx5_10")
        new, _ = wait_new(session, 2, "a second device without its provider")
        check(len(new) == 1 and new[0][5] == INSTALL_ACTIONS,
              "second device: %s" % [(n[3], n[5]) for n in new])
        server_emits(2, "install-providers")
        new, _ = wait_new(session, 3, "the refused install's outcome")
        want = ("Cannot install verbs providers",
                "InstallProviders failed: org.freedesktop.DBus.Error.AccessDenied: not "
                "authorized for org.rdmad1.install-providers")
        check(len(new) == 1 and new[0][1] == 2 and (new[0][3], new[0][4]) == want,
              "refused: %s" % [(n[1], n[3], n[4]) for n in new])
        check(len(calls()) == 2, "InstallProviders calls: %s" % calls())
        print("ok refused: %r" % new[0][4], flush=True)

        # "auto": rdmad installs by itself, nothing to offer.
        test("SetMode", "(s)", "auto")
        test("AddDevice", "(ss)", "d3", "mlx5_11")
        new, _ = wait_new(session, 4, "a device without its provider, auto")
        check(len(new) == 1 and new[0][3] == "RDMA device mlx5_11 added" and new[0][5] == [],
              "auto: %s" % [(n[3], n[5]) for n in new])
        print("ok auto: no action", flush=True)

        # "ask" again, on a server without the "actions" capability: no action.
        test("SetMode", "(s)", "ask")
        session.dbusmock("body")
        test("AddDevice", "(ss)", "d4", "mlx5_12")
        new, _ = wait_new(session, 0, "a device without its provider, no actions capability")
        check(len(new) == 1 and new[0][3] == "RDMA device mlx5_12 added" and new[0][5] == [],
              "no actions capability: %s" % [(n[3], n[5]) for n in new])
        print("ok server without \"actions\": no action", flush=True)
        rc = agent.stop()
        agent = None
        check(rc == 0, "rdmad-notify exit status %s" % rc)
    finally:
        if agent:
            agent.stop()
        if standin:
            standin.stop(10)
        session.close()
        rig.close(keep=args.keep)


# constructed-mlx5-roce: mlx5_0 (PCI 0000:3b:00.0) port 1 is RoCE on ens1f0np0.
LOSSLESS_NETDEVS = "ens1f0np0,ens1f1np1"
LOSSLESS_RULE = ('[[rule]]\ndevice = "mlx5_0"\ntrust = "dscp"\n'
                 'dscp_priority = { 26 = 3, 48 = 6 }\nrdma_cm_roce_mode = "RoCE v2"\n'
                 'rdma_cm_tos = 106\n')
NO_APPLY = "[daemon]\napply = false\n\n"


def run_lossless(args):
    """The lossless-RoCE settings (issue #25) drifting on constructed-mlx5-roce, DCB emulated
    by tests/integration/fake_dcbnl.c (pfc_en 0, an empty APP table: trust pcp), mlx5_0's
    configfs group as the kernel shows it once made (cma_configfs.c: "IB/RoCE v1", ToS 0).
    With apply = false, a rule (line 4) asking trust dscp, DSCP 26->3 and 48->6, RDMA-CM
    "RoCE v2" and ToS 106 makes the port out of sync: one notification naming each setting,
    its value, the one asked and the rule's line. Applied, the port is in sync again (it
    replaces the first). Then, with apply = false again, another tool deletes 48:6: one
    notification naming the DSCP map."""
    rig = Rig(args.rdmad, args.host_lossless, config=NO_APPLY)
    session = Session(rig.work)
    agent = None
    try:
        group = rig.rdma_cm_group("mlx5_0", 1, "IB/RoCE v1", 0)
        rig.start(preload=[args.fake_dcbnl], env={"FAKE_DCBNL_NETDEVS": LOSSLESS_NETDEVS})
        agent = Agent(args.rdmad_notify, rig, session, label="rdmad-notify-lossless")
        check(eventually(lambda: session.has_owner("org.rdmad1.Notify")),
              "rdmad-notify did not take org.rdmad1.Notify:\n" + agent.log())
        time.sleep(2)  # its first snapshot
        conf = rig.path("config/rdmad.conf")

        rig.write("config/rdmad.conf", NO_APPLY + LOSSLESS_RULE)
        reload(rig)
        new, _ = wait_new(session, 0, "the lossless settings out of sync")
        check(len(new) == 1, "out of sync: %d notifications: %s" % (len(new), new))
        want = ("mlx5_0 port 1 is out of sync: trust, DSCP map, RDMA-CM RoCE mode, RDMA-CM ToS",
                "Port 1 of mlx5_0 (PCI 0000:3b:00.0) is not as desired:\n"
                "Trust: pcp, desired dscp (%s:4).\n"
                "DSCP map: none, desired 26:3,48:6 (%s:4).\n"
                "RDMA-CM RoCE mode: IB/RoCE v1, desired RoCE v2 (%s:4).\n"
                "RDMA-CM ToS: 0, desired 106 (%s:4)." % (conf, conf, conf, conf))
        check((new[0][3], new[0][4]) == want, "out of sync: %r / %r" % (new[0][3], new[0][4]))
        check(new[0][1] == 0 and new[0][6].get("urgency") == 1 and
              new[0][6].get("category") == "device", "out of sync: replaces_id %r, hints %r"
              % (new[0][1], new[0][6]))
        print("ok lossless out of sync: %r" % new[0][3], flush=True)

        rig.write("config/rdmad.conf", LOSSLESS_RULE)
        reload(rig)
        new, _ = wait_new(session, 1, "the lossless settings applied")
        check(len(new) == 1, "in sync: %d notifications: %s" % (len(new), new))
        check(new[0][1] == 1 and new[0][3] == "mlx5_0 port 1 is in sync again" and
              new[0][4] == "Port 1 of mlx5_0 (PCI 0000:3b:00.0) is as desired again.",
              "in sync: replaces_id %r, %r / %r" % (new[0][1], new[0][3], new[0][4]))
        check(open(group + "/default_roce_tos").read() == "106\n", "default_roce_tos not written")
        print("ok lossless applied: %r replaces notification 1" % new[0][3], flush=True)

        # apply = false again (nothing differs: no notification), then `dcb app del dev
        # ens1f0np0 dscp-prio 48:6` by another tool: the kernel's notification carries the
        # APP table left.
        rig.write("config/rdmad.conf", NO_APPLY + LOSSLESS_RULE)
        reload(rig)
        time.sleep(SETTLE)
        check(len(session.notifications()) == 2,
              "after Reload: %s" % session.notifications()[2:])
        tx = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE
        try:
            tx.bind((0, 0))
            tx.sendto(dcb_notification("ens1f0np0", 0x00, [(26, 3)]), (0, 1 << (RTNLGRP_DCB - 1)))
        finally:
            tx.close()
        new, _ = wait_new(session, 2, "another tool's DSCP change")
        check(len(new) == 1, "DSCP drift: %d notifications: %s" % (len(new), new))
        want = ("mlx5_0 port 1 is out of sync: DSCP map",
                "Port 1 of mlx5_0 (PCI 0000:3b:00.0) is not as desired:\n"
                "DSCP map: 26:3, desired 26:3,48:6 (%s:4)." % conf)
        check((new[0][3], new[0][4]) == want, "DSCP drift: %r / %r" % (new[0][3], new[0][4]))
        print("ok lossless drift by another tool: %r" % new[0][4].split("\n")[1], flush=True)
        rc = agent.stop()
        agent = None
        check(rc == 0, "rdmad-notify exit status %s" % rc)
    finally:
        if agent:
            agent.stop()
        session.close()
        rig.close(keep=args.keep)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rdmad", required=True)
    ap.add_argument("--rdmad-notify", required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--devices", type=int, default=100)
    ap.add_argument("--host-lossless", help="a RoCE host for the lossless-RoCE settings "
                    "(constructed-mlx5-roce), with --fake-dcbnl")
    ap.add_argument("--fake-dcbnl", help="tests/integration/fake_dcbnl.c built")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    if os.getuid() != 0:
        raise SystemExit("test-notify: run as root (umockdev and rdmad as in tests/integration)")
    try:
        run(args)
        run_actions(args)
        if args.host_lossless:
            run_lossless(args)
    except Failed as e:
        print("FAIL: %s" % e, flush=True)
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
