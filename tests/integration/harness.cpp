// SPDX-License-Identifier: MIT
#include "harness.hpp"

#include "rdma_cm_model.h"

#include <catch2/catch.hpp>

extern "C" {
#include <umockdev.h>
}

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <glob.h>
#include <poll.h>
#include <spawn.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace it {

namespace {

using Clock = std::chrono::steady_clock;

// environ as a map, minus `drop`, plus `set`.
std::vector<std::string> make_env(const std::vector<std::string>& drop,
                                  const std::map<std::string, std::string>& set) {
    std::vector<std::string> out;
    for (char** e = environ; *e; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        std::string key = kv.substr(0, eq);
        if (std::find(drop.begin(), drop.end(), key) != drop.end() || set.count(key))
            continue;
        out.push_back(kv);
    }
    for (auto& [k, v] : set)
        out.push_back(k + "=" + v);
    return out;
}

std::vector<char*> cstrs(std::vector<std::string>& v) {
    std::vector<char*> out;
    for (auto& s : v)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// Wait for pid with a deadline; returns the wait status or nullopt on timeout.
std::optional<int> wait_for(pid_t pid, std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    for (;;) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (r < 0 && errno != EINTR)
            return std::nullopt;
        if (Clock::now() > deadline)
            return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

int decode_status(int st) {
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return -1;
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (auto& a : v)
        s += (s.empty() ? "" : " ") + a;
    return s;
}

} // namespace

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::string env_or_fail(const char* name) {
    std::string v = env_or_empty(name);
    if (v.empty())
        FAIL("environment variable " << name << " is not set (run through `meson test`)");
    return v;
}

std::string fixtures_dir() { return env_or_fail("FIXTURES"); }
std::string host_file(const std::string& host) { return fixtures_dir() + "/" + host + ".umockdev"; }
std::string expected_file(const std::string& host) {
    return fixtures_dir() + "/" + host + ".expected.json";
}

TempDir::TempDir(const std::string& tag) {
    std::string tmpl = (fs::temp_directory_path() / (tag + ".XXXXXX")).string();
    if (!mkdtemp(tmpl.data()))
        FAIL("mkdtemp " << tmpl << ": " << std::strerror(errno));
    path_ = tmpl;
    remove_when_killed(path_.string());
}

TempDir::~TempDir() {
    // Removed first, then forgotten: a kill during the removal still has it removed.
    std::error_code ec;
    fs::remove_all(path_, ec);
    forget_when_killed(path_.string());
}

std::string preload_ahead(const std::string& library) {
    return preload_ahead(std::vector<std::string>{library});
}

std::string preload_ahead(const std::vector<std::string>& libraries) {
    std::string out;
    for (const std::string& library : libraries) {
        std::string lib = library;
        // ld.so splits LD_PRELOAD at spaces and colons (ld.so(8)) and cannot quote: a library
        // whose path has one (a checkout under "My Projects") is preloaded through a plain
        // symlink in a directory of this process (TMPDIR is plain: tools/short-tmpdir.sh).
        if (lib.find_first_of(" :\t") != std::string::npos) {
            static TempDir links{"rdmad-it-preload"};
            const fs::path link = links / fs::path(lib).filename().string();
            std::error_code ec;
            if (!fs::is_symlink(link, ec))
                fs::create_symlink(lib, link, ec);
            if (ec)
                FAIL("cannot link " << link << " to " << lib << ": " << ec.message());
            lib = link.string();
        }
        out += (out.empty() ? "" : " ") + lib;
    }
    const std::string rest = env_or_empty("LD_PRELOAD");
    return rest.empty() ? out : out + " " + rest;
}

void write_file(const fs::path& p, const std::string& content) {
    fs::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << content;
    if (!f)
        FAIL("cannot write " << p);
}

std::string read_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// ---- PrivateBus --------------------------------------------------------------------------

PrivateBus::PrivateBus() {
    const auto sock = dir_ / "system_bus_socket";
    const auto conf = dir_ / "system-like.conf";
    write_file(conf, R"(<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <keep_umask/>
  <auth>EXTERNAL</auth>
  <listen>unix:path=)" + sock.string() + R"(</listen>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow send_type="method_call"/>
  </policy>
</busconfig>
)");
    int pfd[2];
    REQUIRE(pipe2(pfd, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 3);
    // Keep dbus-daemon off the test's stdout/stderr: meson waits for those to close.
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, (dir_ / "dbus-daemon.log").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> argv = {"dbus-daemon", "--config-file=" + conf.string(), "--nofork",
                                     "--print-address=3"};
    // dbus-daemon needs no preload: scrub it (and the testbed) from its environment.
    auto env = make_env({"LD_PRELOAD", "UMOCKDEV_DIR"}, {});
    auto a = cstrs(argv);
    auto e = cstrs(env);
    int rc = posix_spawnp(&pid_, "dbus-daemon", &fa, nullptr, a.data(), e.data());
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        FAIL("cannot spawn dbus-daemon: " << std::strerror(rc));
    }
    kill_when_killed(pid_);
    std::string line;
    auto deadline = Clock::now() + std::chrono::seconds(10);
    while (line.find('\n') == std::string::npos && Clock::now() < deadline) {
        struct pollfd p = {pfd[0], POLLIN, 0};
        if (poll(&p, 1, 100) > 0) {
            char buf[512];
            ssize_t n = read(pfd[0], buf, sizeof buf);
            if (n <= 0)
                break;
            line.append(buf, size_t(n));
        }
    }
    close(pfd[0]);
    auto nl = line.find('\n');
    REQUIRE(nl != std::string::npos);
    address_ = line.substr(0, nl);
    setenv("DBUS_SYSTEM_BUS_ADDRESS", address_.c_str(), 1);
}

PrivateBus::~PrivateBus() {
    unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
    if (pid_ > 0) {
        kill(pid_, SIGTERM);
        if (!wait_for(pid_, std::chrono::seconds(5))) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        forget_child(pid_);
    }
}

// ---- Testbed -----------------------------------------------------------------------------

Testbed::Testbed(const std::string& host) {
    const std::string file = host_file(host);
    INFO("host file " << file);
    REQUIRE(fs::exists(file));
    tb_ = umockdev_testbed_new();
    REQUIRE(tb_ != nullptr);
    remove_when_killed(root());
    // Only meaningful once UMOCKDEV_DIR is set (the preload answers for the testbed), and
    // cached by umockdev after the first call: so ask after umockdev_testbed_new().
    INFO("the test binary must run with LD_PRELOAD=libumockdev-preload.so.0");
    REQUIRE(umockdev_in_mock_environment());
    GError* err = nullptr;
    gboolean ok = umockdev_testbed_add_from_file(tb_, file.c_str(), &err);
    std::string msg = err ? err->message : "";
    if (err)
        g_error_free(err);
    INFO("umockdev_testbed_add_from_file: " << msg);
    REQUIRE(ok);
}

Testbed::~Testbed() {
    if (tb_) {
        const std::string path = root();
        g_object_unref(tb_); // removes the testbed; forgotten after, as TempDir's
        forget_when_killed(path);
    }
}

std::string Testbed::root() const {
    gchar* r = umockdev_testbed_get_root_dir(tb_);
    std::string s = r ? r : "";
    g_free(r);
    return s;
}

void Testbed::add(const std::string& text) {
    GError* err = nullptr;
    gboolean ok = umockdev_testbed_add_from_string(tb_, text.c_str(), &err);
    std::string msg = err ? err->message : "";
    if (err)
        g_error_free(err);
    INFO("umockdev_testbed_add_from_string: " << msg << "\n" << text);
    REQUIRE(ok);
}

void Testbed::set_attr(const std::string& syspath, const std::string& name,
                       const std::string& value) {
    REQUIRE(fs::exists(root() + syspath));
    umockdev_testbed_set_attribute(tb_, syspath.c_str(), name.c_str(), value.c_str());
}

void Testbed::set_link(const std::string& syspath, const std::string& name,
                       const std::string& target) {
    REQUIRE(fs::exists(root() + syspath));
    umockdev_testbed_set_attribute_link(tb_, syspath.c_str(), name.c_str(), target.c_str());
}

void Testbed::uevent(const std::string& syspath, const std::string& action) {
    INFO("uevent " << action << " " << syspath);
    REQUIRE(fs::exists(root() + syspath));
    umockdev_testbed_uevent(tb_, syspath.c_str(), action.c_str());
}

void Testbed::remove(const std::string& syspath) {
    REQUIRE(fs::exists(root() + syspath));
    umockdev_testbed_remove_device(tb_, syspath.c_str());
}

void load_rdma_cm(const Testbed& testbed) {
    fs::create_directories(testbed.root() + "/sys/kernel/config/rdma_cm");
}

void make_rdma_cm_group(const Testbed& testbed, const std::string& device, bool before_4_11) {
    REQUIRE(fs::is_directory(testbed.root() + "/sys/kernel/config/rdma_cm"));
    REQUIRE_FALSE(fs::exists(testbed.root() + "/sys/kernel/config/rdma_cm/" + device));
    rdma_cm_device_added(testbed, device, before_4_11, true);
}

void rdma_cm_device_added(const Testbed& testbed, const std::string& device, bool before_4_11,
                          bool make) {
    if (!make && !fs::is_directory(testbed.root() + "/sys/kernel/config/rdma_cm/" + device))
        return;
    const int e = rdma_cm_model_fill_group(testbed.root().c_str(), device.c_str(), before_4_11);
    INFO("rdma_cm group of " << device << ": " << std::strerror(e));
    REQUIRE(e == 0);
}

// ---- send_uevent -------------------------------------------------------------------------

namespace {

// MurmurHash2 as systemd's and umockdev's libudev header filters use it.
uint32_t murmur2(const std::string& s) {
    const uint32_t m = 0x5bd1e995;
    const int r = 24;
    size_t len = s.size();
    uint32_t h = uint32_t(len);
    const auto* data = reinterpret_cast<const unsigned char*>(s.data());
    while (len >= 4) {
        uint32_t k = 0;
        std::memcpy(&k, data, 4);
        k *= m;
        k ^= k >> r;
        k *= m;
        h *= m;
        h ^= k;
        data += 4;
        len -= 4;
    }
    switch (len) {
    case 3:
        h ^= uint32_t(data[2]) << 16;
        [[fallthrough]];
    case 2:
        h ^= uint32_t(data[1]) << 8;
        [[fallthrough]];
    case 1:
        h ^= data[0];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

struct UdevNetlinkHeader {
    char prefix[8];
    unsigned int magic;
    unsigned int header_size;
    unsigned int properties_off;
    unsigned int properties_len;
    unsigned int filter_subsystem_hash;
    unsigned int filter_devtype_hash;
    unsigned int filter_tag_bloom_hi;
    unsigned int filter_tag_bloom_lo;
};

std::vector<std::string> listener_sockets(const std::string& root) {
    std::vector<std::string> out;
    glob_t gl;
    if (glob((root + "/event[0-9]*").c_str(), GLOB_NOSORT, nullptr, &gl) == 0) {
        for (size_t i = 0; i < gl.gl_pathc; ++i)
            out.emplace_back(gl.gl_pathv[i]);
        globfree(&gl);
    }
    return out;
}

} // namespace

size_t uevent_listeners(const std::string& root) { return listener_sockets(root).size(); }

void send_uevent(const std::string& root, const std::string& syspath, const std::string& subsystem,
                 const std::string& action,
                 const std::vector<std::pair<std::string, std::string>>& extra) {
    static unsigned long long seqnum = 1000000;
    REQUIRE(syspath.rfind("/sys/", 0) == 0);
    std::string props;
    auto add = [&](const std::string& k, const std::string& v) {
        props += k + "=" + v;
        props.push_back('\0');
    };
    add("ACTION", action);
    add("DEVPATH", syspath.substr(4));
    add("SUBSYSTEM", subsystem);
    add("SEQNUM", std::to_string(seqnum++));
    for (auto& [k, v] : extra)
        add(k, v);
    UdevNetlinkHeader nlh{};
    std::memcpy(nlh.prefix, "libudev", 8);
    nlh.magic = htonl(0xfeedcafe);
    nlh.header_size = sizeof nlh;
    nlh.properties_off = sizeof nlh;
    nlh.properties_len = unsigned(props.size());
    nlh.filter_subsystem_hash = htonl(murmur2(subsystem));
    struct iovec iov[2] = {{&nlh, sizeof nlh}, {props.data(), props.size()}};

    for (const auto& path : listener_sockets(root)) {
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        REQUIRE(fd >= 0);
        struct sockaddr_un sa = {};
        sa.sun_family = AF_UNIX;
        std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
        if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
            int e = errno;
            close(fd);
            if (e == ECONNREFUSED) { // the listener is gone (umockdev unlinks it too)
                unlink(path.c_str());
                continue;
            }
            FAIL("connect " << path << ": " << std::strerror(e));
        }
        struct msghdr msg = {};
        msg.msg_iov = iov;
        msg.msg_iovlen = 2;
        const auto deadline = Clock::now() + std::chrono::seconds(20);
        for (;;) {
            if (sendmsg(fd, &msg, 0) >= 0)
                break;
            int e = errno;
            if (e == EINTR)
                continue;
            if (e == EAGAIN && Clock::now() < deadline) {
                struct pollfd p = {fd, POLLOUT, 0};
                poll(&p, 1, 100);
                continue;
            }
            if (e == ECONNREFUSED)
                break; // the listener went away meanwhile
            close(fd);
            FAIL("sendmsg " << action << " " << syspath << " to " << path << ": "
                            << std::strerror(e));
        }
        close(fd);
    }
}

// ---- DaemonProcess -----------------------------------------------------------------------

DaemonProcess::DaemonProcess(DaemonOptions opts, std::function<void()> while_starting,
                             std::map<std::string, std::string> extra_env) {
    const std::string rdmad = env_or_fail("RDMAD");
    const std::string umockdev_dir = env_or_empty("UMOCKDEV_DIR");
    REQUIRE(!umockdev_dir.empty());
    REQUIRE(env_or_empty("LD_PRELOAD").find("umockdev") != std::string::npos);

    const auto notify = dir_ / "notify";
    notify_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    REQUIRE(notify_fd_ >= 0);
    struct sockaddr_un sa = {};
    sa.sun_family = AF_UNIX;
    REQUIRE(notify.string().size() < sizeof sa.sun_path);
    std::strcpy(sa.sun_path, notify.c_str());
    REQUIRE(bind(notify_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    int one = 1;
    setsockopt(notify_fd_, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);

    for (auto d : {"state", "runtime", "config"})
        fs::create_directories(dir_ / d);
    const auto logfile = dir_ / "rdmad.log";

    std::vector<std::string> argv = opts.wrapper;
    wrapped_ = !opts.wrapper.empty();
    argv.push_back(rdmad);
    for (auto& a : opts.args)
        argv.push_back(a);
    // rdmad's own files in /etc (modprobe.d, modules-load.d) go to the test's directory unless
    // the test names one: a test never writes or removes this machine's files.
    for (const char* option : {"--modprobe-dir", "--modules-load-dir"}) {
        const std::string prefix = std::string(option) + "=";
        if (std::none_of(opts.args.begin(), opts.args.end(),
                         [&](const std::string& a) { return a.rfind(prefix, 0) == 0; })) {
            const auto d = dir_ / (std::string(option).substr(2));
            fs::create_directories(d);
            argv.push_back(prefix + d.string());
        }
    }
    std::map<std::string, std::string> set_env = {
        {"NOTIFY_SOCKET", notify.string()},
        {"STATE_DIRECTORY", (dir_ / "state").string()},
        {"RUNTIME_DIRECTORY", (dir_ / "runtime").string()},
        {"CONFIGURATION_DIRECTORY", (dir_ / "config").string()},
        {"SYSTEMD_DEVICE_VERIFY_SYSFS", "0"},
        {"UMOCKDEV_DIR", umockdev_dir}};
    for (auto& [k, v] : extra_env)
        set_env[k] = v;
    auto env = make_env({"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS",
                         "LISTEN_PID", "INVOCATION_ID", "JOURNAL_STREAM"},
                        set_env);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, logfile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    auto a = cstrs(argv);
    auto e = cstrs(env);
    int rc = posix_spawnp(&pid_, argv[0].c_str(), &fa, nullptr, a.data(), e.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        pid_ = -1;
        FAIL("cannot spawn " << join(argv) << ": " << std::strerror(rc));
    }
    kill_when_killed(pid_);

    // Wait for READY=1 (the first full inventory is on the bus).
    auto deadline = Clock::now() + std::chrono::seconds(60);
    bool ready = false;
    while (!ready && Clock::now() < deadline) {
        if (while_starting)
            while_starting();
        struct pollfd p = {notify_fd_, POLLIN, 0};
        if (poll(&p, 1, while_starting ? 1 : 50) > 0) {
            char buf[4096];
            ssize_t n = recv(notify_fd_, buf, sizeof buf - 1, 0);
            if (n > 0) {
                std::string msg(buf, size_t(n));
                std::istringstream ls(msg);
                for (std::string l; std::getline(ls, l);)
                    if (l == "READY=1")
                        ready = true;
            }
            continue;
        }
        int st = 0;
        if (waitpid(pid_, &st, WNOHANG) == pid_) {
            status_ = decode_status(st);
            forget_child(pid_);
            pid_ = -1;
            record();
            FAIL("rdmad exited before READY=1 with status " << *status_ << "\n" << log());
        }
    }
    if (!ready) {
        INFO(log());
        stop();
        FAIL("rdmad sent no READY=1 within 60 s: " << join(argv));
    }
}

DaemonProcess::~DaemonProcess() {
    if (pid_ > 0) {
        int st = stop();
        if (st != 0 && !std::uncaught_exceptions())
            FAIL_CHECK("rdmad exit status " << st << " on SIGTERM (expected 0)");
    }
    if (notify_fd_ >= 0)
        close(notify_fd_);
    record();
}

int DaemonProcess::stop() {
    if (pid_ > 0) {
        // Under a wrapper (strace) signal rdmad itself, the wrapper's child: the wrapper
        // then exits with rdmad's status.
        pid_t target = pid_;
        if (wrapped_) {
            std::istringstream kids(
                read_file("/proc/" + std::to_string(pid_) + "/task/" + std::to_string(pid_) +
                          "/children"));
            pid_t k = 0;
            if (kids >> k && k > 0)
                target = k;
        }
        kill(target, SIGTERM);
        auto st = wait_for(pid_, std::chrono::seconds(15));
        if (st) {
            status_ = decode_status(*st);
        } else {
            if (target != pid_)
                kill(target, SIGKILL);
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
            status_ = -1;
        }
        forget_child(pid_);
        pid_ = -1;
        record();
    }
    return status_.value_or(-1);
}

void DaemonProcess::signal(int sig) {
    REQUIRE(pid_ > 0);
    REQUIRE(::kill(pid_, sig) == 0);
}

std::string DaemonProcess::log() const { return read_file(dir_ / "rdmad.log"); }

void DaemonProcess::record() {
    if (log_recorded_ || pid_ > 0)
        return;
    log_recorded_ = true;
    record_log("rdmad output (exit status " +
                   (status_ ? std::to_string(*status_) : std::string("?")) + ")",
               log());
}

// ---- Client ------------------------------------------------------------------------------

Client::Client() {
    conn_ = sdbus::createSystemBusConnection();
    manager_ = sdbus::createProxy(*conn_, "org.rdmad1", "/org/rdmad1");
}

std::unique_ptr<sdbus::IProxy> Client::proxy(const std::string& path) {
    return sdbus::createProxy(*conn_, "org.rdmad1", path);
}

json Client::describe() {
    std::string s;
    manager_->callMethod("Describe").onInterface("org.rdmad1.Manager").storeResultsTo(s);
    json j = json::parse(s); // throws (and fails the test) on malformed JSON
    return j;
}

std::vector<std::pair<std::string, std::string>> Client::list_devices() {
    std::vector<sdbus::Struct<std::string, sdbus::ObjectPath>> v;
    manager_->callMethod("ListDevices").onInterface("org.rdmad1.Manager").storeResultsTo(v);
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& s : v)
        out.emplace_back(s.get<0>(), std::string(s.get<1>()));
    return out;
}

std::string Client::device_by_name(const std::string& name) {
    sdbus::ObjectPath p;
    manager_->callMethod("GetDeviceByName").onInterface("org.rdmad1.Manager").withArguments(name).storeResultsTo(p);
    return p;
}

std::string Client::link_by_name(const std::string& name) {
    sdbus::ObjectPath p;
    manager_->callMethod("GetLinkByName").onInterface("org.rdmad1.Manager").withArguments(name).storeResultsTo(p);
    return p;
}

sdbus::Variant Client::get(const std::string& path, const std::string& iface,
                           const std::string& prop) {
    auto p = proxy(path);
    return p->getProperty(prop).onInterface(iface);
}

// ---- Signals -----------------------------------------------------------------------------

json variant_json(const sdbus::Variant& v) {
    const std::string sig = v.peekValueType();
    if (sig == "s")
        return v.get<std::string>();
    if (sig == "o")
        return std::string(v.get<sdbus::ObjectPath>());
    if (sig == "b")
        return v.get<bool>();
    if (sig == "d")
        return v.get<double>();
    if (sig == "u")
        return v.get<uint32_t>();
    if (sig == "q")
        return v.get<uint16_t>();
    if (sig == "i")
        return v.get<int32_t>();
    if (sig == "t")
        return v.get<uint64_t>();
    if (sig == "x")
        return v.get<int64_t>();
    if (sig == "y")
        return v.get<uint8_t>();
    if (sig == "ay")
        return v.get<std::vector<uint8_t>>();
    if (sig == "as")
        return v.get<std::vector<std::string>>();
    if (sig == "ao") {
        json a = json::array();
        for (auto& p : v.get<std::vector<sdbus::ObjectPath>>())
            a.push_back(std::string(p));
        return a;
    }
    if (sig == "a(sss)") {
        json a = json::array();
        for (auto& s : v.get<std::vector<sdbus::Struct<std::string, std::string, std::string>>>())
            a.push_back({s.get<0>(), s.get<1>(), s.get<2>()});
        return a;
    }
    if (sig == "a(usss)") {
        json a = json::array();
        for (auto& s : v.get<std::vector<
                 sdbus::Struct<uint32_t, std::string, std::string, std::string>>>())
            a.push_back({s.get<0>(), s.get<1>(), s.get<2>(), s.get<3>()});
        return a;
    }
    if (sig == "a(sssassu)") { // Device.ProblemDetails
        json a = json::array();
        for (auto& s :
             v.get<std::vector<sdbus::Struct<std::string, std::string, std::string,
                                             std::vector<std::string>, std::string, uint32_t>>>())
            a.push_back(json::array(
                {s.get<0>(), s.get<1>(), s.get<2>(), s.get<3>(), s.get<4>(), s.get<5>()}));
        return a;
    }
    return "<signature " + sig + ">";
}

std::string Signal::summary() const {
    std::string s = kind + " " + path + " " + iface;
    if (kind == "changed") {
        std::vector<std::string> names;
        for (auto& [k, _] : props.items())
            names.push_back(k);
        for (auto& n : invalidated)
            names.push_back("!" + n);
        std::sort(names.begin(), names.end());
        s += " ";
        for (size_t i = 0; i < names.size(); ++i)
            s += (i ? "," : "") + names[i];
    }
    return s;
}

namespace {
bool ours(const std::string& iface) { return iface.rfind("org.rdmad1.", 0) == 0; }
std::string join_ifaces(const std::vector<std::string>& v) {
    std::string s;
    for (auto& i : v)
        if (ours(i))
            s += (s.empty() ? "" : ",") + i;
    return s;
}
} // namespace

SignalRecorder::SignalRecorder(Client& client) : conn_(client.connection()) {
    conn_.addMatch(
        "type='signal',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded',"
        "path='/org/rdmad1'",
        [this](sdbus::Message& m) {
            sdbus::ObjectPath path;
            std::map<std::string, std::map<std::string, sdbus::Variant>> ifaces;
            m >> path >> ifaces;
            Signal s;
            s.kind = "added";
            s.path = path;
            std::vector<std::string> names;
            s.props = json::object();
            for (auto& [iface, props] : ifaces) {
                names.push_back(iface);
                if (ours(iface))
                    for (auto& [k, v] : props)
                        s.props[k] = variant_json(v);
            }
            s.iface = join_ifaces(names);
            signals_.push_back(std::move(s));
        },
        sdbus::floating_slot);
    conn_.addMatch(
        "type='signal',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesRemoved',"
        "path='/org/rdmad1'",
        [this](sdbus::Message& m) {
            sdbus::ObjectPath path;
            std::vector<std::string> ifaces;
            m >> path >> ifaces;
            Signal s;
            s.kind = "removed";
            s.path = path;
            s.iface = join_ifaces(ifaces);
            signals_.push_back(std::move(s));
        },
        sdbus::floating_slot);
    conn_.addMatch(
        "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
        "path_namespace='/org/rdmad1'",
        [this](sdbus::Message& m) {
            std::string iface;
            std::map<std::string, sdbus::Variant> changed;
            std::vector<std::string> invalidated;
            m >> iface >> changed >> invalidated;
            Signal s;
            s.kind = "changed";
            s.path = m.getPath();
            s.iface = iface;
            s.props = json::object();
            for (auto& [k, v] : changed)
                s.props[k] = variant_json(v);
            s.invalidated = invalidated;
            signals_.push_back(std::move(s));
        },
        sdbus::floating_slot);
}

void SignalRecorder::pump(std::chrono::milliseconds max_wait) {
    while (conn_.processPendingRequest()) {
    }
    auto pd = conn_.getEventLoopPollData();
    int timeout = int(max_wait.count());
    if (pd.timeout_usec != UINT64_MAX) {
        // An absolute CLOCK_MONOTONIC deadline; 0 means "now".
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t now = uint64_t(ts.tv_sec) * 1000000u + uint64_t(ts.tv_nsec) / 1000u;
        uint64_t ms = pd.timeout_usec > now ? (pd.timeout_usec - now + 999) / 1000 : 0;
        timeout = std::min<int>(timeout, int(std::min<uint64_t>(ms, 1000000)));
    }
    struct pollfd p = {pd.fd, pd.events, 0};
    poll(&p, 1, timeout);
    while (conn_.processPendingRequest()) {
    }
}

bool SignalRecorder::changed_since(size_t from, const std::string& path,
                                   const std::string& property) const {
    for (size_t k = from; k < signals_.size(); ++k)
        if (signals_[k].kind == "changed" && signals_[k].path == path &&
            signals_[k].props.contains(property))
            return true;
    return false;
}

bool SignalRecorder::eventually(const std::function<bool()>& pred,
                                std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        pump(std::chrono::milliseconds(0));
        if (pred())
            return true;
        if (Clock::now() >= deadline)
            return false;
        pump(std::chrono::milliseconds(10));
    }
}

bool SignalRecorder::quiet(std::chrono::milliseconds period) {
    const size_t before = signals_.size();
    const auto deadline = Clock::now() + period;
    while (Clock::now() < deadline) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        pump(std::min(left, std::chrono::milliseconds(20)));
    }
    pump(std::chrono::milliseconds(0));
    return signals_.size() == before;
}

std::vector<std::string> SignalRecorder::summaries(size_t from) const {
    std::vector<std::string> out;
    for (size_t i = from; i < signals_.size(); ++i)
        out.push_back(signals_[i].summary());
    return out;
}

std::string SignalRecorder::dump(size_t from) const {
    std::string s = "signals (" + std::to_string(signals_.size() - std::min(from, signals_.size())) + "):\n";
    for (size_t i = from; i < signals_.size(); ++i)
        s += "  " + signals_[i].summary() + " " + signals_[i].props.dump() + "\n";
    return s;
}

// ---- Rig ---------------------------------------------------------------------------------

Rig::Rig(const std::string& host, DaemonOptions opts) : testbed(host) {
    daemon = std::make_unique<DaemonProcess>(std::move(opts));
    client = std::make_unique<Client>();
    described = client->describe();
    REQUIRE(described.is_object());
    REQUIRE(described.contains("Devices"));
    REQUIRE(described.contains("Links"));
}

const json& Rig::device(const std::string& name) const {
    for (auto& d : described["Devices"])
        if (d.value("Name", "") == name)
            return d;
    FAIL("Describe() has no device named " << name);
    throw std::logic_error("unreachable");
}

const json& Rig::port(const std::string& dev, unsigned n) const {
    for (auto& p : device(dev)["Ports"])
        if (p.value("Number", 0u) == n)
            return p;
    FAIL("Describe() has no port " << n << " on " << dev);
    throw std::logic_error("unreachable");
}

const json& Rig::link(const std::string& name) const {
    for (auto& l : described["Links"])
        if (l.value("Name", "") == name)
            return l;
    FAIL("Describe() has no link named " << name);
    throw std::logic_error("unreachable");
}

std::string Rig::device_path(const std::string& name) const {
    return device(name)["Path"].get<std::string>();
}
std::string Rig::link_path(const std::string& name) const {
    return link(name)["Path"].get<std::string>();
}

void Rig::stop_daemon() {
    client.reset();
    REQUIRE(daemon->stop() == 0);
}

std::vector<std::string> problem_codes(const json& device) {
    std::vector<std::string> out;
    for (auto& p : device.value("Problems", json::array()))
        out.push_back(p.value("Code", ""));
    return out;
}

// ---- run_program -------------------------------------------------------------------------

RunResult run_program(const std::vector<std::string>& argv_in, bool keep_preload) {
    RunResult r;
    int out[2], err[2];
    REQUIRE(pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(pipe2(err, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    std::vector<std::string> argv = argv_in;
    auto env = keep_preload ? make_env({}, {}) : make_env({"LD_PRELOAD", "UMOCKDEV_DIR"}, {});
    auto a = cstrs(argv);
    auto e = cstrs(env);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, argv[0].c_str(), &fa, nullptr, a.data(), e.data());
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    if (rc != 0) {
        close(out[0]);
        close(err[0]);
        FAIL("cannot spawn " << join(argv) << ": " << std::strerror(rc));
    }
    struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sinks[2] = {&r.out, &r.err};
    int open_fds = 2;
    auto deadline = Clock::now() + std::chrono::seconds(60);
    while (open_fds > 0 && Clock::now() < deadline) {
        if (poll(p, 2, 100) <= 0)
            continue;
        for (int i = 0; i < 2; ++i) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[8192];
            ssize_t n = read(p[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, size_t(n));
            } else {
                close(p[i].fd);
                p[i].fd = -1;
                --open_fds;
            }
        }
    }
    for (auto& q : p)
        if (q.fd >= 0)
            close(q.fd);
    auto st = wait_for(pid, std::chrono::seconds(10));
    if (!st) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        FAIL(join(argv) << " did not finish");
    }
    r.status = decode_status(*st);
    return r;
}

// ---- Background --------------------------------------------------------------------------

Background::Background(const std::vector<std::string>& argv_in) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, (dir_ / "out").c_str(), O_WRONLY | O_CREAT, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, (dir_ / "err").c_str(), O_WRONLY | O_CREAT, 0644);
    std::vector<std::string> argv = argv_in;
    auto env = make_env({"LD_PRELOAD", "UMOCKDEV_DIR"}, {});
    auto a = cstrs(argv);
    auto e = cstrs(env);
    int rc = posix_spawnp(&pid_, argv[0].c_str(), &fa, nullptr, a.data(), e.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        FAIL("cannot spawn " << join(argv) << ": " << std::strerror(rc));
    kill_when_killed(pid_);
}

Background::~Background() {
    if (!status_) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    forget_child(pid_);
}

std::string Background::out() const { return read_file(dir_ / "out"); }
std::string Background::err() const { return read_file(dir_ / "err"); }

std::optional<int> Background::status() {
    if (!status_) {
        int st = 0;
        if (waitpid(pid_, &st, WNOHANG) == pid_)
            status_ = decode_status(st);
    }
    return status_;
}

} // namespace it
