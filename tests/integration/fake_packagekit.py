#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# A PackageKit that misbehaves, for rdmad's integration tests (test_packagekit.cpp): it owns
# org.freedesktop.PackageKit on the test's private system bus and answers CreateTransaction
# with /t1, /t2, ... as PackageKit 1.2.6 does (src/org.freedesktop.PackageKit.xml,
# src/org.freedesktop.PackageKit.Transaction.xml). MODE:
#   spoof   on Resolve, a second connection (anyone on the bus) first sends the caller, by its
#           unique name, Package(libawesome;666;all;evil), Package(evil;1;all;x) and
#           Finished(success) for that transaction; then the owner resolves "libawesome" to
#           libawesome;42;i386;debian itself, sends a Package of a name not asked for, and
#           Finished twice. InstallPackages finishes with success.
#   vanish  on Resolve, exits without a Finished (PackageKit crashing mid-transaction).
#   silent  never answers CreateTransaction (a hung PackageKit).
#   badsig  on Resolve, sends Package(s "libawesome") and Finished(s "success"): the wrong
#           signatures.
#   hang    Resolve never finishes (a backend stuck on a mirror). Cancel() (Transaction.xml)
#           is answered and does nothing more: the test reads it off the bus.
#   progress Resolve as spoof's owner does; InstallPackages announces Percentage 101
#           (unknown), 40 and 45 by PropertiesChanged, as pk-transaction.c does, then an
#           intruder sends the caller Percentage 99 for it; Finished(success) comes once the
#           file argv[2] exists.
import os
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

IFACE = "org.freedesktop.PackageKit"
TX = "org.freedesktop.PackageKit.Transaction"
MODE = sys.argv[1]

DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
intruder = dbus.bus.BusConnection(dbus.bus.BUS_SYSTEM)
loop = GLib.MainLoop()


def signal(conn, dest, path, member, sig, *args):
    m = dbus.lowlevel.SignalMessage(path, TX, member)
    m.set_destination(dest)
    m.append(*args, signature=sig)
    conn.send_message(m)
    conn.flush()


def percentage(conn, dest, path, value):
    """PropertiesChanged(s, a{sv}, as) of the transaction's Percentage (u)."""
    m = dbus.lowlevel.SignalMessage(path, "org.freedesktop.DBus.Properties", "PropertiesChanged")
    if dest:
        m.set_destination(dest)
    m.append(TX, {"Percentage": dbus.UInt32(value, variant_level=1)}, dbus.Array([], "s"),
             signature="sa{sv}as")
    conn.send_message(m)
    conn.flush()


class Transaction(dbus.service.Object):
    @dbus.service.method(TX, in_signature="tas", out_signature="", sender_keyword="caller")
    def Resolve(self, filters, names, caller):
        path = self._object_path
        if MODE == "hang":
            return
        if MODE == "vanish":
            GLib.timeout_add(100, lambda: os._exit(0))
            return
        if MODE == "badsig":
            signal(bus, caller, path, "Package", "s", "libawesome")
            signal(bus, caller, path, "Finished", "s", "success")
            return
        if MODE == "progress":
            self.Package(1, "libawesome;42;i386;debian", "")
            self.Finished(1, 5)
            return
        signal(intruder, caller, path, "Package", "uss", 1, "libawesome;666;all;evil", "")
        signal(intruder, caller, path, "Package", "uss", 1, "evil;1;all;x", "")
        signal(intruder, caller, path, "Finished", "uu", 1, 0)

        def own():
            self.Package(1, "other;2;all;debian", "")
            self.Package(1, "libawesome;42;i386;debian", "")
            self.Finished(1, 5)
            self.Finished(1, 5)
            return False

        GLib.timeout_add(300, own)

    @dbus.service.method(TX, in_signature="", out_signature="")
    def Cancel(self):
        pass

    @dbus.service.method(TX, in_signature="tas", out_signature="", sender_keyword="caller")
    def InstallPackages(self, flags, ids, caller):
        if MODE != "progress":
            GLib.timeout_add(100, lambda: self.Finished(1, 5) and False)
            return
        path = self._object_path
        for value in (101, 40, 45):
            percentage(bus, None, path, value)
        GLib.timeout_add(200, lambda: percentage(intruder, caller, path, 99) and False)

        def finish_when_told():
            if not os.path.exists(sys.argv[2]):
                return True
            self.Finished(1, 5)
            return False

        GLib.timeout_add(100, finish_when_told)

    @dbus.service.signal(TX, signature="uss")
    def Package(self, info, package_id, summary):
        pass

    @dbus.service.signal(TX, signature="uu")
    def Finished(self, exit, runtime):
        pass


class PackageKit(dbus.service.Object):
    count = 0
    transactions = []

    @dbus.service.method(IFACE, in_signature="", out_signature="o",
                         async_callbacks=("reply", "error"))
    def CreateTransaction(self, reply, error):
        if MODE == "silent":
            return
        PackageKit.count += 1
        path = "/t%d" % PackageKit.count
        PackageKit.transactions.append(Transaction(bus, path))
        reply(dbus.ObjectPath(path))


name = dbus.service.BusName(IFACE, bus)
PackageKit(bus, "/org/freedesktop/PackageKit")
loop.run()
