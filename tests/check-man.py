#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""man/ documents every D-Bus member, command verb and option that exists, and no others.

Usage: check-man.py SOURCE_DIR RDMAD RDMACTL RDMAD_NOTIFY RDMAD_WAIT_ONLINE. Reads the interface XML, the programs' --help,
and the scdoc sources; prints every mismatch and exits 1 when there is one."""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

src, rdmad, rdmactl, rdmad_notify, rdmad_wait_online = (Path(sys.argv[1]), sys.argv[2],
                                                       sys.argv[3], sys.argv[4], sys.argv[5])
errors = []


def help_text(exe):
    return subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout


def long_options(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))


# D-Bus: every method and property of every interface, in org.rdmad1(5), and back.
api_page = (src / "man" / "org.rdmad1.5.scd").read_text()
members = set()
for xml in sorted((src / "dbus").glob("org.rdmad1.*.xml")):
    for iface in ET.parse(xml).getroot().iter("interface"):
        if not re.search(r"^# " + re.escape(iface.get("name")) + r"$", api_page, re.M):
            errors.append(f"org.rdmad1.5: no section for interface {iface.get('name')}")
        for kind in ("method", "property", "signal"):
            for m in iface.iter(kind):
                members.add(m.get("name"))
                if not re.search(r"\*" + re.escape(m.get("name")) + r"(\(|\*)", api_page):
                    errors.append(f"org.rdmad1.5: {iface.get('name')}.{m.get('name')} undocumented")
documented = set()
section = ""
for line in api_page.splitlines():  # definition lines: "*Name*", "*A*, *B*", "*Method(args)*"
    if line.startswith("# "):
        section = line
    if section.startswith("# org.rdmad1.") and re.match(r"\*[A-Z]", line):
        documented |= set(re.findall(r"\*([A-Z][A-Za-z]*)(?:\(|\*)", line))
for name in sorted(documented - members):
    errors.append(f"org.rdmad1.5: documents {name}, which no interface has")
xml_text = "".join(p.read_text() for p in (src / "dbus").glob("org.rdmad1.*.xml"))
for err in sorted(set(re.findall(r"org\.rdmad1\.Error\.[A-Za-z]+", xml_text))):
    if err not in api_page:
        errors.append(f"org.rdmad1.5: error {err} undocumented")

# Programs: every verb and long option in --help is in the page, and every option in the
# page is in --help.
for exe, page in ((rdmad, "rdmad.8.scd"), (rdmactl, "rdmactl.1.scd"),
                  (rdmad_notify, "rdmad-notify.1.scd"),
                  (rdmad_wait_online, "rdmad-wait-online.8.scd")):
    text = help_text(exe)
    page_text = (src / "man" / page).read_text()
    for opt in sorted(long_options(text)):
        if f"*{opt}*" not in page_text and f"*{opt}=" not in page_text:
            errors.append(f"{page}: option {opt} undocumented")
    for opt in sorted(set(re.findall(r"\*(--[a-z][a-z0-9-]*)[*=]", page_text)) - long_options(text)):
        errors.append(f"{page}: documents {opt}, which --help does not list")
    if "Verbs:" in text:
        verbs = re.findall(r"^  ([a-z][a-z-]+)\b", text.split("Verbs:")[1].split("Options:")[0], re.M)
        for verb in verbs:
            if f"*{verb}*" not in page_text:
                errors.append(f"{page}: verb {verb} undocumented")

for e in errors:
    print(e)
print(f"man pages: {len(errors)} mismatches")
sys.exit(1 if errors else 0)
