#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Every line of the udev rule file is a comment, blank, or comma-separated KEY op "value"
pairs with keys and operators udev accepts (udev(7), systemd 252: `udevadm verify` does not
exist yet and `udevadm test` needs a real device). The rule tags infiniband devices for
systemd and wants a unit that exists.

usage: udev-rules.py RULES_FILE UNIT_FILE...
"""
import os
import re
import sys

rules, units = sys.argv[1], [os.path.basename(u) for u in sys.argv[2:]]

# udev(7): keys that only match, keys that only assign, keys that do both.
MATCH = {'ACTION', 'DEVPATH', 'KERNEL', 'KERNELS', 'NAME', 'SYMLINK', 'SUBSYSTEM', 'SUBSYSTEMS',
         'DRIVER', 'DRIVERS', 'ATTR', 'ATTRS', 'SYSCTL', 'ENV', 'CONST', 'TAG', 'TAGS', 'TEST',
         'PROGRAM', 'RESULT'}
ASSIGN = {'NAME', 'SYMLINK', 'OWNER', 'GROUP', 'MODE', 'SECLABEL', 'ATTR', 'SYSCTL', 'ENV',
          'TAG', 'RUN', 'LABEL', 'GOTO', 'IMPORT', 'OPTIONS'}
WITH_ARG = {'ATTR', 'ATTRS', 'SYSCTL', 'ENV', 'CONST', 'TEST', 'IMPORT', 'RUN', 'SECLABEL'}
PAIR = re.compile(r'\s*([A-Z_]+)(\{[^}]*\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*')

failed = []
wants = []
systemd_tagged = False
with open(rules) as f:
    lines = f.read().split('\n')
for n, line in enumerate(lines, 1):
    where = f'{rules}:{n}'
    if line.endswith('\\'):
        failed.append(f'{where}: line continuation (keep one rule per line)')
        continue
    if not line.strip() or line.lstrip().startswith('#'):
        continue
    pos, pairs = 0, []
    while pos < len(line):
        m = PAIR.match(line, pos)
        if not m:
            failed.append(f'{where}: not KEY op "value" at column {pos + 1}: {line[pos:]!r}')
            break
        key, arg, op, value = m.groups()
        if (arg is not None) != (key in WITH_ARG) and key not in {'IMPORT', 'RUN'}:
            failed.append(f'{where}: {key} ' + ('takes no {arg}' if arg else 'needs a {arg}'))
        if op in ('==', '!=') and key not in MATCH:
            failed.append(f'{where}: {key} cannot be matched')
        if op not in ('==', '!=') and key not in ASSIGN:
            failed.append(f'{where}: {key} cannot be assigned')
        pairs.append((key, arg, op, value))
        pos = m.end()
        if pos < len(line):
            if line[pos] != ',':
                failed.append(f'{where}: missing comma at column {pos + 1}')
                break
            pos += 1
    if ('SUBSYSTEM', None, '==', 'infiniband') in pairs:
        systemd_tagged |= ('TAG', None, '+=', 'systemd') in pairs
        wants += [v for k, a, o, v in pairs if k == 'ENV' and a == '{SYSTEMD_WANTS}' and o == '+=']

if not systemd_tagged:
    failed.append('no rule tags SUBSYSTEM=="infiniband" devices with TAG+="systemd"')
if not wants:
    failed.append('no rule adds ENV{SYSTEMD_WANTS} for SUBSYSTEM=="infiniband"')
for unit in ' '.join(wants).split():
    if unit not in units:
        failed.append(f'SYSTEMD_WANTS names {unit}, not a unit this project installs ({units})')

for f in failed:
    print('FAIL:', f)
if failed:
    sys.exit(1)
print(f'ok: {rules} parses; infiniband devices are tagged and want {" ".join(wants)}')
