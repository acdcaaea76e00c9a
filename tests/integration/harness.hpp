// SPDX-License-Identifier: MIT
//
// Integration harness: a private system-like dbus-daemon, a umockdev testbed loaded from a
// fixture host, the real rdmad spawned under the preload, and helpers to read it over D-Bus.
#pragma once

#include "kill_cleanup.hpp"

#include <nlohmann/json.hpp>
#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

typedef struct _UMockdevTestbed UMockdevTestbed;

namespace it {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Environment the meson test sets (REQUIREs it is present, except RDMACTL which may be empty).
std::string env_or_fail(const char* name);
std::string env_or_empty(const char* name);
std::string fixtures_dir();
std::string host_file(const std::string& host);          // <FIXTURES>/<host>.umockdev
std::string expected_file(const std::string& host);      // <FIXTURES>/<host>.expected.json

// What is undone when the test process ends before the forget_* call (meson's timeout,
// Ctrl-C, a crash): ../kill_cleanup.hpp.
using kill_cleanup::forget_child;
using kill_cleanup::forget_when_killed;
using kill_cleanup::kill_when_killed;
using kill_cleanup::remove_when_killed;

// LD_PRELOAD's value with `library` (a path) ahead of this process's own preloads (umockdev's).
// A path that ld.so would split (a space or colon in it) is replaced by a plain symlink.
std::string preload_ahead(const std::string& library);
// The same with several libraries, in the order given, all ahead of this process's own.
std::string preload_ahead(const std::vector<std::string>& libraries);

// A private temp directory under TMPDIR, removed on destruction and when the test is killed.
class TempDir {
public:
    explicit TempDir(const std::string& tag = "rdmad-it");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return path_; }
    fs::path operator/(const std::string& s) const { return path_ / s; }

private:
    fs::path path_;
};

void write_file(const fs::path& p, const std::string& content);
std::string read_file(const fs::path& p);

// Daemon logs of the running test case; printed by the listener in main.cpp when it fails.
void record_log(const std::string& title, const std::string& text);

// dbus-daemon with a system-like permissive config; exports DBUS_SYSTEM_BUS_ADDRESS.
class PrivateBus {
public:
    PrivateBus();
    ~PrivateBus();
    PrivateBus(const PrivateBus&) = delete;
    PrivateBus& operator=(const PrivateBus&) = delete;
    const std::string& address() const { return address_; }

private:
    TempDir dir_{"rdmad-it-bus"};
    pid_t pid_ = -1;
    std::string address_;
};

// umockdev testbed with one host loaded (sets UMOCKDEV_DIR in this process).
class Testbed {
public:
    explicit Testbed(const std::string& host);
    ~Testbed();
    Testbed(const Testbed&) = delete;
    Testbed& operator=(const Testbed&) = delete;
    std::string root() const;
    UMockdevTestbed* raw() const { return tb_; }

    // Hotplug helpers (REQUIRE success). `syspath` is "/sys/devices/...".
    void add(const std::string& umockdev_text);   // umockdev_testbed_add_from_string
    void set_attr(const std::string& syspath, const std::string& name, const std::string& value);
    void set_link(const std::string& syspath, const std::string& name, const std::string& target);
    void uevent(const std::string& syspath, const std::string& action); // umockdev's sender
    void remove(const std::string& syspath);      // umockdev_testbed_remove_device (no event)

private:
    UMockdevTestbed* tb_ = nullptr;
};

// rdma_cm's configfs in a testbed, as the kernel shows it (rdma_cm_model.h; rdmad's mkdir of a
// group is answered by the fake_configfs.c preload, $FAKE_CONFIGFS).
// <root>/sys/kernel/config/rdma_cm: configfs mounted, the rdma_cm module loaded.
void load_rdma_cm(const Testbed& testbed);
// What `mkdir <configfs>/rdma_cm/<device>` by another process (rdma-core's cma_roce_mode)
// leaves: the group and its port files with the device's values (REQUIREs the device exists).
void make_rdma_cm_group(const Testbed& testbed, const std::string& device,
                        bool before_4_11 = false);
// cma_add_one() for an RDMA device (re-)created under `device`'s name: a group an admin made
// for an earlier device of that name stays (configfs keeps it) and now shows the new device's
// values, "RoCE v2" where the port supports it and ToS 0 (`before_4_11`: no ToS file, and
// "IB/RoCE v1"). Nothing when there is no group. Call it before the device's add uevent.
// With `make`, the group is made when absent (make_rdma_cm_group()).
void rdma_cm_device_added(const Testbed& testbed, const std::string& device,
                          bool before_4_11 = false, bool make = false);

// A uevent written the way umockdev 0.17.16 writes it (src/uevent_sender.c: libudev netlink
// header, ACTION/DEVPATH/SUBSYSTEM/SEQNUM) to every listener socket <root>/event<N>, plus the
// `extra` properties, which umockdev_testbed_uevent() cannot send: its message carries only
// those four keys (and DEVTYPE), never the device's uevent file, so umockdev_testbed_set_property
// does not reach the receiver. Used for `move` (DEVPATH_OLD). Where umockdev aborts on EAGAIN
// (a listener's queue of net.unix.max_dgram_qlen datagrams is full), this one waits for room:
// bursts of any size can be sent. `syspath` need not exist (a remove after the fact).
void send_uevent(const std::string& testbed_root, const std::string& syspath,
                 const std::string& subsystem, const std::string& action,
                 const std::vector<std::pair<std::string, std::string>>& extra = {});
// Number of listener sockets (<root>/event<N>) in the testbed.
size_t uevent_listeners(const std::string& testbed_root);

struct DaemonOptions {
    std::vector<std::string> args;       // extra rdmad options
    std::vector<std::string> wrapper;    // e.g. {"strace", "-f", ...}; prepended to rdmad
};

// rdmad spawned with posix_spawn; waits for READY=1 on a NOTIFY_SOCKET.
class DaemonProcess {
public:
    // `while_starting` is called every millisecond or so until READY=1 (to race the first scan).
    // `env` adds to or overrides its environment (e.g. CONFIGURATION_DIRECTORY, STATE_DIRECTORY).
    explicit DaemonProcess(DaemonOptions opts = {}, std::function<void()> while_starting = {},
                           std::map<std::string, std::string> env = {});
    ~DaemonProcess();
    DaemonProcess(const DaemonProcess&) = delete;
    DaemonProcess& operator=(const DaemonProcess&) = delete;
    // SIGTERM, wait; returns the exit status (128+signal when killed, -1 when it had to be
    // SIGKILLed). Idempotent.
    int stop();
    std::string log() const;
    pid_t pid() const { return pid_; }
    void signal(int sig);   // REQUIREs the daemon is running

private:
    TempDir dir_{"rdmad-it-daemon"};
    pid_t pid_ = -1;
    int notify_fd_ = -1;
    std::optional<int> status_;
    bool log_recorded_ = false;
    bool wrapped_ = false;
    void record();
};

// Synchronous client on the private bus.
class Client {
public:
    Client();
    sdbus::IProxy& manager() { return *manager_; }
    std::unique_ptr<sdbus::IProxy> proxy(const std::string& path);
    json describe();
    std::vector<std::pair<std::string, std::string>> list_devices();
    std::string device_by_name(const std::string& name);
    std::string link_by_name(const std::string& name);
    sdbus::Variant get(const std::string& path, const std::string& iface, const std::string& prop);
    sdbus::IConnection& connection() { return *conn_; }

private:
    std::unique_ptr<sdbus::IConnection> conn_;
    std::unique_ptr<sdbus::IProxy> manager_;
};

// Everything for one host: bus, testbed, daemon, client, and the Describe() result.
struct Rig {
    explicit Rig(const std::string& host, DaemonOptions opts = {});
    PrivateBus bus;
    Testbed testbed;
    std::unique_ptr<DaemonProcess> daemon;
    std::unique_ptr<Client> client;
    json described;

    const json& device(const std::string& name) const;   // REQUIREs it exists
    const json& port(const std::string& dev, unsigned n) const;
    const json& link(const std::string& name) const;
    std::string device_path(const std::string& name) const;
    std::string link_path(const std::string& name) const;
    // Stop the daemon and REQUIRE exit status 0.
    void stop_daemon();
};

// Any D-Bus value as JSON (strings, paths, numbers, arrays, structs as arrays, dicts).
json variant_json(const sdbus::Variant& v);

// One signal of rdmad's object tree as the recorder saw it.
struct Signal {
    std::string kind;   // "added" (InterfacesAdded), "removed", "changed" (PropertiesChanged)
    std::string path;   // the object's path
    std::string iface;  // org.rdmad1.* interface(s), comma-joined for added/removed
    json props;         // changed: {name: new value}; added: the org.rdmad1 interface's properties
    std::vector<std::string> invalidated;
    // "added <path> <iface>", "removed <path> <iface>", "changed <path> <iface> A,B" (names
    // sorted; invalidated ones as !name).
    std::string summary() const;
};

// Subscribes on the client's own connection to InterfacesAdded/InterfacesRemoved at
// /org/rdmad1 and PropertiesChanged at and below it, and records them in arrival order.
// The match rules live as long as the connection (floating): the Rig may drop its client
// (stop_daemon) before the recorder goes; signals are only dispatched by pump().
class SignalRecorder {
public:
    explicit SignalRecorder(Client& client);
    // Dispatch what is queued, waiting up to `max_wait` for the socket.
    void pump(std::chrono::milliseconds max_wait);
    // Pump until pred() holds; false on timeout.
    bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout);
    // Whether a PropertiesChanged of `path` naming `property` is among the signals from `from`.
    bool changed_since(size_t from, const std::string& path, const std::string& property) const;
    // Pump for `period`; true when no signal arrived meanwhile.
    bool quiet(std::chrono::milliseconds period);
    const std::vector<Signal>& signals() const { return signals_; }
    size_t size() const { return signals_.size(); }
    std::vector<std::string> summaries(size_t from = 0) const;
    std::string dump(size_t from = 0) const;
    void clear() { signals_.clear(); }

private:
    sdbus::IConnection& conn_;
    std::vector<Signal> signals_;
};

// Problems codes of a device object in Describe().
std::vector<std::string> problem_codes(const json& device);

// Run a program (no preload) and capture stdout, stderr and the exit code.
struct RunResult {
    int status = -1;
    std::string out;
    std::string err;
};
RunResult run_program(const std::vector<std::string>& argv, bool keep_preload = false);

// A program (no preload) running in the background, its stdout and stderr going to files;
// SIGKILLed and reaped on destruction (and when the test is killed) unless it has ended.
class Background {
public:
    explicit Background(const std::vector<std::string>& argv);
    ~Background();
    Background(const Background&) = delete;
    Background& operator=(const Background&) = delete;
    std::string out() const; // what it wrote so far
    std::string err() const;
    // Its exit status (128+signal when killed) once it has ended, nullopt while it runs.
    std::optional<int> status();

private:
    TempDir dir_{"rdmad-it-bg"};
    pid_t pid_ = -1;
    std::optional<int> status_;
};

} // namespace it
