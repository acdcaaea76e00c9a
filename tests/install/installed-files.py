#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""`meson install --destdir` places exactly the files of expected-files.txt (but its "deb"
lines, the Debian package's own), no more, no fewer, the installed unit starts the rdmad
that was installed, and rdmad-notify's autostart entry starts the installed agent, off.

usage: installed-files.py MESON BUILD_ROOT PREFIX EXPECTED_LIST WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

meson, build_root, prefix, expected_list, work = sys.argv[1:6]
prefix = os.path.normpath(prefix)
destdir = os.path.join(work, 'destdir')
shutil.rmtree(destdir, ignore_errors=True)
os.makedirs(work, exist_ok=True)

r = subprocess.run([meson, 'install', '-C', build_root, '--no-rebuild', '--quiet',
                    '--destdir', destdir], capture_output=True, text=True)
if r.returncode != 0:
    sys.exit(f'FAIL: meson install --destdir {destdir} exited {r.returncode}\n{r.stdout}{r.stderr}')


def debian_path(path):
    """The build's prefix stands for Debian's /usr; directories named by systemd.pc/udev.pc
    are absolute already; <prefix>/etc stands for /etc."""
    # meson's sysconfdir is <prefix>/etc, but /etc for prefix /usr (meson's "Directories").
    if path.startswith(prefix + '/etc/'):
        return path[len(prefix):]
    if path == prefix or path.startswith(prefix + '/'):
        return '/usr' + path[len(prefix):]
    return path


installed = {}
for root, dirs, files in os.walk(destdir):
    for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
        real = '/' + os.path.relpath(os.path.join(root, name), destdir)
        installed[debian_path(real)] = real

with open(expected_list) as f:
    # "deb PATH" lines are the Debian package's own files (tools/test-deb.sh); "cockpit-rdmad
    # PATH" lines are installed here and shipped in the package cockpit-rdmad.
    expected = {line.strip().removeprefix('cockpit-rdmad ') for line in f
                if line.strip() and not line.startswith('#') and not line.startswith('deb ')}

failed = False
for path in sorted(expected - installed.keys()):
    print(f'FAIL: missing {path}' + (' (is scdoc installed?)' if '/man/' in path else ''))
    failed = True
for path in sorted(installed.keys() - expected):
    print(f'FAIL: not in {os.path.basename(expected_list)}: {path} (installed as {installed[path]})')
    failed = True

# The unit's ExecStart= must be the installed daemon (@libexecdir@ configured right).
unit = next((real for deb, real in installed.items() if deb.endswith('/rdmad.service')
             and '/systemd/' in deb), None)
if unit:
    with open(destdir + unit) as f:
        m = re.search(r'^ExecStart=(\S+)', f.read(), re.M)
    if not m:
        print(f'FAIL: {unit} has no ExecStart=')
        failed = True
    elif not os.access(destdir + m.group(1), os.X_OK):
        print(f'FAIL: {unit}: ExecStart={m.group(1)} is not an installed executable')
        failed = True
    else:
        print(f'ok: ExecStart={m.group(1)} is installed')

# rdmad-notify's autostart entry starts the installed agent and is off (Hidden=true: XDG
# Autostart Specification) until a user or the administrator turns it on.
entry = next((real for deb, real in installed.items()
              if deb == '/etc/xdg/autostart/rdmad-notify.desktop'), None)
if entry:
    with open(destdir + entry) as f:
        text = f.read()
    m = re.search(r'^Exec=(\S+)$', text, re.M)
    if not m or not os.access(destdir + m.group(1), os.X_OK):
        print(f'FAIL: {entry}: Exec= is not the installed rdmad-notify')
        failed = True
    elif not re.search(r'^Hidden=true$', text, re.M):
        print(f'FAIL: {entry} is not off (no Hidden=true)')
        failed = True
    else:
        print(f'ok: {entry} starts {m.group(1)}, Hidden=true')

if failed:
    sys.exit(1)
print(f'ok: {len(installed)} files installed, as expected')
