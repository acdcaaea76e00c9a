// SPDX-License-Identifier: MIT
//
// Dispatcher scripts (rdmad(8) DISPATCHER SCRIPTS, [dispatcher] in rdmad.conf(5)): the real
// rdmad on the recorded constructed-mlx5-roce host runs scripts that record their arguments and
// environment. Expected values come from the fixture
// (tests/fixtures/hosts/constructed-mlx5-roce.*): mlx5_0 at PCI 0000:3b:00.0, node GUID
// 0c42:a103:005b:30e0, port 1 ACTIVE, RoCE (link layer Ethernet), netdev ens1f0np0; mlx5_1 at
// 0000:3b:00.1, node GUID 0c42:a103:005b:30e1, port 1 on ens1f1np1. A device's object path is
// /org/rdmad1/device/<node GUID's 16 hex digits>, escaped by sd_bus_path_encode(3): the leading
// digit 0 becomes _30.
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <signal.h>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace it;
using namespace std::chrono_literals;

namespace {

const std::string kIb0 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0";
const std::string kIb1 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.1/infiniband/mlx5_1";
const std::string kPath0 = "/org/rdmad1/device/_30c42a103005b30e0";
const std::string kPath1 = "/org/rdmad1/device/_30c42a103005b30e1";

/// rdmad with [dispatcher] directories = [<dir>/etc.d, <dir>/lib.d] (as /etc/rdmad and
/// /usr/lib/rdmad would be) and the given time limit.
struct DispatchRig {
    explicit DispatchRig(int timeout_sec = 30) : testbed("constructed-mlx5-roce") {
        fs::create_directories(dir / "etc");
        fs::create_directories(dir / "state");
        fs::create_directories(etc_d());
        fs::create_directories(lib_d());
        // The scripts are run by root and write here; the directory is root's, 0700 by mkdtemp.
        write_file(dir / "etc" / "rdmad.conf",
                   "[dispatcher]\ndirectories = [\"" + etc_d().string() + "\", \"" +
                       lib_d().string() + "\"]\ntimeout_sec = " + std::to_string(timeout_sec) +
                       "\n");
    }
    void start() {
        DaemonOptions o;
        o.args = {"--legacy-mlx4-conf=" + (dir / "no-mlx4.conf").string(),
                  "--modprobe-dir=" + (dir / "state").string()};
        std::map<std::string, std::string> env = {
            {"CONFIGURATION_DIRECTORY", (dir / "etc").string()},
            {"STATE_DIRECTORY", (dir / "state").string()},
        };
        daemon = std::make_unique<DaemonProcess>(std::move(o), std::function<void()>{}, env);
        client = std::make_unique<Client>();
    }
    fs::path etc_d() const { return dir / "etc.d"; }
    fs::path lib_d() const { return dir / "lib.d"; }
    fs::path record() const { return dir / "record"; }

    /// A script that appends one line "<name> $1 $2 K=V ..." (its RDMAD_* variables, sorted)
    /// to record(), then runs `then` (shell).
    fs::path recorder(const fs::path& in, const std::string& name, const std::string& then = "",
                      mode_t mode = 0755) {
        const fs::path p = in / name;
        write_file(p, "#!/bin/sh\nprintf '%s %s %s %s\\n' '" + name +
                          "' \"$1\" \"$2\" \"$(env | grep '^RDMAD_' | sort | tr '\\n' ' ')\" >> '" +
                          record().string() + "'\n" + then + "\n");
        REQUIRE(chmod(p.c_str(), mode) == 0);
        return p;
    }

    std::vector<std::string> lines() const {
        std::vector<std::string> out;
        if (!fs::exists(record()))
            return out;
        std::istringstream in(read_file(record()));
        for (std::string l; std::getline(in, l);)
            out.push_back(l);
        return out;
    }
    /// Wait (10 s at most) until record() has `n` lines; they.
    std::vector<std::string> wait_lines(size_t n) {
        for (int i = 0; i < 1000; ++i) {
            auto l = lines();
            if (l.size() >= n)
                return l;
            std::this_thread::sleep_for(10ms);
        }
        auto l = lines();
        FAIL("record has " << l.size() << " lines, not " << n << ":\n" << read_or_empty());
        return l;
    }
    std::string read_or_empty() const {
        return fs::exists(record()) ? read_file(record()) : std::string();
    }
    /// mlx5_<dev>'s port 1 to `state` ("1: DOWN", "4: ACTIVE") with its "change" uevent.
    void port(int dev, const std::string& state) {
        const std::string& ib = dev == 0 ? kIb0 : kIb1;
        testbed.set_attr(ib, "ports/1/state", state + "\n");
        testbed.uevent(ib, "change");
    }
    /// Wait (10 s at most) until rdmad's output holds `text`.
    std::string wait_log(const std::string& text) {
        std::string log;
        for (int i = 0; i < 1000; ++i) {
            log = daemon->log();
            if (log.find(text) != std::string::npos)
                return log;
            std::this_thread::sleep_for(10ms);
        }
        FAIL("rdmad never said \"" << text << "\"; it said:\n" << log);
        return log;
    }

    PrivateBus bus;
    Testbed testbed;
    TempDir dir{"rdmad-it-dispatch"};
    std::unique_ptr<DaemonProcess> daemon;
    std::unique_ptr<Client> client;
};

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

/// The wall time of Manager.GetDeviceByName("mlx5_0"), which REQUIREs the fixture's path.
double get_device_ms(Client& client) {
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(client.device_by_name("mlx5_0") == kPath0);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

TEST_CASE("dispatcher: nothing at start-up; a port going down runs the scripts of both "
          "directories in name order, /etc's hiding /usr/lib's, with the event's arguments and "
          "a clean environment",
          "[dispatcher]") {
    DispatchRig rig;
    rig.recorder(rig.lib_d(), "10-a");
    rig.recorder(rig.etc_d(), "20-b",
                 // stdin, and every descriptor besides 0-2, listed by find(1), a child,
                 // not the shell (a loop in it would see its own command substitutions' pipes).
                 "printf 'stdin %s\\n' \"$(readlink /proc/$$/fd/0)\" >> '" + rig.record().string() +
                     "'\nfind /proc/$$/fd -mindepth 1 -regex '.*/[0-9][0-9]+\\|.*/[3-9]' "
                     "-printf 'fd %f %l\\n' >> '" +
                     rig.record().string() +
                     "'\nprintf 'env %s\\n' \"$(env | cut -d= "
                     "-f1 | sort | tr '\\n' ' ')\" >> '" +
                     rig.record().string() + "'");
    write_file(rig.lib_d() / "20-b", "#!/bin/sh\necho hidden >> '" + rig.record().string() + "'\n");
    REQUIRE(chmod((rig.lib_d() / "20-b").c_str(), 0755) == 0);
    rig.start();
    // The first inventory is no burst of device-added.
    std::this_thread::sleep_for(300ms);
    CHECK(rig.lines().empty());
    CHECK(rig.client->device_by_name("mlx5_0") == kPath0);

    rig.port(0, "1: DOWN");
    auto lines = rig.wait_lines(4);
    std::this_thread::sleep_for(300ms);
    lines = rig.lines();
    const std::string env0 = "RDMAD_DEVICE=mlx5_0 RDMAD_EVENT=port-down RDMAD_NETDEV=ens1f0np0 "
                             "RDMAD_OBJECT_PATH=" +
                             kPath0 +
                             "/port/1 RDMAD_PCI_ADDRESS=0000:3b:00.0 RDMAD_PORT=1 "
                             "RDMAD_PORT_STATE=DOWN RDMAD_TRANSPORT=RoCE ";
    REQUIRE(lines.size() >= 4);
    CHECK(lines[0] == "10-a mlx5_0 port-down " + env0);
    CHECK(lines[1] == "20-b mlx5_0 port-down " + env0);
    CHECK(lines[2] == "stdin /dev/null");
    // Nothing of rdmad's (bus socket, netlink, udev monitor, eventfds): only what dash opens
    // itself, the script and a copy of its /dev/null stdin.
    size_t i = 3;
    for (; i < lines.size() && lines[i].rfind("fd ", 0) == 0; ++i) {
        const std::string target = lines[i].substr(lines[i].find(' ', 3) + 1);
        INFO(lines[i]);
        CHECK((target == (rig.etc_d() / "20-b").string() || target == "/dev/null"));
    }
    REQUIRE(i < lines.size());
    // PATH and the event's variables; sh adds PWD. No LD_PRELOAD, NOTIFY_SOCKET,
    // DBUS_SYSTEM_BUS_ADDRESS, CONFIGURATION_DIRECTORY of rdmad's.
    CHECK(lines[i] == "env PATH PWD RDMAD_DEVICE RDMAD_EVENT RDMAD_NETDEV RDMAD_OBJECT_PATH "
                      "RDMAD_PCI_ADDRESS RDMAD_PORT RDMAD_PORT_STATE RDMAD_TRANSPORT ");
    CHECK(lines.size() == i + 1); // lib.d/20-b never ran
    CHECK(rig.read_or_empty().find("hidden") == std::string::npos);

    // Back up: port-up, the same scripts again.
    rig.port(0, "4: ACTIVE");
    lines = rig.wait_lines(i + 3);
    CHECK(lines[i + 1].rfind("10-a mlx5_0 port-up ", 0) == 0);
    CHECK(lines[i + 1].find(" RDMAD_PORT_STATE=ACTIVE ") != std::string::npos);
    CHECK(lines[i + 2].rfind("20-b mlx5_0 port-up ", 0) == 0);
    rig.daemon->stop();
}

TEST_CASE("dispatcher: files not owned by root, writable by group or others, setuid or not "
          "executable are skipped with the reason, logged once per file",
          "[dispatcher]") {
    DispatchRig rig;
    const auto nobody = rig.recorder(rig.etc_d(), "10-nobody");
    REQUIRE(chown(nobody.c_str(), 65534, 65534) == 0);
    const auto group = rig.recorder(rig.etc_d(), "20-group", "", 0775);
    const auto others = rig.recorder(rig.lib_d(), "30-others", "", 0757);
    const auto setuid = rig.recorder(rig.etc_d(), "40-setuid", "", 04755);
    const auto plain = rig.recorder(rig.etc_d(), "50-plain", "", 0644);
    rig.recorder(rig.lib_d(), "60-good");
    rig.start();
    rig.port(0, "1: DOWN");
    auto lines = rig.wait_lines(1);
    const std::string log = rig.wait_log("not running " + plain.string());
    CHECK(count(log, "not running " + nobody.string() + ": owned by uid 65534, not root") == 1);
    CHECK(count(log, "not running " + group.string() + ": writable by group or others") == 1);
    CHECK(count(log, "not running " + others.string() + ": writable by group or others") == 1);
    CHECK(count(log, "not running " + setuid.string() + ": setuid or setgid") == 1);
    CHECK(count(log, "not running " + plain.string() + ": not executable") == 1);

    // A second event: the good script runs again, the refusals are not logged again.
    rig.port(0, "4: ACTIVE");
    lines = rig.wait_lines(2);
    std::this_thread::sleep_for(200ms);
    lines = rig.lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].rfind("60-good mlx5_0 port-down ", 0) == 0);
    CHECK(lines[1].rfind("60-good mlx5_0 port-up ", 0) == 0);
    CHECK(count(rig.daemon->log(), "not running ") == 5);

    // A file that changes is judged (and logged) again; fixed, it runs.
    REQUIRE(chmod(group.c_str(), 0755) == 0);
    REQUIRE(chmod(others.c_str(), 0777) == 0);
    rig.port(0, "1: DOWN");
    lines = rig.wait_lines(4);
    CHECK(lines[2].rfind("20-group mlx5_0 port-down ", 0) == 0);
    CHECK(lines[3].rfind("60-good mlx5_0 port-down ", 0) == 0);
    rig.wait_log("not running " + others.string() + ": writable by group or others");
    std::this_thread::sleep_for(200ms);
    const std::string after = rig.daemon->log();
    CHECK(count(after, "not running " + others.string()) == 2);
    CHECK(count(after, "not running " + nobody.string()) == 1);
    rig.daemon->stop();
}

TEST_CASE("dispatcher: a hanging script is killed after the time limit with what it started, a "
          "failing one is logged with its exit status, the next still run, and the bus answers "
          "meanwhile",
          "[dispatcher]") {
    DispatchRig rig(2);
    // Records the pid of its `sleep`, which is in its process group.
    rig.recorder(rig.etc_d(), "10-hang",
                 "sleep 60 &\nprintf 'sleep %s\\n' \"$!\" >> '" + rig.record().string() +
                     "'\nwait");
    rig.recorder(rig.etc_d(), "20-fail", "exit 1");
    rig.recorder(rig.lib_d(), "30-next");
    rig.start();
    const auto t0 = std::chrono::steady_clock::now();
    rig.port(0, "1: DOWN");
    auto lines = rig.wait_lines(2);
    REQUIRE(lines[0].rfind("10-hang mlx5_0 port-down ", 0) == 0);
    REQUIRE(lines[1].rfind("sleep ", 0) == 0);
    const std::string sleep_pid = lines[1].substr(6);
    REQUIRE(fs::exists("/proc/" + sleep_pid));

    // While it hangs: the bus answers at once, every time.
    std::vector<double> ms;
    for (int k = 0; k < 10; ++k) {
        ms.push_back(get_device_ms(*rig.client));
        std::this_thread::sleep_for(50ms);
    }
    INFO("GetDeviceByName latencies (ms): " << json(ms).dump());
    CHECK(*std::max_element(ms.begin(), ms.end()) < 100.0);
    CHECK(rig.lines().size() == 2); // still hanging

    lines = rig.wait_lines(4);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(waited >= 2.0);
    CHECK(waited < 6.0);
    CHECK(lines[2].rfind("20-fail mlx5_0 port-down ", 0) == 0);
    CHECK(lines[3].rfind("30-next mlx5_0 port-down ", 0) == 0);
    const std::string log = rig.wait_log("20-fail (mlx5_0 port-down) failed with exit status 1");
    CHECK(log.find((rig.etc_d() / "10-hang").string() +
                   " (mlx5_0 port-down) killed after its time limit of 2 s") != std::string::npos);
    // Its process group went with it: the sleep is gone (a zombie at most until init reaps it).
    for (int k = 0; k < 100 && fs::exists("/proc/" + sleep_pid); ++k) {
        const std::string stat = read_file("/proc/" + sleep_pid + "/stat");
        if (stat.find(") Z") != std::string::npos)
            break;
        std::this_thread::sleep_for(10ms);
    }
    if (fs::exists("/proc/" + sleep_pid))
        CHECK(read_file("/proc/" + sleep_pid + "/stat").find(") Z") != std::string::npos);

    // The next event is dispatched as ever.
    rig.port(0, "4: ACTIVE");
    lines = rig.wait_lines(6);
    CHECK(lines[4].rfind("10-hang mlx5_0 port-up ", 0) == 0);
    rig.daemon->stop();
}

TEST_CASE("dispatcher: events that come while a script runs are delivered in order, each",
          "[dispatcher]") {
    DispatchRig rig;
    rig.recorder(rig.etc_d(), "10-slow", "sleep 0.3");
    rig.start();
    // Six port changes on two devices, 100 ms apart (a pass each: rdmad's window is 50 ms),
    // while each run of the script takes 300 ms: the queue holds up to four.
    const std::vector<std::pair<int, std::string>> flips = {{0, "1: DOWN"},   {1, "1: DOWN"},
                                                            {0, "4: ACTIVE"}, {1, "4: ACTIVE"},
                                                            {0, "1: DOWN"},   {1, "1: DOWN"}};
    for (const auto& [dev, state] : flips) {
        rig.port(dev, state);
        std::this_thread::sleep_for(100ms);
    }
    // The bus answers while the scripts queue up.
    CHECK(get_device_ms(*rig.client) < 100.0);
    auto lines = rig.wait_lines(flips.size());
    std::this_thread::sleep_for(500ms);
    lines = rig.lines();
    std::vector<std::string> got;
    for (const auto& l : lines) {
        std::istringstream in(l);
        std::string script, object, event;
        in >> script >> object >> event;
        got.push_back(object + " " + event);
    }
    CHECK(got == std::vector<std::string>{"mlx5_0 port-down", "mlx5_1 port-down", "mlx5_0 port-up",
                                          "mlx5_1 port-up", "mlx5_0 port-down",
                                          "mlx5_1 port-down"});
    CHECK(lines[1].find(" RDMAD_OBJECT_PATH=" + kPath1 + "/port/1 ") != std::string::npos);
    CHECK(lines[1].find(" RDMAD_NETDEV=ens1f1np1 ") != std::string::npos);
    CHECK(lines[1].find(" RDMAD_PCI_ADDRESS=0000:3b:00.1 ") != std::string::npos);
    rig.daemon->stop();
}

TEST_CASE("dispatcher: a netdev that comes and goes after start-up is link-added and "
          "link-removed",
          "[dispatcher]") {
    DispatchRig rig;
    rig.recorder(rig.etc_d(), "10-rec");
    rig.start();
    // A virtual netdev as the fixture's lo is written (ifindex 1200, no PCI function, no RDMA
    // device); umockdev sends its "add".
    const std::string syspath = "/sys/devices/virtual/net/dummy0";
    rig.testbed.add("P: /devices/virtual/net/dummy0\nE: SUBSYSTEM=net\nE: INTERFACE=dummy0\n"
                    "E: IFINDEX=1200\nA: addr_len=6\\n\nA: address=0c:42:a1:00:04:b0\\n\n"
                    "A: carrier=1\\n\nA: dev_port=0\\n\nA: ifindex=1200\\n\nA: iflink=1200\\n\n"
                    "A: mtu=1500\\n\nA: operstate=up\\n\nA: type=1\\n\n");
    auto lines = rig.wait_lines(1);
    CHECK(lines[0] == "10-rec dummy0 link-added RDMAD_EVENT=link-added RDMAD_NETDEV=dummy0 "
                      "RDMAD_OBJECT_PATH=/org/rdmad1/link/_31200 ");
    rig.testbed.remove(syspath);
    send_uevent(rig.testbed.root(), syspath, "net", "remove");
    lines = rig.wait_lines(2);
    CHECK(lines[1] == "10-rec dummy0 link-removed RDMAD_EVENT=link-removed RDMAD_NETDEV=dummy0 "
                      "RDMAD_OBJECT_PATH=/org/rdmad1/link/_31200 ");
    std::this_thread::sleep_for(200ms);
    CHECK(rig.lines().size() == 2);
    rig.daemon->stop();
}

TEST_CASE("dispatcher: a device removed and added again under another name in one burst is "
          "device-removed under its old name, then device-added under the new one, each once",
          "[dispatcher]") {
    DispatchRig rig;
    rig.recorder(rig.etc_d(), "10-rec");
    rig.start();
    // mlx5_0 as the fixture has it, registered again as mlx5_7 (the same node GUID: the same
    // object path). A change of mlx5_1 first: the remove and the add then share the next pass.
    std::string block = read_file(host_file("constructed-mlx5-roce"));
    const size_t from = block.find("P: /devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0\n");
    REQUIRE(from != std::string::npos);
    block = block.substr(from, block.find("\n\n", from) + 2 - from);
    for (size_t at; (at = block.find("mlx5_0")) != std::string::npos;)
        block.replace(at, 6, "mlx5_7");
    rig.testbed.uevent(kIb1, "change");
    rig.testbed.remove(kIb0);
    send_uevent(rig.testbed.root(), kIb0, "infiniband", "remove");
    rig.testbed.add(block);
    auto lines = rig.wait_lines(2);
    std::this_thread::sleep_for(500ms);
    lines = rig.lines();
    INFO(rig.read_or_empty() << rig.daemon->log());
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == "10-rec mlx5_0 device-removed RDMAD_DEVICE=mlx5_0 "
                      "RDMAD_EVENT=device-removed RDMAD_OBJECT_PATH=" +
                          kPath0 + " RDMAD_PCI_ADDRESS=0000:3b:00.0 RDMAD_TRANSPORT=RoCE ");
    CHECK(lines[1] == "10-rec mlx5_7 device-added RDMAD_DEVICE=mlx5_7 RDMAD_EVENT=device-added "
                      "RDMAD_NETDEV=ens1f0np0 RDMAD_OBJECT_PATH=" +
                          kPath0 + " RDMAD_PCI_ADDRESS=0000:3b:00.0 RDMAD_TRANSPORT=RoCE ");
    CHECK(rig.client->device_by_name("mlx5_7") == kPath0);
    rig.daemon->stop();
}

TEST_CASE("dispatcher: scripts that appear while events wait run for each event taken after "
          "them, once; a world-writable one appearing with them is refused and logged once; "
          "with no script, a burst runs nothing, and a script added before its events are taken "
          "runs for each",
          "[dispatcher]") {
    DispatchRig rig;
    rig.recorder(rig.lib_d(), "10-slow", "sleep 0.4");
    rig.start();
    rig.port(0, "1: DOWN"); // E1: 10-slow runs for 400 ms
    rig.wait_lines(1);
    rig.port(1, "1: DOWN"); // E2 waits in the queue behind it
    std::this_thread::sleep_for(100ms);
    rig.recorder(rig.etc_d(), "20-new");
    const auto ww = rig.recorder(rig.etc_d(), "15-ww", "", 0757);
    rig.port(0, "4: ACTIVE"); // E3
    rig.wait_lines(5);
    std::this_thread::sleep_for(500ms);
    auto got = [&] {
        std::vector<std::string> out;
        for (const auto& l : rig.lines()) {
            std::istringstream in(l);
            std::string script, object, event;
            in >> script >> object >> event;
            out.push_back(script + " " + object + " " + event);
        }
        return out;
    };
    CHECK(got() == std::vector<std::string>{"10-slow mlx5_0 port-down", "10-slow mlx5_1 port-down",
                                            "20-new mlx5_1 port-down", "10-slow mlx5_0 port-up",
                                            "20-new mlx5_0 port-up"});
    CHECK(count(rig.daemon->log(),
                "not running " + ww.string() + ": writable by group or others") == 1);

    // No script at all: a burst of events (both ports in one pass) runs nothing.
    fs::remove(rig.lib_d() / "10-slow");
    fs::remove(rig.etc_d() / "20-new");
    fs::remove(ww);
    rig.port(0, "1: DOWN");
    rig.port(1, "4: ACTIVE");
    std::this_thread::sleep_for(500ms);
    CHECK(rig.lines().size() == 5);

    // rdmad stopped with both ports' events waiting in its socket; a script added meanwhile
    // runs for both, once each.
    rig.daemon->signal(SIGSTOP);
    rig.port(0, "4: ACTIVE");
    rig.port(1, "1: DOWN");
    rig.recorder(rig.lib_d(), "30-late");
    rig.daemon->signal(SIGCONT);
    rig.wait_lines(7);
    std::this_thread::sleep_for(500ms);
    const auto all = got();
    REQUIRE(all.size() == 7);
    // One pass: the order between the two devices is not the contract's.
    std::vector<std::string> late(all.begin() + 5, all.end());
    std::sort(late.begin(), late.end());
    CHECK(late == std::vector<std::string>{"30-late mlx5_0 port-up", "30-late mlx5_1 port-down"});
    rig.daemon->stop();
}
