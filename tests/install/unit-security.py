#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""rdmad's unit scores an overall exposure of at most 2.5 in
`systemd-analyze security --offline=true` (systemd-networkd's own unit: 2.8 on Debian 12).

usage: unit-security.py SYSTEMD_ANALYZE UNIT_FILE
"""
import re
import subprocess
import sys

MAX_EXPOSURE = 2.5
analyze, unit = sys.argv[1:3]

# --threshold= takes the exposure times ten (systemd 252: 0..100) and makes the exit status
# non-zero above it. The printed level is checked as well, so a changed scale cannot pass.
r = subprocess.run([analyze, 'security', '--offline=true', '--no-pager',
                    f'--threshold={int(MAX_EXPOSURE * 10)}', unit],
                   capture_output=True, text=True)
print(r.stdout, r.stderr, sep='')
m = re.search(r'Overall exposure level for \S+: (\d+\.\d)', r.stdout)
if not m:
    sys.exit('FAIL: no "Overall exposure level" line in systemd-analyze security output')
exposure = float(m.group(1))
if exposure > MAX_EXPOSURE or r.returncode != 0:
    sys.exit(f'FAIL: exposure {exposure} (exit status {r.returncode}), at most {MAX_EXPOSURE} wanted')
print(f'ok: exposure {exposure} <= {MAX_EXPOSURE}')
