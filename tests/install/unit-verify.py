#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""`systemd-analyze verify` accepts rdmad's units (rdmad.service, rdmad-wait-online.service and
an instance of rdmad-wait-online@.service), and `--user verify` rdmad-notify's. verify checks
that ExecStart= is an executable and that every Documentation=man: page opens, so the units are
checked as installed: `meson install --destdir`, ExecStart= pointed at the DESTDIR copy of the
executable, MANPATH at the DESTDIR man pages.

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


mans = glob.glob(os.path.join(destdir, '**/share/man'), recursive=True)
if len(mans) != 1:
    sys.exit(f'FAIL: want one installed man dir, got {mans}')


def checked_copy(unit_glob, name):
    """The installed unit `name` (found with `unit_glob` under DESTDIR), ExecStart= pointed
    at the DESTDIR executable, written to plain_work under its own name (verify names the
    unit after the file)."""
    found = glob.glob(os.path.join(destdir, unit_glob), recursive=True)
    if len(found) != 1:
        sys.exit(f'FAIL: want one installed {name}, got {found}')
    with open(found[0]) as f:
        text = f.read()
    m = re.search(r'^ExecStart=(\S+)', text, re.M)
    if not m:
        sys.exit(f'FAIL: no ExecStart= in {name}')
    text = text.replace(f'ExecStart={m.group(1)}', exec_start(m.group(1)))
    checked = os.path.join(plain_work, name)
    with open(checked, 'w') as f:
        f.write(text)
    return checked


# rdmad.service, rdmad-wait-online.service and the template rdmad-wait-online@.service (as an
# instance: verify checks a template through one), in one run, so that the wait units'
# Requires=rdmad.service finds the rdmad.service beside them. The instance is a device without
# a port: verify's unit path splits at colons, and "mlx5_0:1" fails there ("Couldn't process
# aliases") although systemd itself takes it.
checked = [checked_copy('**/systemd/system/rdmad.service', 'rdmad.service'),
           checked_copy('**/systemd/system/rdmad-wait-online.service',
                        'rdmad-wait-online.service'),
           checked_copy('**/systemd/system/rdmad-wait-online@.service',
                        'rdmad-wait-online@.service')]
instance = os.path.join(plain_work, 'rdmad-wait-online@mlx5_0.service')
if os.path.lexists(instance):
    os.remove(instance)
os.symlink('rdmad-wait-online@.service', instance)

env = dict(os.environ, MANPATH=exec_root + mans[0][len(destdir):], SYSTEMD_LOG_LEVEL='notice')
r = subprocess.run([analyze, 'verify', '--no-pager', *checked[:2], instance],
                   capture_output=True, text=True, env=env)
print(r.stdout, r.stderr, sep='')
# verify exits 0 even for some complaints; any output about our units is a failure.
ours = [line for line in (r.stdout + r.stderr).splitlines() if 'rdmad' in line]
if r.returncode != 0 or ours:
    sys.exit(f'FAIL: systemd-analyze verify exited {r.returncode}')
print('ok: systemd-analyze verify accepts rdmad.service, rdmad-wait-online.service and '
      'rdmad-wait-online@mlx5_0.service')

# rdmad-notify's user unit, the same way; --user needs a runtime directory of its own.
checked = checked_copy('**/systemd/user/rdmad-notify.service', 'rdmad-notify.service')
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
