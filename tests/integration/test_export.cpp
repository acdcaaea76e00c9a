// SPDX-License-Identifier: MIT
//
// The exports ([export] in rdmad.conf(5), daemon/export/): the real rdmad on the recorded
// constructed-mlx5-roce host writes rdmad.prom, which the real Debian prometheus-node-exporter
// (textfile collector only) serves and `promtool check metrics` accepts, and the NFD feature
// file. Expected values come from the fixture (tests/fixtures/hosts/constructed-mlx5-roce.*):
// two ConnectX-5 functions mlx5_0/mlx5_1, one ACTIVE RoCE port each on ens1f0np0/ens1f1np1,
// GID table link-local (0 v1, 1 v2) then 192.168.10.11 / 192.168.11.11 (2 v1, 3 v2); both
// netdevs RDMA-capable, lo not. DCB is emulated for both netdevs (fake_dcbnl.c: pfc_en 0)
// and a rule asks no-drop priority 3 of every mlx5_core device.
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <map>
#include <netinet/in.h>
#include <regex>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace it;
using Catch::Matchers::Contains;

namespace {

using Labels = std::map<std::string, std::string>;

/// One scrape, parsed: (metric name, labels) -> value. Comments are skipped.
std::map<std::pair<std::string, Labels>, double> parse_exposition(const std::string& text) {
    std::map<std::pair<std::string, Labels>, double> out;
    static const std::regex label(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:\\.|[^"\\])*)")re");
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#')
            continue;
        const auto brace = line.find('{');
        const auto space = line.rfind(' ');
        std::string name = line.substr(0, std::min(brace, line.find(' ')));
        Labels labels;
        if (brace != std::string::npos) {
            const std::string body = line.substr(brace, line.rfind('}') - brace);
            for (auto it = std::sregex_iterator(body.begin(), body.end(), label);
                 it != std::sregex_iterator(); ++it)
                labels[(*it)[1]] = (*it)[2];
        }
        out[{name, labels}] = std::stod(line.substr(space + 1));
    }
    return out;
}

/// A TCP port nothing listens on now (bound to 0, read back, closed).
int free_port() {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(s >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    REQUIRE(getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    close(s);
    return ntohs(a.sin_port);
}

/// GET http://127.0.0.1:<port><path> (HTTP/1.0): the body, or "" when nothing answers.
std::string http_get(int port, const std::string& path) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(s >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(s);
        return {};
    }
    const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    REQUIRE(write(s, req.data(), req.size()) == static_cast<ssize_t>(req.size()));
    std::string resp;
    char buf[65536];
    for (ssize_t n; (n = read(s, buf, sizeof buf)) > 0;)
        resp.append(buf, static_cast<size_t>(n));
    close(s);
    const auto body = resp.find("\r\n\r\n");
    return body == std::string::npos ? std::string() : resp.substr(body + 4);
}

/// prometheus-node-exporter with the textfile collector only, on 127.0.0.1; killed at the end.
struct NodeExporter {
    explicit NodeExporter(const std::string& dir) : port(free_port()) {
        std::vector<std::string> argv = {"prometheus-node-exporter", "--collector.disable-defaults",
                                         "--collector.textfile",
                                         "--collector.textfile.directory=" + dir,
                                         "--web.listen-address=127.0.0.1:" + std::to_string(port)};
        std::vector<char*> a;
        for (auto& s : argv)
            a.push_back(s.data());
        a.push_back(nullptr);
        // Without the umockdev preload: node-exporter reads no sysfs here anyway.
        std::vector<std::string> env_s = {"PATH=/usr/bin:/bin"};
        std::vector<char*> e;
        for (auto& s : env_s)
            e.push_back(s.data());
        e.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        const int rc = posix_spawnp(&pid, a[0], &fa, nullptr, a.data(), e.data());
        posix_spawn_file_actions_destroy(&fa);
        INFO("prometheus-node-exporter is needed: apt-get install -y prometheus-node-exporter");
        REQUIRE(rc == 0);
        kill_when_killed(pid);
    }
    ~NodeExporter() {
        kill(pid, SIGTERM);
        waitpid(pid, nullptr, 0);
        forget_child(pid);
    }
    /// /metrics, retried until node-exporter listens (5 s at most).
    std::string scrape() {
        for (int i = 0; i < 500; ++i) {
            std::string body = http_get(port, "/metrics");
            if (!body.empty())
                return body;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        FAIL("node-exporter did not answer on port " << port);
        return {};
    }
    int port;
    pid_t pid = -1;
};

/// rdmad on a recorded host with [export] pointing into its own directories (NFD off when
/// `nfd` is false) and a rule asking no-drop priority 3 of every mlx5_core device.
struct ExportRig {
    explicit ExportRig(const std::string& host, bool nfd = true) : testbed(host) {
        fs::create_directories(dir / "etc");
        fs::create_directories(dir / "state");
        fs::create_directories(prom_dir());
        fs::create_directories(nfd_dir());
        write_file(dir / "etc" / "rdmad.conf",
                   "[export]\nprometheus_dir = \"" + prom_dir() + "\"\nnfd_dir = \"" +
                       (nfd ? nfd_dir() : std::string()) +
                       "\"\n\n[[rule]]\ndriver = \"mlx5_core\"\npfc_no_drop = [3]\n");
    }
    void start(std::vector<std::string> wrapper = {}) {
        DaemonOptions o;
        o.args = {"--legacy-mlx4-conf=" + (dir / "no-mlx4.conf").string(),
                  "--modprobe-dir=" + (dir / "state").string()};
        o.wrapper = std::move(wrapper);
        std::map<std::string, std::string> env = {
            {"CONFIGURATION_DIRECTORY", (dir / "etc").string()},
            {"STATE_DIRECTORY", (dir / "state").string()},
            {"LD_PRELOAD", preload_ahead(env_or_fail("FAKE_DCBNL"))},
            {"FAKE_DCBNL_NETDEVS", "ens1f0np0,ens1f1np1"},
        };
        daemon = std::make_unique<DaemonProcess>(std::move(o), std::function<void()>{}, env);
    }
    std::string prom_dir() const { return (dir / "prom").string(); }
    std::string nfd_dir() const { return (dir / "nfd").string(); }
    std::string prom_file() const { return prom_dir() + "/rdmad.prom"; }
    std::string nfd_file() const { return nfd_dir() + "/rdmad"; }

    /// Wait until `file` holds `line` (5 s at most); its content.
    std::string wait_for_line(const std::string& file, const std::string& line) {
        std::string text;
        for (int i = 0; i < 500; ++i) {
            text = fs::exists(file) ? read_file(file) : std::string();
            if (("\n" + text).find("\n" + line + "\n") != std::string::npos)
                return text;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        FAIL(file << " never held \"" << line << "\"; it holds:\n" << text);
        return text;
    }

    PrivateBus bus;
    Testbed testbed;
    TempDir dir{"rdmad-it-export"};
    std::unique_ptr<DaemonProcess> daemon;
};

/// True once `pid` (a child not yet reaped) has exited.
bool exited(pid_t pid) {
    const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

bool mlx5_provider_installed() {
    // ibverbs-providers (tools/install-deps.sh) ships mlx5.driver; rdmad's provider probe looks
    // there (DOMAIN.md §4.1).
    return fs::exists("/etc/libibverbs.d/mlx5.driver");
}

} // namespace

TEST_CASE("export: node-exporter serves rdmad.prom with the recorded host's values, and "
          "promtool finds nothing to say",
          "[export]") {
    ExportRig rig("constructed-mlx5-roce");
    rig.start();
    const std::string text = rig.wait_for_line(
        rig.prom_file(), R"(rdmad_port_pfc_no_drop{device="mlx5_1",port="1",priority="3"} 1)");
    rig.wait_for_line(rig.prom_file(), R"(rdmad_state{state="running"} 1)");

    // promtool (Debian's prometheus) lints the file: exit 0 and not a word.
    const RunResult lint =
        run_program({"sh", "-c", "promtool check metrics < '" + rig.prom_file() + "'"});
    INFO("promtool: " << lint.out << lint.err);
    CHECK(lint.status == 0);
    CHECK(lint.out.empty());
    CHECK(lint.err.empty());

    NodeExporter exporter(rig.prom_dir());
    const auto m = parse_exposition(exporter.scrape());
    auto value = [&](const std::string& name, const Labels& labels) -> double {
        auto it = m.find({name, labels});
        INFO(name << " " << Catch::Detail::stringify(labels));
        REQUIRE(it != m.end());
        return it->second;
    };
    // node-exporter read the file without error (its own textfile collector metrics).
    CHECK(value("node_textfile_scrape_error", {}) == 0);

    for (const auto& [dev, netdev] : std::vector<std::pair<std::string, std::string>>{
             {"mlx5_0", "ens1f0np0"}, {"mlx5_1", "ens1f1np1"}}) {
        const Labels port = {{"device", dev}, {"port", "1"}};
        CHECK(value("rdmad_port_info", {{"device", dev},
                                        {"port", "1"},
                                        {"link_layer", "Ethernet"},
                                        {"transport", "RoCE"},
                                        {"netdev", netdev}}) == 1);
        CHECK(value("rdmad_device_info", {{"device", dev},
                                          {"kernel_driver", "mlx5_core"},
                                          {"provider", "mlx5"},
                                          {"node_type", "CA"}}) == 1);
        // The rule asks priority 3; the emulated netdev started with none and rdmad set it.
        for (int p = 0; p < 8; ++p) {
            Labels l = port;
            l["priority"] = std::to_string(p);
            CHECK(value("rdmad_port_pfc_no_drop", l) == (p == 3 ? 1 : 0));
            CHECK(value("rdmad_port_desired_pfc_no_drop", l) == (p == 3 ? 1 : 0));
        }
        CHECK(value("rdmad_port_in_sync", port) == 1);
        CHECK(value("rdmad_port_pfc_status", {{"device", dev}, {"port", "1"}, {"status", "ok"}}) ==
              1);
        for (const char* v : {"v1", "v2"})
            CHECK(value("rdmad_port_roce_version",
                        {{"device", dev}, {"port", "1"}, {"version", v}}) == 1);
        CHECK(value("rdmad_port_roce_v2_routable_gid", port) == 1);
        // Index 3: the RoCE v2 GID of the port's IPv4 address; 1 is v2 but link-local.
        CHECK(value("rdmad_port_recommended_roce_gid_index", port) == 3);
        CHECK(value("rdmad_netdev_rdma_capable", {{"device", netdev}, {"state", "yes"}}) == 1);
        CHECK(value("rdmad_netdev_rdma_capable", {{"device", netdev}, {"state", "no"}}) == 0);
    }
    CHECK(value("rdmad_netdev_rdma_capable", {{"device", "lo"}, {"state", "no"}}) == 1);
    CHECK(value("rdmad_state", {{"state", "running"}}) == 1);
    CHECK(value("rdmad_state", {{"state", "degraded"}}) == 0);
    CHECK(value("rdmad_config_errors", {}) == 0);
    // Stamped by the last pass without failures: now, give or take the test's run time.
    const double stamp = value("rdmad_last_reconcile_timestamp_seconds", {});
    CHECK(std::abs(stamp - static_cast<double>(time(nullptr))) < 120);
    // Two RDMA devices with one port each, three netdevs: nothing more.
    size_t port_info = 0, capable = 0;
    for (const auto& [key, v] : m) {
        port_info += key.first == "rdmad_port_info";
        capable += key.first == "rdmad_netdev_rdma_capable";
    }
    CHECK(port_info == 2);
    CHECK(capable == 3 * 4);
}

TEST_CASE("export: the NFD feature file names usable RoCE v2 ports, the agreed GID index and "
          "an expiry a day ahead",
          "[export]") {
    INFO("ibverbs-providers (tools/install-deps.sh) must be installed for mlx5 to be usable");
    REQUIRE(mlx5_provider_installed());
    ExportRig rig("constructed-mlx5-roce");
    rig.start();
    const std::string text = rig.wait_for_line(rig.nfd_file(), "rdmad.in-sync=true");
    std::map<std::string, std::string> labels;
    std::string expiry;
    std::istringstream in(text);
    static const std::regex k8s("^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("# +expiry-time=", 0) == 0) {
            expiry = line.substr(15);
            continue;
        }
        if (line[0] == '#')
            continue;
        const auto eq = line.find('=');
        REQUIRE(eq != std::string::npos);
        labels[line.substr(0, eq)] = line.substr(eq + 1);
        INFO(line);
        CHECK(eq <= 63);
        CHECK(std::regex_match(line.substr(0, eq), k8s));
        CHECK(line.size() - eq - 1 <= 63);
        CHECK(std::regex_match(line.substr(eq + 1), k8s));
    }
    const std::map<std::string, std::string> want = {
        {"rdmad.roce-v2", "true"},
        {"rdmad.roce-v2.ports", "2"},
        {"rdmad.infiniband.ports", "0"},
        {"rdmad.iwarp.ports", "0"},
        {"rdmad.providers-installed", "true"},
        {"rdmad.in-sync", "true"},
        {"rdmad.roce-gid-index", "3"},
    };
    CHECK(labels == want);
    // RFC 3339 UTC, 24 h from now.
    struct tm tm {};
    REQUIRE(strptime(expiry.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) != nullptr);
    const double ahead = static_cast<double>(timegm(&tm) - time(nullptr));
    CHECK(ahead > 23 * 3600);
    CHECK(ahead <= 24 * 3600);
    CHECK(text.size() < 64 * 1024 / 16);
    // Nothing but the file itself in features.d: no dot-file left behind.
    size_t entries = 0;
    for (const auto& e : fs::directory_iterator(rig.nfd_dir())) {
        INFO(e.path());
        ++entries;
    }
    CHECK(entries == 1);

    // Stopped, rdmad takes back what it said: no labels, no metrics of a host nobody watches.
    REQUIRE(fs::exists(rig.prom_file()));
    CHECK(rig.daemon->stop() == 0);
    CHECK(!fs::exists(rig.nfd_file()));
    CHECK(!fs::exists(rig.prom_file()));
}

TEST_CASE("export: rdmad killed between writing the temporary file and the rename leaves the "
          "previous complete rdmad.prom, and its restart cleans up",
          "[export][strace]") {
    auto which = run_program({"sh", "-c", "command -v strace"});
    INFO("strace is needed: apt-get install -y strace");
    REQUIRE(which.status == 0);
    // NFD off: rdmad's only rename(2)s are rdmad.prom's. The first (the state at start-up)
    // goes through; the second, after a netdev's change event (every pass stamps
    // rdmad_last_reconcile_timestamp_seconds), is failed and SIGKILL delivered at its entry:
    // the temporary file is written, never renamed.
    ExportRig rig("constructed-mlx5-roce", false);
    rig.start({"strace", "-f", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2", "-e",
               "inject=rename,renameat,renameat2:error=EIO:signal=SIGKILL:when=2"});
    rig.wait_for_line(rig.prom_file(), R"(rdmad_state{state="running"} 1)");
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // past the writer's interval
    rig.testbed.uevent("/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/net/ens1f0np0", "change");
    for (int i = 0; i < 1000 && !exited(rig.daemon->pid()); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(exited(rig.daemon->pid()));
    CHECK(rig.daemon->stop() != 0); // killed, not stopped
    rig.daemon.reset();

    const std::string first = read_file(rig.prom_file());
    size_t temporaries = 0, proms = 0;
    for (const auto& e : fs::directory_iterator(rig.prom_dir())) {
        const std::string name = e.path().filename();
        temporaries += name.rfind(".rdmad.prom.rdmad-tmp.", 0) == 0;
        proms += name.size() > 5 && name.substr(name.size() - 5) == ".prom";
    }
    CHECK(temporaries == 1); // the interrupted write's, complete but never renamed
    CHECK(proms == 1);       // node-exporter reads *.prom only: rdmad.prom and nothing else
    // The surviving rdmad.prom is the first write, whole: promtool accepts it, it ends with its
    // last family (the netdevs') and says "running".
    const RunResult lint =
        run_program({"sh", "-c", "promtool check metrics < '" + rig.prom_file() + "'"});
    INFO("promtool: " << lint.out << lint.err << "\n" << first);
    CHECK(lint.status == 0);
    CHECK(first.find("rdmad_state{state=\"running\"} 1\n") != std::string::npos);
    CHECK(first.find("rdmad_netdev_rdma_capable{device=\"lo\",state=\"no\"} 1\n") !=
          std::string::npos);
    CHECK(first.back() == '\n');

    // Restarted: a new rdmad.prom, and the interrupted write's temporary file is gone.
    // The old rdmad.prom already says "running": wait for the new daemon's first write.
    rig.start();
    size_t left = 0;
    for (int i = 0; i < 500; ++i) {
        left = 0;
        for (const auto& e : fs::directory_iterator(rig.prom_dir()))
            left += e.path().filename().string() != "rdmad.prom";
        if (left == 0 && read_file(rig.prom_file()) != first)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(left == 0);
    CHECK(read_file(rig.prom_file()) != first); // written again (a new timestamp)
}

TEST_CASE("export: a file that cannot be written is Manager problem export-failed, until it is "
          "written again",
          "[export]") {
    // rename(2) of the temporary file over a directory fails (EISDIR), root or not.
    ExportRig rig("constructed-mlx5-roce", false);
    fs::create_directories(rig.prom_file());
    rig.start();
    Client client;
    auto export_problem = [&] {
        json found;
        const json d = client.describe(); // the loop below must not outlive it
        for (const auto& p : d["Problems"])
            if (p["Code"] == "export-failed")
                found = p;
        return found;
    };
    json p;
    for (int i = 0; i < 300 && p.is_null(); ++i) {
        p = export_problem();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(!p.is_null());
    CHECK(p["Severity"] == "warning");
    CHECK_THAT(p["Text"].get<std::string>(), Contains(rig.prom_file()));
    // Fixed: the next change writes it, and the problem goes.
    fs::remove(rig.prom_file());
    rig.testbed.uevent("/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/net/ens1f0np0", "change");
    rig.wait_for_line(rig.prom_file(), R"(rdmad_state{state="running"} 1)");
    for (int i = 0; i < 300 && !p.is_null(); ++i) {
        p = export_problem();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(p.is_null());
    CHECK(rig.daemon->stop() == 0);
}

TEST_CASE("export: rdmad's own problem (the NFD file cannot be written) is in rdmad.prom as "
          "rdmad_problems, and leaves it once the file is written again",
          "[export]") {
    ExportRig rig("constructed-mlx5-roce");
    fs::create_directories(rig.nfd_file()); // rename(2) over a directory: EISDIR
    rig.start();
    const std::string failed = R"(rdmad_problems{code="export-failed",severity="warning"} 1)";
    // The first write fails and makes the Manager problem; the next change's rdmad.prom says so.
    Client client;
    auto has_problem = [&] {
        const json d = client.describe();
        for (const auto& p : d["Problems"])
            if (p["Code"] == "export-failed")
                return true;
        return false;
    };
    bool seen = false;
    for (int i = 0; i < 300 && !seen; ++i) {
        seen = has_problem();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(seen);
    rig.testbed.uevent("/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/net/ens1f0np0", "change");
    rig.wait_for_line(rig.prom_file(), failed);
    fs::remove(rig.nfd_file());
    // Written again at the next change, the problem goes, and so does the sample.
    std::string text;
    for (int i = 0; i < 30; ++i) {
        rig.testbed.uevent("/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/net/ens1f0np0",
                           "change");
        std::this_thread::sleep_for(std::chrono::milliseconds(1100)); // a write a second at most
        text = read_file(rig.prom_file());
        if (fs::is_regular_file(rig.nfd_file()) && text.find("rdmad_problems") == std::string::npos)
            break;
    }
    CHECK(fs::is_regular_file(rig.nfd_file()));
    CHECK(text.find("rdmad_problems") == std::string::npos);
    CHECK(rig.daemon->stop() == 0);
}

namespace {

const std::string kIb0 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0";

/// The inode of `path` (a rename(2) over it gives a new one), 0 when it is absent.
ino_t inode_of(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

/// Names in `dir` that start with '.' (write_file_atomically()'s temporary files).
std::vector<std::string> dot_files(const std::string& dir) {
    std::vector<std::string> out;
    if (fs::exists(dir))
        for (const auto& e : fs::directory_iterator(dir))
            if (e.path().filename().string().front() == '.')
                out.push_back(e.path().filename());
    return out;
}

/// The exports' watch over a stream: every new inode of rdmad.prom and of the NFD file seen
/// by polling every 2 ms (a write polling misses only lowers the count).
struct WriteWatch {
    std::string prom, nfd;
    ino_t prom_ino = 0, nfd_ino = 0;
    unsigned prom_writes = 0, nfd_writes = 0;
    void poll() {
        if (const ino_t i = inode_of(prom); i && i != prom_ino) {
            prom_ino = i;
            ++prom_writes;
        }
        if (const ino_t i = inode_of(nfd); i && i != nfd_ino) {
            nfd_ino = i;
            ++nfd_writes;
        }
    }
};

/// mlx5_0's port 1 flipped between DOWN and ACTIVE every 20 ms for `duration`, ending DOWN,
/// the watch polled between flips; `midway` is called once halfway.
void port_stream(ExportRig& rig, WriteWatch& w, std::chrono::milliseconds duration,
                 const std::function<void()>& midway = {}) {
    const auto start = std::chrono::steady_clock::now();
    bool down = false, called = false;
    while (std::chrono::steady_clock::now() - start < duration || !down) {
        down = !down;
        rig.testbed.set_attr(kIb0, "ports/1/state", down ? "1: DOWN\n" : "4: ACTIVE\n");
        rig.testbed.uevent(kIb0, "change");
        if (midway && !called && std::chrono::steady_clock::now() - start > duration / 2) {
            called = true;
            midway();
        }
        for (int i = 0; i < 10; ++i) {
            w.poll();
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
}

/// What the exports must say once settled with mlx5_0's port 1 DOWN: the bus says DOWN, the
/// NFD file counts one usable RoCE v2 port (mlx5_1's), rdmad.prom lists both devices' ports.
void check_settled_down(ExportRig& rig, const std::string& prom_file, const std::string& nfd_file) {
    Client client;
    json described;
    for (int i = 0; i < 300; ++i) {
        described = client.describe();
        const json& ports = described["Devices"];
        bool down = false;
        for (const auto& d : ports)
            if (d["Name"] == "mlx5_0")
                down = d["Ports"][0]["State"] == "DOWN";
        if (down)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    INFO(described.dump(1));
    rig.wait_for_line(nfd_file, "rdmad.roce-v2.ports=1");
    const std::string prom = read_file(prom_file);
    CHECK(prom.find("rdmad_port_info{device=\"mlx5_0\"") != std::string::npos);
    CHECK(prom.find("rdmad_port_info{device=\"mlx5_1\"") != std::string::npos);
}

} // namespace

TEST_CASE("export: a 10 s stream of changes is written at most once a second, the first change "
          "after a quiet second at once, and once more when it settles",
          "[export][hostile]") {
    ExportRig rig("constructed-mlx5-roce");
    rig.start();
    rig.wait_for_line(rig.prom_file(), R"(rdmad_state{state="running"} 1)");
    rig.wait_for_line(rig.nfd_file(), "rdmad.roce-v2.ports=2");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500)); // a quiet second

    WriteWatch w{rig.prom_file(), rig.nfd_file()};
    w.poll();
    w.prom_writes = w.nfd_writes = 0;
    const auto start = std::chrono::steady_clock::now();
    port_stream(rig, w, std::chrono::seconds(10));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // One write at the leading edge and one a second after it (min_interval_usec): at most
    // seconds + 1 while the stream lasts.
    INFO("writes seen during " << seconds << " s: prom " << w.prom_writes << ", nfd "
                               << w.nfd_writes);
    CHECK(w.prom_writes <= static_cast<unsigned>(seconds) + 1);
    CHECK(w.nfd_writes <= static_cast<unsigned>(seconds) + 1);
    CHECK(w.prom_writes >= 5); // it keeps writing while changes keep coming
    check_settled_down(rig, rig.prom_file(), rig.nfd_file());

    // Quiet for more than a second, then one change: written at once (well before a second).
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    w.poll();
    const ino_t before = w.nfd_ino;
    const auto change = std::chrono::steady_clock::now();
    rig.testbed.set_attr(kIb0, "ports/1/state", "4: ACTIVE\n");
    rig.testbed.uevent(kIb0, "change");
    rig.wait_for_line(rig.nfd_file(), "rdmad.roce-v2.ports=2");
    CHECK(inode_of(rig.nfd_file()) != before);
    CHECK(std::chrono::steady_clock::now() - change < std::chrono::milliseconds(600));

    // A change right after that write: it waits for the interval, and is written.
    rig.testbed.set_attr(kIb0, "ports/1/state", "1: DOWN\n");
    rig.testbed.uevent(kIb0, "change");
    check_settled_down(rig, rig.prom_file(), rig.nfd_file());
    CHECK(dot_files(rig.prom_dir()).empty());
    CHECK(dot_files(rig.nfd_dir()).empty());
    CHECK(rig.daemon->stop() == 0);
    CHECK(!fs::exists(rig.prom_file()));
    CHECK(!fs::exists(rig.nfd_file()));
}

TEST_CASE("export: SIGHUP moving [export] mid-stream moves both files; SIGTERM mid-stream "
          "leaves neither files nor temporary files",
          "[export][hostile]") {
    ExportRig rig("constructed-mlx5-roce");
    rig.start();
    rig.wait_for_line(rig.nfd_file(), "rdmad.roce-v2.ports=2");
    const std::string prom2 = (rig.dir / "prom2").string(), nfd2 = (rig.dir / "nfd2").string();
    fs::create_directories(prom2);
    fs::create_directories(nfd2);
    WriteWatch w{rig.prom_file(), rig.nfd_file()};
    port_stream(rig, w, std::chrono::seconds(4), [&] {
        write_file(rig.dir / "etc" / "rdmad.conf",
                   "[export]\nprometheus_dir = \"" + prom2 + "\"\nnfd_dir = \"" + nfd2 +
                       "\"\n\n[[rule]]\ndriver = \"mlx5_core\"\npfc_no_drop = [3]\n");
        rig.daemon->signal(SIGHUP);
    });
    check_settled_down(rig, prom2 + "/rdmad.prom", nfd2 + "/rdmad");
    CHECK(!fs::exists(rig.prom_file()));
    CHECK(!fs::exists(rig.nfd_file()));
    for (const std::string& dir : {rig.prom_dir(), rig.nfd_dir(), prom2, nfd2}) {
        INFO(dir);
        CHECK(dot_files(dir).empty());
    }

    // SIGTERM while the stream runs.
    WriteWatch w2{prom2 + "/rdmad.prom", nfd2 + "/rdmad"};
    port_stream(rig, w2, std::chrono::seconds(2), [&] { rig.daemon->signal(SIGTERM); });
    CHECK(rig.daemon->stop() == 0);
    for (const std::string& dir : {prom2, nfd2}) {
        INFO(dir);
        CHECK(fs::is_empty(dir));
    }
}
