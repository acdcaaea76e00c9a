// SPDX-License-Identifier: MIT
//
// rdmad-notify's decisions (notify/tracker.hpp, window.hpp, replace_ids.hpp) on plain values:
// signals in, notifications out. Port states as org.rdmad1(5) gives them (the kernel's names,
// drivers/infiniband/core/sysfs.c); object paths as rdmad makes them (org.rdmad1(5), OBJECT
// PATHS).
#include "replace_ids.hpp"
#include "tracker.hpp"
#include "window.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace rdmad::notify;
using namespace std::chrono_literals;

namespace {

const std::string kMlx5 = "/org/rdmad1/device/_30c42a1030012a4f0";
const std::string kMlx5Port = kMlx5 + "/port/1";
const std::string kMlx4 = "/org/rdmad1/device/_30002c903003178f0";
const std::string kMlx4Port1 = kMlx4 + "/port/1";
const std::string kMlx4Port2 = kMlx4 + "/port/2";

// mlx5_0 (one port) and mlx4_0 (two ports), every port ACTIVE, no problems.
Snapshot host() {
    Snapshot s;
    s.devices[kMlx5] = {"mlx5_0", "0000:04:00.0", {}};
    s.devices[kMlx4] = {"mlx4_0", "0000:03:00.0", {}};
    s.ports[kMlx5Port] = {kMlx5, 1, "ACTIVE"};
    s.ports[kMlx4Port1] = {kMlx4, 1, "ACTIVE"};
    s.ports[kMlx4Port2] = {kMlx4, 2, "ACTIVE"};
    return s;
}

// host() with mlx4_0 port 2 DOWN.
Snapshot host_port_down() {
    Snapshot s = host();
    s.ports[kMlx4Port2].state = "DOWN";
    return s;
}

std::string vf_path(int j) {
    return "/org/rdmad1/device/_3vf" + std::to_string(j);
}

std::vector<std::string> summaries(const std::vector<Notification>& ns) {
    std::vector<std::string> out;
    for (const auto& n : ns)
        out.push_back(n.summary);
    return out;
}

Problem error(const std::string& code, const std::string& text, const std::string& remedy = "",
              uint32_t port = 0) {
    return {code, "error", text, remedy, port};
}

} // namespace

TEST_CASE("start-up is quiet: the initial state gives no notification", "[notify]") {
    Snapshot s = host();
    s.ports[kMlx4Port2].state = "DOWN";
    s.devices[kMlx5].problems = {error("provider-missing", "install ibverbs-providers")};
    Tracker t(s);
    CHECK_FALSE(t.dirty());
    CHECK(t.flush().empty());
}

TEST_CASE("a port going down gives one notification naming device, port, PCI and states",
          "[notify]") {
    Tracker t(host());
    t.port_state(kMlx5Port, "DOWN");
    CHECK(t.dirty());
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].key == kMlx5Port);
    CHECK(ns[0].summary == "mlx5_0 port 1 is down");
    CHECK(ns[0].body == "Port 1 of mlx5_0 (PCI 0000:04:00.0) is DOWN, was ACTIVE.");
    CHECK(ns[0].urgency == 2);
    CHECK(ns[0].category == "network.disconnected");
    CHECK_FALSE(t.dirty());
    CHECK(t.flush().empty());
}

TEST_CASE("a port coming up is told under the same key, so it replaces the down one", "[notify]") {
    Tracker t(host());
    t.port_state(kMlx5Port, "DOWN");
    const auto down = t.flush();
    t.port_state(kMlx5Port, "INIT");
    CHECK(t.flush().empty()); // DOWN -> INIT: still not ACTIVE
    t.port_state(kMlx5Port, "ACTIVE");
    const auto up = t.flush();
    REQUIRE(down.size() == 1);
    REQUIRE(up.size() == 1);
    CHECK(up[0].key == down[0].key);
    CHECK(up[0].summary == "mlx5_0 port 1 is up");
    CHECK(up[0].body == "Port 1 of mlx5_0 (PCI 0000:04:00.0) is ACTIVE, was INIT.");
    CHECK(up[0].category == "network.connected");
}

TEST_CASE("a port that goes down and comes back within one window is told as flapped", "[notify]") {
    Tracker t(host());
    t.port_state(kMlx5Port, "DOWN");
    t.port_state(kMlx5Port, "ACTIVE");
    CHECK(t.dirty());
    auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].key == kMlx5Port); // replaces the port's last notification
    CHECK(ns[0].summary == "mlx5_0 port 1 flapped 1 time");
    CHECK(ns[0].body ==
          "Port 1 of mlx5_0 (PCI 0000:04:00.0) went down 1 time and is ACTIVE again.");
    CHECK(ns[0].urgency == 2);
    CHECK(ns[0].category == "network.error");
    // The count starts again with each window.
    CHECK(t.flush().empty());

    // Three times down and up (through INIT, which is not ACTIVE either) in one window.
    for (int k = 0; k < 3; ++k) {
        t.port_state(kMlx5Port, "DOWN");
        t.port_state(kMlx5Port, "INIT");
        t.port_state(kMlx5Port, "ACTIVE");
    }
    ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "mlx5_0 port 1 flapped 3 times");
}

TEST_CASE("a down port that came up briefly within one window is told as flapped", "[notify]") {
    Tracker t(host_port_down());
    t.port_state(kMlx4Port2, "ACTIVE");
    t.port_state(kMlx4Port2, "DOWN");
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "mlx4_0 port 2 flapped 1 time");
    CHECK(ns[0].body == "Port 2 of mlx4_0 (PCI 0000:03:00.0) came up 1 time and is DOWN again.");
}

TEST_CASE("a state change that stays on one side of ACTIVE is no flap", "[notify]") {
    Tracker t(host_port_down());
    t.port_state(kMlx4Port2, "INIT");
    t.port_state(kMlx4Port2, "DOWN");
    t.port_state(kMlx5Port, "ACTIVE_DEFER");
    t.port_state(kMlx5Port, "ACTIVE");
    CHECK(t.flush().empty());
}

TEST_CASE("more than three flapping ports are summed up", "[notify]") {
    Snapshot s;
    for (int j = 0; j < 4; ++j) {
        s.devices[vf_path(j)] = {"mlx5_" + std::to_string(10 + j), "", {}};
        s.ports[vf_path(j) + "/port/1"] = {vf_path(j), 1, "ACTIVE"};
    }
    Tracker t(s);
    for (int j = 0; j < 4; ++j) {
        t.port_state(vf_path(j) + "/port/1", "DOWN");
        t.port_state(vf_path(j) + "/port/1", "ACTIVE");
    }
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].key.empty());
    CHECK(ns[0].summary == "4 RDMA ports flapped");
    CHECK(ns[0].body == "mlx5_10 port 1, mlx5_11 port 1, mlx5_12 port 1, mlx5_13 port 1.");
}

TEST_CASE("ACTIVE_DEFER counts as up; an unreadable state as down", "[notify]") {
    Tracker t(host());
    t.port_state(kMlx5Port, "ACTIVE_DEFER");
    CHECK(t.flush().empty());
    t.port_state(kMlx5Port, "");
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].body == "Port 1 of mlx5_0 (PCI 0000:04:00.0) is unreadable, was ACTIVE_DEFER.");
}

TEST_CASE("up to three port changes in a window are told one by one, more summed up", "[notify]") {
    Tracker t(host());
    t.port_state(kMlx4Port1, "DOWN");
    t.port_state(kMlx4Port2, "DOWN");
    t.port_state(kMlx5Port, "DOWN");
    CHECK(summaries(t.flush()) == std::vector<std::string>{"mlx4_0 port 1 is down",
                                                           "mlx4_0 port 2 is down",
                                                           "mlx5_0 port 1 is down"});

    Snapshot s;
    for (int j = 0; j < 8; ++j) {
        s.devices[vf_path(j)] = {"mlx5_" + std::to_string(10 + j), "", {}};
        s.ports[vf_path(j) + "/port/1"] = {vf_path(j), 1, "ACTIVE"};
    }
    Tracker many(s);
    for (int j = 0; j < 8; ++j)
        many.port_state(vf_path(j) + "/port/1", "DOWN");
    const auto ns = many.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].key.empty());
    CHECK(ns[0].summary == "8 RDMA ports are down");
    CHECK(ns[0].body == "mlx5_10 port 1, mlx5_11 port 1, mlx5_12 port 1, mlx5_13 port 1, "
                        "mlx5_14 port 1 and 3 more.");
}

TEST_CASE("a burst of 100 devices added is one notification", "[notify]") {
    Tracker t(host());
    for (int j = 0; j < 100; ++j) {
        t.device_added(vf_path(j), {"mlx5_" + std::to_string(1000 + j), "", {}});
        t.port_added(vf_path(j) + "/port/1", {vf_path(j), 1, "ACTIVE"});
    }
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "100 RDMA devices added");
    CHECK(ns[0].body == "mlx5_1000, mlx5_1001, mlx5_1002, mlx5_1003, mlx5_1004 and 95 more.");
    CHECK(ns[0].category == "device.added");
    CHECK(ns[0].key.empty());
}

TEST_CASE("one device added names it, its PCI address, ports and errors", "[notify]") {
    Tracker t(host());
    const std::string dev = "/org/rdmad1/device/_30c42a10300990001";
    t.device_added(dev, {"mlx5_9",
                         "0000:09:00.0",
                         {error("provider-missing", "the mlx5 provider is not installed"),
                          {"no-verbs-device", "warning", "load ib_uverbs", "", 0}}});
    t.port_added(dev + "/port/1", {dev, 1, "DOWN"}); // a new port is no port change
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].key == dev);
    CHECK(ns[0].summary == "RDMA device mlx5_9 added");
    CHECK(ns[0].body ==
          "mlx5_9 (PCI 0000:09:00.0), 1 port.\nError: the mlx5 provider is not installed");
    CHECK(ns[0].urgency == 2);
}

TEST_CASE("devices removed: one by name, many summed up; their ports are not told", "[notify]") {
    Tracker t(host());
    t.object_removed(kMlx5Port);
    t.object_removed(kMlx5);
    auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "RDMA device mlx5_0 removed");
    CHECK(ns[0].body == "mlx5_0 (PCI 0000:04:00.0) is gone.");
    CHECK(ns[0].category == "device.removed");

    Tracker both(host());
    both.object_removed(kMlx5); // the device alone takes its ports along
    both.object_removed(kMlx4);
    CHECK(both.state().ports.empty());
    ns = both.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "2 RDMA devices removed");
    CHECK(ns[0].body == "mlx4_0, mlx5_0");
}

TEST_CASE("a device removed and added back within one window gives nothing", "[notify]") {
    Tracker t(host());
    t.object_removed(kMlx5);
    t.device_added(kMlx5, {"mlx5_0", "0000:04:00.0", {}});
    t.port_added(kMlx5Port, {kMlx5, 1, "ACTIVE"});
    CHECK(t.flush().empty());
}

TEST_CASE("a new error-level problem is told once, with its remedy; warnings are not", "[notify]") {
    Tracker t(host());
    // ProblemDetails first (with the remedy), then Problems (the same entry without it).
    t.device_problems(kMlx4, {error("port-type-invalid", "port 1 eth needs port 2 eth",
                                    "rdmactl set-port-type mlx4_0 2 eth", 2),
                              {"port-not-active", "warning", "no link partner", "", 1},
                              {"pcie-unknown", "info", "cannot read the link", "", 0}});
    t.device_problems(kMlx4, {error("port-type-invalid", "port 1 eth needs port 2 eth"),
                              {"port-not-active", "warning", "no link partner", "", 0}});
    auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].key == kMlx4 + "#port-type-invalid");
    CHECK(ns[0].summary == "RDMA error on mlx4_0 port 2: port-type-invalid");
    CHECK(ns[0].body == "port 1 eth needs port 2 eth\nRemedy: rdmactl set-port-type mlx4_0 2 eth");
    CHECK(ns[0].urgency == 2);
    CHECK(ns[0].category == "device.error");

    // Still there: no news. Gone and back: news again.
    t.device_problems(kMlx4, {error("port-type-invalid", "port 1 eth needs port 2 eth")});
    CHECK(t.flush().empty());
    t.device_problems(kMlx4, {});
    CHECK(t.flush().empty());
    t.device_problems(kMlx4, {error("port-type-invalid", "port 1 eth needs port 2 eth")});
    CHECK(t.flush().size() == 1);
}

TEST_CASE("rdmad's own errors are told as rdmad's", "[notify]") {
    Tracker t(host());
    t.manager_problems({error("config-error", "/etc/rdmad/rdmad.conf:3:1: unknown key 'speed'"),
                        {"legacy-config", "warning", "skipped line", "", 0}});
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "RDMA error on rdmad: config-error");
    CHECK(ns[0].body == "/etc/rdmad/rdmad.conf:3:1: unknown key 'speed'");
}

TEST_CASE("many new errors in one window are one notification", "[notify]") {
    Tracker t(host());
    t.device_problems(kMlx5, {error("a", "1"), error("b", "2")});
    t.device_problems(kMlx4, {error("c", "3"), error("d", "4")});
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "4 new RDMA errors");
    CHECK(ns[0].body == "mlx4_0: c, mlx4_0: d, mlx5_0: a, mlx5_0: b.\nSee rdmactl doctor.");
}

TEST_CASE("a rename is no news, but later notifications use the new name", "[notify]") {
    Tracker t(host());
    t.device_name(kMlx5, "rocep4s0f0");
    CHECK(t.flush().empty());
    t.port_state(kMlx5Port, "DOWN");
    CHECK(summaries(t.flush()) == std::vector<std::string>{"rocep4s0f0 port 1 is down"});
}

TEST_CASE("signals about unknown objects and unchanged values change nothing", "[notify]") {
    Tracker t(host());
    t.port_state("/org/rdmad1/device/_3ff/port/1", "DOWN");
    t.port_state(kMlx5Port, "ACTIVE");
    t.device_problems("/org/rdmad1/device/_3ff", {error("x", "y")});
    t.object_removed("/org/rdmad1/link/_31001");
    CHECK_FALSE(t.dirty());
}

TEST_CASE("after an rdmad restart only what differs is told, the restart itself is not",
          "[notify]") {
    Tracker t(host());
    t.resync(host());
    CHECK_FALSE(t.dirty());
    CHECK(t.flush().empty());

    Snapshot after = host();
    after.ports[kMlx4Port2].state = "DOWN";
    t.resync(after);
    CHECK(summaries(t.flush()) == std::vector<std::string>{"mlx4_0 port 2 is down"});
}

TEST_CASE("the window flushes once signals stop for the quiet time, or at the longest",
          "[notify]") {
    Window w(1000ms, 5000ms);
    const Window::TimePoint t0{};
    CHECK_FALSE(w.deadline());
    CHECK_FALSE(w.due(t0));
    w.event(t0);
    CHECK(*w.deadline() == t0 + 1000ms);
    w.event(t0 + 600ms); // a burst keeps the window open
    CHECK_FALSE(w.due(t0 + 1000ms));
    CHECK(w.due(t0 + 1600ms));
    CHECK_FALSE(w.deadline()); // closed until the next event

    // A steady trickle (one signal every 500 ms) is told 5 s after its first signal.
    w.event(t0 + 10s);
    for (int i = 1; i <= 20; ++i)
        w.event(t0 + 10s + i * 500ms);
    CHECK(*w.deadline() == t0 + 15s);
    CHECK(w.due(t0 + 15s));
}

TEST_CASE("replaces_id: 0 for new keys and for key \"\", the server's id after", "[notify]") {
    ReplaceIds ids;
    CHECK(ids.replaces(kMlx5Port) == 0);
    ids.posted(kMlx5Port, 7);
    ids.posted("", 8);
    CHECK(ids.replaces(kMlx5Port) == 7);
    CHECK(ids.replaces("") == 0);
    ids.posted(kMlx5Port, 9); // a server may give a new id on replace
    CHECK(ids.replaces(kMlx5Port) == 9);
    ids.closed(9);
    CHECK(ids.replaces(kMlx5Port) == 0);
}
