// SPDX-License-Identifier: MIT
//
// Settings that take effect at the next firmware reset, module load or boot (issue #26):
// rdmad sets the next-boot value once and shows the setting pending, never resets, reloads or
// reboots, and never writes what already holds.
//
// 1. The port type of ConnectX-4 and later: a firmware setting, read and set with mstflint's
// mstconfig. These machines have no ConnectX card, so rdmad runs
// tests/integration/fake_mstconfig.sh (through `[daemon] mstconfig`), which answers in the
// layout of recorded `mstconfig query` output from a state kept per PCI address, logs every call
// and fails like the real tool where a test asks it to.
//
// Contract under test: man/rdmad.conf.5.scd (port_type, [daemon] mstconfig),
// dbus/org.rdmad1.Port.xml (PortType, NextBootPortType, PendingPortType, InSync), DOMAIN.md
// §1.4 and its settings table: compare next boot first; one `mstconfig -y -d <pci> set
// LINK_TYPE_P<n>=<1|2|3>` for a difference, read back with one query; never a write when next
// boot already holds the type; pending ("reset-pending") until the firmware runs it; a function
// that refuses the query reported once and left alone until it is added again or Reload.
//
// 2. `[daemon] rdma_netns_mode`: ib_core's netns_mode module parameter in the testbed
// (/sys/module/ib_core/parameters/netns_mode, "Y" shared or "N" exclusive as kernel/params.c
// param_get_bool() prints the bool of drivers/infiniband/core/device.c), rdmad's own
// modprobe.d file, and the Manager's properties (dbus/org.rdmad1.Manager.xml RdmaNetnsMode,
// DesiredRdmaNetnsMode, PendingRdmaNetnsMode; man/rdmad.conf.5.scd rdma_netns_mode).
//
// Host: procfs-hfi1-mlx4-mlx5, whose mlx5_0 (mlx5_core, PCI function 0000:04:00.0, so card
// port 1: LINK_TYPE_P1) has one InfiniBand port.
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <thread>

using namespace it;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

const std::string kHost = "procfs-hfi1-mlx4-mlx5";
const std::string kPci = "0000:04:00.0";
const std::string kMlx5 = "/sys/devices/pci0000:03/0000:03:00.0/0000:04:00.0/infiniband/mlx5_0";
const std::string kEthRule = "[[rule]]\npci_address = \"0000:04:00.0\"\nport_type = [\"eth\"]\n";

// The query and the set rdmad runs, as the stand-in logs their arguments.
const std::string kQuery = "-e -d 0000:04:00.0 query LINK_TYPE_P1";
const std::string kSetEth = "-y -d 0000:04:00.0 set LINK_TYPE_P1=2";

struct FwRig {
    explicit FwRig(const std::string& host = kHost) : testbed(host) {
        fs::create_directories(cfg.path() / "etc");
        fs::create_directories(cfg.path() / "state");
        fs::create_directories(cfg.path() / "modprobe.d");
        fs::create_directories(cfg.path() / "fw");
    }
    PrivateBus bus;
    Testbed testbed;
    TempDir cfg{"rdmad-it-firmware"};
    std::unique_ptr<DaemonProcess> daemon;
    std::unique_ptr<Client> client;

    std::string fw_dir() const { return (cfg.path() / "fw").string(); }
    /// LINK_TYPE_P1 of kPci as "DEFAULT CURRENT NEXT" (1 IB, 2 ETH, 3 VPI).
    void firmware(const std::string& state) {
        write_file(fw_dir() + "/" + kPci + ".LINK_TYPE_P1", state + "\n");
    }
    /// The tool refuses kPci with `text` on stderr and exit status 1.
    void refuse(const std::string& text) { write_file(fw_dir() + "/" + kPci + ".fail", text); }
    /// Every call the stand-in got, its arguments joined by spaces.
    std::vector<std::string> calls() const {
        std::vector<std::string> out;
        if (!fs::exists(fw_dir() + "/calls.log"))
            return out;
        std::istringstream in(read_file(fw_dir() + "/calls.log"));
        for (std::string line; std::getline(in, line);)
            out.push_back(line);
        return out;
    }
    /// rdmad.conf: `rules`, with [daemon] mstconfig = `tool` (the stand-in by default) and
    /// the other [daemon] keys `daemon_keys`.
    void config(const std::string& rules, std::string tool = "",
                const std::string& daemon_keys = "") {
        if (tool.empty())
            tool = env_or_fail("FAKE_MSTCONFIG");
        write_file(cfg.path() / "etc" / "rdmad.conf",
                   "[daemon]\nmstconfig = \"" + tool + "\"\n" + daemon_keys + "\n" + rules);
    }
    void start() {
        DaemonOptions o;
        o.args = {"--legacy-mlx4-conf=" + (cfg.path() / "no-mlx4.conf").string(),
                  "--modprobe-dir=" + (cfg.path() / "modprobe.d").string()};
        std::map<std::string, std::string> env;
        env["CONFIGURATION_DIRECTORY"] = (cfg.path() / "etc").string();
        env["STATE_DIRECTORY"] = (cfg.path() / "state").string();
        env["FAKE_MSTCONFIG_DIR"] = fw_dir();
        daemon =
            std::make_unique<DaemonProcess>(std::move(o), std::function<void()>{}, std::move(env));
        client = std::make_unique<Client>();
    }
    void stop() {
        client.reset();
        REQUIRE(daemon->stop() == 0);
        daemon.reset();
    }
    json device(const std::string& name) {
        const json all = client->describe(); // kept: the loop runs over a part of it
        for (auto& d : all["Devices"])
            if (d.value("Name", "") == name)
                return d;
        return json();
    }
    json port1() {
        json d = device("mlx5_0");
        if (d.is_null())
            return json();
        for (auto& p : d["Ports"])
            if (p.value("Number", 0u) == 1)
                return p;
        return json();
    }
    /// mlx5_0's entry `code` of `property` (Problems, or ProblemDetails for its remedy).
    json problem(const std::string& code, const char* property = "Problems") {
        for (auto& p : device("mlx5_0").value(property, json::array()))
            if (p.value("Code", "") == code)
                return p;
        return json();
    }
    bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout = 8s) {
        const auto deadline = Clock::now() + timeout;
        for (;;) {
            if (pred())
                return true;
            if (Clock::now() >= deadline)
                return false;
            std::this_thread::sleep_for(20ms);
        }
    }
    void reload() { client->manager().callMethod("Reload").onInterface("org.rdmad1.Manager"); }
    /// ib_core's netns_mode parameter as the kernel shows it ("Y\n", "N\n").
    void netns_param(const std::string& value) {
        const std::string dir = testbed.root() + "/sys/module/ib_core/parameters";
        fs::create_directories(dir);
        write_file(dir + "/netns_mode", value);
    }
    std::string ib_core_file() const {
        return (cfg.path() / "modprobe.d" / "rdmad-ib_core.conf").string();
    }
    std::string manager(const char* property) {
        return client->get("/org/rdmad1", "org.rdmad1.Manager", property).get<std::string>();
    }
    bool manager_problem(const std::string& code) {
        for (auto& p : variant_json(client->get("/org/rdmad1", "org.rdmad1.Manager", "Problems")))
            if (p[0] == code)
                return true;
        return false;
    }
    /// `n` change uevents of mlx5_0, each let through a pass (the coalescing window is 50 ms).
    void change_events(int n) {
        for (int i = 0; i < n; ++i) {
            testbed.uevent(kMlx5, "change");
            std::this_thread::sleep_for(150ms);
        }
    }
};

struct timespec mtime_of(const std::string& path) {
    struct stat st {};
    REQUIRE(stat(path.c_str(), &st) == 0);
    return st.st_mtim;
}

} // namespace

TEST_CASE("firmware port type: a next-boot difference is set once, read back once, then "
          "pending until a reset",
          "[firmware]") {
    FwRig r;
    r.firmware("1 1 1"); // IB(1) by default, now and at next boot
    r.config(kEthRule);
    r.start();
    INFO(r.daemon->log());
    REQUIRE(r.eventually([&] { return r.port1().value("PendingPortType", "") == "eth"; }));
    json p = r.port1();
    CHECK(p["PortType"] == "ib");
    CHECK(p["NextBootPortType"] == "eth");
    CHECK(p["DesiredPortType"] == "eth");
    CHECK(p["InSync"] == false);
    const json pending = r.problem("reset-pending");
    REQUIRE(pending.is_object());
    CHECK(pending["Text"].get<std::string>().find("firmware reset or reboot") != std::string::npos);
    // The remedy as ProblemDetails gives it.
    bool remedy = false;
    for (auto& d : r.device("mlx5_0").value("ProblemDetails", json::array()))
        if (d.value("Code", "") == "reset-pending")
            remedy = d.value("Remedy", "") == "mstfwreset -d 0000:04:00.0 reset, or reboot";
    CHECK(remedy);
    // One query at start, one set, one query back: no more, also after three events.
    CHECK(r.calls() == std::vector<std::string>{kQuery, kSetEth, kQuery});
    r.change_events(3);
    CHECK(r.calls() == std::vector<std::string>{kQuery, kSetEth, kQuery});
    CHECK(r.port1()["PendingPortType"] == "eth");
    // rdmactl marks the pending reset (rdmactl(1) status; show prints PendingPortType).
    if (const std::string ctl = env_or_empty("RDMACTL"); !ctl.empty()) {
        const RunResult status = run_program({ctl, "status"});
        INFO(status.out << status.err);
        CHECK(status.out.find("mlx5_0 port 1: not in sync: PortType ib, eth pending a firmware "
                              "reset or reboot") != std::string::npos);
        const RunResult show = run_program({ctl, "show", "mlx5_0"});
        INFO(show.out);
        CHECK(show.out.find("NextBootPortType: eth") != std::string::npos);
        CHECK(show.out.find("PendingPortType: eth (after a firmware reset or reboot)") !=
              std::string::npos);
    } else {
        WARN("rdmactl is not built: its marks of a pending reset not checked");
    }
    r.stop();
}

TEST_CASE("firmware port type: next boot already eth: no set, pending from the first query",
          "[firmware]") {
    FwRig r;
    r.firmware("1 1 2"); // someone ran mstconfig set LINK_TYPE_P1=2 and has not rebooted
    r.config(kEthRule);
    r.start();
    INFO(r.daemon->log());
    REQUIRE(r.eventually([&] { return r.port1().value("PendingPortType", "") == "eth"; }));
    CHECK(r.port1()["NextBootPortType"] == "eth");
    CHECK(r.port1()["InSync"] == false);
    r.change_events(3);
    CHECK(r.calls() == std::vector<std::string>{kQuery});
    r.stop();
}

TEST_CASE("firmware port type: pending stays until the current value changes and the device "
          "comes back; then in sync without a write",
          "[firmware]") {
    FwRig r;
    r.firmware("1 1 2");
    r.config(kEthRule);
    r.start();
    INFO(r.daemon->log());
    REQUIRE(r.eventually([&] { return r.port1().value("PendingPortType", "") == "eth"; }));
    // mstfwreset: the firmware now runs ETH(2). A change event does not query again (no
    // polling of the tool), so the bus still says what the last query read.
    r.firmware("1 2 2");
    r.change_events(2);
    CHECK(r.port1()["PendingPortType"] == "eth");
    CHECK(r.calls().size() == 1);
    // A firmware reset re-creates the RDMA device: its add is read again, once.
    r.testbed.uevent(kMlx5, "add");
    REQUIRE(r.eventually([&] { return r.port1().value("PendingPortType", "x") == ""; }));
    json p = r.port1();
    CHECK(p["PortType"] == "eth");
    CHECK(p["NextBootPortType"] == "eth");
    CHECK(p["InSync"] == true);
    CHECK_FALSE(r.problem("reset-pending").is_object());
    CHECK(r.calls() == std::vector<std::string>{kQuery, kQuery});
    r.stop();
}

TEST_CASE("firmware port type: a function that refuses the query is reported once with the "
          "tool's words and asked again only on Reload",
          "[firmware]") {
    FwRig r;
    r.firmware("1 1 1");
    // What mstconfig prints for a function it cannot open (a VF, a BlueField in a mode
    // without it), exit status 1.
    r.refuse("-E- Failed to open device: 0000:04:00.0. No such file or directory\n");
    r.config(kEthRule);
    r.start();
    INFO(r.daemon->log());
    REQUIRE(r.eventually([&] { return r.problem("mstconfig-failed").is_object(); }));
    const std::string text = r.problem("mstconfig-failed")["Text"];
    CHECK(text.find("-E- Failed to open device: 0000:04:00.0") != std::string::npos);
    // The exact command rdmad ran (kQuery), so that the admin can run it, and the remedy.
    const std::string command = env_or_fail("FAKE_MSTCONFIG") + " " + kQuery;
    CHECK(text.find(command + " exited with 1: -E- Failed to open device") != std::string::npos);
    CHECK(r.problem("mstconfig-failed", "ProblemDetails")["Remedy"] ==
          "run the mstconfig command above as root to see the tool's error; if it works there, "
          "give rdmad.service CAP_SYS_ADMIN (the drop-in in rdmad.conf(5)), then systemctl "
          "restart rdmad (a reload keeps the service's capabilities)");
    // The link layer is InfiniBand and eth is asked: the text says both.
    CHECK(text.find("port 1 is InfiniBand but eth is asked: mstconfig cannot read LINK_TYPE_P1 "
                    "of 0000:04:00.0") == 0);
    CHECK(r.port1()["NextBootPortType"] == "");
    CHECK(r.port1()["PendingPortType"] == "");
    CHECK(r.port1()["InSync"] == false); // the link layer is InfiniBand, eth is asked
    r.change_events(3);
    CHECK(r.calls() == std::vector<std::string>{kQuery});
    // Reload reads it again: once.
    r.reload();
    REQUIRE(r.eventually([&] { return r.calls().size() == 2; }));
    r.change_events(1);
    CHECK(r.calls() == std::vector<std::string>{kQuery, kQuery});
    CHECK(r.problem("mstconfig-failed").is_object());
    r.stop();
}

TEST_CASE("firmware port type: no mstconfig is mstconfig-missing naming mstflint, and nothing "
          "is run again on events",
          "[firmware]") {
    FwRig r;
    r.firmware("1 1 1");
    const std::string absent = (r.cfg.path() / "no-such-dir" / "mstconfig").string();
    r.config(kEthRule, absent);
    r.start();
    INFO(r.daemon->log());
    REQUIRE(r.eventually([&] { return r.problem("mstconfig-missing").is_object(); }));
    bool names_package = false;
    for (auto& d : r.device("mlx5_0").value("ProblemDetails", json::array()))
        if (d.value("Code", "") == "mstconfig-missing")
            names_package = d.value("Remedy", "").find("mstflint") != std::string::npos;
    CHECK(names_package);
    const auto lines_about = [&] {
        // The daemon logs each query it makes (warning for a failed one).
        const std::string log = r.daemon->log();
        size_t n = 0;
        for (size_t at = log.find("LINK_TYPE_P1"); at != std::string::npos;
             at = log.find("LINK_TYPE_P1", at + 1))
            ++n;
        return n;
    };
    const size_t before = lines_about();
    CHECK(before >= 1);
    r.change_events(3);
    CHECK(lines_about() == before);
    CHECK(r.calls().empty());
    r.stop();
}

TEST_CASE("firmware port type: a function whose mstconfig hangs holds neither D-Bus nor the "
          "other functions, and ends as mstconfig-failed at the time limit",
          "[firmware]") {
    // gcm-dgx-a100: eight ConnectX-6 PFs (mlx5_0 ... mlx5_9 without 4 and 5), each function 0
    // of its card (LINK_TYPE_P1), each port InfiniBand.
    FwRig r("gcm-dgx-a100");
    const std::map<std::string, std::string> pcis = {
        {"mlx5_0", "0000:0c:00.0"}, {"mlx5_1", "0000:12:00.0"}, {"mlx5_2", "0000:4b:00.0"},
        {"mlx5_3", "0000:54:00.0"}, {"mlx5_6", "0000:8d:00.0"}, {"mlx5_7", "0000:94:00.0"},
        {"mlx5_8", "0000:ba:00.0"}, {"mlx5_9", "0000:cc:00.0"}};
    for (const auto& [_, pci] : pcis)
        write_file(r.fw_dir() + "/" + pci + ".LINK_TYPE_P1", "1 1 1\n");
    write_file(r.fw_dir() + "/0000:0c:00.0.hang", "");
    r.config("[[rule]]\ndriver = \"mlx5_core\"\nport_type = [\"ib\"]\n");
    r.start();
    INFO(r.daemon->log());
    const std::string hung = "-e -d 0000:0c:00.0 query LINK_TYPE_P1";
    REQUIRE(r.eventually([&] {
        const auto calls = r.calls();
        return std::find(calls.begin(), calls.end(), hung) != calls.end();
    }));
    const auto hang_began = Clock::now(); // the tool was started before this
    const auto next_boot = [&](const std::string& name) {
        for (auto& p : r.device(name).value("Ports", json::array()))
            if (p.value("Number", 0u) == 1)
                return p.value("NextBootPortType", std::string("?"));
        return std::string("?");
    };
    // The seven others are read while mlx5_0's tool hangs (its time limit is 10 s).
    REQUIRE(r.eventually([&] {
        for (const auto& [name, _] : pcis)
            if (name != "mlx5_0" && next_boot(name) != "ib")
                return false;
        return true;
    }));
    // D-Bus is answered while it hangs: each Get well under a second.
    for (int i = 0; i < 5; ++i) {
        const auto asked = Clock::now();
        CHECK(r.manager("State") != "");
        CHECK(Clock::now() - asked < 500ms);
    }
    // ... and it still hangs: no reading of mlx5_0, no problem yet.
    CHECK(Clock::now() - hang_began < 9s);
    CHECK(next_boot("mlx5_0") == "");
    CHECK_FALSE(r.problem("mstconfig-failed").is_object());
    // At the time limit its tool is killed and the function reported, with the reason.
    REQUIRE(r.eventually([&] { return r.problem("mstconfig-failed").is_object(); }, 20s));
    CHECK(Clock::now() - hang_began >= 9s);
    const std::string text = r.problem("mstconfig-failed")["Text"];
    CHECK(text.find(env_or_fail("FAKE_MSTCONFIG") +
                    " -e -d 0000:0c:00.0 query LINK_TYPE_P1 did not answer within 10 s (killed)") !=
          std::string::npos);
    // One query per function, none set (next boot holds ib everywhere).
    auto calls = r.calls();
    std::sort(calls.begin(), calls.end());
    std::vector<std::string> expected;
    for (const auto& [_, pci] : pcis)
        expected.push_back("-e -d " + pci + " query LINK_TYPE_P1");
    std::sort(expected.begin(), expected.end());
    CHECK(calls == expected);
    r.stop();
}

TEST_CASE("rdma netns: exclusive asked while the kernel shares: the modprobe.d file is written "
          "once, the mode pending until ib_core runs it",
          "[netns]") {
    FwRig r;
    r.netns_param("Y\n"); // the kernel's default: shared
    r.config("", "", "rdma_netns_mode = \"exclusive\"\n");
    r.start();
    INFO(r.daemon->log());
    REQUIRE(r.eventually([&] { return r.manager("PendingRdmaNetnsMode") == "exclusive"; }));
    CHECK(r.manager("RdmaNetnsMode") == "shared");
    CHECK(r.manager("DesiredRdmaNetnsMode") == "exclusive");
    CHECK(r.manager_problem("rdma-netns-pending"));
    const std::string text = read_file(r.ib_core_file());
    CHECK(text.find("\noptions ib_core netns_mode=0\n") != std::string::npos);
    CHECK(text.rfind("# Written by rdmad from its desired state", 0) == 0);
    const auto written = mtime_of(r.ib_core_file());

    // A Reload with the file already saying it: not written again.
    std::this_thread::sleep_for(20ms);
    r.reload();
    CHECK(r.manager("PendingRdmaNetnsMode") == "exclusive");
    const auto again = mtime_of(r.ib_core_file());
    CHECK((again.tv_sec == written.tv_sec && again.tv_nsec == written.tv_nsec));

    // ib_core loaded again with the file (or a reboot): the kernel says N; the next full pass
    // (a Reload here) reads it, and nothing is pending.
    r.netns_param("N\n");
    r.reload();
    REQUIRE(r.eventually([&] { return r.manager("PendingRdmaNetnsMode") == ""; }));
    CHECK(r.manager("RdmaNetnsMode") == "exclusive");
    CHECK_FALSE(r.manager_problem("rdma-netns-pending"));
    r.stop();
}

TEST_CASE("rdma netns: the key removed: rdmad's file is removed and nothing is pending; an "
          "admin's file of that name stays",
          "[netns]") {
    FwRig r;
    r.netns_param("Y\n");
    r.config("", "", "rdma_netns_mode = \"exclusive\"\n");
    r.start();
    INFO(r.daemon->log());
    REQUIRE(r.eventually([&] { return r.manager("PendingRdmaNetnsMode") == "exclusive"; }));
    REQUIRE(fs::exists(r.ib_core_file()));

    r.config(""); // [daemon] without rdma_netns_mode
    r.reload();
    REQUIRE(r.eventually([&] { return !fs::exists(r.ib_core_file()); }));
    CHECK(r.manager("PendingRdmaNetnsMode") == "");
    CHECK(r.manager("DesiredRdmaNetnsMode") == "");
    CHECK(r.manager("RdmaNetnsMode") == "shared"); // ib_core runs on as it was loaded
    CHECK_FALSE(r.manager_problem("rdma-netns-pending"));

    // A file of that name without rdmad's header is the admin's: kept through a Reload.
    const std::string admin = "# ours, for the lab's containers\noptions ib_core netns_mode=0\n";
    write_file(r.ib_core_file(), admin);
    r.reload();
    r.reload(); // the second answers after the first's pass has run
    CHECK(read_file(r.ib_core_file()) == admin);
    r.stop();
}

TEST_CASE("rdma netns: ib_core not loaded: the mode asked is written and nothing is pending",
          "[netns]") {
    FwRig r; // no /sys/module/ib_core in the testbed
    r.config("", "", "rdma_netns_mode = \"exclusive\"\n");
    r.start();
    INFO(r.daemon->log());
    REQUIRE(r.eventually([&] { return fs::exists(r.ib_core_file()); }));
    r.reload();
    CHECK(r.manager("RdmaNetnsMode") == "");
    CHECK(r.manager("DesiredRdmaNetnsMode") == "exclusive");
    CHECK(r.manager("PendingRdmaNetnsMode") == "");
    CHECK_FALSE(r.manager_problem("rdma-netns-pending"));
    r.stop();
}

TEST_CASE("rdma netns: nothing asked writes nothing and shows the kernel's mode", "[netns]") {
    FwRig r;
    r.netns_param("Y\n");
    r.start();
    CHECK(r.manager("RdmaNetnsMode") == "shared");
    CHECK(r.manager("DesiredRdmaNetnsMode") == "");
    CHECK(r.manager("PendingRdmaNetnsMode") == "");
    CHECK_FALSE(fs::exists(r.ib_core_file()));
    r.stop();
}
