# SPDX-License-Identifier: MIT
"""The real rdmad on a recorded host, for Python tests and benches: a private system-like
dbus-daemon, a umockdev testbed loaded from a tests/fixtures/hosts/*.umockdev file, and rdmad
under the umockdev preload with its own configuration, state and runtime directories and a
NOTIFY_SOCKET (the recipe of tests/integration/harness.cpp). Used by tests/dbus-fuzz/ (the
D-Bus fuzzer), tests/fault/ (fault injection), tests/notify/ (rdmad-notify) and bench/rules.py."""

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import gi

gi.require_version("Gio", "2.0")
gi.require_version("UMockdev", "1.0")
from gi.repository import Gio, GLib, UMockdev  # noqa: E402

NAME = "org.rdmad1"
ROOT = "/org/rdmad1"
PRELOAD = "libumockdev-preload.so.0"


class Failed(Exception):
    """A check of a Python test failed; its message says what was found."""


def check(cond, msg):
    if not cond:
        raise Failed(msg)


def eventually(pred, timeout=10.0, step=0.05, ignore=()):
    """pred()'s first true value within `timeout` s, asked every `step` s (an exception of a
    type in `ignore` counts as false); its last value when none came."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            v = pred()
        except ignore:
            v = None
        if v or time.monotonic() > deadline:
            return v
        time.sleep(step)


def clean_env(**extra):
    """This process's environment without what belongs to it alone (preload, testbed, notify
    socket, session bus), plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "UMOCKDEV_DIR", "NOTIFY_SOCKET", "WATCHDOG_USEC",
                        "WATCHDOG_PID", "DBUS_SESSION_BUS_ADDRESS")}
    env.update(extra)
    return env


class Proc:
    """A child with its output in `logpath`."""

    def __init__(self, argv, env, logpath):
        self.logf = open(logpath, "w")
        self.logpath = logpath
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self.logf,
                                  stderr=subprocess.STDOUT)

    def stop(self, timeout=15):
        """SIGTERM, SIGKILL after `timeout` s; the exit status (128+signal when killed by one,
        -1 when it had to be SIGKILLed)."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
                self.logf.close()
                return -1
        self.logf.close()
        rc = self.p.returncode
        return 128 - rc if rc < 0 else rc


def connect(address):
    """A new connection to the bus at `address` (as this process's uid)."""
    flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
             Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
    return Gio.DBusConnection.new_for_address_sync(address, flags, None, None)


def call_sync(conn, path, iface, method, args=None, timeout_ms=30000):
    """A call to rdmad; its reply as a GLib.Variant (raises GLib.Error)."""
    return conn.call_sync(NAME, path, iface, method, args, None, Gio.DBusCallFlags.NONE,
                          timeout_ms, None)


TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")


class Bus:
    """The private system-like bus of tools/private-bus.sh in `work`/bus, its socket reachable
    by every uid (a worker runs as 65534)."""

    def __init__(self, work):
        d = os.path.join(work, "bus")
        os.makedirs(d)
        out = subprocess.run(
            ["bash", "-c", '. "$1/private-bus.sh"; start_private_bus "$2" && '
             'echo "$PRIVATE_BUS_PID $DBUS_SYSTEM_BUS_ADDRESS"', "_", TOOLS, d],
            env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
        pid, self.address = out.stdout.decode().split()
        self.pid = int(pid)
        for p, mode in ((work, 0o755), (d, 0o755), (os.path.join(d, "bus.socket"), 0o777)):
            os.chmod(p, mode)

    def stop(self):
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def proc_status(pid, key):
    """A /proc/<pid>/status value in kB (VmRSS, VmHWM), None when gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def fd_count(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None


def tree_digest(root):
    """sha256 of every file under `root` (name and content; links by target)."""
    h = hashlib.sha256()
    for d, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            h.update(p[len(root):].encode("utf-8", "surrogateescape") + b"\0")
            try:
                if os.path.islink(p):
                    h.update(os.readlink(p).encode("utf-8", "surrogateescape"))
                elif os.path.isfile(p):
                    with open(p, "rb") as fh:
                        h.update(fh.read())
            except OSError:
                h.update(b"?")
    return h.hexdigest()


class Rig:
    """Bus and testbed now; rdmad on start(). `work` is removed by close() unless kept."""

    def __init__(self, rdmad, host, config=None):
        self.rdmad = rdmad
        self.work = tempfile.mkdtemp(prefix="rdmad-rig.")
        self.bus = Bus(self.work)
        self.address = self.bus.address
        self.conn = connect(self.address)
        self.testbed = UMockdev.Testbed.new()
        if not self.testbed.add_from_file(host):
            raise SystemExit("cannot load " + host)
        self.tbroot = self.testbed.get_root_dir()
        for d in ("state", "runtime", "config", "modprobe.d"):
            os.makedirs(self.path(d))
        if config is not None:
            self.write("config/rdmad.conf", config)
        self.daemon = None
        self.notify = None

    def path(self, rel):
        return os.path.join(self.work, rel)

    def write(self, rel, text):
        with open(self.path(rel), "w") as f:
            f.write(text)

    def start(self, preload=(), env=None, label="rdmad", timeout=60):
        """rdmad with `preload` libraries before umockdev's; returns once READY=1 came. Nobody
        reads the notify socket after that (like a busy systemd)."""
        sock_path = self.path("notify-" + label)
        if self.notify:
            self.notify.close()
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(sock_path)
        e = clean_env(LD_PRELOAD=":".join(list(preload) + [PRELOAD]), UMOCKDEV_DIR=self.tbroot,
                      NOTIFY_SOCKET=sock_path, DBUS_SYSTEM_BUS_ADDRESS=self.address,
                      STATE_DIRECTORY=self.path("state"), RUNTIME_DIRECTORY=self.path("runtime"),
                      CONFIGURATION_DIRECTORY=self.path("config"),
                      SYSTEMD_DEVICE_VERIFY_SYSFS="0")
        e.update(env or {})
        self.logpath = self.path(label + ".log")
        self.daemon = Proc([self.rdmad, "--legacy-mlx4-conf", self.path("no-mlx4.conf"),
                            "--modprobe-dir", self.path("modprobe.d")], e, self.logpath)
        deadline = time.monotonic() + timeout
        self.notify.settimeout(0.2)
        while time.monotonic() < deadline:
            try:
                msg = self.notify.recv(4096).decode(errors="replace")
            except socket.timeout:
                msg = ""
            if "READY=1" in msg.split("\n"):
                return self.daemon
            if self.daemon.p.poll() is not None:
                raise SystemExit("rdmad exited before READY=1 (status %s):\n%s"
                                 % (self.daemon.p.returncode, self.log()))
        self.daemon.stop()
        raise SystemExit("rdmad sent no READY=1 within %d s:\n%s" % (timeout, self.log()))

    @property
    def pid(self):
        return self.daemon.p.pid

    def alive(self):
        return self.daemon is not None and self.daemon.p.poll() is None

    def stop(self):
        """SIGTERM rdmad; its exit status."""
        st = self.daemon.stop()
        return st

    def log(self):
        try:
            with open(self.logpath, errors="replace") as f:
                return f.read()
        except (OSError, AttributeError):
            return ""

    def call(self, path, iface, method, args=None, timeout_ms=30000):
        return call_sync(self.conn, path, iface, method, args, timeout_ms)

    def describe(self):
        return json.loads(self.call(ROOT, "org.rdmad1.Manager", "Describe").unpack()[0])

    def managed_objects(self):
        """GetManagedObjects as text (GVariant's print form: every value, sorted by path)."""
        v = self.call(ROOT, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        objs = v.unpack()[0]
        return json.dumps(objs, sort_keys=True, default=str)

    def rss_kib(self):
        return proc_status(self.pid, "VmRSS")

    def fds(self):
        return fd_count(self.pid)

    def close(self, keep=False):
        if self.daemon and self.daemon.p.poll() is None:
            self.daemon.stop()
        if self.notify:
            self.notify.close()
        self.bus.stop()
        if not keep:
            shutil.rmtree(self.work, ignore_errors=True)


def wait_name(conn, name, timeout=20):
    """Until `name` has an owner on the bus."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                           "NameHasOwner", GLib.Variant("(s)", (name,)), None, 0, 5000, None)
        if v.unpack()[0]:
            return
        time.sleep(0.05)
    raise SystemExit(name + " did not appear on the bus")

