// SPDX-License-Identifier: MIT
//
// Reconciliation: desired state (rdmad.conf(5), Port.SetPortType/SetPFCNoDrop, the state file)
// applied by the real rdmad to a umockdev testbed, checked on the files it writes (inotify) and
// over D-Bus.
//
// Contract under test: dbus/org.rdmad1.Port.xml, dbus/org.rdmad1.Manager.xml,
// man/rdmad.conf.5.scd, man/org.rdmad1.5.scd (AUTHORIZATION), /work/shared/DOMAIN.md §1.3
// (mlx4_portN: "eth\n" with the newline; port 2 before port 1 when port 1 becomes Ethernet;
// 0444 -> EACCES; a change re-creates the RDMA device), §2 (PFC: EOPNOTSUPP without dcbnl_ops;
// mlx4_en pfctx/pfcrx module options), §7.
//
// Testbed notes: mlx4_portN are regular files here, so a write without O_TRUNC leaves the tail
// of a longer old value ("eth\n" then "ib\n" reads "ib\n\n"); where that matters the test first
// rewrites the file to a 3-byte value of the same meaning ("eth" without its newline, which the
// daemon parses the same), so the file then holds exactly what the daemon wrote.
#include "harness.hpp"

#include <cstring>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <optional>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <atomic>
#include <random>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

using namespace it;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// procfs-hfi1-mlx4-mlx5: a 2-port mlx4 (ConnectX-3 VPI) at 0000:03:00.0 whose mlx4_port1 and
// mlx4_port2 read "ib\n", an mlx5 at 0000:04:00.0 (one InfiniBand port), an hfi1 at 0000:05:00.0.
const std::string kHost = "procfs-hfi1-mlx4-mlx5";
const std::string kMlx4Pci = "/sys/devices/pci0000:02/0000:02:00.0/0000:03:00.0";
const std::string kMlx4Ib = kMlx4Pci + "/infiniband/mlx4_0";

const std::string kEthEth = "[[rule]]\npci_address = \"0000:03:00.0\"\nport_type = [\"eth\", \"eth\"]\n";

// ---- inotify on testbed files ----------------------------------------------------------

struct Write {
    std::string name;    // the label given to watch()
    std::string content; // the file right after the writer closed it
};

class WriteWatch {
public:
    WriteWatch() {
        fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        REQUIRE(fd_ >= 0);
    }
    ~WriteWatch() { close(fd_); }
    void watch(const std::string& path, const std::string& name) {
        int wd = inotify_add_watch(fd_, path.c_str(), IN_CLOSE_WRITE);
        INFO("inotify_add_watch " << path << ": " << std::strerror(errno));
        REQUIRE(wd >= 0);
        names_[wd] = {name, path};
    }
    // Collect what arrives for `period`.
    void pump(std::chrono::milliseconds period) {
        const auto deadline = Clock::now() + period;
        do {
            struct pollfd p = {fd_, POLLIN, 0};
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            poll(&p, 1, int(std::max<long>(0, std::min<long>(left.count(), 20))));
            alignas(inotify_event) char buf[4096];
            for (;;) {
                ssize_t n = read(fd_, buf, sizeof buf);
                if (n <= 0)
                    break;
                for (char* at = buf; at < buf + n;) {
                    auto* ev = reinterpret_cast<inotify_event*>(at);
                    if ((ev->mask & IN_CLOSE_WRITE) && names_.count(ev->wd))
                        writes_.push_back({names_[ev->wd].first, read_file(names_[ev->wd].second)});
                    at += sizeof(inotify_event) + ev->len;
                }
            }
        } while (Clock::now() < deadline);
    }
    bool wait_for(size_t n, std::chrono::milliseconds timeout) {
        const auto deadline = Clock::now() + timeout;
        while (writes_.size() < n && Clock::now() < deadline)
            pump(20ms);
        return writes_.size() >= n;
    }
    const std::vector<Write>& writes() const { return writes_; }
    std::string dump() const {
        std::string s = "writes (" + std::to_string(writes_.size()) + "):";
        for (auto& w : writes_)
            s += " " + w.name + "=" + json(w.content).dump();
        return s;
    }
    void clear() {
        pump(0ms);
        writes_.clear();
    }

private:
    int fd_ = -1;
    std::map<int, std::pair<std::string, std::string>> names_;
    std::vector<Write> writes_;
};

// ---- a rig with its own configuration, state and modprobe directories ------------------

struct RRig {
    explicit RRig(const std::string& host) : testbed(host) {
        fs::create_directories(cfg.path() / "etc");
        fs::create_directories(cfg.path() / "state");
        fs::create_directories(cfg.path() / "modprobe.d");
    }
    PrivateBus bus;
    Testbed testbed;
    TempDir cfg{"rdmad-it-reconcile"};
    std::unique_ptr<DaemonProcess> daemon;
    std::unique_ptr<Client> client;

    std::string config_file() const { return (cfg.path() / "etc" / "rdmad.conf").string(); }
    std::string state_dir() const { return (cfg.path() / "state").string(); }
    std::string state_file() const { return state_dir() + "/state.conf"; }
    std::string modprobe_dir() const { return (cfg.path() / "modprobe.d").string(); }
    std::string tb(const std::string& syspath) const { return testbed.root() + syspath; }
    void config(const std::string& text) { write_file(config_file(), text); }

    std::map<std::string, std::string> extra_env; ///< more environment for rdmad
    std::vector<std::string> preloads;            ///< ahead of umockdev's, in this order
    std::vector<std::string> extra_args;          ///< more rdmad options ("--verbose")

    /// rdma_cm in the testbed's configfs, its groups made on mkdir as the kernel makes them
    /// (tests/integration/fake_configfs.c); `before_4_11`: a kernel without default_roce_tos.
    void with_rdma_cm(bool before_4_11 = false) {
        load_rdma_cm(testbed);
        preloads.push_back(env_or_fail("FAKE_CONFIGFS"));
        if (before_4_11)
            extra_env["FAKE_CONFIGFS_BEFORE_4_11"] = "1";
    }
    std::string rdma_cm_port(const std::string& dev, unsigned n) const {
        return testbed.root() + "/sys/kernel/config/rdma_cm/" + dev + "/ports/" +
               std::to_string(n);
    }

    void start(std::vector<std::string> wrapper = {}) {
        DaemonOptions o;
        o.args = {"--legacy-mlx4-conf=" + (cfg.path() / "no-mlx4.conf").string(),
                  "--modprobe-dir=" + modprobe_dir()};
        o.args.insert(o.args.end(), extra_args.begin(), extra_args.end());
        o.wrapper = std::move(wrapper);
        auto env = extra_env;
        if (!preloads.empty())
            env["LD_PRELOAD"] = preload_ahead(preloads);
        env["CONFIGURATION_DIRECTORY"] = (cfg.path() / "etc").string();
        env["STATE_DIRECTORY"] = state_dir();
        daemon =
            std::make_unique<DaemonProcess>(std::move(o), std::function<void()>{}, std::move(env));
        client = std::make_unique<Client>();
    }
    void stop() {
        client.reset();
        REQUIRE(daemon->stop() == 0);
        daemon.reset();
    }
    void kill9() {
        client.reset();
        ::kill(daemon->pid(), SIGKILL);
        daemon->stop();
        daemon.reset();
    }

    json describe() { return client->describe(); }
    json device(const std::string& name) {
        const json all = describe();
        for (auto& d : all["Devices"])
            if (d.value("Name", "") == name)
                return d;
        return json();
    }
    json port(const std::string& dev, unsigned n) {
        json d = device(dev);
        if (d.is_null())
            return json();
        for (auto& p : d["Ports"])
            if (p.value("Number", 0u) == n)
                return p;
        return json();
    }
    std::string port_path(const std::string& dev, unsigned n) {
        json p = port(dev, n);
        INFO("no port " << n << " on " << dev << "\n" << describe().dump(1));
        REQUIRE(p.is_object());
        return p["Path"].get<std::string>();
    }
    std::string manager_state() {
        return client->get("/org/rdmad1", "org.rdmad1.Manager", "State").get<std::string>();
    }
    json manager_problems() {
        return variant_json(client->get("/org/rdmad1", "org.rdmad1.Manager", "Problems"));
    }

    // Poll Describe() until pred holds (the daemon applies and re-reads asynchronously).
    bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout = 5s) {
        const auto deadline = Clock::now() + timeout;
        for (;;) {
            if (pred())
                return true;
            if (Clock::now() >= deadline)
                return false;
            std::this_thread::sleep_for(20ms);
        }
    }

    void set_port_type(const std::string& dev, unsigned n, const std::string& type, bool persist) {
        client->proxy(port_path(dev, n))
            ->callMethod("SetPortType")
            .onInterface("org.rdmad1.Port")
            .withArguments(type, persist);
    }
    void set_pfc(const std::string& dev, unsigned n, const std::vector<uint8_t>& prios,
                 bool persist) {
        client->proxy(port_path(dev, n))
            ->callMethod("SetPFCNoDrop")
            .onInterface("org.rdmad1.Port")
            .withArguments(prios, persist);
    }
    void set_trust(const std::string& dev, unsigned n, const std::string& trust, bool persist) {
        client->proxy(port_path(dev, n))
            ->callMethod("SetTrust")
            .onInterface("org.rdmad1.Port")
            .withArguments(trust, persist);
    }
    void set_dscp_priority(const std::string& dev, unsigned n,
                           const std::vector<sdbus::Struct<uint8_t, uint8_t>>& map, bool exclusive,
                           bool persist) {
        client->proxy(port_path(dev, n))
            ->callMethod("SetDSCPPriority")
            .onInterface("org.rdmad1.Port")
            .withArguments(map, exclusive, persist);
    }
    std::vector<std::vector<std::string>> reconcile(bool dry_run) {
        std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> v;
        client->manager()
            .callMethod("Reconcile")
            .onInterface("org.rdmad1.Manager")
            .withArguments(dry_run)
            .storeResultsTo(v);
        std::vector<std::vector<std::string>> out;
        for (auto& s : v)
            out.push_back({s.get<0>(), s.get<1>(), s.get<2>(), s.get<3>()});
        return out;
    }
    void reload() { client->manager().callMethod("Reload").onInterface("org.rdmad1.Manager"); }
};

// The D-Bus error a call raises: "name: message", or "" when it succeeds.
std::pair<std::string, std::string> error_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const sdbus::Error& e) {
        return {e.getName(), e.getMessage()};
    }
    return {"", ""};
}

std::vector<std::string> codes(const json& device) { return problem_codes(device); }
bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}
std::string problem_text(const json& device, const std::string& code) {
    for (auto& p : device.value("Problems", json::array()))
        if (p.value("Code", "") == code)
            return p.value("Text", "");
    return "";
}

// umockdev text of mlx4_0 (procfs-hfi1-mlx4-mlx5) as the kernel re-creates it after a port
// type change: both ports on the Ethernet link layer.
std::string mlx4_ib_text(const std::string& pci_devpath, const std::string& name,
                         const std::string& link_layer) {
    std::string s = "P: " + pci_devpath + "/infiniband/" + name +
                    "\nE: SUBSYSTEM=infiniband\nE: NAME=" + name +
                    "\nA: board_id=SM_1141000001000\\n\nL: device=../../../" +
                    pci_devpath.substr(pci_devpath.rfind('/') + 1) +
                    "\nA: fw_ver=2.31.5050\\n\nA: hca_type=MT4099\\n\nA: node_type=1: CA\\n\n";
    for (int p = 1; p <= 2; ++p) {
        const std::string pp = "A: ports/" + std::to_string(p) + "/";
        s += pp + "link_layer=" + link_layer + "\\n\n" + pp + "phys_state=5: LinkUp\\n\n" + pp +
             "rate=40 Gb/sec (4X QDR)\\n\n" + pp + "state=4: ACTIVE\\n\n";
    }
    return s + "\n";
}

std::string mlx4_pci_text(const std::string& devpath, const std::string& p1,
                          const std::string& p2) {
    const std::string slot = devpath.substr(devpath.rfind('/') + 1);
    return "P: " + devpath +
           "\nE: SUBSYSTEM=pci\nE: DRIVER=mlx4_core\nE: PCI_CLASS=28000\nE: PCI_ID=15B3:1003\n"
           "E: PCI_SUBSYS_ID=15B3:0050\nE: PCI_SLOT_NAME=" + slot +
           "\nA: class=0x028000\\n\nA: device=0x1003\\n\n"
           "L: driver=../../../../bus/pci/drivers/mlx4_core\nA: mlx4_port1=" + p1 +
           "\\n\nA: mlx4_port2=" + p2 +
           "\\n\nA: subsystem_device=0x0050\\n\nA: subsystem_vendor=0x15b3\\n\n"
           "A: vendor=0x15b3\\n\n\n";
}

// A process of our own (polkit mock), SIGTERMed on destruction.
class Child {
public:
    explicit Child(const std::vector<std::string>& argv) {
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e) {
            std::string kv = *e;
            if (kv.rfind("LD_PRELOAD=", 0) == 0 || kv.rfind("UMOCKDEV_DIR=", 0) == 0)
                continue;
            env.push_back(kv);
        }
        std::vector<char*> a, e;
        auto args = argv;
        for (auto& s : args)
            a.push_back(s.data());
        a.push_back(nullptr);
        for (auto& s : env)
            e.push_back(s.data());
        e.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        int rc = posix_spawn(&pid_, args[0].c_str(), &fa, nullptr, a.data(), e.data());
        posix_spawn_file_actions_destroy(&fa);
        if (rc != 0)
            FAIL("cannot spawn " << args[0] << ": " << std::strerror(rc));
        kill_when_killed(pid_);
    }
    ~Child() {
        if (pid_ > 0) {
            kill(pid_, SIGTERM);
            int st;
            for (int i = 0; i < 500 && waitpid(pid_, &st, WNOHANG) == 0; ++i)
                std::this_thread::sleep_for(10ms);
            if (waitpid(pid_, &st, WNOHANG) == 0) {
                kill(pid_, SIGKILL);
                waitpid(pid_, &st, 0);
            }
            forget_child(pid_);
        }
    }
    std::string log() const { return read_file(log_); }

private:
    TempDir dir_{"rdmad-it-polkitd"};
    std::string log_ = (dir_ / "polkitd.log").string();
    pid_t pid_ = -1;
};

bool name_has_owner(Client& c, const std::string& name) {
    auto p = sdbus::createProxy(c.connection(), "org.freedesktop.DBus", "/org/freedesktop/DBus");
    bool owned = false;
    p->callMethod("NameHasOwner").onInterface("org.freedesktop.DBus").withArguments(name).storeResultsTo(owned);
    return owned;
}

// Make the private bus reachable for uid 65534: the socket lives in a 0700 mkdtemp directory.
void open_bus_to_everyone(const std::string& address) {
    auto at = address.find("unix:path=");
    REQUIRE(at == 0);
    std::string path = address.substr(10, address.find(',') - 10);
    REQUIRE(chmod(fs::path(path).parent_path().c_str(), 0755) == 0);
    REQUIRE(chmod(path.c_str(), 0777) == 0);
}

// A [[rule]] for the absent PCI function 0000:<i+0x40>:00.0, for filling state.conf.
std::string fmt_pci_rule(int i) {
    char pci[32];
    std::snprintf(pci, sizeof pci, "0000:%02x:00.0", 0x40 + i);
    return std::string("[[rule]]\npci_address = \"") + pci + "\"\npfc_no_drop = [3]\n\n";
}

// dbus-send as `nobody` (or root): "" on success, else the error name dbus-send prints.
RunResult call_as(bool nobody, const std::string& address, const std::string& path,
                  const std::string& method, const std::vector<std::string>& args) {
    std::vector<std::string> argv;
    if (nobody)
        argv = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    argv.insert(argv.end(), {"dbus-send", "--bus=" + address, "--print-reply",
                             "--dest=org.rdmad1", path, method});
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv);
}

} // namespace

// ---- 1. mlx4 port type ------------------------------------------------------------------

TEST_CASE("reconcile: mlx4 eth/eth writes port 2 then port 1, exactly \"eth\\n\", then InSync",
          "[reconcile]") {
    RRig r(kHost);
    r.config(kEthEth);
    WriteWatch w;
    w.watch(r.tb(kMlx4Pci + "/mlx4_port1"), "port1");
    w.watch(r.tb(kMlx4Pci + "/mlx4_port2"), "port2");
    r.start();
    INFO(w.dump());
    REQUIRE(w.wait_for(2, 5s));
    w.pump(200ms);
    INFO(w.dump());
    REQUIRE(w.writes().size() == 2);
    // DOMAIN.md §1.3/§7.1: port 2 first when port 1 becomes Ethernet (never eth/ib).
    CHECK(w.writes()[0].name == "port2");
    CHECK(w.writes()[1].name == "port1");
    for (auto& x : w.writes())
        CHECK(x.content == "eth\n");
    REQUIRE(r.eventually([&] {
        auto p1 = r.port("mlx4_0", 1), p2 = r.port("mlx4_0", 2);
        return p1.value("InSync", false) && p2.value("InSync", false);
    }));
    for (unsigned n : {1u, 2u}) {
        auto p = r.port("mlx4_0", n);
        CHECK(p["DesiredPortType"] == "eth");
        CHECK(p["PortType"] == "eth");
    }

    // SetPortType(port 1, "ib"): {ib, eth} is valid; only port 1 is written, with "ib\n".
    write_file(r.tb(kMlx4Pci + "/mlx4_port1"), "eth"); // 3 bytes, same meaning (see top)
    w.clear();
    r.set_port_type("mlx4_0", 1, "ib", false);
    REQUIRE(w.wait_for(1, 5s));
    w.pump(200ms);
    INFO(w.dump());
    REQUIRE(w.writes().size() == 1);
    CHECK(w.writes()[0].name == "port1");
    CHECK(w.writes()[0].content == "ib\n");
    REQUIRE(r.eventually([&] {
        auto p1 = r.port("mlx4_0", 1);
        return p1["PortType"] == "ib" && p1.value("InSync", false);
    }));
    CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "ib");
    CHECK(r.port("mlx4_0", 2)["DesiredPortType"] == "eth");
    CHECK(r.port("mlx4_0", 2).value("InSync", false));
}

TEST_CASE("reconcile: mlx4 eth/eth -> ib/ib writes port 1 first", "[reconcile]") {
    RRig r(kHost);
    // "eth" without the newline (3 bytes): read as eth; "ib\n" then fills the file exactly.
    write_file(r.tb(kMlx4Pci + "/mlx4_port1"), "eth");
    write_file(r.tb(kMlx4Pci + "/mlx4_port2"), "eth");
    r.config("[[rule]]\npci_address = \"0000:03:00.0\"\nport_type = [\"ib\", \"ib\"]\n");
    WriteWatch w;
    w.watch(r.tb(kMlx4Pci + "/mlx4_port1"), "port1");
    w.watch(r.tb(kMlx4Pci + "/mlx4_port2"), "port2");
    r.start();
    REQUIRE(w.wait_for(2, 5s));
    w.pump(200ms);
    INFO(w.dump());
    REQUIRE(w.writes().size() == 2);
    CHECK(w.writes()[0].name == "port1");
    CHECK(w.writes()[1].name == "port2");
    for (auto& x : w.writes())
        CHECK(x.content == "ib\n");
    CHECK(r.eventually([&] {
        return r.port("mlx4_0", 1).value("InSync", false) &&
               r.port("mlx4_0", 2).value("InSync", false);
    }));
}

// ---- 2. refusals ------------------------------------------------------------------------

TEST_CASE("reconcile: SetPortType refuses eth/ib on mlx4 (naming port 2), unknown types, hfi1; "
          "mlx5 gets the firmware remedy",
          "[reconcile]") {
    RRig r(kHost);
    WriteWatch w;
    w.watch(r.tb(kMlx4Pci + "/mlx4_port1"), "port1");
    w.watch(r.tb(kMlx4Pci + "/mlx4_port2"), "port2");
    r.config("[daemon]\nmstconfig = \"" + (r.cfg.path() / "none" / "mstconfig").string() +
             "\"\n");
    r.start();

    auto e = error_of([&] { r.set_port_type("mlx4_0", 1, "eth", false); });
    CHECK(e.first == "org.rdmad1.Error.InvalidArgument");
    CHECK(e.second.find("port 2") != std::string::npos);
    e = error_of([&] { r.set_port_type("mlx4_0", 1, "bogus", false); });
    CHECK(e.first == "org.rdmad1.Error.InvalidArgument");
    e = error_of([&] { r.set_port_type("hfi1_0", 1, "eth", false); });
    CHECK(e.first == "org.rdmad1.Error.NotSupported");
    for (unsigned n : {1u, 2u})
        CHECK(r.port("mlx4_0", n)["DesiredPortType"] == "");

    // mlx5: accepted, stored; without mstconfig (start() below pins a path that is not there)
    // reported as mstconfig-missing, whose remedy names mstflint and the setting by hand
    // (LINK_TYPE_P1=2 is Ethernet). test_next_boot.cpp has the write through mstconfig.
    e = error_of([&] { r.set_port_type("mlx5_0", 1, "eth", false); });
    CHECK(e.first == "");
    REQUIRE(r.eventually([&] { return has(codes(r.device("mlx5_0")), "mstconfig-missing"); }));
    std::string remedy;
    for (auto& d : r.device("mlx5_0").value("ProblemDetails", json::array()))
        if (d.value("Code", "") == "mstconfig-missing")
            remedy = d.value("Remedy", "");
    CHECK(remedy.find("apt install mstflint") != std::string::npos);
    CHECK(remedy.find("mstconfig -d 0000:04:00.0 set LINK_TYPE_P1=2") != std::string::npos);
    CHECK(r.port("mlx5_0", 1)["DesiredPortType"] == "eth");
    CHECK(r.port("mlx5_0", 1)["InSync"] == false);
    w.pump(200ms);
    INFO(w.dump());
    CHECK(w.writes().empty());
}

TEST_CASE("reconcile: a read-only mlx4_port (SR-IOV 0444, EACCES) is port-type-read-only",
          "[reconcile]") {
    // Root ignores mode bits through CAP_DAC_OVERRIDE; the kernel's 0444 file refuses root
    // anyway (DOMAIN.md §1.3). Run rdmad without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH so the
    // 0444 testbed file gives the same EACCES.
    RRig r(kHost);
    REQUIRE(chmod(r.tb(kMlx4Pci + "/mlx4_port1").c_str(), 0444) == 0);
    REQUIRE(chmod(r.tb(kMlx4Pci + "/mlx4_port2").c_str(), 0444) == 0);
    r.config(kEthEth);
    r.start({"setpriv", "--bounding-set=-dac_override,-dac_read_search",
             "--inh-caps=-dac_override,-dac_read_search"});
    REQUIRE(r.eventually([&] { return has(codes(r.device("mlx4_0")), "port-type-read-only"); }));
    auto d = r.device("mlx4_0");
    INFO(d.dump(1));
    CHECK(!has(codes(d), "apply-failed"));
    CHECK(problem_text(d, "port-type-read-only").find("Permission denied") != std::string::npos);
    // Port 2 went first (eth/eth) and failed: port 1 is not written, so no eth/ib.
    CHECK(problem_text(d, "port-type-read-only").find("mlx4_port2") != std::string::npos);
    CHECK(problem_text(d, "port-type-skipped") ==
          "PortType ib -> eth: not written: the write before it on this card failed");
    CHECK(r.port("mlx4_0", 1)["InSync"] == false);
    CHECK(read_file(r.tb(kMlx4Pci + "/mlx4_port1")) == "ib\n");
    CHECK(read_file(r.tb(kMlx4Pci + "/mlx4_port2")) == "ib\n");
}

// ---- 3. re-created device ---------------------------------------------------------------

TEST_CASE("reconcile: the RDMA device re-created by the port type change is verified without "
          "a call",
          "[reconcile]") {
    RRig r(kHost);
    r.config(kEthEth);
    WriteWatch w;
    w.watch(r.tb(kMlx4Pci + "/mlx4_port1"), "port1");
    w.watch(r.tb(kMlx4Pci + "/mlx4_port2"), "port2");
    r.start();
    REQUIRE(w.wait_for(2, 5s));
    // The kernel unregisters and re-registers the ibdev (mlx4_change_port_types).
    r.testbed.uevent(kMlx4Ib, "remove");
    r.testbed.remove(kMlx4Ib);
    REQUIRE(r.eventually([&] { return r.device("mlx4_0").is_null(); }));
    r.testbed.add(mlx4_ib_text("/devices/pci0000:02/0000:02:00.0/0000:03:00.0", "mlx4_0",
                               "Ethernet"));
    r.testbed.uevent(kMlx4Ib, "add");
    REQUIRE(r.eventually([&] {
        auto p1 = r.port("mlx4_0", 1), p2 = r.port("mlx4_0", 2);
        return p1.is_object() && p2.is_object() && p1["LinkLayer"] == "Ethernet" &&
               p1.value("InSync", false) && p2.value("InSync", false);
    }));
    for (unsigned n : {1u, 2u}) {
        CHECK(r.port("mlx4_0", n)["DesiredPortType"] == "eth");
        CHECK(r.port("mlx4_0", n)["PortType"] == "eth");
    }
    w.pump(200ms);
    INFO(w.dump());
    CHECK(w.writes().size() == 2); // nothing more than the first two writes
}

// ---- 4. PFC -----------------------------------------------------------------------------

namespace {

const std::string kMlx5_9Pci = "/devices/pci0000:08/0000:08:00.0/0000:09:00.0";
const std::string kMlx5_9 = "/sys" + kMlx5_9Pci + "/infiniband/mlx5_9";

/// mlx5_9 as the kernel (re-)creates it: port 1 on the netdev rdmav0, its link-local GID once
/// of each type (drivers/infiniband/core/roce_gid_mgmt.c adds one entry per type the port
/// supports; a ConnectX-5 supports both).
std::string mlx5_9_text() {
    return "P: " + kMlx5_9Pci +
           "/infiniband/mlx5_9\nE: SUBSYSTEM=infiniband\nE: NAME=mlx5_9\n"
           "L: device=../../../0000:09:00.0\nA: fw_ver=16.35.2000\\n\n"
           "A: hca_type=MT4119\\n\nA: node_guid=0c42:a103:0099:0001\\n\n"
           "A: node_type=1: CA\\n\n"
           "A: ports/1/gid_attrs/ndevs/0=rdmav0\\n\n"
           "A: ports/1/gid_attrs/ndevs/1=rdmav0\\n\n"
           "A: ports/1/gid_attrs/types/0=IB/RoCE v1\\n\n"
           "A: ports/1/gid_attrs/types/1=RoCE v2\\n\n"
           "A: ports/1/gids/0=fe80:0000:0000:0000:0e42:a1ff:fe99:0001\\n\n"
           "A: ports/1/gids/1=fe80:0000:0000:0000:0e42:a1ff:fe99:0001\\n\n"
           "A: ports/1/lid=0x0\\n\nA: ports/1/link_layer=Ethernet\\n\n"
           "A: ports/1/phys_state=5: LinkUp\\n\nA: ports/1/rate=25 Gb/sec (1X EDR)\\n\n"
           "A: ports/1/sm_lid=0x0\\n\nA: ports/1/state=4: ACTIVE\\n\n\n";
}

/// A RoCE mlx5 function whose port 1 GID table names the netdev rdmav0 (DOMAIN.md §3.4).
void add_roce_mlx5_9(Testbed& testbed) {
    testbed.add("P: " + kMlx5_9Pci +
                "\nE: SUBSYSTEM=pci\nE: DRIVER=mlx5_core\nE: PCI_CLASS=20000\n"
                "E: PCI_ID=15B3:1017\nE: PCI_SLOT_NAME=0000:09:00.0\nA: class=0x020000\\n\n"
                "A: device=0x1017\\n\nL: driver=../../../../bus/pci/drivers/mlx5_core\n"
                "A: vendor=0x15b3\\n\n\n" +
                mlx5_9_text());
}

} // namespace

TEST_CASE("reconcile: PFC on a real veth (no dcbnl_ops) is no-dcb, not in sync, no crash",
          "[reconcile][pfc]") {
    struct Veth {
        Veth() {
            run_program({"ip", "link", "del", "rdmav0"});
            auto res = run_program({"ip", "link", "add", "rdmav0", "type", "veth", "peer", "name",
                                    "rdmav1"});
            INFO(res.err);
            REQUIRE(res.status == 0);
        }
        ~Veth() { run_program({"ip", "link", "del", "rdmav0"}); }
    };
    RRig r(kHost);
    Veth veth;
    add_roce_mlx5_9(r.testbed);
    r.config("[[rule]]\ndevice = \"mlx5_9\"\npfc_no_drop = [3, 4]\n\n"
             "[[rule]]\npci_address = \"0000:03:00.0\"\npfc_no_drop = [3, 4]\n");
    r.start();
    REQUIRE(r.eventually([&] { return has(codes(r.device("mlx5_9")), "no-dcb"); }));
    auto p = r.port("mlx5_9", 1);
    INFO(r.device("mlx5_9").dump(1));
    CHECK(p["InSync"] == false);
    CHECK(p["DesiredPFCNoDrop"] == json({3, 4}));
    CHECK(p["PFCNoDrop"] == json::array());
    CHECK(problem_text(r.device("mlx5_9"), "no-dcb").find("rdmav0") != std::string::npos);

    // mlx4: the module options pfctx/pfcrx, mask 0x18 for priorities 3 and 4 (DOMAIN.md §2.1).
    const std::string modprobe = r.modprobe_dir() + "/rdmad-mlx4.conf";
    REQUIRE(r.eventually([&] { return fs::exists(modprobe); }));
    CHECK(read_file(modprobe).find("options mlx4_en pfctx=0x18 pfcrx=0x18\n") != std::string::npos);
    CHECK(r.manager_state() == "running");
    r.stop(); // exit status 0: no crash
}

// ---- 4b. PFC as actual state: DCB emulated at the socket level -------------------------
//
// tests/integration/fake_dcbnl.c, preloaded into rdmad, gives the netdev rdmav0 IEEE DCB as
// net/dcb/dcbnl.c would (pfc_cap 8, pfc_en 0) and logs each GET and SET rdmad sends. "Another
// tool" is this test: it multicasts to RTNLGRP_DCB what the kernel sends after a SET
// (dcbnl_ieee_notify(): RTM_SETDCB, DCB_CMD_IEEE_SET, IFNAME, IEEE { IEEE_PFC }, DCBX).

namespace {

/// Multicast to RTNLGRP_DCB the notification the kernel sends after `pfc_en` was set on
/// `ifname`, laid out by hand as net/dcb/dcbnl.c dcbnl_ieee_fill() does (not with rdmad's
/// codec, which is what is tested).
/// With `dscp` (DSCP, priority) entries, the notification carries an APP table as well
/// (DCB_ATTR_IEEE_APP_TABLE { DCB_ATTR_IEEE_APP: struct dcb_app }, `dcb app add/del`).
void notify_pfc(const std::string& ifname, uint8_t pfc_en,
                const std::optional<std::vector<std::pair<uint8_t, uint8_t>>>& dscp = {}) {
    std::vector<uint8_t> b;
    auto put = [&](const void* p, size_t n) {
        auto c = static_cast<const uint8_t*>(p);
        b.insert(b.end(), c, c + n);
        b.resize((b.size() + 3) & ~size_t{3}, 0);
    };
    auto attr = [&](uint16_t type, const void* p, size_t n) {
        struct nlattr a {
            static_cast<uint16_t>(NLA_HDRLEN + n), type
        };
        put(&a, sizeof a);
        put(p, n);
    };
    struct nlmsghdr h {};
    h.nlmsg_type = RTM_SETDCB;
    put(&h, sizeof h);
    struct dcbmsg d {};
    d.dcb_family = AF_UNSPEC;
    d.cmd = DCB_CMD_IEEE_SET;
    put(&d, sizeof d);
    attr(DCB_ATTR_IFNAME, ifname.c_str(), ifname.size() + 1);
    const size_t nest = b.size();
    struct nlattr n {
        0, DCB_ATTR_IEEE | NLA_F_NESTED
    };
    put(&n, sizeof n);
    struct ieee_pfc pfc {};
    pfc.pfc_cap = 8;
    pfc.pfc_en = pfc_en;
    attr(DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
    if (dscp) {
        const size_t table = b.size();
        struct nlattr t {
            0, DCB_ATTR_IEEE_APP_TABLE
        };
        put(&t, sizeof t);
        for (const auto& [code, prio] : *dscp) {
            struct dcb_app a {
                IEEE_8021QAZ_APP_SEL_DSCP, prio, code
            };
            attr(DCB_ATTR_IEEE_APP, &a, sizeof a);
        }
        const auto table_len = static_cast<uint16_t>(b.size() - table);
        std::memcpy(b.data() + table, &table_len, sizeof table_len);
    }
    const auto nest_len = static_cast<uint16_t>(b.size() - nest);
    std::memcpy(b.data() + nest, &nest_len, sizeof nest_len);
    const uint8_t dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
    attr(DCB_ATTR_DCBX, &dcbx, 1);
    const auto len = static_cast<uint32_t>(b.size());
    std::memcpy(b.data(), &len, sizeof len);

    const int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    REQUIRE(s >= 0);
    struct sockaddr_nl to {};
    to.nl_family = AF_NETLINK;
    to.nl_groups = 1u << (RTNLGRP_DCB - 1);
    const ssize_t sent =
        sendto(s, b.data(), b.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    const int e = errno;
    close(s);
    INFO("sendto RTNLGRP_DCB: " << std::strerror(e));
    REQUIRE(sent == static_cast<ssize_t>(b.size()));
}

/// An RRig whose rdmad has DCB on rdmav0 through the fake_dcbnl preload.
struct DcbRig : RRig {
    explicit DcbRig(const std::string& host) : RRig(host) {
        add_roce_mlx5_9(testbed);
        preloads.push_back(env_or_fail("FAKE_DCBNL"));
        extra_env["FAKE_DCBNL_NETDEVS"] = "rdmav0";
        extra_env["FAKE_DCBNL_LOG"] = log();
        extra_env["FAKE_DCBNL_RESET"] = (cfg.path() / "dcb-reset").string();
    }
    std::string log() const { return (cfg.path() / "dcb.log").string(); }
    /// The driver re-creates `netdev`: its DCB state is the driver's default again (pfc_en 0,
    /// no APP entry) from rdmad's next DCB request on (fake_dcbnl.c FAKE_DCBNL_RESET).
    void recreate_netdev(const std::string& netdev) {
        write_file(extra_env.at("FAKE_DCBNL_RESET"), netdev + "\n");
    }
    /// The requests rdmad sent, in order ("GET rdmav0", "SET rdmav0 0x08").
    std::vector<std::string> requests() const {
        std::vector<std::string> out;
        std::istringstream in(fs::exists(log()) ? read_file(log()) : "");
        for (std::string line; std::getline(in, line);)
            out.push_back(line);
        return out;
    }
    size_t count(const std::string& prefix) const {
        size_t n = 0;
        for (const auto& r : requests())
            n += r.rfind(prefix, 0) == 0;
        return n;
    }
};

} // namespace

TEST_CASE("pfc: every RoCE port's no-drop priorities are on the bus, read once, and another "
          "tool's change reaches the bus without a read",
          "[reconcile][pfc]") {
    DcbRig r(kHost); // no rule at all
    r.start();
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1).is_object(); }));
    auto p = r.port("mlx5_9", 1);
    CHECK(p["PFCNoDrop"] == json::array()); // pfc_en 0: nothing no-drop
    CHECK(p["InSync"] == true);
    CHECK(r.requests() == std::vector<std::string>{"GET rdmav0"});

    notify_pfc("rdmav0", 0x18); // `dcb pfc set dev rdmav0 prio-pfc 3:on 4:on`
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["PFCNoDrop"] == json({3, 4}); }));
    CHECK(r.requests() == std::vector<std::string>{"GET rdmav0"}); // the notice carried it
    CHECK(r.port("mlx5_9", 1)["InSync"] == true);                  // nothing asked
    r.stop();
}

TEST_CASE("pfc: a change by another tool is set back with exactly one SET and one read-back",
          "[reconcile][pfc]") {
    DcbRig r(kHost);
    r.config("[[rule]]\ndevice = \"mlx5_9\"\npfc_no_drop = [3]\n");
    r.start();
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["PFCNoDrop"] == json({3}); }));
    CHECK(r.port("mlx5_9", 1)["InSync"] == true);
    // Start-up: the source's read, the SET (priority 3 = 0x08), its read-back.
    CHECK(r.requests() == std::vector<std::string>{"GET rdmav0", "SET rdmav0 0x08", "GET rdmav0"});

    notify_pfc("rdmav0", 0x00); // another tool drops priority 3
    REQUIRE(r.eventually([&] { return r.count("SET") == 2; }));
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["PFCNoDrop"] == json({3}); }));
    CHECK(r.port("mlx5_9", 1)["InSync"] == true);
    CHECK(r.requests() == std::vector<std::string>{"GET rdmav0", "SET rdmav0 0x08", "GET rdmav0",
                                                   "SET rdmav0 0x08", "GET rdmav0"});
    INFO(r.device("mlx5_9").dump(1));
    for (const auto& code : codes(r.device("mlx5_9")))
        CHECK(code.rfind("pfc", 0) != 0); // no pfc-* problem (nor apply-failed, below)
    CHECK_FALSE(has(codes(r.device("mlx5_9")), "apply-failed"));
    r.stop();
}

TEST_CASE("pfc: with apply = false another tool's change leaves the port out of sync, no SET",
          "[reconcile][pfc]") {
    DcbRig r(kHost);
    r.config("[daemon]\napply = false\n\n[[rule]]\ndevice = \"mlx5_9\"\npfc_no_drop = [3]\n");
    r.start();
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1).is_object(); }));
    CHECK(r.port("mlx5_9", 1)["InSync"] == false);
    notify_pfc("rdmav0", 0x08); // someone else sets what the rule asks: in sync
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["InSync"] == true; }));
    notify_pfc("rdmav0", 0x01); // and changes it again: out of sync, and it stays so
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["PFCNoDrop"] == json({0}); }));
    CHECK(r.port("mlx5_9", 1)["InSync"] == false);
    CHECK(r.count("SET") == 0);
    r.stop();
}

TEST_CASE("pfc: a port changed back more than 3 times a minute is pfc-contested and left alone",
          "[reconcile][pfc]") {
    DcbRig r(kHost);
    r.config("[[rule]]\ndevice = \"mlx5_9\"\npfc_no_drop = [3]\n");
    r.start();
    REQUIRE(r.eventually([&] { return r.count("SET") == 1; }));
    for (size_t i = 1; i <= 3; ++i) { // corrections 1-3 are made
        notify_pfc("rdmav0", 0x00);
        REQUIRE(r.eventually([&] { return r.count("SET") == 1 + i; }));
        REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["PFCNoDrop"] == json({3}); }));
    }
    notify_pfc("rdmav0", 0x00); // the 4th within a minute: rdmad stops
    REQUIRE(r.eventually([&] { return has(codes(r.device("mlx5_9")), "pfc-contested"); }));
    CHECK(r.count("SET") == 4);
    CHECK(r.port("mlx5_9", 1)["InSync"] == false);
    CHECK(problem_text(r.device("mlx5_9"), "pfc-contested").find("rdmav0") != std::string::npos);
    notify_pfc("rdmav0", 0x00); // more changes do not wake it up
    notify_pfc("rdmav0", 0x02);
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["PFCNoDrop"] == json({1}); }));
    CHECK(r.count("SET") == 4);
    // The admin asks again: set, and the problem goes.
    CHECK(r.reconcile(false).size() == 1);
    REQUIRE(r.eventually([&] { return !has(codes(r.device("mlx5_9")), "pfc-contested"); }));
    CHECK(r.count("SET") == 5);
    r.stop();
}

TEST_CASE("pfc: SetPFCNoDrop changes PFCNoDrop and InSync once, with the verified value",
          "[reconcile][pfc]") {
    DcbRig r(kHost);
    r.start();
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1).is_object(); }));
    const std::string port = r.port_path("mlx5_9", 1);
    SignalRecorder rec(*r.client);
    rec.pump(50ms);
    const size_t mark = rec.size();
    r.set_pfc("mlx5_9", 1, {3, 4}, false);
    CHECK(rec.quiet(300ms) == false); // something arrived (checked below) ...
    rec.quiet(300ms);                 // ... and then nothing more
    std::vector<json> pfc, in_sync;
    for (size_t i = mark; i < rec.size(); ++i) {
        const auto& sig = rec.signals()[i];
        if (sig.path != port || sig.kind != "changed")
            continue;
        if (sig.props.contains("PFCNoDrop"))
            pfc.push_back(sig.props["PFCNoDrop"]);
        if (sig.props.contains("InSync"))
            in_sync.push_back(sig.props["InSync"]);
    }
    INFO(rec.dump(mark));
    CHECK(pfc == std::vector<json>{json({3, 4})});
    CHECK(in_sync.empty()); // in sync before (nothing asked) and after (verified): no flap
    CHECK(r.count("SET") == 1);
    CHECK(r.count("GET") == 2); // the first read at start-up, the read-back
    r.stop();
}

// ---- 5. converged -----------------------------------------------------------------------

TEST_CASE("reconcile: a converged state sends no writes, and Reconcile lists no change",
          "[reconcile]") {
    RRig r(kHost);
    write_file(r.tb(kMlx4Pci + "/mlx4_port1"), "eth\n");
    write_file(r.tb(kMlx4Pci + "/mlx4_port2"), "eth\n");
    r.config(kEthEth);
    WriteWatch w;
    w.watch(r.tb(kMlx4Pci + "/mlx4_port1"), "port1");
    w.watch(r.tb(kMlx4Pci + "/mlx4_port2"), "port2");
    r.start();
    CHECK(r.reconcile(false).empty());
    CHECK(r.reconcile(false).empty());
    CHECK(r.reconcile(true).empty());
    w.pump(300ms);
    INFO(w.dump());
    CHECK(w.writes().empty());
    CHECK(r.port("mlx4_0", 1)["InSync"] == true);
    CHECK(r.port("mlx4_0", 2)["InSync"] == true);
}

TEST_CASE("reconcile: a port change of a device with desired values names only what changed, "
          "not the desired values again",
          "[reconcile]") {
    // org.rdmad1(5): PropertiesChanged carries only the properties that changed. A pass puts
    // the device read (desired values at their defaults), then planned: the desired values
    // and InSync, the same as before, must not be sent again (a new user saw every uevent
    // re-send them once a setting was made).
    RRig r(kHost);
    write_file(r.tb(kMlx4Pci + "/mlx4_port1"), "eth\n");
    write_file(r.tb(kMlx4Pci + "/mlx4_port2"), "eth\n");
    r.config(kEthEth);
    r.start();
    REQUIRE(r.eventually([&] { return r.port("mlx4_0", 1)["DesiredPortType"] == "eth"; }));
    const std::string port = r.port_path("mlx4_0", 1);
    const std::string device = port.substr(0, port.rfind("/port/"));
    SignalRecorder rec(*r.client);
    rec.quiet(300ms);
    const size_t mark = rec.size();
    write_file(r.tb(kMlx4Ib + "/ports/1/state"), "1: DOWN\n");
    r.testbed.uevent(kMlx4Ib, "change");
    REQUIRE(rec.eventually([&] { return rec.changed_since(mark, port, "State"); }, 5s));
    rec.quiet(300ms);
    INFO(rec.dump(mark));
    for (size_t k = mark; k < rec.size(); ++k) {
        const Signal& sig = rec.signals()[k];
        if (sig.path == port)
            CHECK(sig.summary() == "changed " + port + " org.rdmad1.Port State");
        else if (sig.path == device)
            CHECK(sig.summary() ==
                  "changed " + device + " org.rdmad1.Device ProblemDetails,Problems");
        else
            CHECK(sig.path == "not a signal of another object");
    }
    CHECK(r.port("mlx4_0", 1)["State"] == "DOWN");
    CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "eth");
    CHECK(r.port("mlx4_0", 1)["InSync"] == true);
}

// ---- 6. hotplug -------------------------------------------------------------------------

TEST_CASE("reconcile: a hotplugged device matching a rule is written without a call, and again "
          "after a driver reload",
          "[reconcile][hotplug]") {
    RRig r(kHost);
    const std::string pci = "/devices/pci0000:06/0000:06:00.0/0000:07:00.0";
    const std::string ib = "/sys" + pci + "/infiniband/mlx4_1";
    r.config("[[rule]]\npci_address = \"0000:07:00.0\"\nport_type = [\"eth\", \"eth\"]\n");
    r.start();
    // The PCI function first (no RDMA device yet: nothing to do), then its ibdev.
    r.testbed.add(mlx4_pci_text(pci, "ib", "ib"));
    WriteWatch w;
    w.watch(r.tb("/sys" + pci + "/mlx4_port1"), "port1");
    w.watch(r.tb("/sys" + pci + "/mlx4_port2"), "port2");
    w.pump(200ms);
    CHECK(w.writes().empty());
    r.testbed.add(mlx4_ib_text(pci, "mlx4_1", "InfiniBand"));
    REQUIRE(w.wait_for(2, 5s));
    w.pump(200ms);
    {
        INFO(w.dump());
        REQUIRE(w.writes().size() == 2);
        CHECK(w.writes()[0].name == "port2");
        CHECK(w.writes()[1].name == "port1");
        CHECK(w.writes()[0].content == "eth\n");
        CHECK(w.writes()[1].content == "eth\n");
    }
    REQUIRE(r.eventually([&] { return r.port("mlx4_1", 1).value("InSync", false); }));

    // Driver reload: the ibdev goes, the ports come back as the module default (ib).
    r.testbed.uevent(ib, "remove");
    r.testbed.remove(ib);
    REQUIRE(r.eventually([&] { return r.device("mlx4_1").is_null(); }));
    write_file(r.tb("/sys" + pci + "/mlx4_port1"), "ib\n");
    write_file(r.tb("/sys" + pci + "/mlx4_port2"), "ib\n");
    w.clear();
    r.testbed.add(mlx4_ib_text(pci, "mlx4_1", "InfiniBand"));
    r.testbed.uevent(ib, "add");
    CHECK(w.wait_for(2, 5s));
    w.pump(200ms);
    INFO(w.dump() << "\n" << r.device("mlx4_1").dump(1));
    REQUIRE(w.writes().size() == 2);
    CHECK(w.writes()[0].name == "port2");
    CHECK(w.writes()[1].name == "port1");
    CHECK(r.eventually([&] { return r.port("mlx4_1", 1).value("InSync", false); }));
}

// ---- 7. authorization -------------------------------------------------------------------

TEST_CASE("reconcile: authorization through polkit, and root-only without it", "[reconcile][polkit]") {
    RRig r(kHost);
    WriteWatch w;
    w.watch(r.tb(kMlx4Pci + "/mlx4_port1"), "port1");
    w.watch(r.tb(kMlx4Pci + "/mlx4_port2"), "port2");
    r.start();
    open_bus_to_everyone(r.bus.address());
    const std::string port1 = r.port_path("mlx4_0", 1);
    const std::string set_ib = "org.rdmad1.Port.SetPortType";
    const std::vector<std::string> ib_args = {"string:auto", "boolean:false"};

    SECTION("without polkit: root allowed, nobody denied, dry run open") {
        auto res = call_as(true, r.bus.address(), port1, set_ib, ib_args);
        INFO(res.out << res.err);
        CHECK(res.status != 0);
        CHECK(res.err.find("org.freedesktop.DBus.Error.AccessDenied") != std::string::npos);
        CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "");
        res = call_as(true, r.bus.address(), "/org/rdmad1", "org.rdmad1.Manager.Reconcile",
                      {"boolean:true"});
        INFO(res.out << res.err);
        CHECK(res.status == 0);
        res = call_as(true, r.bus.address(), "/org/rdmad1", "org.rdmad1.Manager.Reconcile",
                      {"boolean:false"});
        CHECK(res.err.find("org.freedesktop.DBus.Error.AccessDenied") != std::string::npos);
        res = call_as(true, r.bus.address(), "/org/rdmad1", "org.rdmad1.Manager.Reload", {});
        CHECK(res.err.find("org.freedesktop.DBus.Error.AccessDenied") != std::string::npos);
        w.pump(200ms);
        CHECK(w.writes().empty());
        res = call_as(false, r.bus.address(), port1, set_ib, ib_args);
        INFO(res.out << res.err);
        CHECK(res.status == 0);
        CHECK(r.eventually([&] { return r.port("mlx4_0", 1)["DesiredPortType"] == "auto"; }));
    }
    SECTION("polkit allowing nothing, then org.rdmad1.configure") {
        Child polkitd({"/usr/bin/python3", "-m", "dbusmock", "--template", "polkitd"});
        INFO(polkitd.log());
        REQUIRE(r.eventually([&] { return name_has_owner(*r.client, "org.freedesktop.PolicyKit1"); },
                             10s));
        auto mock = [&](const std::string& arg) {
            auto res = run_program({"dbus-send", "--bus=" + r.bus.address(), "--print-reply",
                                    "--dest=org.freedesktop.PolicyKit1",
                                    "/org/freedesktop/PolicyKit1/Authority",
                                    "org.freedesktop.DBus.Mock.SetAllowed", arg});
            INFO(res.err);
            REQUIRE(res.status == 0);
        };
        mock("array:string:");
        auto res = call_as(true, r.bus.address(), port1, set_ib, ib_args);
        INFO(res.out << res.err);
        CHECK(res.err.find("org.freedesktop.DBus.Error.AccessDenied") != std::string::npos);
        res = call_as(false, r.bus.address(), port1, set_ib, ib_args); // root too: polkit says no
        CHECK(res.err.find("org.freedesktop.DBus.Error.AccessDenied") != std::string::npos);
        res = call_as(true, r.bus.address(), "/org/rdmad1", "org.rdmad1.Manager.Reconcile",
                      {"boolean:true"});
        CHECK(res.status == 0);
        w.pump(200ms);
        CHECK(w.writes().empty());
        CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "");

        mock("array:string:org.rdmad1.configure");
        res = call_as(true, r.bus.address(), port1, set_ib, ib_args);
        INFO(res.out << res.err);
        CHECK(res.status == 0);
        CHECK(r.eventually([&] { return r.port("mlx4_0", 1)["DesiredPortType"] == "auto"; }));
    }
}

// ---- 8. persistence ---------------------------------------------------------------------

TEST_CASE("reconcile: persisted PFC survives a restart", "[reconcile][persist]") {
    RRig r(kHost);
    r.start();
    r.set_pfc("mlx4_0", 1, {3}, true);
    REQUIRE(fs::exists(r.state_file()));
    CHECK(read_file(r.state_file()).find("pfc_no_drop = [ 3 ]") != std::string::npos);
    r.stop();
    r.start();
    CHECK(r.manager_state() == "running");
    CHECK(r.port("mlx4_0", 1)["DesiredPFCNoDrop"] == json({3}));
    // A second persisted call on the same device, then a restart: still a valid state file.
    r.set_pfc("mlx4_0", 1, {4}, true);
    r.set_port_type("mlx4_0", 1, "auto", true);
    r.stop();
    r.start();
    INFO(read_file(r.state_file()) << "\n" << r.manager_problems().dump());
    CHECK(r.manager_state() == "running");
    CHECK(r.port("mlx4_0", 1)["DesiredPFCNoDrop"] == json({4}));
    CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "auto");
}

TEST_CASE("reconcile: SIGKILL while persisting leaves no torn state file",
          "[reconcile][persist]") {
    RRig r(kHost);
    std::mt19937 rng(20240607);
    std::uniform_int_distribution<int> delay_ms(0, 60);
    for (int round = 0; round < 10; ++round) {
        INFO("round " << round);
        r.start();
        const std::string path = r.port_path("mlx4_0", 1);
        std::atomic<bool> stop{false};
        std::thread t([&] {
            try {
                Client c;
                auto p = c.proxy(path);
                for (uint8_t i = 0; !stop; i = uint8_t((i + 1) % 8))
                    p->callMethod("SetPFCNoDrop")
                        .onInterface("org.rdmad1.Port")
                        .withArguments(std::vector<uint8_t>{i}, true);
            } catch (...) {
            }
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(5 + delay_ms(rng)));
        r.kill9();
        stop = true;
        t.join();
        // Absent, or a complete file: it ends with a full rule.
        if (fs::exists(r.state_file())) {
            const std::string text = read_file(r.state_file());
            INFO(text);
            CHECK(text.rfind("# Written by rdmad", 0) == 0);
            CHECK((text.empty() || text.back() == '\n'));
            if (text.find("[[rule]]") != std::string::npos)
                CHECK(text.substr(text.rfind("[[rule]]")).find("pfc_no_drop = [") !=
                      std::string::npos);
        }
        // rdmad itself must accept it.
        r.start();
        INFO(read_file(r.state_file()) << "\n" << r.manager_problems().dump());
        CHECK(r.manager_state() == "running");
        r.stop();
    }
}

// ---- 9. bad config ----------------------------------------------------------------------

TEST_CASE("reconcile: a bad rdmad.conf is refused with file:line:column, keeps the last good "
          "state, and degrades State until fixed",
          "[reconcile][config]") {
    struct Bad {
        const char* what;
        std::string text;
        std::string error; // after "<path>:"
    };
    // Reasons: daemon/config/config_file.cpp (and toml++ for syntax errors).
    const std::vector<Bad> bad = {
        {"wrong type", "[[rule]]\ndevice = 5\n", "2:10: device must be a string, not an integer"},
        {"port_type not a list", "[[rule]]\ndevice = \"x\"\nport_type = \"eth\"\n",
         "3:13: port_type must be a list of strings, not a string"},
        {"unknown key", "[[rule]]\ndevice = \"mlx5_0\"\nport_types = [\"eth\"]\n",
         "3:1: unknown key \"port_types\" in [[rule]] (expected pci_address, driver, node_guid, "
         "device, netdev, profile, port_type, pfc_no_drop, trust, dscp_priority, exclusive, rdma_cm_roce_mode, rdma_cm_tos, sriov_numvfs, vf_guids, require_provider, min_rate_gbps or "
         "min_active_ports)"},
        {"priority 8", "[[rule]]\ndriver = \"mlx5_core\"\npfc_no_drop = [3, 8]\n",
         "3:19: priority 8 is outside 0-7"},
        {"unknown port type", "[[rule]]\ndevice = \"mlx4_0\"\nport_type = [\"eth\", \"roce\"]\n",
         "3:21: unknown port type \"roce\" (expected \"ib\", \"eth\" or \"auto\")"},
        {"duplicate rules",
         "[[rule]]\ndevice = \"mlx5_*\"\nport_type = [\"eth\"]\n\n[[rule]]\ndevice = "
         "\"mlx5_*\"\npfc_no_drop = [3]\n",
         "5:1: rule has the same match as the rule at line 1; merge the two rules"},
        {"TOML syntax error", "[[rule]]\ndevice = \"a\"\ndevice = \"b\"\n",
         "3:10: Error while parsing key-value pair: cannot redefine existing string 'device'"},
    };
    RRig r(kHost);
    write_file(r.tb(kMlx4Pci + "/mlx4_port1"), "eth\n");
    write_file(r.tb(kMlx4Pci + "/mlx4_port2"), "eth\n");
    r.config(kEthEth);
    r.start();
    REQUIRE(r.manager_state() == "running");
    REQUIRE(r.port("mlx4_0", 1)["DesiredPortType"] == "eth");
    const std::string file = r.config_file();

    auto check_degraded = [&](const std::string& expected) {
        CHECK(r.eventually([&] { return r.manager_state() == "degraded"; }));
        json probs = r.manager_problems();
        INFO(probs.dump());
        bool found = false;
        for (auto& p : probs)
            if (p[0] == "config-error" &&
                p[2] == expected + " (rdmad keeps the desired state it last read from rdmad.conf "
                                   "and conf.d, none if it never read them)")
                found = true;
        CHECK(found);
        CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "eth");
        CHECK(r.port("mlx4_0", 2)["DesiredPortType"] == "eth");
    };
    auto check_recovered = [&] {
        CHECK(r.eventually([&] { return r.manager_state() == "running"; }));
        CHECK(r.manager_problems() == json::array());
    };
    for (const auto& b : bad) {
        INFO(b.what << "\n" << b.text);
        const std::string expected = file + ":" + b.error;
        r.config(b.text);
        auto e = error_of([&] { r.reload(); });
        CHECK(e.first == "org.rdmad1.Error.InvalidArgument");
        CHECK(e.second == expected);
        check_degraded(expected);
        r.config(kEthEth);
        CHECK(error_of([&] { r.reload(); }).first == "");
        check_recovered();
    }
    // SIGHUP takes the same path.
    for (size_t i : {size_t(3), size_t(6)}) {
        INFO("SIGHUP: " << bad[i].what);
        r.config(bad[i].text);
        r.daemon->signal(SIGHUP);
        check_degraded(file + ":" + bad[i].error);
        r.config(kEthEth);
        r.daemon->signal(SIGHUP);
        check_recovered();
    }
}

// Issue #24: the configuration is read off the loop. rdmad.conf(5): each file at most 1 MiB,
// any number of files; rdmad(8), SIGHUP: the files are read on a thread of their own and
// D-Bus calls are answered meanwhile.
TEST_CASE("reconcile: while a SIGHUP or a Manager.Reload reads 18 MiB of drop-ins, a Get from "
          "another client is answered within 50 ms; a bad file in the middle keeps the last good "
          "state",
          "[reconcile][config]") {
    RRig r(kHost);
    r.config(kEthEth);
    r.start();
    REQUIRE(r.manager_state() == "running");
    REQUIRE(r.port("mlx4_0", 1)["DesiredPortType"] == "eth");
    const auto sources = [&] {
        return variant_json(
            r.client->get("/org/rdmad1", "org.rdmad1.Manager", "DesiredStateSource"));
    };
    REQUIRE(sources() == json::array({r.config_file()}));

    // 18 files of rules that match no device here (PCI domain a000 and up), each as near
    // 1 MiB as whole rules go, every match different (rdmad.conf(5): a repeated match is an
    // error). File 09 ends with a rule whose device is an integer.
    const auto confd = r.cfg.path() / "etc" / "conf.d";
    fs::create_directories(confd);
    constexpr size_t kMiB = 1024 * 1024;
    constexpr int kFiles = 18;
    constexpr int kBad = 9;
    const auto file_name = [&](int f) {
        char name[32];
        std::snprintf(name, sizeof name, "%02d-bulk.conf", f);
        return (confd / name).string();
    };
    size_t total = 0, rule = 0;
    int bad_line = 0;
    std::string bad_path;
    for (int f = 1; f <= kFiles; ++f) {
        std::string text;
        const std::string bad = "[[rule]]\ndevice = 5\n";
        // Room for the bad rule, and for its fix below.
        const size_t room = f == kBad ? kMiB - bad.size() - 16 : kMiB;
        for (;;) {
            char buf[96];
            const int n =
                std::snprintf(buf, sizeof buf,
                              "[[rule]]\npci_address = \"%04zx:%02zx:%02zx.%zu\"\n"
                              "pfc_no_drop = [3]\n",
                              0xa000 + rule / 65536, rule / 256 % 256, rule / 8 % 32, rule % 8);
            if (text.size() + size_t(n) > room)
                break;
            text.append(buf, size_t(n));
            ++rule;
        }
        const std::string path = file_name(f);
        if (f == kBad) {
            bad_line = int(std::count(text.begin(), text.end(), '\n')) + 2;
            text += bad;
            bad_path = path;
        }
        REQUIRE(text.size() <= kMiB);
        write_file(path, text);
        total += text.size();
    }
    REQUIRE(total > 18 * kMiB - 18 * 64); // 18 MiB but for the last rule's room in each file
    const std::string expected =
        bad_path + ":" + std::to_string(bad_line) + ":10: device must be a string, not an integer";

    // Ask from the other client every 10 ms while rdmad reads. A loop that read the files
    // itself would hold a Get for the whole read (about 2 s for these files with Manager.Reload,
    // which reads on the loop); a loop that only waits for the worker answers within 50 ms. The
    // host running the tests may be busy (two cores, parallel builds): 95 % of the Gets must
    // make the 50 ms, and none may take a tenth of such a read.
    std::vector<Clock::duration> gets;
    const auto sighup = Clock::now();
    r.daemon->signal(SIGHUP);
    std::string state = "running";
    while (state == "running" && Clock::now() - sighup < 300s) {
        std::this_thread::sleep_for(10ms);
        const auto t0 = Clock::now();
        state = r.manager_state();
        gets.push_back(Clock::now() - t0);
    }
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - sighup);
    const size_t slow = size_t(
        std::count_if(gets.begin(), gets.end(), [](Clock::duration d) { return d >= 50ms; }));
    const auto longest = std::chrono::duration_cast<std::chrono::milliseconds>(
        *std::max_element(gets.begin(), gets.end()));
    INFO("the read took " << took.count() << " ms; " << gets.size() << " Gets, " << slow
                          << " of them 50 ms or more, the longest " << longest.count() << " ms");
    REQUIRE(state == "degraded");
    CHECK(gets.size() >= 5); // the loop answered while the worker read, not after
    CHECK(slow * 20 <= gets.size());
    CHECK(longest < 200ms);

    // The /etc unit is refused as a whole: the rules of rdmad.conf stay in force.
    bool found = false;
    for (auto& p : r.manager_problems())
        if (p[0] == "config-error" &&
            p[2] == expected + " (rdmad keeps the desired state it last read from rdmad.conf "
                               "and conf.d, none if it never read them)")
            found = true;
    CHECK(found);
    CHECK(sources() == json::array({r.config_file()}));
    CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "eth");
    CHECK(r.port("mlx4_0", 2)["DesiredPortType"] == "eth");

    // Fixed, the 18 files are taken by Manager.Reload, answered once they are in force; it
    // reads on the worker too, so the other client's Gets are answered meanwhile.
    std::string fixed = read_file(bad_path);
    fixed.replace(fixed.size() - std::strlen("5\n"), 2, "\"bulk-fixed\"\n");
    write_file(bad_path, fixed);
    std::atomic<bool> answered{false};
    std::string reload_error = "<none>";
    std::thread caller([&] {
        Client reloader;
        try {
            reloader.manager()
                .callMethod("Reload")
                .onInterface("org.rdmad1.Manager")
                .withTimeout(std::chrono::microseconds(300s));
            reload_error.clear();
        } catch (const sdbus::Error& e) {
            reload_error = e.getName() + ": " + e.getMessage();
        }
        answered = true;
    });
    std::vector<Clock::duration> during;
    while (!answered) {
        std::this_thread::sleep_for(10ms);
        const auto t0 = Clock::now();
        (void)r.manager_state();
        during.push_back(Clock::now() - t0);
    }
    caller.join();
    CHECK(reload_error.empty());
    // Answered after the files are in force: the state says so at once.
    CHECK(r.manager_state() == "running");
    const size_t slow_during = size_t(
        std::count_if(during.begin(), during.end(), [](Clock::duration d) { return d >= 50ms; }));
    INFO(during.size() << " Gets during Reload, " << slow_during << " of them 50 ms or more");
    CHECK(during.size() >= 5);
    CHECK(slow_during * 20 <= during.size());
    json want = json::array({r.config_file()});
    for (int f = 1; f <= kFiles; ++f)
        want.push_back(file_name(f));
    CHECK(sources() == want);
    CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "eth");
}

// ---- 10. apply = false ------------------------------------------------------------------

TEST_CASE("reconcile: [daemon] apply = false reports drift and writes nothing", "[reconcile]") {
    RRig r(kHost);
    r.config("[daemon]\napply = false\n\n" + kEthEth);
    WriteWatch w;
    w.watch(r.tb(kMlx4Pci + "/mlx4_port1"), "port1");
    w.watch(r.tb(kMlx4Pci + "/mlx4_port2"), "port2");
    r.start();
    auto dry = r.reconcile(true);
    const std::string p1 = r.port_path("mlx4_0", 1), p2 = r.port_path("mlx4_0", 2);
    std::vector<std::vector<std::string>> expected = {{p2, "PortType", "ib", "eth"},
                                                      {p1, "PortType", "ib", "eth"}};
    CHECK(dry == expected);
    CHECK(r.reconcile(false) == expected);
    CHECK(r.port("mlx4_0", 1)["InSync"] == false);
    CHECK(r.port("mlx4_0", 2)["InSync"] == false);
    CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "eth");
    w.pump(300ms);
    INFO(w.dump());
    CHECK(w.writes().empty());
    CHECK(read_file(r.tb(kMlx4Pci + "/mlx4_port1")) == "ib\n");
}

// ---- 11. hostile files and arguments ----------------------------------------------------

TEST_CASE("reconcile: a FIFO drop-in is refused at once and the daemon keeps answering",
          "[reconcile][config]") {
    RRig r(kHost);
    r.config(kEthEth);
    r.start();
    REQUIRE(r.manager_state() == "running");
    const std::string dropins = (r.cfg.path() / "etc" / "conf.d").string();
    fs::create_directories(dropins);
    const std::string fifo = dropins + "/50-fifo.conf";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    // Opening a FIFO without a writer would block forever; rdmad must not even try.
    auto e = error_of([&] { r.reload(); });
    CHECK(e.first == "org.rdmad1.Error.InvalidArgument");
    CHECK(e.second == fifo + ": not a regular file");
    CHECK(r.manager_state() == "degraded");
    CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "eth"); // the last good state
    fs::remove(fifo);
    CHECK(error_of([&] { r.reload(); }).first == "");
    CHECK(r.manager_state() == "running");
}

TEST_CASE("reconcile: a drop-in over 1 MiB (or /dev/zero) is refused, not read to the end",
          "[reconcile][config]") {
    RRig r(kHost);
    r.config(kEthEth);
    r.start();
    const std::string dropins = (r.cfg.path() / "etc" / "conf.d").string();
    fs::create_directories(dropins);
    const std::string big = dropins + "/60-big.conf";
    write_file(big, std::string((1 << 20) + 1, '#'));
    auto e = error_of([&] { r.reload(); });
    CHECK(e.first == "org.rdmad1.Error.InvalidArgument");
    CHECK(e.second == big + ": larger than 1 MiB");
    fs::remove(big);
    const std::string zero = dropins + "/60-zero.conf";
    fs::create_symlink("/dev/zero", zero);
    e = error_of([&] { r.reload(); });
    CHECK(e.second == zero + ": not a regular file");
    CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "eth");
    fs::remove(zero);
    CHECK(error_of([&] { r.reload(); }).first == "");
    r.stop(); // exit status 0
}

// A 120 KB table header nesting 60,000 levels: toml++ 3.3 recursed once per level and rdmad
// died with SIGSEGV (start-up, Reload, SIGHUP; rdmad.conf, conf.d and state.conf alike).
std::string deep_header() {
    std::string s = "[a";
    for (int i = 1; i < 60000; ++i)
        s += ".a";
    return s + ".b]\n";
}
// Where the guard stops it: the 32nd '.' of line 2 (daemon/config/config_file.cpp kMaxKeyDepth).
const std::string kDeepError = ":2:65: key nests tables more than 32 levels deep";

TEST_CASE("reconcile: a 60,000-level table header is refused with its position at every entry "
          "point, and rdmad keeps running",
          "[reconcile][config]") {
    RRig r(kHost);
    // At start-up, in rdmad.conf: degraded, not a restart loop.
    r.config("# deep\n" + deep_header());
    r.start();
    CHECK(r.manager_state() == "degraded");
    {
        json probs = r.manager_problems();
        INFO(probs.dump());
        REQUIRE(probs.size() == 1);
        CHECK(probs[0][2].get<std::string>().rfind(r.config_file() + kDeepError, 0) == 0);
    }
    r.config(kEthEth);
    CHECK(error_of([&] { r.reload(); }).first == "");
    CHECK(r.manager_state() == "running");

    // On Reload, in a drop-in; the last good rules stay.
    const std::string dropins = (r.cfg.path() / "etc" / "conf.d").string();
    fs::create_directories(dropins);
    const std::string deep = dropins + "/50-deep.conf";
    write_file(deep, "# deep\n" + deep_header());
    auto e = error_of([&] { r.reload(); });
    CHECK(e.first == "org.rdmad1.Error.InvalidArgument");
    CHECK(e.second == deep + kDeepError);
    CHECK(r.port("mlx4_0", 1)["DesiredPortType"] == "eth");
    // On SIGHUP.
    r.daemon->signal(SIGHUP);
    CHECK(r.eventually([&] { return r.manager_state() == "degraded"; }));
    fs::remove(deep);

    // In state.conf, read by Reload.
    write_file(r.state_file(), "# deep\n" + deep_header());
    e = error_of([&] { r.reload(); });
    CHECK(e.first == "org.rdmad1.Error.InvalidArgument");
    CHECK(e.second == r.state_file() + kDeepError);
    CHECK(r.manager_state() == "degraded");
    fs::remove(r.state_file());
    CHECK(error_of([&] { r.reload(); }).first == "");
    CHECK(r.manager_state() == "running");
    r.stop(); // exit status 0: it never crashed
}

TEST_CASE("reconcile: a drop-in whose name is not UTF-8 shows with '?' in DesiredStateSource, "
          "and its error reply comes at once",
          "[reconcile][config]") {
    RRig r(kHost);
    r.config(kEthEth);
    r.start();
    const std::string dropins = (r.cfg.path() / "etc" / "conf.d").string();
    fs::create_directories(dropins);
    const std::string name = dropins + "/50-\xff\xfe.conf"; // Latin-1 or a random byte string
    const std::string shown = dropins + "/50-??.conf";
    write_file(name, "[[rule]]\ndevice = \"mlx5_0\"\npfc_no_drop = [3]\n");
    CHECK(error_of([&] { r.reload(); }).first == "");
    auto sources =
        variant_json(r.client->get("/org/rdmad1", "org.rdmad1.Manager", "DesiredStateSource"));
    CHECK(sources == json({r.config_file(), shown}));
    CHECK(r.describe()["DesiredStateSource"] == json({r.config_file(), shown}));
    CHECK(r.port("mlx5_0", 1)["DesiredPFCNoDrop"] == json({3}));

    // Bad content: the reply quotes the name with '?', within a second (it used to be lost,
    // and the caller waited for its timeout).
    write_file(name, "[[rule]]\ndevice = 5\n");
    const auto t0 = Clock::now();
    auto e = error_of([&] { r.reload(); });
    CHECK(Clock::now() - t0 < 1s);
    CHECK(e.first == "org.rdmad1.Error.InvalidArgument");
    CHECK(e.second == shown + ":2:10: device must be a string, not an integer");
    CHECK(r.manager_state() == "degraded");
    fs::remove(name);
    CHECK(error_of([&] { r.reload(); }).first == "");
    r.stop();
}

TEST_CASE("reconcile: 300,000 bad lines in the legacy mlx4.conf give 21 problems, not a "
          "message the bus refuses",
          "[reconcile][config]") {
    RRig r(kHost);
    write_file(r.cfg.path() / "no-mlx4.conf", [] {
        std::string s;
        for (int i = 0; i < 300000; ++i)
            s += "zz\n";
        return s;
    }());
    r.start();
    json probs = r.manager_problems();
    INFO(probs.dump().substr(0, 2000));
    REQUIRE(probs.size() == 21);
    const std::string file = (r.cfg.path() / "no-mlx4.conf").string();
    CHECK(probs[0][0] == "legacy-config");
    CHECK(probs[0][2].get<std::string>().rfind(file + ":1:1: ", 0) == 0);
    CHECK(probs[19][2].get<std::string>().rfind(file + ":20:1: ", 0) == 0);
    CHECK(probs[20][2] == file + ": 299980 more invalid lines skipped");
    CHECK(r.manager_state() == "running");
    r.stop();
}

TEST_CASE("reconcile: a bad /etc file at start keeps state.conf in force, and a persist "
          "keeps what state.conf had",
          "[reconcile][persist]") {
    RRig r(kHost);
    r.start();
    r.set_pfc("mlx5_0", 1, {3, 4}, true);
    r.stop();
    r.config("[[rule]]\ndevice = 5\n");
    r.start();
    CHECK(r.manager_state() == "degraded");
    CHECK(r.port("mlx5_0", 1)["DesiredPFCNoDrop"] == json({3, 4})); // state.conf still applies
    r.set_port_type("mlx4_0", 1, "auto", true);
    const std::string state = read_file(r.state_file());
    INFO(state);
    CHECK(state.find("pfc_no_drop = [ 3, 4 ]") != std::string::npos);
    CHECK(state.find("port_type = [ \"auto\"") != std::string::npos);
    r.stop();
}

TEST_CASE("reconcile: state.conf over 4 KiB loads whole; a broken one is never overwritten",
          "[reconcile][persist]") {
    RRig r(kHost);
    // 100 rules for absent functions, then one for mlx5_0 (0000:04:00.0): about 6 KiB.
    std::string text;
    for (int i = 0; i < 100; ++i)
        text += fmt_pci_rule(i);
    text += "[[rule]]\npci_address = \"0000:04:00.0\"\npfc_no_drop = [5]\n";
    REQUIRE(text.size() > 4096);
    write_file(r.state_file(), text);
    r.start();
    INFO(r.manager_problems().dump());
    CHECK(r.manager_state() == "running");
    CHECK(r.port("mlx5_0", 1)["DesiredPFCNoDrop"] == json({5}));
    r.stop();

    const std::string broken = text + "[[rule]]\npci_address = 7\n";
    write_file(r.state_file(), broken);
    r.start();
    CHECK(r.manager_state() == "degraded");
    {
        // org.rdmad1(5), Problems: the error, then what stays in force.
        const json probs = r.manager_problems();
        INFO(probs.dump());
        REQUIRE(probs.size() == 1);
        CHECK(probs[0][0] == "config-error");
        const std::string said = probs[0][2];
        const std::string kept = " (rdmad keeps the settings it last read from this file, none "
                                 "if it never read it)";
        CHECK(said.rfind(r.state_file() + ":", 0) == 0);
        CHECK(said.size() > kept.size());
        CHECK(said.compare(said.size() - kept.size(), kept.size(), kept) == 0);
    }
    CHECK(r.port("mlx5_0", 1)["DesiredPFCNoDrop"] == json::array()); // nothing good read yet
    auto e = error_of([&] { r.set_pfc("mlx4_0", 1, {3}, true); });
    CHECK(e.first == "org.rdmad1.Error.Failed");
    CHECK(e.second.rfind(r.state_file() + ":", 0) == 0);
    CHECK(read_file(r.state_file()) == broken); // untouched
    // Without persist the setting still applies for this run.
    CHECK(error_of([&] { r.set_pfc("mlx4_0", 1, {3}, false); }).first == "");
    CHECK(r.port("mlx4_0", 1)["DesiredPFCNoDrop"] == json({3}));
    // Revert cannot drop what the broken file may hold for the device: Failed, nothing changes
    // (org.rdmad1.Port.Revert), not "dropped".
    for (const std::string dev : {"mlx4_0", "mlx5_0"}) {
        INFO(dev);
        auto rv = error_of([&] {
            r.client->proxy(r.port_path(dev, 1))
                ->callMethod("Revert")
                .onInterface("org.rdmad1.Port")
                .withArguments(std::string());
        });
        CHECK(rv.first == "org.rdmad1.Error.Failed");
        CHECK(rv.second.rfind(r.state_file() + ":", 0) == 0);
    }
    CHECK(r.port("mlx4_0", 1)["DesiredPFCNoDrop"] == json({3}));
    CHECK(read_file(r.state_file()) == broken);
    CHECK(r.manager_state() == "degraded");
    r.stop();
}

TEST_CASE("reconcile: SetPFCNoDrop with no priority is InvalidArgument and persists nothing",
          "[reconcile][pfc]") {
    RRig r(kHost);
    r.start();
    auto e = error_of([&] { r.set_pfc("mlx5_0", 1, {}, true); });
    CHECK(e.first == "org.rdmad1.Error.InvalidArgument");
    CHECK(e.second == "give at least one priority (0-7)");
    CHECK_FALSE(fs::exists(r.state_file()));
    r.stop();
}

TEST_CASE("reconcile: a modprobe.d file that cannot be written is a Manager problem",
          "[reconcile][pfc]") {
    RRig r(kHost);
    // Where rdmad expects a directory there is a file: mkostemp() fails with ENOTDIR.
    fs::remove_all(r.modprobe_dir());
    write_file(r.modprobe_dir(), "");
    r.config("[[rule]]\npci_address = \"0000:03:00.0\"\npfc_no_drop = [3]\n");
    r.start();
    json probs;
    REQUIRE(r.eventually([&] {
        probs = r.manager_problems();
        return !probs.empty();
    }));
    INFO(probs.dump());
    REQUIRE(probs.size() == 1);
    CHECK(probs[0][0] == "apply-failed");
    CHECK(probs[0][1] == "error");
    const std::string text = probs[0][2];
    CHECK(text.find("mlx4_en pfctx/pfcrx (none) -> 0x08") != std::string::npos);
    CHECK(text.find("Not a directory") != std::string::npos);
    r.stop();
}

TEST_CASE("reconcile: an mlx4 port type write that does not read back is "
          "port-type-unconfirmed",
          "[reconcile]") {
    RRig r(kHost);
    // The write lands in /dev/null: it succeeds, and rdmad's read path refuses the character
    // device, so the port type reads as unknown afterwards.
    fs::remove(r.tb(kMlx4Pci + "/mlx4_port1"));
    fs::create_symlink("/dev/null", r.tb(kMlx4Pci + "/mlx4_port1"));
    r.config("[[rule]]\npci_address = \"0000:03:00.0\"\nport_type = [\"ib\", \"ib\"]\n");
    r.start();
    REQUIRE(r.eventually([&] { return has(codes(r.device("mlx4_0")), "port-type-unconfirmed"); }));
    CHECK(problem_text(r.device("mlx4_0"), "port-type-unconfirmed") ==
          "port 1: wrote \"ib\" to mlx4_port1, but it cannot be read back");
    CHECK(r.port("mlx4_0", 1)["InSync"] == false);
    CHECK(r.port("mlx4_0", 2)["InSync"] == true);
    r.stop();
}

// ---- 12. rdmactl's configuring verbs ----------------------------------------------------

TEST_CASE("rdmactl set-port-type, set-pfc, reconcile, reload and doctor against the real daemon",
          "[reconcile][rdmactl]") {
    const char* ctl_env = std::getenv("RDMACTL");
    REQUIRE(ctl_env); // meson sets it; a missing rdmactl is a failure, not a skip
    const std::string ctl = ctl_env;
    RRig r(kHost);
    // mlx4_0's ports are InfiniBand, without a netdev: PFC cannot be set there (pfc-no-netdev).
    r.config("[[rule]]\npci_address = \"0000:03:00.0\"\npfc_no_drop = [3]\n");
    r.start();

    // reconcile: the module options file was written in the first pass; nothing left to do,
    // but two ports are out of sync and rdmad cannot change them.
    auto res = run_program({ctl, "reconcile", "--dry-run"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    CHECK(res.out == "Nothing to change.\n2 ports are not in sync that rdmad cannot change; "
                     "'rdmactl doctor' says why.\n");

    // doctor: every problem with its code, exit 3.
    res = run_program({ctl, "doctor"});
    INFO(res.out << res.err);
    CHECK(res.status == 3);
    CHECK(res.out.find("mlx4_0:\n") != std::string::npos);
    CHECK(res.out.find("warning: port 1 has no netdev: PFC cannot be set (pfc-no-netdev)") !=
          std::string::npos);

    // set-port-type: the eth/ib pair is refused naming port 2, with the daemon's message.
    res = run_program({ctl, "set-port-type", "mlx4_0", "1", "eth"});
    CHECK(res.status == 1);
    CHECK(res.err.find("port 2 must be eth while port 1 is eth (mlx4); it would be ib") !=
          std::string::npos);
    res = run_program({ctl, "set-port-type", "mlx4_0", "2", "eth"});
    CHECK(res.status == 0);
    CHECK(res.out == "mlx4_0 port 2: port type eth requested\n");
    CHECK(r.eventually([&] { return r.port("mlx4_0", 2)["PortType"] == "eth"; }));

    // set-pfc: at least one priority, each 0-7; not on an Omni-Path-only adapter.
    res = run_program({ctl, "set-pfc", "mlx5_0", "none"});
    CHECK(res.status == 2);
    res = run_program({ctl, "set-pfc", "hfi1_0", "3"});
    CHECK(res.status == 1);
    CHECK(res.err.find("hfi1_0 (hfi1) has no Ethernet port: PFC is an Ethernet setting") !=
          std::string::npos);
    res = run_program({ctl, "set-pfc", "mlx5_0", "3,4"});
    CHECK(res.status == 0);
    CHECK(res.out == "mlx5_0: PFC no-drop priorities 3,4 requested\n");
    CHECK(r.port("mlx5_0", 1)["DesiredPFCNoDrop"] == json({3, 4}));

    // set-trust, set-dscp: Ethernet (DCB) settings like PFC, asked on port 1 for the device.
    // The refusal names the setting asked, not PFC.
    for (const std::vector<std::string>& verb :
         {std::vector<std::string>{"set-trust", "hfi1_0", "dscp"},
          std::vector<std::string>{"set-dscp", "hfi1_0", "26:3"}}) {
        std::vector<std::string> cmd{ctl};
        cmd.insert(cmd.end(), verb.begin(), verb.end());
        res = run_program(cmd);
        INFO(verb[0] << ": " << res.err);
        CHECK(res.status == 1);
        CHECK(res.err.find("hfi1_0 (hfi1) has no Ethernet port: the DCB APP table (DSCP trust "
                           "and map) is an Ethernet setting") != std::string::npos);
        CHECK(res.err.find("PFC") == std::string::npos);
    }
    res = run_program({ctl, "set-trust", "mlx5_0", "dscp"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    CHECK(res.out == "mlx5_0: trust dscp requested\n");
    CHECK(r.port("mlx5_0", 1)["DesiredTrust"] == "dscp");
    res = run_program({ctl, "set-dscp", "mlx5_0", "48:6,26:3", "--exclusive"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    CHECK(res.out == "mlx5_0: DSCP priorities 48:6,26:3 requested (exclusive)\n");
    CHECK(r.port("mlx5_0", 1)["DesiredDSCPPriority"] ==
          json::parse(R"([{"DSCP": 26, "Priority": 3}, {"DSCP": 48, "Priority": 6}])"));

    // set-rdma-cm: RoCE settings; not on an Omni-Path-only adapter.
    res = run_program({ctl, "set-rdma-cm", "hfi1_0", "--tos", "106"});
    CHECK(res.status == 1);
    CHECK(res.err.find("hfi1_0 has no RoCE port: the RDMA-CM defaults are RoCE settings") !=
          std::string::npos);
    res = run_program({ctl, "set-rdma-cm", "mlx5_0", "--roce-mode", "RoCE v2", "--tos=106"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    CHECK(res.out == "mlx5_0: RDMA-CM RoCE mode RoCE v2, ToS 106 requested\n");
    res = run_program({ctl, "set-rdma-cm", "mlx5_0", "--tos", "0", "--persist"});
    CHECK(res.status == 0);
    CHECK(res.out == "mlx5_0: RDMA-CM ToS 0 requested (persistent)\n");

    // reload: a bad file is an error with file:line:column; the daemon stays degraded, doctor
    // says so, and a good file brings it back.
    r.config("[[rule]]\ndevice = \"mlx4_0\"\npfc_no_drop = [9]\n");
    res = run_program({ctl, "reload"});
    CHECK(res.status == 1);
    CHECK(res.err.find(r.config_file() + ":3:16: priority 9 is outside 0-7") != std::string::npos);
    res = run_program({ctl, "doctor"});
    CHECK(res.status == 3);
    CHECK(res.out.find("rdmad:\n  error: " + r.config_file() + ":3:16: priority 9") !=
          std::string::npos);
    r.config("");
    CHECK(run_program({ctl, "reload"}).status == 0);
    CHECK(r.manager_state() == "running");
    r.stop();
}

TEST_CASE("rdmactl revert: a D-Bus setting over an /etc rule is shown, and revert drops it "
          "through polkit",
          "[reconcile][rdmactl][polkit][revert]") {
    const char* ctl_env = std::getenv("RDMACTL");
    REQUIRE(ctl_env); // meson sets it; a missing rdmactl is a failure, not a skip
    const std::string ctl = ctl_env;
    RRig r(kHost);
    // /etc asks what mlx4_0 has (mlx4_port1 and mlx4_port2 read "ib"); line 1 is the rule.
    r.config("[[rule]]\npci_address = \"0000:03:00.0\"\nport_type = [\"ib\", \"ib\"]\n");
    r.start();
    const auto override_texts = [&] {
        std::vector<std::string> out;
        const json dev = r.device("mlx4_0"); // the range below must not outlive it
        for (const auto& p : dev["Problems"])
            if (p["Code"] == "dbus-override") {
                CHECK(p["Severity"] == "info");
                out.push_back(p["Text"].get<std::string>());
            }
        return out;
    };
    const auto sources = [&] {
        return variant_json(
            r.client->get("/org/rdmad1", "org.rdmad1.Manager", "DesiredStateSource"));
    };
    CHECK(override_texts().empty());
    CHECK(sources() == json({r.config_file()}));

    // Persisted: kept in state.conf, named with the /etc rule it overrides and the remedy.
    auto res = run_program({ctl, "set-port-type", "mlx4_0", "2", "eth", "--persist"});
    INFO(res.out << res.err);
    REQUIRE(res.status == 0);
    const std::string persisted = "port 2 type eth set over D-Bus, kept in " + r.state_file() +
                                  ", overrides " + r.config_file() +
                                  ":1 (ib); 'rdmactl revert mlx4_0 2' drops the setting";
    CHECK(r.eventually([&] { return override_texts() == std::vector<std::string>{persisted}; }));
    CHECK(sources() == json({r.config_file(), r.state_file()}));
    for (const char* verb : {"status", "doctor"}) {
        res = run_program({ctl, verb});
        INFO(verb << ": " << res.out << res.err);
        CHECK(res.out.find("info: " + persisted) != std::string::npos);
    }
    res = run_program({ctl, "show", "mlx4_0"});
    INFO(res.out);
    CHECK(res.out.find("info: " + persisted + " (dbus-override)") != std::string::npos);

    Child polkitd({"/usr/bin/python3", "-m", "dbusmock", "--template", "polkitd"});
    INFO(polkitd.log());
    REQUIRE(
        r.eventually([&] { return name_has_owner(*r.client, "org.freedesktop.PolicyKit1"); }, 10s));
    auto mock = [&](const std::string& arg) {
        auto m = run_program({"dbus-send", "--bus=" + r.bus.address(), "--print-reply",
                              "--dest=org.freedesktop.PolicyKit1",
                              "/org/freedesktop/PolicyKit1/Authority",
                              "org.freedesktop.DBus.Mock.SetAllowed", arg});
        INFO(m.err);
        REQUIRE(m.status == 0);
    };

    // polkit says no: nothing changes, the file included.
    mock("array:string:");
    const std::string state_before = read_file(r.state_file());
    res = run_program({ctl, "revert", "mlx4_0", "2"});
    INFO(res.out << res.err);
    CHECK(res.status == 1);
    CHECK(res.err.rfind("rdmactl: not authorized (polkit action org.rdmad1.configure): ", 0) == 0);
    CHECK(read_file(r.state_file()) == state_before);
    CHECK(override_texts() == std::vector<std::string>{persisted});

    // polkit allows org.rdmad1.configure: port 2 takes what /etc asks again, and the state
    // file keeps no rule (the list left asks nothing /etc does not).
    mock("array:string:org.rdmad1.configure");
    res = run_program({ctl, "revert", "mlx4_0", "2"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    CHECK(res.out == "mlx4_0 port 2: port type set over D-Bus dropped; /etc/rdmad applies\n");
    CHECK(r.port("mlx4_0", 2)["DesiredPortType"] == "ib");
    CHECK(override_texts().empty());
    CHECK(read_file(r.state_file()).find("[[rule]]") == std::string::npos);
    CHECK(sources() == json({r.config_file()}));

    // This run only: "D-Bus (runtime)" in DesiredStateSource; revert DEVICE drops it all.
    res = run_program({ctl, "set-port-type", "mlx4_0", "2", "eth"});
    REQUIRE(res.status == 0);
    CHECK(r.eventually([&] {
        return override_texts() ==
               std::vector<std::string>{"port 2 type eth set over D-Bus, for this run of rdmad "
                                        "(until it stops), overrides " +
                                        r.config_file() +
                                        ":1 (ib); 'rdmactl revert mlx4_0 2' drops the setting"};
    }));
    CHECK(sources() == json({r.config_file(), "D-Bus (runtime)"}));
    res = run_program({ctl, "revert", "mlx4_0"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    CHECK(res.out == "mlx4_0: settings made over D-Bus dropped; /etc/rdmad applies\n");
    CHECK(r.port("mlx4_0", 2)["DesiredPortType"] == "ib");
    CHECK(override_texts().empty());
    CHECK(sources() == json({r.config_file()}));

    // Bad usage never reaches rdmad.
    CHECK(run_program({ctl, "revert"}).status == 2);
    CHECK(run_program({ctl, "revert", "mlx4_0", "0"}).status == 2);
    r.stop();
}

// ---- Lossless RoCE (issue #9 check 4): PFC, the DCB APP table's DSCP map -------------------
//
// The fake DCB (tests/integration/fake_dcbnl.c) answers IEEE_GET for rdmav0 (mlx5_9 port 1,
// RoCE) with the pfc_en of FAKE_DCBNL_PFC and the DSCP entries of FAKE_DCBNL_DSCP in its APP
// table, as dcbnl_ieee_fill() lays them out. Evidence strings are what rdmad read, in the
// form iproute2 `dcb pfc show dev X prio-pfc` / `dcb -N app show dev X dscp-prio` print the
// same state.

namespace {

json detail(const json& device, const std::string& code) {
    for (auto& p : device.value("ProblemDetails", json::array()))
        if (p.value("Code", "") == code)
            return p;
    return json();
}

} // namespace

TEST_CASE("lossless: PFC on 3 with DSCP 26 -> 3 is no warning; the info names trust and map; "
          "an APP table change arrives without a read",
          "[reconcile][pfc][lossless]") {
    DcbRig r(kHost); // no rule
    r.extra_env["FAKE_DCBNL_PFC"] = "rdmav0:0x08";
    r.extra_env["FAKE_DCBNL_DSCP"] = "rdmav0:26:3";
    r.start();
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["PFCNoDrop"] == json({3}); }));
    json d = r.device("mlx5_9");
    INFO(d.dump(1));
    for (const auto& code : codes(d))
        CHECK(code.rfind("pfc", 0) != 0);
    json info = detail(d, "lossless-config");
    REQUIRE(info.is_object());
    CHECK(info["Severity"] == "info");
    CHECK(info["Port"] == 1);
    CHECK(info["Text"] == "port 1: netdev rdmav0: PFC on priorities 3, DSCP trust: DSCP 26 -> 3");
    CHECK(info["Evidence"] == json({"dcb pfc show dev rdmav0 prio-pfc = prio-pfc 0:off 1:off 2:off "
                                    "3:on 4:off 5:off 6:off 7:off",
                                    "dcb -N app show dev rdmav0 dscp-prio = dscp-prio 26:3"}));
    CHECK_FALSE(has(codes(d), "lossless-config")); // info: ProblemDetails only

    // `dcb app replace dev rdmav0 dscp-prio 26:0`: DSCP 26 leaves the no-drop priority.
    notify_pfc("rdmav0", 0x08, std::vector<std::pair<uint8_t, uint8_t>>{{26, 0}});
    REQUIRE(r.eventually([&] { return has(codes(r.device("mlx5_9")), "pfc-dscp-unmapped"); }));
    json w = detail(r.device("mlx5_9"), "pfc-dscp-unmapped");
    CHECK(w["Severity"] == "warning");
    CHECK(w["Port"] == 1);
    CHECK(w["Remedy"] == "map the DSCP your RoCE traffic carries to a no-drop priority, e.g. dcb "
                         "app add dev rdmav0 dscp-prio 26:3, or dscp_priority = { 26 = 3 } in a "
                         "[[rule]] of /etc/rdmad/rdmad.conf");
    CHECK(detail(r.device("mlx5_9"), "lossless-config")["Evidence"][1] ==
          "dcb -N app show dev rdmav0 dscp-prio = dscp-prio 26:0");
    CHECK(r.requests() == std::vector<std::string>{"GET rdmav0"}); // the notice carried it
    r.stop();
}

TEST_CASE("rdmactl show: a RoCE port's trust and DSCP map as they are and as asked; none of "
          "them on an InfiniBand port",
          "[reconcile][rdmactl][lossless]") {
    const std::string ctl = env_or_fail("RDMACTL"); // meson sets it: a failure, not a skip
    DcbRig r(kHost);
    r.extra_env["FAKE_DCBNL_DSCP"] = "rdmav0:26:3"; // `dcb app add dev rdmav0 dscp-prio 26:3`
    r.config("[daemon]\napply = false\n");          // what is asked, never written
    r.start();
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["Trust"] == "dscp"; }));
    auto res = run_program({ctl, "set-dscp", "mlx5_9", "26:3,48:6"});
    INFO(res.out << res.err);
    REQUIRE(res.status == 0);
    REQUIRE(res.out == "mlx5_9: DSCP priorities 26:3,48:6 requested\n");
    res = run_program({ctl, "set-trust", "mlx5_9", "dscp", "--persist"});
    REQUIRE(res.status == 0);
    REQUIRE(res.out == "mlx5_9: trust dscp requested (persistent)\n");

    res = run_program({ctl, "--no-pager", "show", "mlx5_9"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    // "Key: value" lines, keys right-aligned on the colon (Fields) to the longest key.
    const auto lines = [](const std::string& out) {
        std::vector<std::string> v;
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);)
            v.push_back(line.substr(std::min(line.find_first_not_of(' '), line.size())));
        return v;
    };
    auto shown = lines(res.out);
    for (const char* line : {"Trust: dscp", "DesiredTrust: dscp", "DSCPPriority: 26:3",
                             "DesiredDSCPPriority: 26:3,48:6", "PFCNoDrop: -"})
        CHECK(std::count(shown.begin(), shown.end(), line) == 1); // PFCNoDrop: pfc_en 0

    // apply = false: 48 -> 6 is asked and missing, and status says so.
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["InSync"] == false; }));
    res = run_program({ctl, "--no-pager", "status"});
    INFO(res.out << res.err);
    CHECK(res.out.find("mlx5_9 port 1: not in sync: DSCPPriority 26:3, desired 26:3,48:6\n") !=
          std::string::npos);

    // mlx4_0's InfiniBand ports have no DCB: nothing known, nothing asked, no lines.
    res = run_program({ctl, "--no-pager", "show", "mlx4_0"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    shown = lines(res.out);
    CHECK(std::count(shown.begin(), shown.end(), "Number: 2") == 1);
    for (const std::string& line : shown)
        for (const char* key : {"Trust:", "DesiredTrust:", "DSCPPriority:", "DesiredDSCPPriority:",
                                "RDMACMRoCEMode:", "RDMACMToS:"})
            CHECK(line.rfind(key, 0) == std::string::npos);

    // --json is the object as Describe() has it.
    res = run_program({ctl, "--json", "show", "mlx5_9"});
    const json object = json::parse(res.out);
    CHECK(object["Ports"][0]["DesiredDSCPPriority"] ==
          json::parse(R"([{"DSCP": 26, "Priority": 3}, {"DSCP": 48, "Priority": 6}])"));
    r.stop();
}

// A stand-in rdmad on `bus` (dbusmock): Manager.Describe() returns `document`, a fixed JSON
// keyed as org.rdmad1(5) documents it, and GetDeviceByName(name) the device's path.
class StandInRdmad {
  public:
    StandInRdmad(PrivateBus& bus, const std::string& document) : bus_(bus) {
        bool owned = false;
        for (int i = 0; i < 200 && !owned; ++i) {
            owned = call({"--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                          "org.freedesktop.DBus.NameHasOwner", "string:org.rdmad1"})
                        .out.find("boolean true") != std::string::npos;
            if (!owned)
                std::this_thread::sleep_for(50ms);
        }
        INFO(mock_.log());
        REQUIRE(owned);
        add_method("Describe", "", "s", "ret = '''" + document + "'''");
        add_method("GetDeviceByName", "s", "o",
                   "ret = dbus.ObjectPath('/org/rdmad1/device/' + args[0])");
    }

  private:
    RunResult call(const std::vector<std::string>& args) {
        std::vector<std::string> argv{"dbus-send", "--bus=" + bus_.address(), "--print-reply"};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_program(argv);
    }
    void add_method(const std::string& name, const std::string& in, const std::string& out,
                    const std::string& code) {
        auto res = call({"--dest=org.rdmad1", "/org/rdmad1", "org.freedesktop.DBus.Mock.AddMethod",
                         "string:org.rdmad1.Manager", "string:" + name, "string:" + in,
                         "string:" + out, "string:" + code});
        INFO(res.err);
        REQUIRE(res.status == 0);
    }

    PrivateBus& bus_;
    Child mock_{{"/usr/bin/python3", "-m", "dbusmock", "--system", "org.rdmad1", "/org/rdmad1",
                 "org.rdmad1.Manager"}};
};

TEST_CASE("rdmactl show and status: RDMA-CM defaults and DesiredOrigin as Describe() gives "
          "them; keys the document lacks print nothing",
          "[reconcile][rdmactl][lossless]") {
    const std::string ctl = env_or_fail("RDMACTL"); // meson sets it: a failure, not a skip
    PrivateBus bus;
    // DesiredOrigin entries are {"Key", "Origin"} (org.rdmad1(5)). mlx4_0 is what an rdmad
    // without these properties sends: no DesiredOrigin, no RDMA-CM or trust keys.
    const std::string document = R"json({"Devices": [
      {"Path": "/org/rdmad1/device/mlx5_0", "Name": "mlx5_0",
       "DesiredOrigin": [
         {"Key": "pfc_no_drop", "Origin": "profile lossless-roce (/etc/rdmad/rdmad.conf:3)"},
         {"Key": "rdma_cm_tos", "Origin": "D-Bus"}],
       "Ports": [{"Number": 1, "Path": "/org/rdmad1/device/mlx5_0/port/1",
                  "LinkLayer": "Ethernet", "RDMACMRoCEMode": "IB/RoCE v1",
                  "DesiredRDMACMRoCEMode": "RoCE v2", "RDMACMToS": -1,
                  "DesiredRDMACMToS": 106, "InSync": false}]},
      {"Path": "/org/rdmad1/device/mlx4_0", "Name": "mlx4_0",
       "Ports": [{"Number": 1, "Path": "/org/rdmad1/device/mlx4_0/port/1"}]}],
     "Links": []})json";
    StandInRdmad rdmad(bus, document);

    auto res = run_program({ctl, "--no-pager", "show", "mlx5_0"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    // Keys right-aligned on the longest, DesiredRDMACMRoCEMode; RDMACMToS -1 is unknown.
    CHECK(res.out == "                 Path: /org/rdmad1/device/mlx5_0\n"
                     "                 Name: mlx5_0\n"
                     "        DesiredOrigin: pfc_no_drop  from profile lossless-roce "
                     "(/etc/rdmad/rdmad.conf:3)\n"
                     "                       rdma_cm_tos  from D-Bus\n"
                     "\n"
                     "               Number: 1\n"
                     "                 Path: /org/rdmad1/device/mlx5_0/port/1\n"
                     "            LinkLayer: Ethernet\n"
                     "       RDMACMRoCEMode: IB/RoCE v1\n"
                     "DesiredRDMACMRoCEMode: RoCE v2\n"
                     "            RDMACMToS: -\n"
                     "     DesiredRDMACMToS: 106\n"
                     "               InSync: no\n");

    res = run_program({ctl, "--no-pager", "show", "mlx4_0"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    CHECK(res.out == "  Path: /org/rdmad1/device/mlx4_0\n"
                     "  Name: mlx4_0\n"
                     "\n"
                     "Number: 1\n"
                     "  Path: /org/rdmad1/device/mlx4_0/port/1\n");

    res = run_program({ctl, "--no-pager", "status"});
    INFO(res.out << res.err);
    CHECK(res.status == 0);
    CHECK(res.out.find("mlx5_0 port 1: not in sync: RDMACMRoCEMode IB/RoCE v1, desired RoCE v2; "
                       "RDMACMToS -, desired 106\n") != std::string::npos);
}

TEST_CASE("rdmactl status and doctor count the same problems: info entries are no problems",
          "[reconcile][rdmactl]") {
    const std::string ctl = env_or_fail("RDMACTL"); // meson sets it: a failure, not a skip
    PrivateBus bus;
    // mlx5_0's Problems: one error, one warning and the info "dbus-override" (severities as
    // org.rdmad1(5) gives them); ProblemDetails adds the doctor's info "roce-mtu-unknown",
    // which Problems leaves out. So 2 problems for both verbs; status shows 1 info, doctor 2.
    const std::string document = R"json({"Problems": [], "Devices": [
      {"Path": "/org/rdmad1/device/mlx5_0", "Name": "mlx5_0",
       "Problems": [
         {"Code": "provider-missing", "Severity": "error",
          "Text": "verbs provider mlx5 is not installed: install ibverbs-providers"},
         {"Code": "pfc-off", "Severity": "warning", "Text": "PFC is off on every priority"},
         {"Code": "dbus-override", "Severity": "info", "Text": "PFCNoDrop asked over D-Bus"}],
       "ProblemDetails": [
         {"Code": "provider-missing", "Severity": "error",
          "Text": "verbs provider mlx5 is not installed: install ibverbs-providers",
          "Evidence": [], "Remedy": "install ibverbs-providers", "Port": 0},
         {"Code": "pfc-off", "Severity": "warning", "Text": "PFC is off on every priority",
          "Evidence": [], "Remedy": "", "Port": 1},
         {"Code": "dbus-override", "Severity": "info", "Text": "PFCNoDrop asked over D-Bus",
          "Evidence": [], "Remedy": "rdmactl revert mlx5_0 1", "Port": 1},
         {"Code": "roce-mtu-unknown", "Severity": "info", "Text": "MTU unknown",
          "Evidence": [], "Remedy": "", "Port": 1}],
       "Ports": [{"Number": 1, "Path": "/org/rdmad1/device/mlx5_0/port/1",
                  "LinkLayer": "Ethernet", "InSync": true}]}],
     "Links": []})json";
    StandInRdmad rdmad(bus, document);

    auto status = run_program({ctl, "--no-pager", "status"});
    INFO(status.out << status.err);
    CHECK(status.status == 0);
    CHECK(status.out.find("mlx5_0: info: PFCNoDrop asked over D-Bus\n") != std::string::npos);
    CHECK(status.out.find("\n1 RDMA device, 1 port, 2 problems, 1 info.\n") != std::string::npos);

    auto doctor = run_program({ctl, "--no-pager", "doctor"});
    INFO(doctor.out << doctor.err);
    CHECK(doctor.status == 3); // kExitProblems: an error or a warning
    CHECK(doctor.out.find("\n2 problems (1 error, 1 warning), 2 info.\n") != std::string::npos);
}

TEST_CASE("lossless: PFC off on every priority with nothing asked is a pfc-off warning",
          "[reconcile][pfc][lossless]") {
    DcbRig r(kHost); // pfc_en 0, empty APP table, no rule
    r.start();
    REQUIRE(r.eventually([&] { return has(codes(r.device("mlx5_9")), "pfc-off"); }));
    json d = r.device("mlx5_9");
    INFO(d.dump(1));
    json w = detail(d, "pfc-off");
    CHECK(w["Severity"] == "warning");
    CHECK(w["Port"] == 1);
    CHECK(w["Evidence"] == json({"dcb pfc show dev rdmav0 prio-pfc = prio-pfc 0:off 1:off 2:off "
                                 "3:off 4:off 5:off 6:off "
                                 "7:off"}));
    CHECK_THAT(w["Remedy"].get<std::string>(),
               Catch::Contains("dcb pfc set dev rdmav0 prio-pfc 3:on") &&
                   Catch::Contains("pfc_no_drop"));
    CHECK_FALSE(has(codes(d), "pfc-off-desired"));
    json info = detail(d, "lossless-config");
    REQUIRE(info.is_object());
    CHECK_THAT(info["Text"].get<std::string>(), Catch::Contains("PCP trust"));
    CHECK(info["Evidence"][1] == "dcb -N app show dev rdmav0 dscp-prio = none");
    r.stop();
}

TEST_CASE("lossless: PFC off while a rule asks priority 3 (apply = false) is an error",
          "[reconcile][pfc][lossless]") {
    DcbRig r(kHost);
    r.config("[daemon]\napply = false\n\n[[rule]]\ndevice = \"mlx5_9\"\npfc_no_drop = [3]\n");
    r.start();
    REQUIRE(r.eventually([&] { return has(codes(r.device("mlx5_9")), "pfc-off-desired"); }));
    json d = r.device("mlx5_9");
    INFO(d.dump(1));
    json e = detail(d, "pfc-off-desired");
    CHECK(e["Severity"] == "error");
    CHECK(e["Port"] == 1);
    CHECK_THAT(e["Text"].get<std::string>(), Catch::Contains("asks no-drop priorities 3"));
    CHECK_FALSE(has(codes(d), "pfc-off"));
    CHECK(r.count("SET") == 0);
    r.stop();
}

// ---- issue #25: DSCP trust and map, RDMA-CM defaults ---------------------------------------

namespace {

/// A DSCP map as Describe() shows an a(yy) of (DSCP, priority): objects {"DSCP", "Priority"}.
json dscp_json(std::initializer_list<std::pair<int, int>> map) {
    json out = json::array();
    for (const auto& [dscp, prio] : map)
        out.push_back({{"DSCP", dscp}, {"Priority", prio}});
    return out;
}

} // namespace

TEST_CASE("dscp: a map rule adds before it deletes the replaced entry, reads back once, and "
          "another tool's change is set back",
          "[reconcile][dscp]") {
    DcbRig r(kHost);
    r.extra_env["FAKE_DCBNL_DSCP"] = "rdmav0:26:0";
    r.config("[[rule]]\ndevice = \"mlx5_9\"\ndscp_priority = { 26 = 3, 48 = 6 }\n");
    r.start();
    r.eventually([&] { return r.port("mlx5_9", 1).is_object(); });
    INFO(r.device("mlx5_9").dump(1) << "\nDCB requests: " << r.requests().size());
    REQUIRE(r.eventually([&] {
        return r.port("mlx5_9", 1)["DSCPPriority"] == dscp_json({{26, 3}, {48, 6}});
    }));
    auto p = r.port("mlx5_9", 1);
    CHECK(p["Trust"] == "dscp");
    CHECK(p["DesiredDSCPPriority"] == dscp_json({{26, 3}, {48, 6}}));
    CHECK(p["DesiredTrust"] == "");
    CHECK(p["InSync"] == true);
    // The source's read, the adds (the port keeps DSCP trust), the replaced entry's delete,
    // the one read-back.
    CHECK(r.requests() == std::vector<std::string>{"GET rdmav0", "APPSET rdmav0 26:3 48:6",
                                                   "APPDEL rdmav0 26:0", "GET rdmav0"});
    // Another tool (`dcb app replace dev rdmav0 dscp-prio 26:0`) moves DSCP 26 back.
    notify_pfc("rdmav0", 0x00, std::vector<std::pair<uint8_t, uint8_t>>{{26, 0}, {48, 6}});
    REQUIRE(r.eventually([&] { return r.count("APPSET") == 2; }));
    REQUIRE(r.eventually([&] {
        return r.port("mlx5_9", 1)["DSCPPriority"] == dscp_json({{26, 3}, {48, 6}});
    }));
    CHECK(r.port("mlx5_9", 1)["InSync"] == true);
    CHECK_FALSE(has(codes(r.device("mlx5_9")), "apply-failed"));
    r.stop();
}

TEST_CASE("dscp: a port with PFC on priority 3 and only a DSCP map asked shows PFCNoDrop [3]",
          "[reconcile][dscp]") {
    // fake_dcbnl.c answers IEEE_GET with pfc_en 0x08 (priority 3 no-drop): a plan of the DSCP
    // setting alone must leave the PFC the source read on the bus.
    DcbRig r(kHost);
    r.extra_env["FAKE_DCBNL_PFC"] = "rdmav0:0x08";
    r.config("[[rule]]\ndevice = \"mlx5_9\"\ndscp_priority = { 26 = 3 }\n");
    r.start();
    REQUIRE(r.eventually([&] {
        return r.port("mlx5_9", 1)["DSCPPriority"] == dscp_json({{26, 3}});
    }));
    auto p = r.port("mlx5_9", 1);
    CHECK(p["PFCNoDrop"] == json::array({3}));
    CHECK(p["DesiredPFCNoDrop"] == json::array());
    CHECK(p["InSync"] == true);
    r.stop();
}

TEST_CASE("dscp: trust pcp deletes every DSCP entry; SetTrust dscp installs DSCP >> 3 and "
          "persists",
          "[reconcile][dscp]") {
    DcbRig r(kHost);
    r.extra_env["FAKE_DCBNL_DSCP"] = "rdmav0:26:3,rdmav0:46:5";
    r.config("[[rule]]\ndevice = \"mlx5_9\"\ntrust = \"pcp\"\n");
    r.start();
    r.eventually([&] { return r.port("mlx5_9", 1).is_object(); });
    INFO(r.device("mlx5_9").dump(1) << "\nDCB requests: " << r.requests().size());
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["Trust"] == "pcp"; }));
    CHECK(r.port("mlx5_9", 1)["DSCPPriority"] == json::array());
    CHECK(r.port("mlx5_9", 1)["InSync"] == true);
    CHECK(r.count("APPDEL") == 1);
    CHECK(r.count("APPSET") == 0);

    r.set_trust("mlx5_9", 1, "dscp", true);
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["Trust"] == "dscp"; }));
    const json map = r.port("mlx5_9", 1)["DSCPPriority"];
    REQUIRE(map.size() == 64); // as `mlnx_qos --trust dscp` installs it
    CHECK(map[26] == dscp_json({{26, 3}})[0]);
    CHECK(map[46] == dscp_json({{46, 5}})[0]);
    CHECK(r.port("mlx5_9", 1)["DesiredTrust"] == "dscp");
    CHECK(r.port("mlx5_9", 1)["InSync"] == true);
    CHECK(read_file(r.state_file()).find("trust = \"dscp\"") != std::string::npos);
    r.stop();
}

TEST_CASE("dscp: SetDSCPPriority refuses a DSCP over 63, a priority over 7, a duplicate and an "
          "empty map",
          "[reconcile][dscp]") {
    DcbRig r(kHost);
    r.start();
    r.eventually([&] { return r.port("mlx5_9", 1).is_object(); });
    INFO(r.device("mlx5_9").dump(1) << "\nDCB requests: " << r.requests().size());
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1).is_object(); }));
    using Map = std::vector<sdbus::Struct<uint8_t, uint8_t>>;
    const std::vector<std::pair<Map, std::string>> cases = {
        {Map{{64, 3}}, "(64, 3): DSCP must be 0-63 and priority 0-7"},
        {Map{{26, 8}}, "(26, 8): DSCP must be 0-63 and priority 0-7"},
        {Map{{26, 3}, {26, 4}}, "DSCP 26 is listed twice"},
        {Map{}, "the map must have at least one (DSCP, priority) entry"},
    };
    for (const auto& [bad, why] : cases) {
        INFO(why);
        auto e = error_of([&] { r.set_dscp_priority("mlx5_9", 1, bad, false, true); });
        CHECK(e.first == "org.rdmad1.Error.InvalidArgument");
        CHECK(e.second == why);
    }
    CHECK_FALSE(fs::exists(r.state_file()));
    CHECK(r.count("APPSET") == 0);
    r.stop();
}

TEST_CASE("dscp: SetTrust pcp then SetDSCPPriority, both persisted, is the map alone: no "
          "dscp-conflict, and state.conf loads again at the next start",
          "[reconcile][dscp][persist]") {
    DcbRig r(kHost);
    r.start();
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1).is_object(); }));
    using Map = std::vector<sdbus::Struct<uint8_t, uint8_t>>;
    r.set_trust("mlx5_9", 1, "pcp", true);
    r.set_dscp_priority("mlx5_9", 1, Map{{26, 3}}, false, true);
    const std::string saved = read_file(r.state_file());
    INFO(saved);
    // The later call wins: a DSCP entry is DSCP trust (rdmad.conf(5), trust).
    CHECK(saved.find("trust") == std::string::npos);
    CHECK(saved.find("dscp_priority = { 26 = 3 }") != std::string::npos);
    REQUIRE(r.eventually([&] {
        return r.port("mlx5_9", 1)["DSCPPriority"] == dscp_json({{26, 3}});
    }));
    CHECK_FALSE(has(codes(r.device("mlx5_9")), "dscp-conflict"));
    r.stop();
    r.start();
    INFO(r.manager_problems().dump());
    CHECK(r.manager_state() == "running");
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1).is_object(); }));
    CHECK(r.port("mlx5_9", 1)["DesiredDSCPPriority"] == dscp_json({{26, 3}}));
    // And the other way round: trust pcp after the map drops the map.
    r.set_trust("mlx5_9", 1, "pcp", true);
    const std::string after = read_file(r.state_file());
    INFO(after);
    CHECK(after.find("dscp_priority") == std::string::npos);
    CHECK(after.find("exclusive") == std::string::npos);
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["Trust"] == "pcp"; }));
    CHECK(r.port("mlx5_9", 1)["DesiredTrust"] == "pcp");
    CHECK(r.port("mlx5_9", 1)["DesiredDSCPPriority"] == json::array());
    CHECK_FALSE(has(codes(r.device("mlx5_9")), "dscp-conflict"));
    r.stop();
    r.start();
    CHECK(r.manager_state() == "running");
    r.stop();
}

TEST_CASE("rdma-cm: the RoCE mode and ToS asked are written once, read back, and on the bus",
          "[reconcile][rdma-cm]") {
    RRig r(kHost);
    add_roce_mlx5_9(r.testbed);
    r.with_rdma_cm();
    // Another tool made the group and chose RoCE v1 (`cma_roce_mode -d mlx5_9 -m 1`).
    make_rdma_cm_group(r.testbed, "mlx5_9");
    const std::string port = r.rdma_cm_port("mlx5_9", 1);
    REQUIRE(read_file(port + "/default_roce_mode") == "RoCE v2\n"); // cma_add_one()'s
    REQUIRE(read_file(port + "/default_roce_tos") == "0\n");
    write_file(port + "/default_roce_mode", "IB/RoCE v1\n");
    r.config("[[rule]]\ndevice = \"mlx5_9\"\nrdma_cm_roce_mode = \"RoCE v2\"\n"
             "rdma_cm_tos = 106\n");
    WriteWatch w;
    w.watch(port + "/default_roce_mode", "mode");
    w.watch(port + "/default_roce_tos", "tos");
    r.start();
    r.eventually([&] { return r.port("mlx5_9", 1).is_object(); });
    INFO(r.device("mlx5_9").dump(1));
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["RDMACMToS"] == 106; }));
    auto p = r.port("mlx5_9", 1);
    CHECK(p["RDMACMRoCEMode"] == "RoCE v2");
    CHECK(p["DesiredRDMACMRoCEMode"] == "RoCE v2");
    CHECK(p["DesiredRDMACMToS"] == 106);
    CHECK(p["InSync"] == true);
    // As echo(1) writes them, and the kernel keeps them: each once.
    CHECK(read_file(port + "/default_roce_mode") == "RoCE v2\n");
    CHECK(read_file(port + "/default_roce_tos") == "106\n");
    w.pump(300ms);
    INFO(w.dump());
    CHECK(w.writes().size() == 2);
    r.stop();
}

TEST_CASE("rdma-cm: without configfs the port is rdma-cm-no-configfs, out of sync, no write",
          "[reconcile][rdma-cm]") {
    RRig r(kHost);
    add_roce_mlx5_9(r.testbed);
    r.config("[[rule]]\ndevice = \"mlx5_9\"\nrdma_cm_tos = 106\n");
    r.start();
    r.eventually([&] { return r.port("mlx5_9", 1).is_object(); });
    INFO(r.device("mlx5_9").dump(1));
    REQUIRE(r.eventually([&] { return has(codes(r.device("mlx5_9")), "rdma-cm-no-configfs"); }));
    CHECK(r.port("mlx5_9", 1)["InSync"] == false);
    CHECK(r.port("mlx5_9", 1)["RDMACMToS"] == -1);
    CHECK(r.port("mlx5_9", 1)["DesiredRDMACMToS"] == 106);
    CHECK_FALSE(fs::exists(r.testbed.root() + "/sys/kernel/config"));
    r.stop();
}

// ---- issue #25: the whole lossless profile across a re-add; drift; apply = false ---------
//
// `profile = "lossless-roce"` as issue #25 defines it: PFC no-drop on priority 3 (pfc_en 0x08),
// trust dscp with DSCP 26 -> 3 and 48 -> 6, RDMA-CM "RoCE v2" and ToS 106. DCB comes from
// fake_dcbnl.c (APP entries logged as `dcb -N app show dev rdmav0 dscp-prio` prints them),
// configfs from fake_configfs.c (groups made on mkdir as cma_configfs.c makes them).

namespace {

const std::string kLossless = "[[rule]]\ndevice = \"mlx5_9\"\nprofile = \"lossless-roce\"\n";

/// The port as the profile wants it, on the bus.
bool lossless_applied(RRig& r) {
    const json p = r.port("mlx5_9", 1);
    return p.is_object() && p["InSync"] == true && p["PFCNoDrop"] == json({3}) &&
           p["Trust"] == "dscp" && p["DSCPPriority"] == dscp_json({{26, 3}, {48, 6}}) &&
           p["RDMACMRoCEMode"] == "RoCE v2" && p["RDMACMToS"] == 106;
}

/// rdmad's log lines (--verbose) from byte `from` on.
std::vector<std::string> log_lines(const DaemonProcess& d, size_t from) {
    std::vector<std::string> out;
    std::istringstream in(d.log().substr(std::min(from, d.log().size())));
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

bool starts(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

} // namespace

TEST_CASE("lossless-roce: a device removed and re-added gets the whole profile again in the "
          "pass of its add",
          "[reconcile][dscp][rdma-cm][readd]") {
    DcbRig r(kHost);
    r.with_rdma_cm();
    r.extra_args = {"--verbose"}; // "pass:" lines: where one pass ends
    r.config(kLossless);
    r.start();
    REQUIRE(r.eventually([&] { return lossless_applied(r); }));
    const std::string port = r.rdma_cm_port("mlx5_9", 1);
    CHECK(read_file(port + "/default_roce_mode") == "RoCE v2\n");
    CHECK(read_file(port + "/default_roce_tos") == "106\n");

    // A driver reload: the kernel removes mlx5_9 (its directory goes; it is kept aside here,
    // since umockdev's add would send "add" before the kernel's state below is in place),
    // then creates it again with every default: rdmav0's DCB as the driver starts it (pfc_en
    // 0, no APP entry), rdma_cm's values those of a new device (cma_add_one() runs before
    // ib_register_device() sends "add"; the group rdmad made stays and shows them: "RoCE v2",
    // ToS 0).
    const std::string dir = r.tb(kMlx5_9), gone = dir + ".gone";
    r.testbed.uevent(kMlx5_9, "remove");
    fs::rename(dir, gone);
    REQUIRE(r.eventually([&] { return r.device("mlx5_9").is_null(); }));
    fs::rename(gone, dir);
    r.recreate_netdev("rdmav0");
    rdma_cm_device_added(r.testbed, "mlx5_9");
    REQUIRE(read_file(port + "/default_roce_tos") == "0\n");
    WriteWatch w;
    w.watch(port + "/default_roce_mode", "mode");
    w.watch(port + "/default_roce_tos", "tos");
    const size_t dcb_mark = r.requests().size();
    const size_t log_mark = r.daemon->log().size();
    r.testbed.uevent(kMlx5_9, "add");
    REQUIRE(r.eventually([&] { return lossless_applied(r); }));
    w.pump(300ms);

    // DCB: the device's read, then each write with its one read-back.
    const auto all = r.requests();
    const std::vector<std::string> since(all.begin() + static_cast<long>(dcb_mark), all.end());
    INFO("DCB requests since the add: " << json(since).dump());
    CHECK(std::count(since.begin(), since.end(), "SET rdmav0 0x08") == 1); // priority 3
    CHECK(std::count(since.begin(), since.end(), "APPSET rdmav0 26:3 48:6") == 1);
    CHECK(std::count(since.begin(), since.end(), "GET rdmav0") == 3);
    CHECK(since.size() == 5);
    // As `dcb -N app show dev rdmav0 dscp-prio` reads it, and PFC as `dcb pfc show`.
    json info = detail(r.device("mlx5_9"), "lossless-config");
    CHECK(info["Evidence"] ==
          json({"dcb pfc show dev rdmav0 prio-pfc = prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off "
                "6:off 7:off",
                "dcb -N app show dev rdmav0 dscp-prio = dscp-prio 26:3 48:6"}));
    // configfs: the mode is the new device's "RoCE v2" already; only the ToS is written.
    INFO(w.dump());
    CHECK(w.writes().size() == 1);
    CHECK(read_file(port + "/default_roce_mode") == "RoCE v2\n");
    CHECK(read_file(port + "/default_roce_tos") == "106\n");

    // One pass: the three writes are logged after the first "pass:" line that follows the
    // add and before the next one (the pass that verifies them through the read path).
    const auto lines = log_lines(*r.daemon, log_mark);
    INFO("rdmad's log since the add:\n" << json(lines).dump(1));
    std::vector<size_t> passes;
    for (size_t i = 0; i < lines.size(); ++i)
        if (starts(lines[i], "rdmad: pass: "))
            passes.push_back(i);
    REQUIRE(!passes.empty());
    const size_t end = passes.size() > 1 ? passes[1] : lines.size();
    for (const std::string write :
         {"rdmad: mlx5_9 rdmav0 PFCNoDrop: ", "rdmad: mlx5_9 rdmav0 DSCPPriority: ",
          "rdmad: mlx5_9 port 1 RDMACMToS: "}) {
        INFO(write);
        size_t where = lines.size();
        for (size_t i = 0; i < lines.size(); ++i)
            if (starts(lines[i], write))
                where = std::min(where, i);
        CHECK(where > passes[0]);
        CHECK(where < end);
    }
    CHECK_FALSE(has(codes(r.device("mlx5_9")), "apply-failed"));
    r.stop();
}

TEST_CASE("rdma-cm: a kernel without default_roce_tos gives rdma-cm-no-tos once, sets the mode, "
          "and writes nothing more at later events",
          "[reconcile][rdma-cm]") {
    const std::string ctl = env_or_fail("RDMACTL"); // meson sets it: a failure, not a skip
    DcbRig r(kHost);
    r.with_rdma_cm(true); // Linux 4.5 to 4.10: ports/<n>/ has default_roce_mode only
    r.extra_args = {"--verbose"};
    r.config("[[rule]]\ndevice = \"mlx5_9\"\nrdma_cm_roce_mode = \"RoCE v2\"\nrdma_cm_tos = 106\n");
    r.start();
    REQUIRE(r.eventually([&] { return has(codes(r.device("mlx5_9")), "rdma-cm-no-tos"); }));
    const std::string port = r.rdma_cm_port("mlx5_9", 1);
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["RDMACMRoCEMode"] == "RoCE v2"; }));
    CHECK(read_file(port + "/default_roce_mode") == "RoCE v2\n");
    CHECK_FALSE(fs::exists(port + "/default_roce_tos"));
    WriteWatch w;
    w.watch(port + "/default_roce_mode", "mode");
    w.watch(port, "port dir"); // a file written (created) there

    // Later events: another tool's DCB changes, and the device's "change" uevents.
    for (int i = 0; i < 3; ++i) {
        notify_pfc("rdmav0", i % 2 ? 0x08 : 0x00);
        r.testbed.uevent(kMlx5_9, "change");
        std::this_thread::sleep_for(150ms);
    }
    w.pump(500ms);
    INFO(w.dump());
    CHECK(w.writes().empty());
    const json d = r.device("mlx5_9");
    INFO(d.dump(1));
    const auto c = codes(d);
    CHECK(std::count(c.begin(), c.end(), "rdma-cm-no-tos") == 1);
    CHECK_FALSE(has(c, "apply-failed"));
    CHECK(problem_text(d, "rdma-cm-no-tos") ==
          "port 1: this kernel has no RDMA-CM default ToS (default_roce_tos came with Linux "
          "4.11): rdma_cm_tos = 106 cannot be set");
    CHECK(r.port("mlx5_9", 1)["InSync"] == false);
    CHECK(r.port("mlx5_9", 1)["RDMACMToS"] == -1);
    // The one write attempt, at start-up: the mode written, the ToS refused (ENOENT).
    size_t attempts = 0;
    for (const auto& line : log_lines(*r.daemon, 0))
        attempts += starts(line, "rdmad: mlx5_9 port 1 RDMACM");
    CHECK(attempts == 1);
    // No pass loop: once the events are handled, rdmad is quiet.
    const auto passes = [&] {
        size_t n = 0;
        for (const auto& line : log_lines(*r.daemon, 0))
            n += starts(line, "rdmad: pass: ");
        return n;
    };
    const size_t settled = passes();
    std::this_thread::sleep_for(500ms);
    CHECK(passes() == settled);

    auto res = run_program({ctl, "--no-pager", "doctor", "mlx5_9"});
    INFO(res.out << res.err);
    CHECK(res.status == 3);
    size_t shown = 0;
    for (size_t at = res.out.find("(rdma-cm-no-tos)"); at != std::string::npos;
         at = res.out.find("(rdma-cm-no-tos)", at + 1))
        ++shown;
    CHECK(shown == 1);
    r.stop();
}

TEST_CASE("dscp: an entry another tool deletes is put back with exactly one SET and one GET",
          "[reconcile][dscp]") {
    DcbRig r(kHost);
    r.config("[[rule]]\ndevice = \"mlx5_9\"\ndscp_priority = { 26 = 3, 48 = 6 }\n");
    r.start();
    REQUIRE(r.eventually([&] {
        return r.port("mlx5_9", 1)["DSCPPriority"] == dscp_json({{26, 3}, {48, 6}});
    }));
    REQUIRE(r.eventually([&] { return r.requests().size() == 3; }));
    CHECK(r.requests() ==
          std::vector<std::string>{"GET rdmav0", "APPSET rdmav0 26:3 48:6", "GET rdmav0"});
    // `dcb app del dev rdmav0 dscp-prio 48:6`: the kernel's notification carries the table.
    notify_pfc("rdmav0", 0x00, std::vector<std::pair<uint8_t, uint8_t>>{{26, 3}});
    REQUIRE(r.eventually([&] { return r.requests().size() >= 5; }));
    REQUIRE(r.eventually([&] {
        return r.port("mlx5_9", 1)["DSCPPriority"] == dscp_json({{26, 3}, {48, 6}});
    }));
    std::this_thread::sleep_for(300ms); // nothing more follows
    CHECK(r.requests() == std::vector<std::string>{"GET rdmav0", "APPSET rdmav0 26:3 48:6",
                                                   "GET rdmav0", "APPSET rdmav0 48:6",
                                                   "GET rdmav0"});
    CHECK(r.port("mlx5_9", 1)["InSync"] == true);
    r.stop();
}

TEST_CASE("lossless-roce: with apply = false the profile is only reported: no DCB write, no "
          "configfs group, every difference listed",
          "[reconcile][dscp][rdma-cm]") {
    DcbRig r(kHost);
    r.with_rdma_cm();
    r.config("[daemon]\napply = false\n\n" + kLossless);
    r.start();
    REQUIRE(r.eventually([&] { return r.port("mlx5_9", 1)["DesiredRDMACMToS"] == 106; }));
    const json p = r.port("mlx5_9", 1);
    INFO(p.dump(1));
    CHECK(p["InSync"] == false);
    CHECK(p["DesiredPFCNoDrop"] == json({3}));
    CHECK(p["DesiredTrust"] == "dscp");
    CHECK(p["DesiredDSCPPriority"] == dscp_json({{26, 3}, {48, 6}}));
    CHECK(p["DesiredRDMACMRoCEMode"] == "RoCE v2");
    // Reconcile() lists what would change and changes nothing.
    const auto listed = r.reconcile(false);
    std::vector<std::string> settings;
    for (const auto& change : listed)
        settings.push_back(change[1]);
    std::sort(settings.begin(), settings.end());
    CHECK(settings == std::vector<std::string>{"DSCPPriority", "PFCNoDrop", "RDMACM"});
    std::this_thread::sleep_for(300ms);
    CHECK(r.requests() == std::vector<std::string>{"GET rdmav0"}); // the source's read only
    CHECK_FALSE(fs::exists(r.testbed.root() + "/sys/kernel/config/rdma_cm/mlx5_9"));
    r.stop();
}

TEST_CASE("reconcile: an admin's rdmad-mlx4.conf (no rdmad header) is not removed when nothing "
          "asks for PFC on an mlx4 host",
          "[reconcile][pfc]") {
    // rdmad removes its own mlx4_en options file once nothing asks for it (settings/
    // pfc_no_drop.cpp); a file of that name an admin wrote is not rdmad's to remove, as
    // debian/rdmad.postrm keeps it on purge.
    RRig r(kHost); // procfs-hfi1-mlx4-mlx5: an mlx4 device is present
    fs::create_directories(r.modprobe_dir());
    const std::string modprobe = r.modprobe_dir() + "/rdmad-mlx4.conf";
    const std::string admin = "options mlx4_en pfctx=0x18 pfcrx=0x18 # the admin's\n";
    write_file(modprobe, admin);
    r.config("");
    r.start();
    r.reload();
    REQUIRE(r.eventually([&] { return r.manager_state() == "running"; }));
    CHECK(read_file(modprobe) == admin);
    r.stop();
}
