// SPDX-License-Identifier: MIT
//
// rdmad-wait-online against the real rdmad under umockdev on the private bus: ready at once,
// waiting for ports that are DOWN until the uevent that brings one ACTIVE, a timeout naming
// the port and the doctor's reason, no rdmad on the bus, usage errors. Port values are the
// fixtures' (tests/fixtures/hosts/*.expected.json); reason texts the doctor's
// (daemon/doctor/port_state.cpp), as org.rdmad1(5) documents them.
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

namespace {

using namespace it;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Clock = std::chrono::steady_clock;

std::string wait_online() {
    return env_or_fail("RDMAD_WAIT_ONLINE");
}

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// constructed-mlx5-roce: two single-port ConnectX-5 functions, RoCE, both ACTIVE/LinkUp with a
// RoCE v2 GID of an IPv4 address (RecommendedGID index 3).
const std::string kRoce0 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0";
const std::string kRoce1 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.1/infiniband/mlx5_1";

// Sets port 1 of the RDMA device at `syspath` to `state` and `phys` (kernel formats "%d: %s",
// drivers/infiniband/core/sysfs.c) and sends the uevent rdmad re-reads it on.
void set_port(Rig& rig, const std::string& syspath, const std::string& state,
              const std::string& phys) {
    rig.testbed.set_attr(syspath, "ports/1/state", state + "\n");
    rig.testbed.set_attr(syspath, "ports/1/phys_state", phys + "\n");
    rig.testbed.uevent(syspath, "change");
}

std::string port_state(Rig& rig, const std::string& dev) {
    return rig.client->get(rig.device_path(dev) + "/port/1", "org.rdmad1.Port", "State")
        .get<std::string>();
}

bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
    const auto end = Clock::now() + timeout;
    while (Clock::now() < end) {
        if (pred())
            return true;
        std::this_thread::sleep_for(10ms);
    }
    return pred();
}

// Puts both ports of constructed-mlx5-roce DOWN (Disabled) and waits until rdmad says so.
void both_down(Rig& rig) {
    set_port(rig, kRoce0, "1: DOWN", "3: Disabled");
    set_port(rig, kRoce1, "1: DOWN", "3: Disabled");
    REQUIRE(eventually(
        [&] { return port_state(rig, "mlx5_0") == "DOWN" && port_state(rig, "mlx5_1") == "DOWN"; },
        10s));
}

// Starts rdmad-wait-online with `args` and returns once it has read rdmad's objects and
// waits (its "waiting up to" line); REQUIREs it still runs then.
std::unique_ptr<Background> start_waiting(const std::vector<std::string>& args) {
    std::vector<std::string> argv{wait_online()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto w = std::make_unique<Background>(argv);
    REQUIRE(eventually([&] { return w->err().find("waiting up to") != std::string::npos; }, 20s));
    REQUIRE_FALSE(w->status());
    return w;
}

// The seconds from `sent` until rdmad's PropertiesChanged with State "ACTIVE" for
// `port_path` reaches `recorder` (the bare cost of the event), and until `w` exits; REQUIREs
// both within 20 s.
std::pair<double, double> after_event(SignalRecorder& recorder, Background& w,
                                      const std::string& port_path, Clock::time_point sent) {
    std::optional<double> seen, exited;
    const auto end = sent + 20s;
    while ((!seen || !exited) && Clock::now() < end) {
        recorder.pump(5ms);
        for (const Signal& s : recorder.signals())
            if (!seen && s.kind == "changed" && s.path == port_path &&
                s.props.value("State", "") == "ACTIVE")
                seen = seconds_since(sent);
        if (!exited && w.status())
            exited = seconds_since(sent);
    }
    REQUIRE(seen);
    REQUIRE(exited);
    return {*seen, *exited};
}

} // namespace

TEST_CASE("rdmad-wait-online exits 0 at once when the port is usable") {
    // hwloc-cx3-ib: mlx4_0 port 1, InfiniBand, ACTIVE/LinkUp, LID 932, SM LID 1.
    Rig rig("hwloc-cx3-ib");
    const auto start = Clock::now();
    auto r = run_program({wait_online(), "--timeout=60"});
    const double took = seconds_since(start);
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.err == "rdmad-wait-online: ready: mlx4_0 port 1\n");
    CHECK(r.out.empty());
    // At once: one read of rdmad's objects, no wait (60 s was allowed).
    CHECK(took < 5);

    r = run_program({wait_online(), "-q", "-d", "mlx4_0:1", "--transport", "ib"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    r = run_program({wait_online(), "--device=mlx4_0", "--any"});
    CHECK(r.status == 0);
}

TEST_CASE("rdmad-wait-online waits while the ports are DOWN; the uevent bringing one ACTIVE "
          "ends --any within that one event") {
    Rig rig("constructed-mlx5-roce");
    both_down(rig);
    SignalRecorder recorder(*rig.client);
    auto w = start_waiting({"--any", "--timeout=120"});
    CHECK_THAT(w->err(),
               Contains("rdmad-wait-online: not ready: mlx5_0 port 1 is DOWN (Disabled)"));
    CHECK_THAT(w->err(),
               Contains("rdmad-wait-online: not ready: mlx5_1 port 1 is DOWN (Disabled)"));
    // It waits: nothing changes, nothing ends it.
    std::this_thread::sleep_for(1s);
    REQUIRE_FALSE(w->status());

    recorder.pump(0ms);
    recorder.clear();
    const auto sent = Clock::now();
    set_port(rig, kRoce1, "4: ACTIVE", "5: LinkUp");
    const auto [seen, exited] =
        after_event(recorder, *w, rig.device_path("mlx5_1") + "/port/1", sent);
    INFO("rdmad's signal reached the test after " << seen << " s, rdmad-wait-online exited after "
                                                  << exited << " s");
    CHECK(w->status() == 0);
    CHECK_THAT(w->err(), Contains("rdmad-wait-online: ready: mlx5_1 port 1\n"));
    // Within the one event: it exits on the signal rdmad sends for it, not on a timer. The
    // process ends a moment after the signal arrives, far from the 120 s allowed.
    CHECK(exited < seen + 1.0);
    CHECK(exited < 5);
}

TEST_CASE("without --any rdmad-wait-online waits for every selected port, saying which is usable") {
    Rig rig("constructed-mlx5-roce");
    both_down(rig);
    auto w = start_waiting({"--timeout=120"});
    set_port(rig, kRoce1, "4: ACTIVE", "5: LinkUp");
    REQUIRE(eventually(
        [&] {
            return w->err().find("rdmad-wait-online: usable: mlx5_1 port 1\n") != std::string::npos;
        },
        20s));
    CHECK_FALSE(w->status());
    set_port(rig, kRoce0, "4: ACTIVE", "5: LinkUp");
    REQUIRE(eventually([&] { return w->status().has_value(); }, 20s));
    CHECK(w->status() == 0);
    CHECK_THAT(w->err(), Contains("rdmad-wait-online: ready: mlx5_0 port 1, mlx5_1 port 1\n"));
}

TEST_CASE("-d waits for a device rdmad does not have yet; its InterfacesAdded ends the wait") {
    // hwloc-cx3-ib's mlx4_0 (port 1 ACTIVE, LinkUp, LID 932, SM LID 1) goes away, then comes
    // back as its fixture record has it: a hotplug, or its driver loaded late at boot.
    Rig rig("hwloc-cx3-ib");
    const std::string devpath = "/devices/pci0000:80/0000:80:02.2/0000:82:00.0/infiniband/mlx4_0";
    const std::string fixture = read_file(host_file("hwloc-cx3-ib"));
    const auto at = fixture.find("P: " + devpath + "\n");
    REQUIRE(at != std::string::npos);
    const std::string record = fixture.substr(at, fixture.find("\n\n", at) + 2 - at);
    rig.testbed.uevent("/sys" + devpath, "remove");
    rig.testbed.remove("/sys" + devpath);
    REQUIRE(eventually([&] { return rig.client->list_devices().empty(); }, 10s));

    auto w = start_waiting({"-d", "mlx4_0:1", "--timeout=120"});
    CHECK_THAT(w->err(), Contains("rdmad-wait-online: not ready: mlx4_0: rdmad knows no RDMA "
                                  "device of this name\n"));
    rig.testbed.add(record);
    rig.testbed.uevent("/sys" + devpath, "add");
    REQUIRE(eventually([&] { return w->status().has_value(); }, 20s));
    CHECK(w->status() == 0);
    CHECK_THAT(w->err(), Contains("rdmad-wait-online: ready: mlx4_0 port 1\n"));
}

TEST_CASE("rdmad-wait-online reads rdmad again when it restarts, and waits while it is away") {
    Rig rig("constructed-mlx5-roce");
    both_down(rig);
    auto w = start_waiting({"--any", "--timeout=120"});
    rig.stop_daemon();
    // While rdmad is away its ports change without an event anyone sees; nothing is usable.
    rig.testbed.set_attr(kRoce0, "ports/1/state", "4: ACTIVE\n");
    rig.testbed.set_attr(kRoce0, "ports/1/phys_state", "5: LinkUp\n");
    std::this_thread::sleep_for(500ms);
    CHECK_FALSE(w->status());
    // The new rdmad's objects (its NameOwnerChanged, then GetManagedObjects) end the wait.
    rig.daemon = std::make_unique<DaemonProcess>();
    REQUIRE(eventually([&] { return w->status().has_value(); }, 20s));
    CHECK(w->status() == 0);
    CHECK_THAT(w->err(), Contains("rdmad-wait-online: ready: mlx5_0 port 1\n"));
}

TEST_CASE("--timeout 2 on a port without a subnet manager exits 1 naming the port and why") {
    // constructed-doctor: mlx5_0 port 1 is InfiniBand INIT/LinkUp with LID 0 and SM LID 0.
    Rig rig("constructed-doctor");
    const auto start = Clock::now();
    auto r = run_program({wait_online(), "-d", "mlx5_0", "--timeout", "2"});
    const double took = seconds_since(start);
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains("rdmad-wait-online: timed out after 2 s\n"
                               "rdmad-wait-online: not ready: mlx5_0 port 1 is INIT (LinkUp): no "
                               "subnet manager is reachable (SM LID 0)\n"));
    CHECK(took >= 2);
    CHECK(took < 10);

    // It sleeps until the deadline: one poll(2) for the whole wait, no timer waking it in
    // between (sd-bus's own calls at start, Hello, AddMatch and GetManagedObjects, wait in
    // ppoll(2), which is not traced here). Nothing changes on this host meanwhile.
    auto which = run_program({"sh", "-c", "command -v strace"});
    INFO("strace is needed: apt-get install -y strace");
    REQUIRE(which.status == 0);
    TempDir tmp;
    const std::string trace = tmp / "trace";
    r = run_program({"strace", "-qq", "-e",
                     "trace=poll,select,pselect6,epoll_wait,nanosleep,"
                     "clock_nanosleep",
                     "-o", trace, wait_online(), "-d", "mlx5_0", "--timeout=2"});
    CHECK(r.status == 1);
    const std::string calls = read_file(trace);
    INFO(calls);
    CHECK(std::count(calls.begin(), calls.end(), '\n') == 1);
    CHECK(calls.rfind("poll(", 0) == 0);

    // -q: the exit status alone.
    r = run_program({wait_online(), "-q", "-d", "mlx5_0:1", "--timeout=1"});
    CHECK(r.status == 1);
    CHECK(r.err.empty());

    // Its RoCE ports with a GID are usable; the InfiniBand port is not, and neither is
    // mlx5_3's, DOWN (Disabled).
    r = run_program({wait_online(), "--timeout=1"});
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains("rdmad-wait-online: not ready: mlx5_3 port 1 is DOWN (Disabled)"));
    CHECK(r.err.find("not ready: mlx5_1") == std::string::npos);
    CHECK(r.err.find("not ready: mlx5_2") == std::string::npos);
    r = run_program({wait_online(), "--transport=roce", "--any", "--timeout=1"});
    CHECK(r.status == 0);
    CHECK(r.err == "rdmad-wait-online: ready: mlx5_1 port 1, mlx5_2 port 1\n");
}

TEST_CASE("a device or transport rdmad does not have is named when the time is up") {
    Rig rig("hwloc-cx3-ib");
    auto r = run_program({wait_online(), "-d", "mlx9_0", "--timeout=1"});
    CHECK(r.status == 1);
    CHECK_THAT(
        r.err,
        Contains(
            "rdmad-wait-online: not ready: mlx9_0: rdmad knows no RDMA device of this name\n"));
    r = run_program({wait_online(), "--transport=roce", "--timeout=1"});
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains("rdmad-wait-online: not ready: rdmad knows no RoCE port\n"));
    r = run_program({wait_online(), "-d", "mlx4_0:2", "--timeout=1"});
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains("rdmad-wait-online: not ready: mlx4_0 has no port 2\n"));
}

TEST_CASE("without rdmad on the bus rdmad-wait-online exits 2 saying so") {
    PrivateBus bus; // no rdmad, and no activation file for org.rdmad1
    for (const auto& extra : {std::string("--timeout=5"), std::string("-q")}) {
        const auto start = Clock::now();
        auto r = run_program({wait_online(), extra});
        INFO(extra << ": " << r.err);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Contains("rdmad-wait-online: rdmad is not on the system bus "
                                   "(org.freedesktop.DBus.Error.ServiceUnknown"));
        CHECK(seconds_since(start) < 5); // at once, not after the timeout
    }
}

TEST_CASE("an rdmad that owns its name but does not answer is a timeout, not an absence") {
    PrivateBus bus;
    // Owns org.rdmad1 and never reads a message (no event loop): GetManagedObjects gets no
    // reply, as from an rdmad stuck or still being started by the bus.
    auto mute = sdbus::createSystemBusConnection("org.rdmad1");
    const auto start = Clock::now();
    auto r = run_program({wait_online(), "--timeout=2"});
    const double took = seconds_since(start);
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains("rdmad-wait-online: timed out after 2 s\n"
                               "rdmad-wait-online: not ready: rdmad did not answer ("));
    CHECK(took >= 2);
    CHECK(took < 10);
}

TEST_CASE("rdmad-wait-online: a usage error exits 2 with the reason, --help and --version 0") {
    // Usage is checked before the bus is touched: no bus here.
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"--transport=opa"}, "--transport: \"opa\" is not a transport (ib, roce or iwarp)"},
        {{"-d", "mlx5_0:0"}, "-d \"mlx5_0:0\": the port after ':' must be a number from 1"},
        {{"-d", ":1"}, "-d \":1\": give a device name (DEVICE or DEVICE:PORT)"},
        {{"--timeout=-1"}, "--timeout: \"-1\" is not a number of seconds from 0 to 86400"},
        {{"--timeout=86401"}, "--timeout: \"86401\" is not a number of seconds from 0 to 86400"},
        {{"--timeout=2s"}, "--timeout: \"2s\" is not a number of seconds from 0 to 86400"},
        {{"-d"}, "option -d needs an argument"},
        {{"--timeout"}, "option --timeout needs an argument"},
        {{"--bogus"}, "unknown option --bogus"},
        {{"-x"}, "unknown option -x"},
        {{"mlx5_0"}, "unexpected argument \"mlx5_0\""},
    };
    for (const auto& [args, message] : cases) {
        std::vector<std::string> argv{wait_online()};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = run_program(argv);
        INFO(args[0]);
        CHECK(r.status == 2);
        CHECK(r.err == "rdmad-wait-online: " + message +
                           "\nTry 'rdmad-wait-online --help' for more information.\n");
    }
    auto h = run_program({wait_online(), "--help"});
    CHECK(h.status == 0);
    CHECK_THAT(h.out, Contains("Usage: rdmad-wait-online [OPTION]..."));
    auto v = run_program({wait_online(), "--version"});
    CHECK(v.status == 0);
    CHECK(v.out == "rdmad-wait-online " + env_or_fail("RDMAD_VERSION") + "\n");
}
