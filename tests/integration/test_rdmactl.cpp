// SPDX-License-Identifier: MIT
//
// rdmactl against the real daemon (only when meson knows rdmactl_exe: RDMACTL is set).
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <regex>
#include <sstream>

using namespace it;

namespace {
bool have_rdmactl() {
    if (env_or_empty("RDMACTL").empty()) {
        WARN("rdmactl is not built (no rdmactl_exe in meson): rdmactl checks not run");
        return false;
    }
    return true;
}
} // namespace

TEST_CASE("rdmactl --json status equals Describe(); rdmactl status names every device",
          "[rdmactl]") {
    if (!have_rdmactl())
        return;
    const std::string ctl = env_or_fail("RDMACTL");
    Rig rig("procfs-hfi1-mlx4-mlx5");
    auto r = run_program({ctl, "--json", "status"});
    INFO("stderr: " << r.err);
    CHECK(r.status == 0);
    json parsed;
    REQUIRE_NOTHROW(parsed = json::parse(r.out));
    CHECK(parsed == rig.client->describe());

    auto s = run_program({ctl, "status"});
    INFO("stdout: " << s.out << "\nstderr: " << s.err);
    CHECK(s.status == 0);
    for (auto& d : rig.described["Devices"])
        CHECK(s.out.find(d["Name"].get<std::string>()) != std::string::npos);
    rig.stop_daemon();
}

TEST_CASE("rdmactl without a daemon exits 1 with 'not running'; bad usage exits 2", "[rdmactl]") {
    if (!have_rdmactl())
        return;
    const std::string ctl = env_or_fail("RDMACTL");
    PrivateBus bus; // a bus with nobody owning org.rdmad1
    auto r = run_program({ctl, "status"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("not running") != std::string::npos);

    auto u = run_program({ctl, "bogus"});
    INFO("bogus stdout: " << u.out << "\nstderr: " << u.err);
    CHECK(u.status == 2);
}

// ---- the conventions of systemctl and networkctl (issue 13) ------------------------------

namespace {

// `command` (a shell command line) on a pseudo-terminal: script(1) from util-linux gives it
// one and copies what it writes (with the terminal's "\r\n") to our pipe.
RunResult on_pty(const std::string& command) {
    return run_program({"script", "--quiet", "--return", "--command", command, "/dev/null"});
}

std::string quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// SGR sequences rdmactl uses (cli/terminal.hpp): ECMA-48 bold red, yellow, green, reset.
const std::string kGreenActive = "\x1b[0;1;32mACTIVE\x1b[0m";
const std::string kYellow = "\x1b[0;1;33m";

} // namespace

TEST_CASE("rdmactl help, help VERB, and a suggestion for a mistyped verb", "[rdmactl][cli]") {
    if (!have_rdmactl())
        return;
    const std::string ctl = env_or_fail("RDMACTL");
    PrivateBus bus; // help needs no rdmad
    auto h = run_program({ctl, "help"});
    INFO("help: " << h.out << h.err);
    CHECK(h.status == 0);
    CHECK(h.out == run_program({ctl, "--help"}).out);
    CHECK(h.out.find("\n  revert DEVICE [PORT]") != std::string::npos);
    CHECK(h.out.find("\n  help [VERB]") != std::string::npos);

    auto v = run_program({ctl, "help", "set-pfc"});
    INFO("help set-pfc: " << v.out << v.err);
    CHECK(v.status == 0);
    CHECK(v.out.rfind("Usage: rdmactl [OPTIONS] set-pfc DEVICE PRIORITIES\n", 0) == 0);

    auto s = run_program({ctl, "stauts"});
    INFO("stauts: " << s.out << s.err);
    CHECK(s.status == 2);
    CHECK(s.out.empty());
    CHECK(s.err.rfind("rdmactl: unknown verb 'stauts'; did you mean 'status'?\n", 0) == 0);
    auto l = run_program({ctl, "help", "lsit"});
    CHECK(l.status == 2);
    CHECK(l.err.rfind("rdmactl: unknown verb 'lsit'; did you mean 'list'?\n", 0) == 0);
    auto r = run_program({ctl, "revrt", "mlx5_0"});
    CHECK(r.err.rfind("rdmactl: unknown verb 'revrt'; did you mean 'revert'?\n", 0) == 0);
    // Nothing close: no guess.
    auto x = run_program({ctl, "xyzzy"});
    CHECK(x.status == 2);
    CHECK(x.err.rfind("rdmactl: unknown verb 'xyzzy'\n", 0) == 0);
}

TEST_CASE("rdmactl set-trust, set-dscp, set-rdma-cm: bad arguments are usage errors (exit 2) "
          "found before rdmad is asked",
          "[rdmactl][cli]") {
    if (!have_rdmactl())
        return;
    const std::string ctl = env_or_fail("RDMACTL");
    PrivateBus bus; // nobody owns org.rdmad1: a call would fail with 1, "not running"
    const std::string hint = "\nTry 'rdmactl --help' for more information.\n";
    const auto joined = [](const std::vector<std::string>& args) {
        std::string line;
        for (const auto& a : args)
            line += (line.empty() ? "" : " ") + a;
        return line;
    };
    const std::string form =
        "MAP must be a comma list of DSCP:PRIORITY (DSCP 0-63, priority 0-7), e.g. 26:3,48:6";
    // DSCP is the 6-bit field of RFC 2474 (0-63), 802.1p priorities 3 bits (0-7).
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"set-trust", "mlx5_0"}, "set-trust needs DEVICE dscp|pcp"},
        {{"set-trust", "mlx5_0", "DSCP"}, "bad TRUST 'DSCP': dscp or pcp"},
        {{"set-trust", "mlx5_0", "dscp", "3"}, "too many arguments for set-trust: '3'"},
        {{"set-trust", "", "dscp"}, "DEVICE must not be empty"},
        {{"set-dscp", "mlx5_0"}, "set-dscp needs DEVICE MAP"},
        {{"set-dscp", "mlx5_0", ""}, form},
        {{"set-dscp", "mlx5_0", "26:3,64:1"}, "DSCP 64 is above 63 in '64:1'"},
        {{"set-dscp", "mlx5_0", "26:8"}, "priority 8 is above 7 in '26:8'"},
        {{"set-dscp", "mlx5_0", "26:3,48:6,26:4"}, "DSCP 26 given twice"},
        {{"set-dscp", "mlx5_0", "26=3"}, "bad entry '26=3': " + form},
        {{"set-dscp", "mlx5_0", "26:3,"}, "bad entry '': " + form},
        {{"set-dscp", "mlx5_0", "x:3"}, "bad entry 'x:3': " + form},
        {{"set-dscp", "mlx5_0", "26:3:1"}, "bad entry '26:3:1': " + form},
        {{"set-rdma-cm", "mlx5_0"}, "set-rdma-cm needs --roce-mode, --tos or both"},
        {{"set-rdma-cm"}, "set-rdma-cm needs DEVICE"},
        {{"set-rdma-cm", "mlx5_0", "--tos", "256"}, "bad --tos '256': a ToS byte from 0 to 255"},
        {{"set-rdma-cm", "mlx5_0", "--tos=-1"}, "bad --tos '-1': a ToS byte from 0 to 255"},
        {{"set-rdma-cm", "mlx5_0", "--roce-mode", "v2"},
         "bad --roce-mode 'v2': \"RoCE v2\" or \"IB/RoCE v1\""},
        {{"set-rdma-cm", "mlx5_0", "106"}, "too many arguments for set-rdma-cm: '106'"},
        {{"set-pfc", "mlx5_0", "3", "--exclusive"}, "--exclusive is only for set-dscp"},
        {{"set-trust", "mlx5_0", "dscp", "--tos", "106"}, "--tos is only for set-rdma-cm"},
        {{"set-dscp", "mlx5_0", "26:3", "--roce-mode=RoCE v2"},
         "--roce-mode is only for set-rdma-cm"},
        {{"status", "--persist"}, "--persist is only for the set-* verbs"},
    };
    for (const auto& [args, message] : cases) {
        std::vector<std::string> argv{ctl};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = run_program(argv);
        INFO("rdmactl " << joined(args) << ": " << r.out << r.err);
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(r.err == "rdmactl: " + message + hint);
    }

    // --persist is taken by every set-* verb: these get as far as the bus (no rdmad: exit 1).
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"set-trust", "mlx5_0", "pcp", "--persist"},
          {"set-dscp", "mlx5_0", "0:0,63:7", "--exclusive", "--persist"},
          {"set-rdma-cm", "mlx5_0", "--roce-mode=IB/RoCE v1", "--tos=0", "--persist"},
          {"set-rdma-cm", "mlx5_0", "--tos", "255"}}) {
        std::vector<std::string> argv{ctl};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = run_program(argv);
        INFO("rdmactl " << joined(args) << ": " << r.out << r.err);
        CHECK(r.status == 1);
        CHECK(r.err.find("not running") != std::string::npos);
    }

    auto h = run_program({ctl, "help", "set-dscp"});
    CHECK(h.status == 0);
    CHECK(h.out.rfind("Usage: rdmactl [OPTIONS] set-dscp DEVICE MAP\n", 0) == 0);
    auto v = run_program({ctl, "help", "revert"});
    INFO(v.out);
    CHECK(v.out.find("Drop every setting made over D-Bus for DEVICE (all the set-* verbs;") !=
          std::string::npos);
}

TEST_CASE("rdmactl: an unreachable system bus or ssh host is named with the reason",
          "[rdmactl][cli]") {
    if (!have_rdmactl())
        return;
    const std::string ctl = env_or_fail("RDMACTL");
    TempDir dir("rdmactl-nobus");
    const std::string address = "unix:path=" + (dir / "no-such-socket").string();
    auto r = run_program({"env", "DBUS_SYSTEM_BUS_ADDRESS=" + address, ctl, "status"});
    INFO(r.out << r.err);
    CHECK(r.status == 1);
    // connect(2) on a path that does not exist: ENOENT.
    CHECK(r.err ==
          "rdmactl: cannot reach the system bus at " + address + ": No such file or directory\n");

    // -H: sd-bus runs "ssh -xT -- HOST systemd-stdio-bridge"; an ssh that fails as OpenSSH
    // does for a refused connection (its message, exit status 255).
    write_file(dir / "ssh", "#!/bin/sh\n"
                            "for host; do :; done\n"
                            "echo \"ssh: connect to host node17 port 22: Connection refused\" >&2\n"
                            "exit 255\n");
    fs::permissions(dir / "ssh", fs::perms::owner_all);
    auto h = run_program({"env", "PATH=" + dir.path().string() + ":" + env_or_empty("PATH"), ctl,
                          "-H", "node17", "status"});
    INFO(h.out << h.err);
    CHECK(h.status == 1);
    CHECK(h.err ==
          "rdmactl: cannot reach node17 over ssh: connect to host node17 port 22: Connection "
          "refused\n");
}

TEST_CASE("rdmactl colours on a terminal only, pages there, and --no-legend prints no blank lines",
          "[rdmactl][cli]") {
    if (!have_rdmactl())
        return;
    const std::string ctl = quoted(env_or_fail("RDMACTL"));
    // hfi1_0 port 1 and mlx5_0 port 1 are ACTIVE; no uverbs in the capture: warnings.
    Rig rig("procfs-hfi1-mlx4-mlx5");
    const std::string env = "env -u NO_COLOR -u LESS TERM=xterm RDMACTL_PAGER= ";

    auto tty = on_pty(env + ctl + " status");
    INFO("pty: " << tty.out << tty.err);
    CHECK(tty.status == 0);
    CHECK(tty.out.find(kGreenActive) != std::string::npos);
    CHECK(tty.out.find(kYellow + "mlx5_0: warning: ") != std::string::npos);

    auto pipe =
        run_program({"env", "-u", "NO_COLOR", "TERM=xterm", env_or_fail("RDMACTL"), "status"});
    INFO("pipe: " << pipe.out);
    CHECK(pipe.status == 0);
    CHECK(pipe.out.find("ACTIVE") != std::string::npos);
    CHECK(pipe.out.find('\x1b') == std::string::npos);

    for (const std::string& off :
         {env + "NO_COLOR=1 " + ctl + " status", env + ctl + " --no-color status",
          env + ctl + " --json status", env + "TERM=dumb " + ctl + " doctor"}) {
        auto o = on_pty(off);
        INFO(off << ": " << o.out);
        CHECK(o.out.find("warning") != std::string::npos);
        CHECK(o.out.find('\x1b') == std::string::npos);
    }

    // The pager: RDMACTL_PAGER first, then PAGER; LESS=FRSXMK when unset; --no-pager; never
    // in a pipe.
    auto paged =
        on_pty("env -u LESS RDMACTL_PAGER='echo LESS=$LESS; sed s/^/paged:/' " + ctl + " list");
    INFO("paged: " << paged.out);
    CHECK(paged.out.find("LESS=FRSXMK\r\n") != std::string::npos);
    CHECK(paged.out.find("paged:mlx4_0 ") != std::string::npos);
    auto pager = on_pty("env -u RDMACTL_PAGER PAGER='sed s/^/viaPAGER:/' " + ctl + " list");
    CHECK(pager.out.find("viaPAGER:mlx4_0 ") != std::string::npos);
    auto unpaged = on_pty("env RDMACTL_PAGER='sed s/^/paged:/' " + ctl + " --no-pager list");
    CHECK(unpaged.out.find("paged:") == std::string::npos);
    CHECK(unpaged.out.find("mlx4_0 ") != std::string::npos);
    auto piped =
        run_program({"env", "RDMACTL_PAGER=sed s/^/paged:/", env_or_fail("RDMACTL"), "list"});
    CHECK(piped.out.find("paged:") == std::string::npos);

    // --no-legend: rows only, no blank separator lines (status has problems and a summary,
    // show several sections, doctor several groups).
    for (const char* verb : {"status", "doctor"}) {
        auto n = run_program({env_or_fail("RDMACTL"), "--no-legend", verb});
        INFO(verb << ": " << n.out);
        CHECK(!n.out.empty());
        CHECK(n.out.find("\n\n") == std::string::npos);
        CHECK(n.out.front() != '\n');
    }
    auto n = run_program({env_or_fail("RDMACTL"), "--no-legend", "show", "mlx4_0"});
    INFO("show: " << n.out);
    CHECK(n.out.find("Number: 2") != std::string::npos);
    CHECK(n.out.find("\n\n") == std::string::npos);
    // ProblemDetails one "severity: text (code)" line a problem, as Problems: its evidence
    // and remedy (doctor's) made one line of kilobytes (found by a new user).
    const std::regex details(R"(^ *ProblemDetails: (info|warning|error): [^\n]* \([a-z0-9-]+\)$)");
    bool found = false;
    std::istringstream show_lines(n.out);
    for (std::string l; std::getline(show_lines, l);)
        if (l.find("ProblemDetails:") != std::string::npos) {
            found = true;
            CHECK(std::regex_match(l, details));
            CHECK(l.find("/sys/") == std::string::npos);
        }
    CHECK(found);
    // mlx4_0's ports are InfiniBand: no RoCE MTU, no netdev in the capture (0 on the bus).
    CHECK(std::regex_search(n.out, std::regex(R"((^|\n) *ActiveMTU: -\n)")));
    CHECK(std::regex_search(n.out, std::regex(R"((^|\n) *NetdevMTU: -\n)")));
    // doctor: under a "port N:" heading a text does not say "port N:" again.
    auto doctor = run_program({env_or_fail("RDMACTL"), "doctor"});
    INFO("doctor: " << doctor.out);
    CHECK(doctor.out.find("  port 1:\n") != std::string::npos);
    CHECK(!std::regex_search(doctor.out, std::regex(R"(\n +(info|warning|error): port 1: )")));
    // Problems are among ProblemDetails: not printed twice.
    CHECK(!std::regex_search(n.out, std::regex(R"((^|\n) *Problems:)")));
    auto with = run_program({env_or_fail("RDMACTL"), "status"});
    CHECK(with.out.find("\n\n") != std::string::npos); // the legend keeps them
    rig.stop_daemon();
}

TEST_CASE("rdmactl: an mlx5 port type asked but set in firmware tells one story",
          "[rdmactl][cli]") {
    if (!have_rdmactl())
        return;
    const std::string ctl = env_or_fail("RDMACTL");
    // mlx5_0 (ConnectX-4, 0000:04:00.0) port 1 is InfiniBand; eth is asked.
    PrivateBus bus;
    Testbed testbed("procfs-hfi1-mlx4-mlx5");
    TempDir cfg("rdmactl-firmware");
    fs::create_directories(cfg / "etc");
    fs::create_directories(cfg / "state");
    fs::create_directories(cfg / "modprobe.d");
    // No mstconfig (a path that is not there, whatever this machine has installed).
    write_file(cfg / "etc" / "rdmad.conf",
               "[daemon]\nmstconfig = \"" + (cfg / "none" / "mstconfig").string() +
                   "\"\n\n[[rule]]\npci_address = \"0000:04:00.0\"\nport_type = [\"eth\"]\n");
    DaemonOptions o;
    o.args = {"--legacy-mlx4-conf=" + (cfg / "none.conf").string(),
              "--modprobe-dir=" + (cfg / "modprobe.d").string()};
    DaemonProcess daemon(std::move(o), {},
                         {{"CONFIGURATION_DIRECTORY", (cfg / "etc").string()},
                          {"STATE_DIRECTORY", (cfg / "state").string()}});
    auto s = run_program({ctl, "status"});
    INFO(s.out << s.err);
    CHECK(s.status == 0);
    // The device problem says the type, what is asked and why rdmad cannot set it once
    // (mstconfig-missing, man/org.rdmad1.5.scd); no sync line says "PortType -" beside it.
    CHECK(s.out.find("mlx5_0: warning: port 1 is InfiniBand but eth is asked: on this adapter "
                     "the port type is the firmware setting LINK_TYPE_P1, and mstconfig cannot "
                     "be run") != std::string::npos);
    CHECK(s.out.find("PortType -") == std::string::npos);
    CHECK(s.out.find("mlx5_0 port 1: not in sync") == std::string::npos);
    CHECK(s.out.find(", 1 port not in sync.") != std::string::npos);
    std::size_t lines = 0; // lines that speak of mstconfig
    std::istringstream in(s.out);
    for (std::string line; std::getline(in, line);)
        lines += line.find("mstconfig") != std::string::npos;
    CHECK(lines == 1);

    auto show = run_program({ctl, "show", "mlx5_0"});
    INFO(show.out);
    CHECK(show.out.find("PortType: ib (from LinkLayer; set in firmware)") != std::string::npos);
    CHECK(show.out.find("DesiredPortType: eth") != std::string::npos);
    CHECK(daemon.stop() == 0);
}

TEST_CASE("rdmactl doctor lists a NIC that can do RDMA without an RDMA device, as status does",
          "[rdmactl][cli]") {
    if (!have_rdmactl())
        return;
    // constructed-irdma-unbound: an E810 (ice) whose auxiliary device ice.iwarp.0 has no
    // driver: Link.RdmaCapable "module-not-loaded", Hint "load irdma" (a new user saw doctor
    // say "No problems found." beside status's "enp59s0f0: RDMA capable, load irdma").
    Rig rig("constructed-irdma-unbound");
    auto r = run_program({env_or_fail("RDMACTL"), "doctor"});
    INFO(r.out << r.err);
    CHECK(r.status == 0); // info: no problem
    CHECK(r.out.find("enp59s0f0:\n  info: RDMA capable, but no RDMA device serves it "
                     "(rdma-driver-not-loaded)\n    remedy: load irdma\n") != std::string::npos);
    auto j = run_program({env_or_fail("RDMACTL"), "--json", "doctor"});
    const json list = json::parse(j.out);
    REQUIRE(list.size() == 1);
    CHECK(list[0]["object"] == "enp59s0f0");
    CHECK(list[0]["code"] == "rdma-driver-not-loaded");
    CHECK(list[0]["severity"] == "info");
}
