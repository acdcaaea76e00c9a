#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""rdmactl across hosts (issue #11 §3): `rdmactl -H a -H b ... status|list|doctor|diff` over
real ssh. Each "host" is a real sshd (Debian's openssh-server) on its own loopback address with
its own sshd_config, whose sessions reach that host's private system bus; on that bus runs
the real rdmad under umockdev on a recorded or constructed host (tests/dbus-fuzz/rdmad_rig.py).

  alpha    127.0.0.2  constructed-mlx5-roce, as recorded
  beta     127.0.0.3  constructed-mlx5-roce with mlx5_1's fw_ver 16.35.1012, the GID types
                      of its entries 2 and 3 swapped (its IPv4 RoCE v2 GID at index 2), and
                      ens1f0np0's mtu 9000 (the fixture text changed by this test)
  gamma    127.0.0.4  constructed-doctor, rdmad.conf asking PFC no-drop priority 3 of every
                      mlx5_core device, DCB emulated by tests/integration/fake_dcbnl.c
  alpha2   127.0.0.2  alpha again under another name (diff of two alike hosts)
  epsilon  127.0.0.4  a second sshd (its own port) whose bus has no rdmad
  delta    127.0.0.5  no sshd at all (unreachable)
  hang     127.0.0.4  a socket that takes connections and never speaks (--timeout)

rdmactl runs ssh through sd-bus ("ssh -xT -- HOST systemd-stdio-bridge"); an `ssh` script
first on PATH adds `-F <our ssh_config>` (host names, ports, our client key and known_hosts).
systemd-stdio-bridge (systemd 252) ignores DBUS_SYSTEM_BUS_ADDRESS (its --bus-path defaults to
/run/dbus/system_bus_socket), so each sshd's ForceCommand is a script that runs it with
--bus-path="$DBUS_SYSTEM_BUS_ADDRESS", set per instance by sshd_config's SetEnv.

  test-fleet.py --rdmad PATH --rdmactl PATH --fixtures DIR --fake-dcbnl PATH"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dbus-fuzz"))
from rdmad_rig import Bus, Proc, Rig, WorkDir, clean_env  # noqa: E402

EXIT_FAILURE = 1
EXIT_PROBLEMS = 3


class Failed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failed(msg)


def attr(text, path_suffix, name):
    """The sysfs attribute `name` of the umockdev device whose P: line ends in `path_suffix`."""
    blocks = [b for b in text.split("\n\n") if b.startswith("P: ") and
              b.split("\n", 1)[0].endswith(path_suffix)]
    check(len(blocks) == 1, "fixture: %d devices end in %s" % (len(blocks), path_suffix))
    for line in blocks[0].split("\n"):
        if line.startswith("A: " + name + "="):
            return line[len("A: " + name + "="):].replace("\\n", "")
    raise Failed("fixture: %s has no attribute %s" % (path_suffix, name))


def set_attr(text, path_suffix, name, value):
    """`text` with that attribute's value replaced (exactly one occurrence)."""
    out, hits = [], 0
    for block in text.split("\n\n"):
        if block.startswith("P: ") and block.split("\n", 1)[0].endswith(path_suffix):
            new = re.sub(r"^A: %s=.*$" % re.escape(name),
                         lambda m: "A: %s=%s\\n" % (name, value), block, flags=re.M)
            hits += new != block
            block = new
        out.append(block)
    check(hits == 1, "fixture: cannot set %s of %s" % (name, path_suffix))
    return "\n\n".join(out)


def free_port(address):
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def roce_mtu(netdev_mtu):
    """RoCE active MTU from the netdev MTU: minus 96 bytes of headers, rounded down to an IB
    MTU (kernel include/rdma/ib_addr.h iboe_get_mtu())."""
    for mtu in (4096, 2048, 1024, 512, 256):
        if netdev_mtu - 96 >= mtu:
            return mtu
    return 0


def recommended_gid(text, device):
    """The lowest GID index of port 1 of `device` whose type is RoCE v2 and whose GID is an
    IPv4-mapped address (::ffff:a.b.c.d), as "N (RoCE v2)" (org.rdmad1.Port.RecommendedGID's
    first choice); None when there is none."""
    for i in range(256):
        try:
            gid = attr(text, "/infiniband/" + device, "ports/1/gids/%d" % i)
        except Failed:
            return None
        if not gid.startswith("0000:0000:0000:0000:0000:ffff:"):
            continue
        try:
            kind = attr(text, "/infiniband/" + device, "ports/1/gid_attrs/types/%d" % i)
        except Failed:
            continue
        if kind == "RoCE v2":
            return "%d (RoCE v2)" % i
    return None


class Sshd:
    """sshd -D on `address`:`port`, root logins with our key, every session the bridge to
    the bus at `bus_address`."""

    def __init__(self, work, name, address, port, bus_address):
        self.port = port
        conf = os.path.join(work, "sshd-%s.conf" % name)
        with open(conf, "w") as f:
            f.write("ListenAddress %s:%d\n" % (address, port) +
                    "HostKey %s/host_key\n" % work +
                    "PidFile none\n"
                    "PermitRootLogin yes\n"
                    "PubkeyAuthentication yes\n"
                    "PasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\n"
                    "AuthorizedKeysFile %s/authorized_keys\n" % work +
                    "StrictModes no\n"
                    "UsePAM no\n"
                    "PrintMotd no\n"
                    # SHLVL=1: bash (root's login shell, which runs ForceCommand) then
                    # counts itself nested and skips ~/.bashrc, which it reads for ssh
                    # sessions (Debian's SSH_SOURCE_BASHRC) and which may be slow here.
                    "SetEnv DBUS_SYSTEM_BUS_ADDRESS=%s SHLVL=1\n" % bus_address +
                    "ForceCommand %s/bridge\n" % work)
        self.log = os.path.join(work, "sshd-%s.log" % name)
        self.proc = Proc(["/usr/sbin/sshd", "-D", "-f", conf, "-E", self.log], clean_env(),
                         os.path.join(work, "sshd-%s.out" % name))
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection((address, port), timeout=1).close()
                return
            except OSError:
                if self.proc.p.poll() is not None or time.monotonic() > deadline:
                    raise Failed("sshd %s did not start: %s" % (name, open(self.log).read()))
                time.sleep(0.05)

    def stop(self):
        self.proc.stop(10)


class Fleet:
    def __init__(self, args):
        self.args = args
        self.workdir = WorkDir("rdmad-fleet.")
        self.work = self.workdir.path
        os.chmod(self.work, 0o755)
        self.rigs, self.sshds, self.buses = {}, [], []
        self.text = {}
        fixtures = args.fixtures
        with open(os.path.join(fixtures, "constructed-mlx5-roce.umockdev")) as f:
            self.text["alpha"] = f.read()
        with open(os.path.join(fixtures, "constructed-doctor.umockdev")) as f:
            self.text["gamma"] = f.read()
        beta = set_attr(self.text["alpha"], "/infiniband/mlx5_1", "fw_ver", "16.35.1012")
        types = [attr(beta, "/infiniband/mlx5_1", "ports/1/gid_attrs/types/%d" % i)
                 for i in (2, 3)]
        beta = set_attr(beta, "/infiniband/mlx5_1", "ports/1/gid_attrs/types/2", types[1])
        beta = set_attr(beta, "/infiniband/mlx5_1", "ports/1/gid_attrs/types/3", types[0])
        self.text["beta"] = set_attr(beta, "/net/ens1f0np0", "mtu", "9000")
        beta_file = os.path.join(self.work, "beta.umockdev")
        with open(beta_file, "w") as f:
            f.write(self.text["beta"])

        # ssh: keys, known_hosts, the bridge, the client's config and the `ssh` on PATH.
        for key in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            os.path.join(self.work, key)], check=True)
        shutil.copy(os.path.join(self.work, "client_key.pub"),
                    os.path.join(self.work, "authorized_keys"))
        with open(os.path.join(self.work, "host_key.pub")) as f:
            host_key = " ".join(f.read().split()[:2])
        self.write("bridge", "#!/bin/sh\n"
                   "case \"$SSH_ORIGINAL_COMMAND\" in\n"
                   "systemd-stdio-bridge) exec systemd-stdio-bridge"
                   " --bus-path=\"$DBUS_SYSTEM_BUS_ADDRESS\" ;;\n"
                   "*) echo \"bridge: not for $SSH_ORIGINAL_COMMAND\" >&2; exit 127 ;;\n"
                   "esac\n", 0o755)
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation

        gamma_conf = ("[export]\nprometheus_dir = \"\"\nnfd_dir = \"\"\n\n"
                      "[[rule]]\ndriver = \"mlx5_core\"\npfc_no_drop = [3]\n")
        no_export = "[export]\nprometheus_dir = \"\"\nnfd_dir = \"\"\n"
        plan = [("alpha", "127.0.0.2", os.path.join(fixtures, "constructed-mlx5-roce.umockdev"),
                 no_export, {}),
                ("beta", "127.0.0.3", beta_file, no_export, {}),
                ("gamma", "127.0.0.4", os.path.join(fixtures, "constructed-doctor.umockdev"),
                 gamma_conf, {"FAKE_DCBNL_NETDEVS": "ens2f0np0,ens2f1np1,ens3f0np0"})]
        self.address = {}
        self.port = {}
        for name, address, host_file, conf, env in plan:
            rig = Rig(args.rdmad, host_file, config=conf)
            self.rigs[name] = rig
            rig.start(preload=[args.fake_dcbnl] if env else [], env=env)
            self.address[name] = address
            self.port[name] = free_port(address)
            self.sshds.append(Sshd(self.work, name, address, self.port[name], rig.address))
        self.address["alpha2"], self.port["alpha2"] = "127.0.0.2", self.port["alpha"]
        # epsilon: sshd and a bus, no rdmad.
        os.makedirs(os.path.join(self.work, "epsilon"))
        bus = Bus(os.path.join(self.work, "epsilon"))
        self.buses.append(bus)
        self.address["epsilon"] = "127.0.0.4"
        self.port["epsilon"] = free_port("127.0.0.4")
        self.sshds.append(Sshd(self.work, "epsilon", "127.0.0.4", self.port["epsilon"],
                               bus.address))
        # hang: the kernel completes the TCP handshake, nobody sends the ssh banner.
        self.hang = socket.socket()
        self.hang.bind(("127.0.0.4", 0))
        self.hang.listen(8)
        self.address["hang"], self.port["hang"] = "127.0.0.4", self.hang.getsockname()[1]
        # delta: nothing listens there.
        self.address["delta"] = "127.0.0.5"
        self.port["delta"] = free_port("127.0.0.5")

        config, known = [], []
        for name in sorted(self.address):
            config.append("Host %s\n  HostName %s\n  Port %d\n"
                          % (name, self.address[name], self.port[name]))
            known.append("[%s]:%d %s\n" % (self.address[name], self.port[name], host_key))
        config.append("Host *\n  User root\n  IdentityFile %s/client_key\n"
                      "  IdentitiesOnly yes\n  UserKnownHostsFile %s/known_hosts\n"
                      "  StrictHostKeyChecking yes\n  BatchMode yes\n  ConnectTimeout 10\n"
                      "  LogLevel ERROR\n" % (self.work, self.work))
        self.write("ssh_config", "".join(config))
        self.write("known_hosts", "".join(known))
        os.makedirs(os.path.join(self.work, "bin"))
        self.write("bin/ssh", "#!/bin/sh\nexec /usr/bin/ssh -F %s/ssh_config \"$@\"\n"
                   % self.work, 0o755)

    def write(self, rel, text, mode=0o644):
        p = os.path.join(self.work, rel)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, mode)

    def rdmactl(self, *argv):
        env = clean_env(PATH=os.path.join(self.work, "bin") + ":" + os.environ["PATH"],
                        NO_COLOR="1")
        env.pop("DBUS_SYSTEM_BUS_ADDRESS", None)
        start = time.monotonic()
        p = subprocess.run([self.args.rdmactl, "--no-pager"] + list(argv), env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        p.seconds = time.monotonic() - start
        return p

    def close(self):
        self.hang.close()
        for s in self.sshds:
            s.stop()
        for b in self.buses:
            b.stop()
        for r in self.rigs.values():
            r.close()
        self.workdir.remove()


def hosts_args(*names):
    out = []
    for n in names:
        out += ["-H", n]
    return out


def test_status_table(f):
    """One table over three hosts with a HOST column: every port of every device of each
    fixture, with its rate from the fixture's rate file."""
    p = f.rdmactl(*hosts_args("alpha", "beta", "gamma"), "status")
    check(p.returncode == 0, "status: exit %d, stderr %r" % (p.returncode, p.stderr))
    check(p.stderr == "", "status: stderr %r" % p.stderr)
    lines = p.stdout.split("\n")
    check(lines[0].split() == ["HOST", "DEVICE", "PORT", "TRANSPORT", "STATE", "PHYS", "RATE",
                               "NETDEV", "PROVIDER"], "status header: %r" % lines[0])
    rows = {}
    for line in lines[1:]:
        if not line.strip():
            break
        cells = line.split()
        rows[(cells[0], cells[1], cells[2])] = line
    want = {}
    for host, devices in (("alpha", ["mlx5_0", "mlx5_1"]), ("beta", ["mlx5_0", "mlx5_1"]),
                          ("gamma", ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"])):
        for dev in devices:
            rate = attr(f.text[host], "/infiniband/" + dev, "ports/1/rate")  # "25 Gb/sec (1X EDR)"
            want[(host, dev, "1")] = rate.split(" Gb/sec")[0] + " Gb/s"
    check(set(rows) == set(want), "status rows: %s, want %s" % (sorted(rows), sorted(want)))
    for key, rate in want.items():
        check(" %s " % rate in rows[key], "status %s: no rate %r in %r" % (key, rate, rows[key]))
    summary = [l for l in lines if l.startswith("3 hosts, ")]
    check(len(summary) == 1 and summary[0].startswith("3 hosts, 8 RDMA devices, 8 ports, "),
          "status summary: %r" % lines[-3:])
    print("status over 3 hosts: ok")


def test_unreachable(f):
    """An unreachable host and one without rdmad: one line each on stderr, the others'
    table on stdout, exit status 1; --json keyed by host with the error."""
    p = f.rdmactl(*hosts_args("alpha", "delta", "epsilon"), "list")
    check(p.returncode == EXIT_FAILURE, "list: exit %d" % p.returncode)
    err = p.stderr.strip("\n").split("\n")
    want = ["rdmactl: cannot reach delta over ssh: connect to host 127.0.0.5 port %d: "
            "Connection refused" % f.port["delta"],
            "rdmactl: rdmad is not running on epsilon (org.rdmad1 has no owner on its system "
            "bus)"]
    check(err == want, "list stderr: %r, want %r" % (err, want))
    lines = p.stdout.split("\n")
    check(lines[0].split()[:2] == ["HOST", "NAME"], "list header: %r" % lines[0])
    rows = [l.split() for l in lines[1:] if l.startswith("alpha ")]
    fw = attr(f.text["alpha"], "/infiniband/mlx5_0", "fw_ver")
    check([r[1] for r in rows] == ["mlx5_0", "mlx5_1"] and all(r[-1] == fw for r in rows),
          "list rows: %r" % rows)
    check(p.stdout.endswith("\n2 RDMA devices listed on 1 host.\n"), "list summary: %r" % p.stdout)

    p = f.rdmactl(*hosts_args("alpha", "delta", "epsilon"), "--json", "status")
    check(p.returncode == EXIT_FAILURE, "status --json: exit %d" % p.returncode)
    doc = json.loads(p.stdout)
    check(sorted(doc) == ["alpha", "delta", "epsilon"], "status --json keys: %r" % sorted(doc))
    check(doc["delta"] == {"error": want[0][len("rdmactl: "):]}, "delta: %r" % doc["delta"])
    check(doc["epsilon"] == {"error": "rdmad is not running on epsilon (org.rdmad1 has no "
                                      "owner on its system bus)"}, "epsilon: %r" % doc["epsilon"])
    names = sorted(d["Name"] for d in doc["alpha"]["Devices"])
    check(names == ["mlx5_0", "mlx5_1"], "alpha devices: %r" % names)
    print("unreachable host and host without rdmad: ok")


def test_timeout(f):
    """A host that never answers: after --timeout, one line, the others printed, exit 1."""
    p = f.rdmactl("--timeout", "5", *hosts_args("alpha", "hang"), "list")
    check(p.returncode == EXIT_FAILURE, "timeout: exit %d, %r" % (p.returncode, p.stderr))
    check(p.stderr == "rdmactl: no answer from hang within 5 s\n", "timeout: %r" % p.stderr)
    check(p.stdout.endswith("\n2 RDMA devices listed on 1 host.\n"), "timeout: %r" % p.stdout)
    check(5 <= p.seconds < 10, "timeout: took %.1f s" % p.seconds)
    print("timeout (%.1f s): ok" % p.seconds)


def test_doctor_blocks(f):
    """doctor: one block per host, headed "==> HOST <=="; exit 3 when one host has a problem
    (gamma's constructed-doctor has warnings)."""
    p = f.rdmactl(*hosts_args("alpha", "gamma"), "doctor")
    check(p.returncode == EXIT_PROBLEMS, "doctor: exit %d, stderr %r" % (p.returncode, p.stderr))
    heads = [l for l in p.stdout.split("\n") if l.startswith("==> ")]
    check(heads == ["==> alpha <==", "==> gamma <=="], "doctor heads: %r" % heads)
    gamma = p.stdout.split("==> gamma <==\n", 1)[1]
    check("mlx5_3:" in gamma, "doctor gamma block names no mlx5_3: %r" % gamma)
    p = f.rdmactl(*hosts_args("alpha", "gamma"), "--json", "doctor")
    doc = json.loads(p.stdout)
    check(sorted(doc) == ["alpha", "gamma"] and isinstance(doc["gamma"], list) and
          any(x["object"] == "mlx5_3" for x in doc["gamma"]), "doctor --json: %r" % doc)
    print("doctor blocks: ok")


def diff_entries(doc):
    """{(board, port, setting): {value: {host: [devices]}}} of diff --json."""
    return {(d["board"], d["port"], d["setting"]):
            {v["value"]: v["hosts"] for v in d["values"]} for d in doc["differences"]}


def test_diff(f):
    """diff alpha beta gamma: every difference with its values and hosts, from the fixture
    files and what the test changed; exit 3."""
    a, g = f.text["alpha"], f.text["gamma"]
    board = attr(a, "/infiniband/mlx5_0", "board_id")          # MT_0000000080
    check(attr(g, "/infiniband/mlx5_1", "board_id") == board, "gamma's mlx5_1 board")
    ib_board = attr(g, "/infiniband/mlx5_0", "board_id")       # MT_0000000223, gamma only
    fw = attr(a, "/infiniband/mlx5_0", "fw_ver")
    check(all(attr(g, "/infiniband/" + d, "fw_ver") == fw for d in ("mlx5_1", "mlx5_2", "mlx5_3"))
          and attr(a, "/infiniband/mlx5_1", "fw_ver") == fw, "fixture firmware")
    beta_fw = attr(f.text["beta"], "/infiniband/mlx5_1", "fw_ver")

    def mtu(text, netdev):
        m = int(attr(text, "/net/" + netdev, "mtu"))
        return "%d (netdev %d)" % (roce_mtu(m), m)

    mtus = {}
    for host, dev, netdev in (("alpha", "mlx5_0", "ens1f0np0"), ("alpha", "mlx5_1", "ens1f1np1"),
                              ("beta", "mlx5_0", "ens1f0np0"), ("beta", "mlx5_1", "ens1f1np1"),
                              ("gamma", "mlx5_1", "ens2f0np0"), ("gamma", "mlx5_2", "ens2f1np1"),
                              ("gamma", "mlx5_3", "ens3f0np0")):
        mtus.setdefault(mtu(f.text[host], netdev), {}).setdefault(host, []).append(dev)
    gids = {}
    for host, devices in (("alpha", ["mlx5_0", "mlx5_1"]), ("beta", ["mlx5_0", "mlx5_1"]),
                          ("gamma", ["mlx5_1", "mlx5_2", "mlx5_3"])):
        for dev in devices:
            gids.setdefault(recommended_gid(f.text[host], dev), {}).setdefault(host, []).append(dev)
    check(len(gids) == 2 and gids.get("2 (RoCE v2)") == {"beta": ["mlx5_1"]},
          "fixture GIDs: %r" % gids)
    want = {
        (board, 1, "RecommendedGID"): gids,
        (board, 0, "Devices"): {"2": {"alpha": [], "beta": []}, "3": {"gamma": []}},
        (ib_board, 0, "Devices"): {"0": {"alpha": [], "beta": []}, "1": {"gamma": []}},
        (board, 0, "FirmwareVersion"): {
            fw: {"alpha": ["mlx5_0", "mlx5_1"], "beta": ["mlx5_0"],
                 "gamma": ["mlx5_1", "mlx5_2", "mlx5_3"]},
            beta_fw: {"beta": ["mlx5_1"]}},
        (board, 1, "ActiveMTU"): mtus,
        (board, 1, "PFCNoDrop"): {"none": {"alpha": ["mlx5_0", "mlx5_1"],
                                           "beta": ["mlx5_0", "mlx5_1"]},
                                  "3": {"gamma": ["mlx5_1", "mlx5_2", "mlx5_3"]}},
    }
    p = f.rdmactl(*hosts_args("alpha", "beta", "gamma"), "--json", "diff")
    check(p.returncode == EXIT_PROBLEMS, "diff --json: exit %d, stderr %r"
          % (p.returncode, p.stderr))
    doc = json.loads(p.stdout)
    check(doc["hosts"] == ["alpha", "beta", "gamma"] and doc["errors"] == {},
          "diff hosts: %r %r" % (doc["hosts"], doc["errors"]))
    got = diff_entries(doc)
    check(got == want, "diff --json:\n%s\nwant:\n%s" % (json.dumps({str(k): v for k, v in
                                                                    got.items()}, indent=1),
                                                         json.dumps({str(k): v for k, v in
                                                                     want.items()}, indent=1)))

    p = f.rdmactl(*hosts_args("alpha", "beta", "gamma"), "diff")
    check(p.returncode == EXIT_PROBLEMS, "diff: exit %d" % p.returncode)
    lines = p.stdout.split("\n")
    check(lines[0].split() == ["BOARD", "PORT", "SETTING", "VALUE", "HOSTS"],
          "diff header: %r" % lines[0])
    rows = [" ".join(l.split()) for l in lines[1:] if l.startswith(board + " ")]
    fw_rows = [r for r in rows if r.startswith(board + " - FirmwareVersion ")]
    check(fw_rows == ["%s - FirmwareVersion %s alpha (mlx5_0, mlx5_1), beta (mlx5_0), "
                      "gamma (mlx5_1, mlx5_2, mlx5_3)" % (board, fw),
                      "%s - FirmwareVersion %s beta (mlx5_1)" % (board, beta_fw)],
          "diff firmware rows: %r" % fw_rows)
    pfc_rows = [r for r in rows if r.startswith(board + " 1 PFCNoDrop ")]
    check(pfc_rows == ["%s 1 PFCNoDrop none alpha (mlx5_0, mlx5_1), beta (mlx5_0, mlx5_1)" % board,
                       "%s 1 PFCNoDrop 3 gamma (mlx5_1, mlx5_2, mlx5_3)" % board],
          "diff PFC rows: %r" % pfc_rows)
    check("%d settings differ between 3 hosts." % len(want) in p.stdout,
          "diff summary: %r" % lines[-3:])
    print("diff of 3 hosts: ok")

    # Two names of one host are alike.
    p = f.rdmactl("-H", "alpha,alpha2", "diff")
    check(p.returncode == 0 and p.stdout == "No differences between 2 hosts.\n",
          "diff alike: exit %d, %r %r" % (p.returncode, p.stdout, p.stderr))
    # A host that cannot be asked: its line, the others compared, exit 1.
    p = f.rdmactl(*hosts_args("alpha", "alpha2", "delta"), "diff")
    check(p.returncode == EXIT_FAILURE and "No differences between 2 hosts." in p.stdout and
          p.stderr.startswith("rdmactl: cannot reach delta over ssh: "),
          "diff with delta: exit %d, %r %r" % (p.returncode, p.stdout, p.stderr))
    print("diff alike and with an unreachable host: ok")


def test_usage(f):
    for argv, msg in ((["-H", "alpha", "diff"], "diff compares hosts: give two or more with -H"),
                      (["-H", "alpha", "-H", "beta", "reconcile"],
                       "reconcile talks to one host: give -H once"),
                      (["-H", "alpha,alpha", "status"], "host 'alpha' given twice"),
                      (["-H", "alpha,", "status"],
                       "--host needs a [USER@]HOST (or a comma list of them)"),
                      (["--timeout", "0", "-H", "alpha,beta", "status"],
                       "bad --timeout '0': a number of seconds from 1 to 3600"),
                      (["--timeout", "5", "-H", "alpha", "status"],
                       "--timeout is only for several hosts (-H given twice or more)")):
        p = f.rdmactl(*argv)
        check(p.returncode == 2 and p.stderr.startswith("rdmactl: %s\n" % msg),
              "%r: exit %d, %r" % (argv, p.returncode, p.stderr))
    print("usage errors: ok")


def measure(f):
    """Wall time of status over each host alone and over the three at once (best of 3)."""
    def best(*argv):
        times = []
        for _ in range(3):
            p = f.rdmactl(*argv)
            check(p.returncode == 0, "%r: exit %d %r" % (argv, p.returncode, p.stderr))
            times.append(p.seconds)
        return min(times)
    single = {h: best("-H", h, "status") for h in ("alpha", "beta", "gamma")}
    fleet = best(*hosts_args("alpha", "beta", "gamma"), "status")
    print("figure: rdmactl -H HOST status, best of 3: %s s (one after the other %.3f s); "
          "-H alpha -H beta -H gamma status: %.3f s, %.2f x the slowest single host"
          % (", ".join("%s %.3f" % kv for kv in single.items()), sum(single.values()), fleet,
             fleet / max(single.values())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rdmad", required=True)
    ap.add_argument("--rdmactl", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--fake-dcbnl", required=True)
    args = ap.parse_args()
    f = Fleet(args)
    failures = 0
    try:
        for t in (test_usage, test_status_table, test_unreachable, test_timeout,
                  test_doctor_blocks, test_diff, measure):
            try:
                t(f)
            except Failed as e:
                failures += 1
                print("FAIL %s: %s" % (t.__name__, e))
            except Exception:
                failures += 1
                print("FAIL %s:\n%s" % (t.__name__, traceback.format_exc()))
    finally:
        if failures:
            for name, rig in f.rigs.items():
                print("--- rdmad %s log:\n%s" % (name, rig.log()[-3000:]))
        f.close()
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
