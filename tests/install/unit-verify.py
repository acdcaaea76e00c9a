#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""`systemd-analyze verify` accepts rdmad's unit, and `--user verify` rdmad-notify's. verify checks that ExecStart= is an
executable and that every Documentation=man: page opens, so the unit is checked as installed:
`meson install --destdir`, ExecStart= pointed at the DESTDIR copy of rdmad, MANPATH at the
DESTDIR man pages.

usage: unit-verify.py SYSTEMD_ANALYZE MESON BUILD_ROOT WORK_DIR
"""
import atexit
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

analyze, meson, build_root, work = sys.argv[1:5]
# SIGTERM (meson's timeout) and SIGINT end the run through SystemExit: the atexit clean-up runs.
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
destdir = os.path.join(work, 'destdir')
shutil.rmtree(destdir, ignore_errors=True)
os.makedirs(work, exist_ok=True)
r = subprocess.run([meson, 'install', '-C', build_root, '--no-rebuild', '--quiet',
                    '--destdir', destdir], capture_output=True, text=True)
if r.returncode != 0:
    sys.exit(f'FAIL: meson install --destdir exited {r.returncode}\n{r.stdout}{r.stderr}')

# ExecStart= runs the DESTDIR copy: systemd.service(5), "Command lines", lets the executable be
# quoted, "%" written "%%" (a specifier otherwise). A path with a quote or a backslash systemd
# refuses however written ("Executable name contains special characters"), and verify's unit
# path (the checked unit's directory) and MANPATH split at colons: a work directory with one of
# those is named through a link in a plain temporary directory.
plain_work = work
if any(c in work for c in '"\'\\:'):
    links = tempfile.mkdtemp(prefix='rdmad-unit-verify.')
    atexit.register(shutil.rmtree, links, ignore_errors=True)
    plain_work = os.path.join(links, 'work')
    os.symlink(os.path.abspath(work), plain_work)
exec_root = os.path.join(plain_work, 'destdir')


def exec_start(path):
    return 'ExecStart="%s"' % (exec_root + path).replace('%', '%%')


units = glob.glob(os.path.join(destdir, '**/systemd/system/rdmad.service'), recursive=True)
mans = glob.glob(os.path.join(destdir, '**/share/man'), recursive=True)
if len(units) != 1 or len(mans) != 1:
    sys.exit(f'FAIL: want one installed rdmad.service and one man dir, got {units} {mans}')
with open(units[0]) as f:
    text = f.read()
m = re.search(r'^ExecStart=(\S+)', text, re.M)
if not m:
    sys.exit('FAIL: no ExecStart= in the unit')
text = text.replace(f'ExecStart={m.group(1)}', exec_start(m.group(1)))
# verify names the unit after the file; keep the name.
checked = os.path.join(plain_work, 'rdmad.service')
with open(checked, 'w') as f:
    f.write(text)

env = dict(os.environ, MANPATH=exec_root + mans[0][len(destdir):], SYSTEMD_LOG_LEVEL='notice')
r = subprocess.run([analyze, 'verify', '--no-pager', checked],
                   capture_output=True, text=True, env=env)
print(r.stdout, r.stderr, sep='')
# verify exits 0 even for some complaints; any output about our unit is a failure.
ours = [line for line in (r.stdout + r.stderr).splitlines() if 'rdmad' in line]
if r.returncode != 0 or ours:
    sys.exit(f'FAIL: systemd-analyze verify exited {r.returncode}')
print('ok: systemd-analyze verify accepts the unit')

# rdmad-notify's user unit, the same way; --user needs a runtime directory of its own.
users = glob.glob(os.path.join(destdir, '**/systemd/user/rdmad-notify.service'), recursive=True)
if len(users) != 1:
    sys.exit(f'FAIL: want one installed rdmad-notify.service, got {users}')
with open(users[0]) as f:
    text = f.read()
m = re.search(r'^ExecStart=(\S+)', text, re.M)
if not m:
    sys.exit('FAIL: no ExecStart= in rdmad-notify.service')
text = text.replace(f'ExecStart={m.group(1)}', exec_start(m.group(1)))
checked = os.path.join(plain_work, 'rdmad-notify.service')
with open(checked, 'w') as f:
    f.write(text)
# A short one (mkdtemp makes it 0700), never under the build directory: systemd puts
# sockets there (gpg-agent's), and a deep build directory exceeds sun_path's 108 bytes
# ("File name too long").
runtime = tempfile.mkdtemp(prefix='rdmad-runtime.')
atexit.register(shutil.rmtree, runtime, ignore_errors=True)
r = subprocess.run([analyze, '--user', 'verify', '--no-pager', checked], capture_output=True,
                   text=True, env=dict(env, XDG_RUNTIME_DIR=runtime))
print(r.stdout, r.stderr, sep='')
ours = [line for line in (r.stdout + r.stderr).splitlines() if 'rdmad' in line]
if r.returncode != 0 or ours:
    sys.exit(f'FAIL: systemd-analyze --user verify exited {r.returncode}')
print('ok: systemd-analyze --user verify accepts rdmad-notify.service')
