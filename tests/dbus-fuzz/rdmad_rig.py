# SPDX-License-Identifier: MIT
"""The real rdmad on a recorded host, for Python tests and benches: a private system-like
dbus-daemon, a umockdev testbed loaded from a tests/fixtures/hosts/*.umockdev file, and rdmad
under the umockdev preload with its own configuration, state and runtime directories and a
NOTIFY_SOCKET (the recipe of tests/integration/harness.cpp). Used by tests/dbus-fuzz/ (the
D-Bus fuzzer), tests/fault/ (fault injection), tests/notify/ (rdmad-notify), tests/cockpit/,
tests/fleet/ and bench/rules.py.

What a run makes here (children, directories) is undone at exit, also when SIGTERM (meson's
timeout), SIGINT or SIGHUP ends the run: see own()."""

import atexit
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import gi

gi.require_version("Gio", "2.0")
gi.require_version("UMockdev", "1.0")
from gi.repository import Gio, GLib, UMockdev  # noqa: E402

NAME = "org.rdmad1"
ROOT = "/org/rdmad1"
PRELOAD = "libumockdev-preload.so.0"
TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")


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


# ---- what a run made, undone at exit and when SIGTERM, SIGINT or SIGHUP ends it -------------

_owned = []  # objects with a cleanup() method, newest last
_signal = []  # the signal that ends this run, once one came
_exiting = []  # not empty once the clean-up at exit began
_reraise = []  # not empty when a finalizer swallowed the SystemExit of the signal
EXIT_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def own(obj):
    """obj.cleanup() runs at exit (newest first) unless disown(obj) came before.

    The first call also makes SIGTERM, SIGINT and SIGHUP end the run with SystemExit(128 +
    signal), so that `finally:` blocks and this clean-up run (Python's default for SIGTERM and
    SIGHUP is to die on the spot, leaving every child and temporary directory behind). Before
    that exception, every owned child still running gets SIGTERM, all at once: meson ends a
    test that timed out with SIGTERM to its process group and SIGKILL 0.5 s later. A signal
    that comes once the run ends (by that exception or otherwise) is not raised, so that it does
    not cut the clean-up short. And in case that SIGKILL comes first, a reaper in a session of
    its own (_REAPER) removes the directories once this process and its children are gone."""
    if not _owned and threading.current_thread() is threading.main_thread():
        for s in EXIT_SIGNALS:
            if signal.getsignal(s) in (signal.SIG_DFL, signal.default_int_handler):
                signal.signal(s, _on_exit_signal)
        if sys.unraisablehook is sys.__unraisablehook__:
            sys.unraisablehook = _on_unraisable
    _owned.append(obj)
    return obj


def disown(obj):
    if obj in _owned:
        _owned.remove(obj)


def signalled():
    """The signal that ends this run, None when none came."""
    return _signal[0] if _signal else None


# Waits until the process argv[1] and the processes argv[2] (JSON) are gone or zombies (30 s
# at most), then removes the directories argv[3] (JSON) that are still there.
_REAPER = r"""
import json, os, shutil, sys, time
pids = [int(sys.argv[1])] + json.loads(sys.argv[2])
def gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True
deadline = time.monotonic() + 30
while not all(gone(p) for p in pids) and time.monotonic() < deadline:
    time.sleep(0.1)
for d in json.loads(sys.argv[3]):
    shutil.rmtree(d, ignore_errors=True)
"""


def _on_exit_signal(signum, frame):
    if _signal:
        if _reraise and not _exiting:
            _reraise.clear()
            _raise_exit(frame)
        return
    _signal.append(signum)
    children = [o for o in _owned if isinstance(o, Proc)]
    print("%s: %s: stopping %d children, removing this run's directories"
          % (os.path.basename(sys.argv[0]), signal.Signals(signum).name, len(children)),
          file=sys.stderr, flush=True)
    for c in children:
        c.terminate()
    dirs = [o.path for o in _owned if isinstance(o, WorkDir)]
    dirs += [o.tbroot for o in _owned if isinstance(o, Rig) and o.testbed is not None]
    try:
        subprocess.Popen([sys.executable, "-c", _REAPER, str(os.getpid()),
                          json.dumps([c.p.pid for c in children]), json.dumps(dirs)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        print("no reaper: %s" % e, file=sys.stderr, flush=True)
    if not _exiting:
        _raise_exit(frame)


def _raise_exit(frame):
    """SystemExit(128 + the signal), or, when `frame` runs in a finalizer (Popen.__del__ is
    Python code), which would drop it and let the run go on, the signal again 10 ms later."""
    f = frame
    while f is not None:
        if f.f_code.co_name == "__del__":
            _again()
            return
        f = f.f_back
    raise SystemExit(128 + _signal[0])


def _again():
    """The signal again 10 ms later, from a thread (sent from here, it would be handled
    here), and its handler raises SystemExit anew."""
    _reraise.append(True)
    t = threading.Timer(0.01, os.kill, (os.getpid(), _signal[0]))
    t.daemon = True
    t.start()


def _on_unraisable(u):
    """The SystemExit of the signal dropped all the same (a finalizer other than a __del__, a
    weakref callback): raise it again."""
    if isinstance(u.exc_value, SystemExit) and _signal and not _exiting:
        _again()
        return
    sys.__unraisablehook__(u)


@atexit.register
def _cleanup_owned():
    _exiting.append(True)
    while _owned:
        obj = _owned.pop()
        try:
            obj.cleanup()
        except BaseException as e:  # noqa: BLE001  (the others still get theirs)
            print("clean-up of %r: %r" % (obj, e), file=sys.stderr, flush=True)


def short_tmpdir():
    """What tools/short-tmpdir.sh prints: $TMPDIR when it is short and made of
    [A-Za-z0-9/._-], else /tmp."""
    r = subprocess.run(["sh", os.path.join(TOOLS, "short-tmpdir.sh")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit(r.stderr.strip() or "tools/short-tmpdir.sh failed")
    return r.stdout.strip()


# Sockets, D-Bus addresses and LD_PRELOAD entries are made below TMPDIR (mkdtemp, umockdev's
# testbed): a test started by hand gets the directory meson test's wrapper would give it.
os.environ["TMPDIR"] = short_tmpdir()
tempfile.tempdir = None
PLAIN = re.compile(r"[A-Za-z0-9/._-]+")


class WorkDir:
    """A new mkdtemp directory, owned: removed by remove(), or at exit unless `keep` (kept or
    not, a signal that ends the run removes it)."""

    def __init__(self, prefix):
        self.path = tempfile.mkdtemp(prefix=prefix)
        self.keep = False
        own(self)

    def remove(self):
        disown(self)
        shutil.rmtree(self.path, ignore_errors=True)

    def cleanup(self):
        if not self.keep or signalled():
            shutil.rmtree(self.path, ignore_errors=True)


def unix_address(path):
    r"""The D-Bus address of the socket `path`: unix:path= with every byte outside
    [-0-9A-Za-z_/.\*] written %xx (D-Bus specification, "Server Addresses"). The shell's is
    dbus_address_value in tools/private-bus.sh."""
    ok = b"-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_/.\\*"
    return "unix:path=" + "".join(chr(b) if b in ok else "%%%02x" % b for b in os.fsencode(path))


def clean_env(**extra):
    """This process's environment without what belongs to it alone (preload, testbed, notify
    socket, session bus), plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "UMOCKDEV_DIR", "NOTIFY_SOCKET", "WATCHDOG_USEC",
                        "WATCHDOG_PID", "DBUS_SESSION_BUS_ADDRESS")}
    env.update(extra)
    return env


class Proc:
    """A child with its output in `logpath` (only its stderr with `pipe_stdout`, its stdout
    then being self.p.stdout), owned (see own()) until stop()."""

    def __init__(self, argv, env, logpath, pipe_stdout=False):
        self.logf = open(logpath, "w")
        self.logpath = logpath
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE if pipe_stdout else self.logf,
                                  stderr=self.logf if pipe_stdout else subprocess.STDOUT)
        own(self)

    def terminate(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)

    def stop(self, timeout=15):
        """SIGTERM, SIGKILL after `timeout` s (1 s once a signal ends the run); the exit status
        (128+signal when killed by one, -1 when it had to be SIGKILLed)."""
        disown(self)
        rc = None
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(min(timeout, 1) if signalled() else timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
                rc = -1
        if self.p.stdout:
            self.p.stdout.close()
        self.logf.close()
        if rc is None:
            rc = 128 - self.p.returncode if self.p.returncode < 0 else self.p.returncode
        return rc

    def cleanup(self):
        self.stop()


def dbus_daemon(argv, logpath):
    """`dbus-daemon --nofork --print-address=1 argv` as a child (a Proc, its stderr in
    `logpath`) once it printed its address (it listens then): (the Proc, that address)."""
    d = Proc(["dbus-daemon", "--nofork", "--print-address=1"] + argv, clean_env(), logpath,
             pipe_stdout=True)
    address = d.p.stdout.readline().decode().strip()
    if not address.startswith("unix:"):
        d.stop()
        with open(logpath, errors="replace") as f:
            raise SystemExit("dbus-daemon %s printed no address:\n%s" % (" ".join(argv), f.read()))
    return d, address


class SessionBus:
    """A private session bus: dbus-daemon --session, a child, on the socket `path`."""

    def __init__(self, path):
        self.proc, self.address = dbus_daemon(["--session", "--address=" + unix_address(path)],
                                              path + ".log")

    def stop(self):
        self.proc.stop(10)


def connect(address):
    """A new connection to the bus at `address` (as this process's uid)."""
    flags = (Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
             Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)
    return Gio.DBusConnection.new_for_address_sync(address, flags, None, None)


def call_sync(conn, path, iface, method, args=None, timeout_ms=30000):
    """A call to rdmad; its reply as a GLib.Variant (raises GLib.Error)."""
    return conn.call_sync(NAME, path, iface, method, args, None, Gio.DBusCallFlags.NONE,
                          timeout_ms, None)


class Bus:
    """The private system-like bus of tools/private-bus.sh (its configuration) in `work`/bus,
    its socket reachable by every uid (a worker runs as 65534). The dbus-daemon is a child of
    this process, not --fork'ed away: stop() or the clean-up at exit ends it."""

    def __init__(self, work):
        d = os.path.join(work, "bus")
        os.makedirs(d)
        out = subprocess.run(
            ["bash", "-c", '. "$1/private-bus.sh" && private_bus_conf "$2" && '
             'printf "%s\\n" "$PRIVATE_BUS_ADDRESS"', "_", TOOLS, d],
            env=clean_env(), stdout=subprocess.PIPE, check=True)
        self.address = out.stdout.decode().strip()
        self.proc, _ = dbus_daemon(["--config-file=" + os.path.join(d, "bus.conf")],
                                   os.path.join(d, "bus.log"))
        self.pid = self.proc.p.pid
        for p, mode in ((work, 0o755), (d, 0o755), (os.path.join(d, "bus.socket"), 0o777)):
            os.chmod(p, mode)

    def stop(self):
        self.proc.stop(10)


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
    """Bus and testbed now (from the .umockdev file `host`, or the directory `tree` made by
    bench/make-tree.py); rdmad on start(). close() removes `work` unless kept; the clean-up at
    exit does what close() did not (see own())."""

    def __init__(self, rdmad, host=None, config=None, tree=None):
        self.rdmad = rdmad
        self.workdir = WorkDir("rdmad-rig.")
        self.work = self.workdir.path
        self.daemon = self.notify = self.testbed = self.bus = None
        own(self)
        self.bus = Bus(self.work)
        self.address = self.bus.address
        self.conn = connect(self.address)
        if tree is None:
            self.testbed = UMockdev.Testbed.new()
            if not self.testbed.add_from_file(host):
                raise SystemExit("cannot load " + host)
            self.tbroot = self.testbed.get_root_dir()
        else:
            self.tbroot = tree
        for d in ("state", "runtime", "config", "modprobe.d"):
            os.makedirs(self.path(d))
        if config is not None:
            self.write("config/rdmad.conf", config)

    def path(self, rel):
        return os.path.join(self.work, rel)

    def write(self, rel, text):
        with open(self.path(rel), "w") as f:
            f.write(text)

    def rdma_cm_group(self, device, port, mode, tos):
        """The configfs of a kernel with rdma_cm in the testbed, as the kernel shows it once
        someone made `device`'s group (drivers/infiniband/core/cma_configfs.c:
        ports/<n>/default_roce_mode and default_roce_tos, as their show functions print
        them); the port's directory."""
        d = os.path.join(self.tbroot, "sys/kernel/config/rdma_cm", device, "ports", str(port))
        os.makedirs(d)
        with open(os.path.join(d, "default_roce_mode"), "w") as f:
            f.write(mode + "\n")
        with open(os.path.join(d, "default_roce_tos"), "w") as f:
            f.write("%d\n" % tos)
        return d

    def preload_entry(self, lib):
        """`lib` as an LD_PRELOAD entry. ld.so splits LD_PRELOAD at spaces and colons
        (ld.so(8)) and a build directory may hold either, so a path is named through a link in
        the work directory (below short_tmpdir(): plain)."""
        if "/" not in lib:
            return lib
        link = self.path("preload-%s.so" % hashlib.sha256(os.fsencode(lib)).hexdigest()[:12])
        if not PLAIN.fullmatch(link):
            raise SystemExit("the work directory %r is not plain enough for LD_PRELOAD" % self.work)
        if not os.path.islink(link):
            os.symlink(os.path.abspath(lib), link)
        return link

    def start(self, preload=(), env=None, label="rdmad", timeout=60):
        """rdmad with `preload` libraries before umockdev's; returns once READY=1 came. Nobody
        reads the notify socket after that (like a busy systemd)."""
        sock_path = self.path("notify-" + label)
        if self.notify:
            self.notify.close()
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(sock_path)
        e = clean_env(LD_PRELOAD=":".join([self.preload_entry(p) for p in preload] + [PRELOAD]),
                      UMOCKDEV_DIR=self.tbroot,
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
        """Stops rdmad and the bus, lets umockdev remove its testbed, and removes `work`
        unless `keep`."""
        disown(self)
        if self.daemon:
            self.daemon.stop()
        if self.notify:
            self.notify.close()
            self.notify = None
        if self.bus:
            self.bus.stop()
        # Its finalizer removes its directory (and aborts the process when that is gone).
        self.testbed = None
        if keep:
            self.workdir.keep = True
        else:
            self.workdir.remove()

    def cleanup(self):
        self.close(keep=self.workdir.keep)


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

