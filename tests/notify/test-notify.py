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
        if args.host_lossless:
            run_lossless(args)
    except Failed as e:
        print("FAIL: %s" % e, flush=True)
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
