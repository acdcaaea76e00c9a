#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The bus files are valid where they are used:
- org.rdmad1.conf is well-formed XML and a dbus-daemon whose configuration <include>s it
  starts; the same file with a broken policy element must stop it (so the include is read);
- org.rdmad1.policy is valid against polkit's policyconfig DTD and names org.rdmad1.configure;
- the activation file names org.rdmad1 and the Alias= of rdmad.service.

usage: bus-files.py DBUS_DAEMON XMLLINT BUS_POLICY POLKIT_POLICY POLKIT_DTD ACTIVATION UNIT WORK
"""
import atexit
import configparser
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from xml.sax.saxutils import escape

(dbus_daemon, xmllint, bus_policy, polkit_policy, polkit_dtd, activation, unit,
 work) = sys.argv[1:9]
# SIGTERM (meson's timeout) and SIGINT end the run through SystemExit: the atexit clean-up runs.
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
# The sockets go to a short directory of their own, never under the build directory: its
# path may exceed sun_path's 108 bytes (dbus-daemon: "Socket name too long").
sockets = tempfile.mkdtemp(prefix='rdmad-bus-files.')
atexit.register(shutil.rmtree, sockets, ignore_errors=True)
failed = []


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


code, out = run(xmllint, '--noout', bus_policy)
if code:
    failed.append(f'xmllint {bus_policy}: {out}')


def unix_address(path):
    """unix:path=`path` with every byte outside [-0-9A-Za-z_/.\\*] written %xx (D-Bus
    specification, "Server Addresses")."""
    ok = b'-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_/.\\*'
    return 'unix:path=' + ''.join(chr(b) if b in ok else f'%{b:02x}' for b in os.fsencode(path))


# {listen} and {policy} are XML character data: escaped (a checkout path may hold & or <).
BUS_CONFIG = '''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>custom</type>
  <listen>{listen}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/></policy>
  <include ignore_missing="no">{policy}</include>
</busconfig>
'''


def dbus_daemon_starts(policy, tag):
    """True when a dbus-daemon with `policy` included prints its address (it has read its
    whole configuration by then); False with its error output otherwise."""
    conf = os.path.join(work, f'{tag}.conf')
    listen = unix_address(os.path.join(sockets, f'{tag}.sock'))
    with open(conf, 'w') as f:
        f.write(BUS_CONFIG.format(listen=escape(listen), policy=escape(policy)))
    p = subprocess.Popen([dbus_daemon, f'--config-file={conf}', '--nofork', '--nopidfile',
                          '--print-address=1', '--nosyslog'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        address = p.stdout.readline().strip()
        if address.startswith('unix:'):
            return True, address
        p.wait(timeout=10)
        return False, p.stderr.read()
    finally:
        if p.poll() is None:
            p.terminate()
            p.wait(timeout=10)


ok, out = dbus_daemon_starts(os.path.abspath(bus_policy), 'good')
if not ok:
    failed.append(f'dbus-daemon does not start with {bus_policy} included: {out}')
else:
    print(f'ok: dbus-daemon starts with the policy included ({out})')

with open(bus_policy) as f:
    broken = f.read().replace('<allow own=', '<allow bogus_attribute="x" own=', 1)
broken_path = os.path.join(work, 'broken.conf')
with open(broken_path, 'w') as f:
    f.write(broken)
ok, _ = dbus_daemon_starts(broken_path, 'broken')
if ok:
    failed.append('dbus-daemon also starts with a broken copy: the check does not read the file')

code, out = run(xmllint, '--noout', '--dtdvalid', polkit_dtd, polkit_policy)
if code:
    failed.append(f'{polkit_policy} against {polkit_dtd}: {out}')
with open(polkit_policy) as f:
    if '<action id="org.rdmad1.configure">' not in f.read():
        failed.append(f'{polkit_policy}: no action org.rdmad1.configure')

cp = configparser.ConfigParser(interpolation=None)
cp.optionxform = str
cp.read(activation)
with open(unit) as f:
    aliases = re.findall(r'^Alias=(.+)$', f.read(), re.M)
svc = cp['D-BUS Service'] if cp.has_section('D-BUS Service') else {}
if svc.get('Name') != 'org.rdmad1':
    failed.append(f'{activation}: Name= is not org.rdmad1')
if svc.get('SystemdService') not in [a.strip() for a in ' '.join(aliases).split()]:
    failed.append(f'{activation}: SystemdService={svc.get("SystemdService")} is not an Alias= '
                  f'of rdmad.service ({aliases})')
if svc.get('User') != 'root' or svc.get('Exec') != '/bin/false':
    failed.append(f'{activation}: want User=root and Exec=/bin/false (activation via systemd)')

for f in failed:
    print('FAIL:', f)
sys.exit(1 if failed else 0)
