#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The Cockpit page (cockpit/) in headless Chromium against the real rdmad (issue #10 §1).

rdmad runs under umockdev on a recorded host on a private system-like bus
(tests/dbus-fuzz/rdmad_rig.py); cockpit-ws serves the page with
`--local-session=cockpit-bridge` on a loopback address (no login, no PAM), the bridge on the
private bus and the page found through XDG_DATA_HOME/cockpit/rdmad; selenium drives Debian's
chromium through chromedriver. Checks: the overview shows the host's ports with the values of
its fixture file; a uevent that takes a port down changes the page without a reload; a port
type set through the page lands in the testbed's mlx4_port<n> file (and an invalid one shows
its D-Bus error); Reconcile previews and applies a difference; polkit denying shows
AccessDenied; a restart of rdmad is followed; without administrative access the controls are
disabled with the reason; a PF's SR-IOV VF count shows with its total and the count a rule
asks; the netdevs view shows another host's netdevs and hints; the
lossless-RoCE settings of a RoCE host (DCB emulated by tests/integration/fake_dcbnl.c) show
drifting with apply = false, then as profile lossless-roce asks once applied, each with the
rule or profile it came from, and the page's trust, DSCP and RDMA-CM controls set them; the manifest names the menu entry and its condition; the dark theme
applies. First of all, a page opened while rdmad is not running shows its ports once it
starts. The bridge gets a private session bus that the test starts and stops,
and what the bridge starts below it (ssh-agent) is ended with it: nothing outlives a run.

  test-cockpit.py --rdmad PATH --host FILE.umockdev [--host-netdevs FILE.umockdev]
                  [--host-lossless FILE.umockdev --fake-dcbnl fake-dcbnl.so]
                  --page-dir cockpit/ --dbus-dir dbus/
                  [--screenshot FILE.png]   redo the README's screenshot of the overview
                  [--bench N [--tree DIR]]  measure with N generated devices instead (slow),
                                            their tree made once in DIR and kept

Needs root (rdmad's polkit fallback lets root change things), cockpit-ws, cockpit-bridge,
chromium, chromium-driver, python3-selenium, python3-dbusmock, gir1.2-umockdev-1.0."""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dbus-fuzz"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from hotplug import RawSender  # noqa: E402  (uevents from a process without the preload)
from rdmad_rig import (Failed, Proc, Rig, SessionBus, WorkDir, check, clean_env,  # noqa: E402
                       connect, disown, own, signalled, wait_name)
from rdmad_rig import eventually as rig_eventually  # noqa: E402
from gi.repository import Gio, GLib  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

COCKPIT_WS = "/usr/lib/cockpit/cockpit-ws"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PAGE_FILES = ("index.html", "rdmad.js", "rdmad.css")

# procfs-hfi1-mlx4-mlx5: the device directories (tests/fixtures/hosts/*.umockdev P: lines).
MLX4_PCI = "/sys/devices/pci0000:02/0000:02:00.0/0000:03:00.0"
MLX5_PCI = "/sys/devices/pci0000:03/0000:03:00.0/0000:04:00.0"
MLX5_IB = MLX5_PCI + "/infiniband/mlx5_0"


def eventually(pred, timeout=15.0, step=0.05):
    """rdmad_rig.eventually, a page error counting as false (a stale element while the page
    re-renders, a script that ran before the page defined what it uses)."""
    return rig_eventually(pred, timeout, step, ignore=(WebDriverException,))


def log(msg):
    print(msg, flush=True)


# ---- the fixture's own values ---------------------------------------------------------------

def unescape(v):
    """A umockdev A: value: C escapes (\\n, \\\\, \\xNN) to text."""
    return v.encode("latin-1", "backslashreplace").decode("unicode_escape")


def fixture_ports(host):
    """{(device, port): {"State", "Rate", "LinkLayer"}} as the kernel's files in the .umockdev
    file say: state "4: ACTIVE" shows as ACTIVE (kernel drivers/infiniband/core/sysfs.c prints
    "<n>: <name>"), rate and link_layer without their line ends."""
    out = {}
    dev = None
    with open(host) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("P: "):
                parts = line[3:].split("/")
                dev = parts[-1] if len(parts) >= 2 and parts[-2] == "infiniband" else None
            elif dev and line.startswith("A: ports/"):
                key, _, value = line[3:].partition("=")
                _, num, attr = key.split("/", 2)
                value = unescape(value).strip()
                want = {"state": "State", "rate": "Rate", "link_layer": "LinkLayer"}.get(attr)
                if want:
                    if want == "State":
                        value = value.split(": ", 1)[1]
                    out.setdefault((dev, int(num)), {})[want] = value
    return out


# ---- cockpit-ws and the browser ---------------------------------------------------------------

def free_port(addr):
    s = socket.socket()
    s.bind((addr, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def page_tree(work, page_dir, interfaces_dir):
    """XDG_DATA_HOME with cockpit/rdmad: the page's files linked, manifest.json made from
    manifest.json.in as meson makes it, its condition pointing at `interfaces_dir`."""
    data = os.path.join(work, "xdg-" + os.path.basename(interfaces_dir.rstrip("/")))
    d = os.path.join(data, "cockpit", "rdmad")
    os.makedirs(d)
    for f in PAGE_FILES:
        os.symlink(os.path.abspath(os.path.join(page_dir, f)), os.path.join(d, f))
    with open(os.path.join(page_dir, "manifest.json.in")) as f:
        # A JSON string: a path with a quote or a backslash stays one.
        text = f.read().replace("@DBUS_INTERFACES_DIR@", json.dumps(interfaces_dir)[1:-1])
    with open(os.path.join(d, "manifest.json"), "w") as f:
        f.write(text)
    return data


def children(pid):
    """The pids whose parent is `pid` (/proc/<pid>/task/*/children, proc(5))."""
    out = []
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def descendants(pid):
    """(pid, argv[0]) of every process below `pid`."""
    out, todo = [], [pid]
    while todo:
        for c in children(todo.pop()):
            try:
                with open("/proc/%d/cmdline" % c, "rb") as f:
                    out.append((c, f.read().split(b"\0")[0].decode(errors="replace")))
            except OSError:
                continue
            todo.append(c)
    return out


class Cockpit:
    """cockpit-ws with a local session on 127.0.0.<x>, the bridge on the private bus. The
    bridge gets a private session bus that this object starts and stops: without
    DBUS_SESSION_BUS_ADDRESS it starts a `dbus-daemon --session` of its own, which forks away
    and outlives it. Owned (rdmad_rig.own()): stopped at exit if stop() did not come."""

    def __init__(self, work, bus_address, xdg_data_home, label="cockpit-ws"):
        self.addr = "127.0.0.%d" % (2 + os.getpid() % 200)
        self.port = free_port(self.addr)
        self.proc = None
        own(self)
        self.session_bus = SessionBus(os.path.join(work, label + "-session.socket"))
        env = clean_env(DBUS_SYSTEM_BUS_ADDRESS=bus_address, XDG_DATA_HOME=xdg_data_home,
                        XDG_CONFIG_DIRS=os.path.join(work, "no-config"),
                        DBUS_SESSION_BUS_ADDRESS=self.session_bus.address)
        self.proc = Proc([COCKPIT_WS, "-p", str(self.port), "-a", self.addr,
                          "--local-session=cockpit-bridge"], env, os.path.join(work, label + ".log"))
        self.base = "http://%s:%d" % (self.addr, self.port)
        ok = rig_eventually(lambda: urllib.request.urlopen(
            self.base + "/cockpit/@localhost/manifests.json", timeout=2).status == 200, 20,
            ignore=(OSError,))
        if not ok:
            self.stop()
            raise Failed("cockpit-ws did not answer on %s:\n%s" % (self.base, open(self.proc.logpath).read()))

    def manifests(self):
        with urllib.request.urlopen(self.base + "/cockpit/@localhost/manifests.json", timeout=5) as r:
            return json.loads(r.read())

    def url(self, hash_=""):
        return self.base + "/cockpit/@localhost/rdmad/index.html" + hash_

    def stray_buses(self):
        """dbus-daemons that cockpit-ws's processes started (none: they have ours)."""
        return [(pid, exe) for pid, exe in descendants(self.proc.p.pid) if "dbus-daemon" in exe]

    def stop(self):
        # The bridge also starts an `ssh-agent -D` that outlives it: what ran below cockpit-ws
        # and is still there once it exited is ended too.
        disown(self)
        if self.proc:
            below = descendants(self.proc.p.pid) if self.proc.p.poll() is None else []
            self.proc.stop()
            for pid, exe in below:
                try:
                    with open("/proc/%d/cmdline" % pid, "rb") as f:
                        if f.read().split(b"\0")[0].decode(errors="replace") == exe:
                            os.kill(pid, signal.SIGTERM)
                except OSError:
                    pass
            self.proc = None
        self.session_bus.stop()

    cleanup = stop


def browser(work, width=1280, height=760):
    """Headless Chromium through chromedriver. Their temporary files (TMPDIR: Chromium's
    org.chromium.Chromium.* directories, its singleton socket's) and the profile go to `work`,
    which the rig removes: nothing of theirs stays in /tmp. `work` itself, not a directory in
    it: the socket's path (TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket) stays within
    sun_path's 108 bytes for any TMPDIR that tools/short-tmpdir.sh allows."""
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=%d,%d" % (width, height), "--force-device-scale-factor=1",
              "--user-data-dir=" + os.path.join(work, "chromium-profile")):
        opts.add_argument(a)
    service = Service(CHROMEDRIVER, env=clean_env(TMPDIR=work),
                      log_path=os.path.join(work, "chromedriver.log"))
    return webdriver.Chrome(service=service, options=opts)


class Page:
    def __init__(self, driver):
        self.d = driver

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def wait_loaded(self, generation="0", timeout=30):
        check(eventually(lambda: self.js("return document.body.dataset.loaded") == generation, timeout),
              "the page did not render (generation %s); banners: %s" % (generation, self.banners()))

    def banners(self):
        return self.js("return [...document.querySelectorAll('#banners .rd-alert')].map(b => b.textContent)")

    def row(self, device, port):
        """The overview's cells of one port: {field: text}."""
        return self.js("""
            for (const tr of document.querySelectorAll('#ports-body tr')) {
                const c = {};
                for (const td of tr.children) c[td.dataset.field] = td.textContent;
                if (c.Device.startsWith(arguments[0]) && c.Port === String(arguments[1])) {
                    c.Device = tr.querySelector('.rd-devlink').textContent;
                    return c;
                }
            }
            return null;""", device, port)

    def rows(self):
        return self.js("return document.querySelectorAll('#ports-body tr').length")

    def go(self, hash_):
        self.js("cockpit.location.go(arguments[0])", [p for p in hash_.split("/") if p])

    def port_card(self, n):
        return self.d.find_element(By.CSS_SELECTOR, '.rd-port-card[data-port="%d"]' % n)

    def text(self, css):
        return self.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : null", css)


# ---- the checks -----------------------------------------------------------------------------

def check_overview(page, host):
    want = fixture_ports(host)
    check(want, "no port in " + host)
    check(eventually(lambda: page.rows() == len(want)),
          "the overview has %s rows, the fixture %d ports" % (page.rows(), len(want)))
    for (dev, n), values in sorted(want.items()):
        row = page.row(dev, n)
        check(row is not None, "no row for %s port %d" % (dev, n))
        check(row["Device"] == dev, "row device %r" % row["Device"])
        for k, v in values.items():
            check(row[k] == v, "%s port %d %s: page %r, fixture %r" % (dev, n, k, row[k], v))
    log("ok: the overview shows the fixture's %d ports (state, rate, link layer)" % len(want))


def check_port_down(rig, page):
    page.js("window.__noReload = 42")
    check(page.row("mlx5_0", 1)["State"] == "ACTIVE", "mlx5_0 port 1 starts ACTIVE")
    # kernel drivers/infiniband/core/sysfs.c: "1: DOWN" (IB_PORT_DOWN), phys_state 3: Disabled.
    rig.testbed.set_attribute(MLX5_IB, "ports/1/state", "1: DOWN\n")
    rig.testbed.set_attribute(MLX5_IB, "ports/1/phys_state", "3: Disabled\n")
    sender = RawSender(rig.tbroot)
    sender.send(MLX5_IB, "change")
    sender.close()
    check(eventually(lambda: page.row("mlx5_0", 1)["State"] == "DOWN"),
          "the page did not show mlx5_0 port 1 DOWN: %s" % page.row("mlx5_0", 1))
    check(page.row("mlx5_0", 1)["PhysicalState"] == "Disabled", "phys state not Disabled")
    check(page.js("return window.__noReload") == 42, "the page was reloaded")
    log("ok: a uevent taking mlx5_0 port 1 down shows without a reload")


def set_type(page, port, value, persist):
    """Port type `value` through port `port`'s card; the result line the page shows."""
    card = page.port_card(port)
    Select(card.find_element(By.CSS_SELECTOR, "select[data-field=port-type]")).select_by_value(value)
    keep = card.find_element(By.CSS_SELECTOR, "fieldset input[data-field=persist]")
    if keep.is_selected() != persist:
        keep.click()
    btn = card.find_element(By.CSS_SELECTOR, "button[data-action=set-port-type]")
    check(btn.is_enabled(), "Set port type is disabled: %s" % btn.get_attribute("title"))
    result = '.rd-port-card[data-port="%d"] fieldset .rd-result' % port
    page.js("document.querySelector(arguments[0]).textContent = ''", result)
    btn.click()
    # The card is rebuilt when the port's properties change (the controls are kept): look the
    # result up again each time.
    res = eventually(lambda: (lambda t: t if t and t != "Asking rdmad…" else None)(page.text(result)))
    return res or ""


def check_port_type(rig, page):
    page.go("device/mlx4_0")
    check(eventually(lambda: page.text("#device-props [data-field=HCAType]") == "MT4099"),
          "the details of mlx4_0 did not show")
    check(page.text("#device-props [data-field=PCIAddress]") == "0000:03:00.0", "PCI address")
    # The problems as rdmad publishes them (ProblemDetails: code, severity, text, evidence,
    # remedy, port), each with its evidence and remedy.
    dev = rig.call("/org/rdmad1", "org.rdmad1.Manager", "GetDeviceByName",
                   GLib.Variant("(s)", ("mlx4_0",))).unpack()[0]
    details = rig.call(dev, "org.freedesktop.DBus.Properties", "Get",
                       GLib.Variant("(ss)", ("org.rdmad1.Device", "ProblemDetails"))).unpack()[0]
    shown = page.js("""return [...document.querySelectorAll('.rd-problem-detail')].map(e => [
        e.dataset.code, e.dataset.severity, e.querySelector('p').textContent,
        [...e.querySelectorAll('.rd-evidence li')].map(li => li.textContent),
        (e.querySelector('[data-field=remedy]') || {textContent: ''}).textContent])""")
    want = [[c, sev, t, list(ev), rem] for c, sev, t, ev, rem, _port in details]
    check(want and shown == want, "problems shown %r, published %r" % (shown, want))
    f2 = rig.tbroot + MLX4_PCI + "/mlx4_port2"
    f1 = rig.tbroot + MLX4_PCI + "/mlx4_port1"
    # mlx4: port 1 Ethernet with port 2 InfiniBand is refused (kernel mlx4 main.c; XML).
    res = set_type(page, 1, "eth", False)
    check(res.startswith("org.rdmad1.Error.InvalidArgument: "), "port 1 eth: %r" % res)
    check(open(f1).read() == "ib\n", "mlx4_port1 changed: %r" % open(f1).read())
    log("ok: mlx4_0's details show its %d problems with evidence and remedies" % len(want))
    log("ok: an invalid port type shows %s" % res)
    res = set_type(page, 2, "eth", True)
    check(res.startswith("Asked port type eth"), "port 2 eth: %r" % res)
    check(eventually(lambda: open(f2).read() == "eth\n"), "mlx4_port2 holds %r" % open(f2).read())
    state = open(rig.path("state/state.conf")).read()
    check("eth" in state, "keep after restart did not reach the state file: %r" % state)
    check(eventually(lambda: page.text('.rd-port-card[data-port="2"] [data-field=PortType]') == "eth"),
          "the page did not show port 2's new type")
    log("ok: port type eth set through the page landed in mlx4_port2 and the state file")


def click_result(page, button_id, result_css, prefix):
    page.js("document.querySelector(arguments[0]).textContent = ''", result_css)
    page.d.find_element(By.ID, button_id).click()
    return eventually(lambda: (page.text(result_css) or "").startswith(prefix))


def check_reconcile(rig, page):
    """Reload with `apply = false`, the hardware drifting from the desired eth (kept in the
    state file), Reconcile's preview naming it, then Reload with apply on again fixing it."""
    f2 = rig.tbroot + MLX4_PCI + "/mlx4_port2"
    page.go("daemon")
    rig.write("config/rdmad.conf", "[daemon]\napply = false\n")
    check(click_result(page, "reload", "#reconcile-result", "Reloaded the configuration"),
          "Reload: %r" % page.text("#reconcile-result"))
    rig.testbed.set_attribute(MLX4_PCI, "mlx4_port2", "ib\n")
    sender = RawSender(rig.tbroot)
    sender.send(MLX4_PCI + "/infiniband/mlx4_0", "change")
    sender.close()
    check(eventually(lambda: page.row("mlx4_0", 2)["InSync"] == "no (wants type eth)"),
          "the drift did not show: %s" % page.row("mlx4_0", 2))
    page.d.find_element(By.ID, "reconcile-preview").click()
    check(eventually(lambda: page.js("return !document.getElementById('modal').hidden")),
          "no preview: %s" % page.text("#reconcile-result"))
    rows = page.js("return [...document.querySelectorAll('#modal #changes-table tbody tr')]"
                   ".map(r => [...r.children].map(td => td.textContent))")
    check(rows == [["mlx4_0 port 2", "PortType", "ib", "eth"]], "preview rows %r" % rows)
    check(open(f2).read() == "ib\n", "the dry run wrote mlx4_port2")
    page.d.find_element(By.ID, "reconcile-apply").click()
    check(eventually(lambda: "1 differences found" in (page.text("#reconcile-result") or "")),
          "no result: %r" % page.text("#reconcile-result"))
    check(open(f2).read() == "ib\n", "apply = false, yet mlx4_port2 was written")
    log("ok: Reconcile previewed mlx4_0 port 2 PortType ib -> eth; with apply = false nothing written")
    rig.write("config/rdmad.conf", "")
    check(click_result(page, "reload", "#reconcile-result", "Reloaded the configuration"),
          "Reload: %r" % page.text("#reconcile-result"))
    check(eventually(lambda: open(f2).read() == "eth\n"), "Reload did not reconcile mlx4_port2")
    check(eventually(lambda: page.row("mlx4_0", 2)["InSync"] == "yes"), "not in sync again")
    log("ok: Reload with apply on wrote eth to mlx4_port2; the page shows it in sync")


def check_sriov(rig, page):
    """The SR-IOV VF count of a PF (Device.SRIOVNumVFs, SRIOVTotalVFs, DesiredSRIOVNumVFs): the
    testbed makes mlx5_0's function a PF with sriov_totalvfs 16 and sriov_numvfs 0, a rule asks
    17 (more than the total: rdmad writes nothing), and the page shows the count, the total
    and the count asked on the device page and in the overview's In sync column."""
    rig.testbed.set_attribute(MLX5_PCI, "sriov_totalvfs", "16\n")
    rig.testbed.set_attribute(MLX5_PCI, "sriov_numvfs", "0\n")
    rig.write("config/rdmad.conf", '[[rule]]\npci_address = "0000:04:00.0"\nsriov_numvfs = 17\n')
    page.go("daemon")
    check(click_result(page, "reload", "#reconcile-result", "Reloaded the configuration"),
          "Reload: %r" % page.text("#reconcile-result"))
    # A PF's VF count changes with a "change" uevent of the PCI function (drivers/pci/iov.c
    # sriov_enable(): kobject_uevent(KOBJ_CHANGE) on the PF), not of its RDMA device.
    sender = RawSender(rig.tbroot)
    sender.send(MLX5_PCI, "change")
    sender.close()
    check(eventually(lambda: page.row("mlx5_0", 1)["InSync"] == "no (wants SR-IOV VFs 17)"),
          "the VF count asked did not show: %s" % page.row("mlx5_0", 1))
    page.go("device/mlx5_0")
    check(eventually(lambda: page.text("#device-props [data-field=SRIOVNumVFs]") ==
                     "0 of 16 (desired 17)"),
          "SR-IOV VFs: %r" % page.text("#device-props [data-field=SRIOVNumVFs]"))
    check(open(rig.tbroot + MLX5_PCI + "/sriov_numvfs").read() == "0\n", "sriov_numvfs written")
    log("ok: mlx5_0 shows SR-IOV VFs 0 of 16 (desired 17), and wants SR-IOV VFs 17")
    rig.write("config/rdmad.conf", "")
    page.go("daemon")
    check(click_result(page, "reload", "#reconcile-result", "Reloaded the configuration"),
          "Reload: %r" % page.text("#reconcile-result"))
    page.go("device/mlx5_0")
    check(eventually(lambda: page.text("#device-props [data-field=SRIOVNumVFs]") == "0 of 16"),
          "SR-IOV VFs after the rule went: %r" % page.text("#device-props [data-field=SRIOVNumVFs]"))


def check_denied(rig, page, work):
    polkitd = Proc(["/usr/bin/python3", "-m", "dbusmock", "--template", "polkitd"],
                   clean_env(DBUS_SYSTEM_BUS_ADDRESS=rig.address), os.path.join(work, "polkitd.log"))
    try:
        wait_name(rig.conn, "org.freedesktop.PolicyKit1")
        rig.conn.call_sync("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                           "org.freedesktop.DBus.Mock", "SetAllowed", GLib.Variant("(as)", ([],)),
                           None, 0, 5000, None)
        page.go("device/mlx4_0")
        check(eventually(lambda: page.text("#device-props [data-field=Name]") == "mlx4_0"), "details")
        f2 = rig.tbroot + MLX4_PCI + "/mlx4_port2"
        res = set_type(page, 2, "ib", False)
        check(res.startswith("org.freedesktop.DBus.Error.AccessDenied: "), "denied call showed %r" % res)
        time.sleep(0.3)
        check(open(f2).read() == "eth\n", "a denied call changed mlx4_port2")
        log("ok: polkit denying shows %s" % res)
        page.go("daemon")
        page.d.find_element(By.ID, "reload").click()
        check(eventually(lambda: (page.text("#reconcile-result") or "").startswith(
            "org.freedesktop.DBus.Error.AccessDenied")), "Reload: %r" % page.text("#reconcile-result"))
        log("ok: Reload denied shows AccessDenied")
        page.d.find_element(By.ID, "install-providers").click()
        check(eventually(lambda: (page.text("#reconcile-result") or "").startswith(
            "org.freedesktop.DBus.Error.AccessDenied")),
            "Install providers: %r" % page.text("#reconcile-result"))
        log("ok: Install providers denied shows AccessDenied")
    finally:
        polkitd.stop()


def check_absent_then_started(rig, ws, driver, page, host):
    """The page opened while rdmad is not running (the bridge closes a client of an unowned
    name with "not-found") says so, and shows rdmad's devices once it starts, without a
    reload."""
    driver.get(ws.url())
    check(eventually(lambda: any("rdmad is not running" in b for b in page.banners()), 20),
          "no 'not running' banner with rdmad absent: %s" % page.banners())
    check(eventually(lambda: page.text("#daemon-state") == "rdmad: not running"),
          "state %r" % page.text("#daemon-state"))
    check(page.rows() == 0, "rows with rdmad absent: %r" % page.rows())
    rig.start()
    page.wait_loaded("1")
    want = fixture_ports(host)
    check(eventually(lambda: page.rows() == len(want)),
          "after rdmad started: %r rows, the fixture has %d ports" % (page.rows(), len(want)))
    banners = page.banners()
    check(any("rdmad started" in b and "read everything again" in b for b in banners),
          "no 'rdmad started' banner: %s" % banners)
    check(not any("not running" in b or "closed" in b for b in banners),
          "stale banners after rdmad started: %s" % banners)
    stray = ws.stray_buses()
    check(stray == [], "cockpit's processes started their own bus: %s" % stray)
    log("ok: a page opened before rdmad showed its %d ports once it started" % len(want))


def check_restart(rig, page):
    old = rig.conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                             "GetNameOwner", GLib.Variant("(s)", ("org.rdmad1",)), None, 0, 5000,
                             None).unpack()[0]
    page.go("")
    rig.stop()
    check(eventually(lambda: any("left the system bus" in b for b in page.banners())),
          "the page did not say rdmad left: %s" % page.banners())
    check(page.text("#daemon-state") == "rdmad: not running", "state %r" % page.text("#daemon-state"))
    rig.start(label="rdmad-2")
    page.wait_loaded("1")
    banners = page.banners()
    check(any("rdmad restarted (was %s" % old in b and "read everything again" in b for b in banners),
          "no restart banner: %s" % banners)
    # The new rdmad reads the testbed afresh: mlx5_0 port 1 is still DOWN there.
    check(eventually(lambda: page.row("mlx5_0", 1)["State"] == "DOWN"), "after restart")
    check(eventually(lambda: page.text("#daemon-state") == "rdmad: running"), "state %r" % page.text("#daemon-state"))
    log("ok: the restart was followed: %s" % [b for b in banners if "restarted" in b][0])


def check_no_admin(page):
    """What the page does when Cockpit says the user has no administrative access (this test
    runs as root, so the answer of cockpit.permission is replaced in the page): every control
    that changes something is disabled and the reason is shown."""
    page.go("device/mlx4_0")
    check(eventually(lambda: page.text("#device-props [data-field=Name]") == "mlx4_0"), "details")
    page.js("permission.allowed = false; updateAdmin()")
    note = page.text("#admin-note")
    check(note.startswith("Changes need administrative access"), "admin note %r" % note)
    states = page.js("return [...document.querySelectorAll('[data-admin]')].map(e => [e.disabled, e.title])")
    check(states and all(d and t == note for d, t in states), "controls %r" % states)
    page.js("permission.allowed = true; updateAdmin()")
    check(page.js("return document.querySelector('[data-action=set-port-type]').disabled") is False,
          "Set port type stays disabled with access")
    log("ok: without administrative access the %d controls are disabled, the reason shown" % len(states))


def check_theme(page, url):
    page.js("localStorage.setItem('shell:style', 'dark')")
    page.d.get(url)
    page.wait_loaded()
    bg = page.js("return getComputedStyle(document.body).backgroundColor")
    dark = page.js("return document.documentElement.classList.contains('pf-theme-dark')")
    check(dark and bg == "rgb(27, 29, 33)", "dark theme: class %s, background %s" % (dark, bg))
    page.js("localStorage.setItem('shell:style', 'light')")
    log("ok: Cockpit's dark style applies (background %s)" % bg)


def check_manifest(ws, dbus_dir):
    """The menu entry and its condition. Debian 12's cockpit-bridge (287, the C bridge) does
    not evaluate `conditions` (it lists the page either way; newer bridges hide it when the
    path is missing), so this checks what the bridge serves: the label and the condition naming
    rdmad's installed D-Bus interface file."""
    m = ws.manifests().get("rdmad", {})
    check(m.get("menu", {}).get("index", {}).get("label") == "RDMA", "manifest: %s" % m)
    want = os.path.join(os.path.abspath(dbus_dir), "org.rdmad1.Manager.xml")
    check(m.get("conditions") == [{"path-exists": want}], "conditions: %s" % m.get("conditions"))
    check(os.path.exists(want), want)
    log("ok: the manifest lists \"RDMA\" with the condition path-exists %s" % want)


def check_netdevs(args, driver):
    """The netdevs view on a host whose ConnectX-5 has no RDMA driver bound: every netdev's
    values as the host's .expected.json has them (read from its fixture file by
    tests/fixtures/hostlib.py), the hint included; the overview says there is no device."""
    expected = json.load(open(args.host_netdevs[:-len(".umockdev")] + ".expected.json"))
    rig = Rig(args.rdmad, args.host_netdevs)
    ws = None
    try:
        rig.start()
        xdg = page_tree(rig.work, args.page_dir, os.path.abspath(args.dbus_dir))
        ws = Cockpit(rig.work, rig.address, xdg, "cockpit-ws-netdevs")
        page = Page(driver)
        driver.get(ws.url("#/netdevs"))
        page.wait_loaded()
        check(page.js("return !document.getElementById('ports-empty').hidden"),
              "the overview does not say there is no device")
        rows = page.js("""return [...document.querySelectorAll('#links-body tr')].map(tr =>
            Object.fromEntries([...tr.children].map(td => [td.dataset.field, td.textContent])))""")
        got = {r["Name"]: r for r in rows}
        check(sorted(got) == sorted(expected["links"]), "netdevs %s" % sorted(got))
        for name, want in expected["links"].items():
            for k, v in want.items():
                check(got[name][k] == str(v), "%s %s: page %r, fixture %r" % (name, k, got[name][k], v))
        hinted = [n for n, w in expected["links"].items() if w["Hint"]]
        log("ok: the netdevs view shows the %d netdevs of %s (hints: %s)"
            % (len(got), os.path.basename(args.host_netdevs),
               ", ".join("%s %s" % (n, got[n]["Hint"]) for n in hinted)))
    finally:
        if ws:
            ws.stop()
        rig.close()


# constructed-mlx5-roce: mlx5_0 port 1 is RoCE on ens1f0np0, mlx5_1 port 1 on ens1f1np1.
LOSSLESS_NETDEVS = "ens1f0np0,ens1f1np1"


def settings_shown(page, port=1):
    """The "Desired state" table of a port card: {rdmad.conf key: (now, desired, desired by,
    drift)} as the page shows them."""
    return page.js("""
        const out = {};
        const card = document.querySelector('.rd-port-card[data-port="' + arguments[0] + '"]');
        for (const tr of card.querySelectorAll('.rd-settings tbody tr'))
            out[tr.dataset.setting] = [tr.children[1].textContent, tr.children[2].textContent,
                                       tr.children[3].textContent, tr.dataset.drift === "1"];
        return out;""", port)


def click_port_action(page, action, port=1):
    """Clicks a port card's button data-action=`action`; the text of its fieldset's result
    once rdmad answered."""
    card = page.port_card(port)
    btn = card.find_element(By.CSS_SELECTOR, "button[data-action=%s]" % action)
    check(btn.is_enabled(), "%s is disabled: %s" % (action, btn.get_attribute("title")))
    page.js("arguments[0].closest('fieldset').querySelector('.rd-result').textContent = ''", btn)
    btn.click()
    css = '.rd-port-card[data-port="%d"] button[data-action=%s]' % (port, action)
    return eventually(lambda: (lambda t: t if t and t != "Asking rdmad…" else None)(page.js(
        "return document.querySelector(arguments[0]).closest('fieldset')"
        ".querySelector('.rd-result').textContent", css))) or ""


def check_lossless(args, driver):
    """The lossless-RoCE settings of a port (issue #25) on constructed-mlx5-roce, DCB emulated
    by tests/integration/fake_dcbnl.c for both netdevs (pfc_en 0, an empty APP table: trust
    pcp), mlx5_0's configfs group made as the kernel shows it (cma_configfs.c:
    ports/1/default_roce_mode "IB/RoCE v1", default_roce_tos 0). A rule on line 4 asks
    profile lossless-roce (PFC no-drop 3, trust dscp, DSCP 26->3 and 48->6, RDMA-CM "RoCE v2",
    ToS 106: rdmad.conf(5)) and rdma_cm_tos = 106 itself. First with apply = false: every value
    drifts, each row marked, the profile or the line named. Then applied: every value as asked,
    in the testbed too. Then the page's own controls: SetTrust, SetDSCPPriority, SetRDMACM."""
    rule = ('[[rule]]\ndevice = "mlx5_0"\nprofile = "lossless-roce"\nrdma_cm_tos = 106\n')
    rig = Rig(args.rdmad, args.host_lossless, config="[daemon]\napply = false\n\n" + rule)
    ws = None
    try:
        group = rig.rdma_cm_group("mlx5_0", 1, "IB/RoCE v1", 0)
        dcb_log = rig.path("dcb.log")
        rig.start(preload=[args.fake_dcbnl],
                  env={"FAKE_DCBNL_NETDEVS": LOSSLESS_NETDEVS, "FAKE_DCBNL_LOG": dcb_log})
        conf = rig.path("config/rdmad.conf")
        profile = "profile lossless-roce (%s:4)" % conf
        xdg = page_tree(rig.work, args.page_dir, os.path.abspath(args.dbus_dir))
        ws = Cockpit(rig.work, rig.address, xdg, "cockpit-ws-lossless")
        page = Page(driver)
        driver.get(ws.url("#/device/mlx5_0"))
        page.wait_loaded()

        drift = {
            "pfc_no_drop": ["—", "3", profile, True],
            "trust": ["pcp", "dscp", profile, True],
            "dscp_priority": ["—", "26:3,48:6", profile, True],
            "rdma_cm_roce_mode": ["IB/RoCE v1", "RoCE v2", profile, True],
            "rdma_cm_tos": ["0", "106", "%s:4" % conf, True],
        }
        got = eventually(lambda: (lambda s: s if s == drift else None)(
            {k: list(v) for k, v in settings_shown(page).items()}))
        check(got == drift, "apply = false: settings shown %r, want %r" % (settings_shown(page), drift))
        row = page.row("mlx5_0", 1)
        want = "no (wants PFC 3, trust dscp, DSCP 26:3,48:6, RDMA-CM RoCE v2, ToS 106)"
        check(row["InSync"] == want, "overview In sync %r, want %r" % (row["InSync"], want))
        log("ok: apply = false: mlx5_0 port 1 shows each lossless setting drifting, from %s; "
            "overview %r" % (profile, row["InSync"]))

        rig.write("config/rdmad.conf", rule)
        rig.call("/org/rdmad1", "org.rdmad1.Manager", "Reload")
        # The rule is on line 1 now.
        synced = {k: [v[1], v[1], v[2].replace(conf + ":4", conf + ":1"), False]
                  for k, v in drift.items()}
        got = eventually(lambda: (lambda s: s if s == synced else None)(
            {k: list(v) for k, v in settings_shown(page).items()}))
        check(got == synced, "applied: settings shown %r, want %r" % (settings_shown(page), synced))
        check(eventually(lambda: page.row("mlx5_0", 1)["InSync"] == "yes"),
              "In sync %r" % page.row("mlx5_0", 1)["InSync"])
        # What rdmad wrote: the configfs files as echo(1) leaves them, and the APP entries.
        check(open(group + "/default_roce_mode").read() == "RoCE v2\n", "default_roce_mode")
        check(open(group + "/default_roce_tos").read() == "106\n", "default_roce_tos")
        check(any(line.startswith("APPSET ens1f0np0 26:3 48:6") for line in open(dcb_log)),
              "no APPSET of 26:3 48:6 in %r" % open(dcb_log).read())
        log("ok: applied: trust dscp, DSCP 26:3,48:6, PFC 3, RoCE v2, ToS 106 shown in sync")
        page.go("device/mlx5_1")
        check(eventually(lambda: page.text("#device-props [data-field=Name]") == "mlx5_1"), "mlx5_1")
        other = {k: list(v) for k, v in settings_shown(page).items()}
        nothing = {"pfc_no_drop": ["—", "—", "nothing asked", False],
                   "trust": ["pcp", "—", "nothing asked", False],
                   "dscp_priority": ["—", "—", "nothing asked", False],
                   "rdma_cm_roce_mode": ["—", "—", "nothing asked", False],
                   "rdma_cm_tos": ["—", "—", "nothing asked", False]}
        check(other == nothing, "mlx5_1 (no rule, no configfs group): %r" % other)
        log("ok: mlx5_1, asked nothing, shows trust pcp and no desired value")

        # The page's controls call Port.SetTrust, SetDSCPPriority and SetRDMACM.
        page.go("device/mlx5_0")
        check(eventually(lambda: page.text("#device-props [data-field=Name]") == "mlx5_0"), "mlx5_0")
        # The card is rebuilt when the port or device changes (its controls are kept): looked
        # up again each time.
        res = click_port_action(page, "set-trust")
        check(res == "Asked trust dscp until rdmad stops.", "set trust: %r" % res)
        check(eventually(lambda: settings_shown(page)["trust"][2] == "D-Bus"),
              "trust origin %r" % settings_shown(page)["trust"][2])
        dscp = page.port_card(1).find_element(By.CSS_SELECTOR, "input[data-field=dscp]")
        dscp.clear()
        dscp.send_keys("26:3,x")
        res = click_port_action(page, "set-dscp")
        check(res == '"x" is not DSCP:priority (e.g. 26:3).', "bad DSCP text: %r" % res)
        dscp.clear()
        dscp.send_keys("10:1")
        res = click_port_action(page, "set-dscp")
        check(res == "Asked DSCP 10:1 until rdmad stops.", "set DSCP: %r" % res)
        check(eventually(lambda: settings_shown(page)["dscp_priority"] ==
                         ["10:1,26:3,48:6", "10:1", "D-Bus", False]),
              "DSCP after SetDSCPPriority: %r" % (settings_shown(page)["dscp_priority"],))
        check(any(line.startswith("APPSET ens1f0np0 10:1") for line in open(dcb_log)),
              "no APPSET of 10:1 in %r" % open(dcb_log).read())
        Select(page.port_card(1).find_element(By.CSS_SELECTOR, "select[data-field=roce-mode]")
               ).select_by_value("")
        tos = page.port_card(1).find_element(By.CSS_SELECTOR, "input[data-field=tos]")
        tos.clear()
        tos.send_keys("96")
        keep = page.js("return arguments[0].closest('fieldset').querySelector('input[data-field=persist]')",
                       page.port_card(1).find_element(By.CSS_SELECTOR,
                                                      "button[data-action=set-rdma-cm]"))
        keep.click()
        res = click_port_action(page, "set-rdma-cm")
        check(res == "Asked RDMA-CM ToS 96, kept after restart.", "set RDMA-CM: %r" % res)
        check(eventually(lambda: open(group + "/default_roce_tos").read() == "96\n"),
              "default_roce_tos holds %r" % open(group + "/default_roce_tos").read())
        check(eventually(lambda: settings_shown(page)["rdma_cm_tos"] == ["96", "96", "D-Bus", False]),
              "ToS after SetRDMACM: %r" % (settings_shown(page)["rdma_cm_tos"],))
        check("rdma_cm_tos" in open(rig.path("state/state.conf")).read(),
              "kept after restart, yet the state file has no rdma_cm_tos")
        log("ok: the page's controls set trust dscp, DSCP 10:1 (APPSET ens1f0np0 10:1) and "
            "ToS 96 (default_roce_tos, the state file); origin D-Bus; bad text refused")
    finally:
        if ws:
            ws.stop()
        rig.close()


def run_tests(args):
    rig = Rig(args.rdmad, args.host)
    work = rig.work
    ws = driver = None
    ok = False
    try:
        xdg = page_tree(work, args.page_dir, os.path.abspath(args.dbus_dir))
        ws = Cockpit(work, rig.address, xdg)
        check_manifest(ws, args.dbus_dir)
        driver = browser(work)
        page = Page(driver)
        check_absent_then_started(rig, ws, driver, page, args.host)
        driver.get(ws.url())
        page.wait_loaded()
        check_overview(page, args.host)
        if args.screenshot:
            driver.set_window_size(1280, 500)
            time.sleep(0.5)
            driver.save_screenshot(args.screenshot)
            driver.set_window_size(1280, 760)
            log("screenshot: " + args.screenshot)
        check_port_down(rig, page)
        check_port_type(rig, page)
        check_reconcile(rig, page)
        check_denied(rig, page, work)
        check_restart(rig, page)
        check_sriov(rig, page)
        check_no_admin(page)
        check_theme(page, ws.url())
        if args.host_netdevs:
            check_netdevs(args, driver)
        if args.host_lossless:
            check_lossless(args, driver)
        ok = True
    except Failed as e:
        log("FAIL: %s" % e)
    except Exception:  # noqa: BLE001
        log("FAIL:\n" + traceback.format_exc())
    finally:
        if driver:
            if not ok and not signalled():
                try:
                    for entry in driver.get_log("browser"):
                        log("browser: %s" % entry)
                    shot = os.path.join(work, "failure.png")
                    driver.save_screenshot(shot)
                    log("failure screenshot: %s (in the work directory, kept)" % shot)
                except Exception:  # noqa: BLE001
                    pass
            driver.quit()
        if ws:
            ws.stop()
        if not ok and not signalled():
            for name in ("rdmad.log", "rdmad-2.log", "cockpit-ws.log"):
                p = os.path.join(work, name)
                if os.path.exists(p):
                    log("---- %s\n%s" % (name, open(p, errors="replace").read()[-4000:]))
            log("work directory kept: " + work)
        rig.close(keep=not ok)
    return 0 if ok else 1


# ---- the 1,024-device measurement ---------------------------------------------------------------

def run_bench(args):
    # The tree of --tree is made once and kept; without it, made anew in a directory of this
    # run's (removed at the end).
    tree = args.tree or os.path.join(WorkDir("rdmad-cockpit-tree.").path, "tree")
    if not os.path.isdir(tree):
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "..", "bench", "make-tree.py"),
                        "--devices", str(args.bench), "--out", tree], check=True)
    def port_state_file(name):
        return os.path.join(tree, "sys/class/infiniband", name, "ports/1/state")

    for k in range(args.changes):  # a tree kept from an earlier run: every port ACTIVE again
        with open(port_state_file("mlx5_%d" % (k * 37 % args.bench)), "w") as f:
            f.write("4: ACTIVE\n")
    rig = Rig(args.rdmad, tree=tree)
    ws = driver = None
    try:
        t0 = time.monotonic()
        rig.start(timeout=600)
        log("rdmad ready on %d devices in %.1f s" % (args.bench, time.monotonic() - t0))
        t0 = time.monotonic()
        rig.call("/org/rdmad1", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        log("GetManagedObjects from Python: %.0f ms" % ((time.monotonic() - t0) * 1000))
        xdg = page_tree(rig.work, args.page_dir, os.path.abspath(args.dbus_dir))
        ws = Cockpit(rig.work, rig.address, xdg)
        driver = browser(rig.work)
        page = Page(driver)
        renders = []
        for i in range(args.repeat):
            driver.get(ws.url() if i == 0 else "about:blank")
            if i:
                driver.get(ws.url())
            page.wait_loaded(timeout=120)
            r = page.js("return window.rdmadRender")
            rows = page.rows()
            check(rows == args.bench, "rows %d" % rows)
            renders.append(r)
            log("  times: %s" % page.js("return window.rdmadTimes"))
            log("load %d: overview rendered %.0f ms after navigation start (objects read at "
                "%.0f ms, DOM build %.0f ms), %d rows" % (i + 1, r["at"], r["read"], r["took"], rows))
        # For comparison: the same objects read with one plain GetManagedObjects call through
        # the bridge (no watch, no cache), as a page could do instead of watching.
        page.js("""window.__gmo = null; const t0 = performance.now();
            client.call('/org/rdmad1', 'org.freedesktop.DBus.ObjectManager', 'GetManagedObjects')
                .then(r => { window.__gmo = [performance.now() - t0, Object.keys(r[0]).length]; })""")
        gmo = eventually(lambda: page.js("return window.__gmo"), 60)
        log("one GetManagedObjects call from the page: %.0f ms for %d objects" % tuple(gmo))
        # A port change: mlx5_<k> port 1 DOWN by uevent. The signal's arrival is taken by a
        # thread of its own on its own connection (wall clock), the page's cell mutation by a
        # MutationObserver (performance.timeOrigin + now(), wall clock too).
        import threading
        seen = {}
        ready = threading.Event()
        holder = {}

        def listen():
            ctx = GLib.MainContext.new()
            ctx.push_thread_default()
            conn = connect(rig.address)

            def on_signal(conn, sender, path, iface, member, params, _):
                if "State" in params.unpack()[1]:
                    seen.setdefault(path, time.time())

            conn.signal_subscribe(None, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                  None, "org.rdmad1.Port", Gio.DBusSignalFlags.NONE, on_signal, None)
            holder["loop"] = GLib.MainLoop.new(ctx, False)
            ready.set()
            holder["loop"].run()

        th = threading.Thread(target=listen, daemon=True)
        th.start()
        ready.wait(10)
        time.sleep(0.2)
        lat = []
        for k in range(args.changes):
            name = "mlx5_%d" % (k * 37 % args.bench)
            syspath = "/sys" + os.path.realpath(os.path.join(tree, "sys/class/infiniband", name))[
                len(os.path.realpath(os.path.join(tree, "sys"))):]
            page.js("""
                const name = arguments[0];
                window.__changed = null;
                const tr = [...document.querySelectorAll('#ports-body tr')].find(
                    r => r.querySelector('.rd-devlink').textContent === name);
                const td = tr.querySelector('[data-field=State]');
                new MutationObserver((m, o) => { if (td.textContent === 'DOWN') {
                    window.__changed = performance.timeOrigin + performance.now(); o.disconnect(); } })
                    .observe(td, {childList: true, characterData: true, subtree: true});""", name)
            seen.clear()
            with open(port_state_file(name), "w") as f:
                f.write("1: DOWN\n")
            sender = RawSender(tree)
            t_sent = time.time()
            sender.send(syspath, "change")
            sender.close()
            shown = eventually(lambda: page.js("return window.__changed"), 30, 0.01)
            check(shown is not None, "%s port 1 DOWN never showed" % name)
            check(eventually(lambda: seen, 5), "no PropertiesChanged seen for %s" % name)
            sig = min(seen.values())
            shown /= 1000.0
            lat.append((shown - sig, shown - t_sent))
            log("change %d (%s): visible %.0f ms after the signal, %.0f ms after the uevent"
                % (k + 1, name, lat[-1][0] * 1000, lat[-1][1] * 1000))
        holder["loop"].quit()
        ats = sorted(r["at"] for r in renders)
        after = sorted(x[0] for x in lat)
        log("SUMMARY devices=%d first-render-ms median=%.0f max=%.0f; visible-after-signal-ms "
            "median=%.0f max=%.0f" % (args.bench, ats[len(ats) // 2], ats[-1],
                                      after[len(after) // 2] * 1000, after[-1] * 1000))
        return 0
    finally:
        if driver:
            driver.quit()
        if ws:
            ws.stop()
        rig.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rdmad", required=True)
    ap.add_argument("--host", help="a tests/fixtures/hosts/*.umockdev file (procfs-hfi1-mlx4-mlx5)")
    ap.add_argument("--host-netdevs", help="a host to check the netdevs view on "
                    "(constructed-mlx5-aux-unbound: a netdev with a hint)")
    ap.add_argument("--host-lossless", help="a RoCE host to check the lossless-RoCE settings on "
                    "(constructed-mlx5-roce), with --fake-dcbnl")
    ap.add_argument("--fake-dcbnl", help="tests/integration/fake_dcbnl.c built (DCB for "
                    "--host-lossless)")
    ap.add_argument("--page-dir", required=True, help="the cockpit/ folder")
    ap.add_argument("--dbus-dir", required=True, help="the dbus/ folder (the manifest's condition)")
    ap.add_argument("--screenshot", default=os.environ.get("RDMAD_COCKPIT_SCREENSHOT"),
                    help="save the overview here (default: $RDMAD_COCKPIT_SCREENSHOT)")
    ap.add_argument("--bench", type=int, default=0, help="measure with this many generated devices")
    ap.add_argument("--repeat", type=int, default=3, help="bench: page loads")
    ap.add_argument("--changes", type=int, default=5, help="bench: port changes")
    ap.add_argument("--tree", help="bench: make the generated tree in this directory once and "
                    "keep it for the next run (default: anew each run, removed at the end)")
    args = ap.parse_args()
    for p in (COCKPIT_WS, CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(p):
            raise SystemExit("missing %s (tools/install-deps.sh installs it)" % p)
    if args.bench:
        return run_bench(args)
    if not args.host:
        raise SystemExit("--host is required")
    return run_tests(args)


if __name__ == "__main__":
    sys.exit(main())
