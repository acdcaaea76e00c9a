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

// ---- the desired state: ports out of sync (issue #25) -------------------------------------

namespace {

const std::string kRoce = "/org/rdmad1/device/_30c42a103005b30e0";
const std::string kRocePort = kRoce + "/port/1";
const std::string kProfile = "profile lossless-roce (/etc/rdmad/rdmad.conf:2)";

// A ConnectX-5 RoCE port as profile lossless-roce leaves it (rdmad.conf(5): PFC no-drop 3,
// trust dscp, DSCP 26 -> 3 and 48 -> 6, RDMA-CM "RoCE v2" and ToS 106), in sync; the ToS
// from the rule's own line.
Snapshot lossless_host() {
    Snapshot s;
    s.devices[kRoce] = {"mlx5_0", "0000:3b:00.0", {}};
    s.devices[kRoce].origin = {{"pfc_no_drop", kProfile},
                               {"trust", kProfile},
                               {"dscp_priority", kProfile},
                               {"rdma_cm_roce_mode", kProfile},
                               {"rdma_cm_tos", "/etc/rdmad/rdmad.conf:5"}};
    PortSettings& p = s.ports[kRocePort].settings;
    s.ports[kRocePort].device_path = kRoce;
    s.ports[kRocePort].number = 1;
    s.ports[kRocePort].state = "ACTIVE";
    p.link_layer = "Ethernet";
    p.pfc_no_drop = p.desired_pfc_no_drop = {3};
    p.trust = p.desired_trust = "dscp";
    p.dscp_priority = p.desired_dscp_priority = {{26, 3}, {48, 6}};
    p.rdma_cm_roce_mode = p.desired_rdma_cm_roce_mode = "RoCE v2";
    p.rdma_cm_tos = p.desired_rdma_cm_tos = 106;
    return s;
}

PortSettings lossless_port() {
    return lossless_host().ports.at(kRocePort).settings;
}

} // namespace

TEST_CASE("trust and DSCP map leaving the desired state give one notification naming the port, "
          "the settings, their values and where the desired ones came from",
          "[notify]") {
    Tracker t(lossless_host());
    PortSettings s = lossless_port();
    s.trust = "pcp"; // `dcb app flush dev ens1f0np0 dscp-prio`: no DSCP entry left
    s.dscp_priority = {};
    s.in_sync = false;
    t.port_settings(kRocePort, s);
    CHECK(t.dirty());
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].key == kRocePort + "#sync");
    CHECK(ns[0].summary == "mlx5_0 port 1 is out of sync: trust, DSCP map");
    CHECK(ns[0].body == "Port 1 of mlx5_0 (PCI 0000:3b:00.0) is not as desired:\n"
                        "Trust: pcp, desired dscp (" +
                            kProfile + ").\nDSCP map: none, desired 26:3,48:6 (" + kProfile + ").");
    CHECK(ns[0].urgency == 1);
    CHECK(ns[0].category == "device");

    // Back as desired: told under the same key, so it replaces the first.
    t.port_settings(kRocePort, lossless_port());
    const auto back = t.flush();
    REQUIRE(back.size() == 1);
    CHECK(back[0].key == kRocePort + "#sync");
    CHECK(back[0].summary == "mlx5_0 port 1 is in sync again");
    CHECK(back[0].body == "Port 1 of mlx5_0 (PCI 0000:3b:00.0) is as desired again.");
    CHECK(back[0].urgency == 0);
}

TEST_CASE("RDMA-CM defaults forgotten by a re-created device name both values, the ToS from its "
          "rule's line",
          "[notify]") {
    Tracker t(lossless_host());
    PortSettings s = lossless_port();
    s.rdma_cm_roce_mode = "IB/RoCE v1"; // the kernel's default once the device is new
    s.rdma_cm_tos = -1;                 // not readable: no configfs group
    s.in_sync = false;
    t.port_settings(kRocePort, s);
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "mlx5_0 port 1 is out of sync: RDMA-CM RoCE mode, RDMA-CM ToS");
    CHECK(ns[0].body == "Port 1 of mlx5_0 (PCI 0000:3b:00.0) is not as desired:\n"
                        "RDMA-CM RoCE mode: IB/RoCE v1, desired RoCE v2 (" +
                            kProfile +
                            ").\nRDMA-CM ToS: unknown, desired 106 (/etc/rdmad/rdmad.conf:5).");
}

TEST_CASE("a drift rdmad corrects within the window is not told", "[notify]") {
    Tracker t(lossless_host());
    PortSettings s = lossless_port();
    s.dscp_priority = {{26, 3}}; // another tool deleted 48:6 ...
    s.in_sync = false;
    t.port_settings(kRocePort, s);
    t.port_settings(kRocePort, lossless_port()); // ... and rdmad's SET put it back
    CHECK(t.flush().empty());
}

TEST_CASE("a port out of sync is told again only when another setting drifts", "[notify]") {
    Tracker t(lossless_host());
    PortSettings s = lossless_port();
    s.pfc_no_drop = {};
    s.in_sync = false;
    t.port_settings(kRocePort, s);
    REQUIRE(t.flush().size() == 1);
    s.pfc_no_drop = {4}; // still PFC: nothing new
    t.port_settings(kRocePort, s);
    CHECK(t.flush().empty());
    s.trust = "pcp";
    s.dscp_priority = {};
    t.port_settings(kRocePort, s);
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "mlx5_0 port 1 is out of sync: PFC no-drop, trust, DSCP map");
    CHECK(ns[0].body.find("\nPFC no-drop: 4, desired 3 (" + kProfile + ").\n") !=
          std::string::npos);
}

TEST_CASE("out of sync with no setting that differs on the bus says so without a list",
          "[notify]") {
    Tracker t(lossless_host());
    PortSettings s = lossless_port();
    s.dscp_priority = {{10, 1}, {26, 3}, {48, 6}}; // an entry an `exclusive` rule deletes
    s.in_sync = false;
    t.port_settings(kRocePort, s);
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "mlx5_0 port 1 is out of sync");
    CHECK(ns[0].body ==
          "Port 1 of mlx5_0 (PCI 0000:3b:00.0) is not as desired (rdmactl show mlx5_0).");
}

TEST_CASE("more than three ports out of sync at once are one notification", "[notify]") {
    Snapshot start = lossless_host();
    for (int j = 0; j < 4; ++j) {
        start.devices[vf_path(j)] = {"mlx5_" + std::to_string(10 + j), "", {}};
        start.ports[vf_path(j) + "/port/1"] = {vf_path(j), 1, "ACTIVE"};
        start.ports[vf_path(j) + "/port/1"].settings = lossless_port();
    }
    Tracker t(start);
    for (int j = 0; j < 4; ++j) {
        PortSettings s = lossless_port();
        s.trust = "pcp";
        s.in_sync = false;
        t.port_settings(vf_path(j) + "/port/1", s);
    }
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].key.empty());
    CHECK(ns[0].summary == "4 RDMA ports are out of sync");
    CHECK(ns[0].body == "mlx5_10 port 1, mlx5_11 port 1, mlx5_12 port 1, mlx5_13 port 1.\n"
                        "See rdmactl status.");
}

TEST_CASE("drifts() compares as rdmad does", "[notify]") {
    PortSettings s = lossless_port();
    CHECK(drifts(s).empty());
    s.dscp_priority = {{10, 1}, {26, 3}, {48, 6}}; // entries not asked are someone else's
    CHECK(drifts(s).empty());
    s.dscp_priority = {{26, 3}, {26, 4}, {48, 6}}; // 26 with another priority too: rdmad deletes it
    REQUIRE(drifts(s).size() == 1);
    CHECK(drifts(s)[0] == Drift{"dscp_priority", "DSCP map", "26:3,26:4,48:6", "26:3,48:6"});
    s = lossless_port();
    s.trust = ""; // DCB unreadable
    CHECK(drifts(s) == std::vector<Drift>{{"trust", "trust", "unknown", "dscp"}});

    // Port types: "auto (eth)" satisfies "eth" and "auto" (mlx4_port<n>); without a switch
    // the link layer tells.
    PortSettings mlx4;
    mlx4.port_type = "auto (eth)";
    mlx4.desired_port_type = "eth";
    CHECK(drifts(mlx4).empty());
    mlx4.desired_port_type = "auto";
    CHECK(drifts(mlx4).empty());
    mlx4.desired_port_type = "ib";
    CHECK(drifts(mlx4) == std::vector<Drift>{{"port_type", "port type", "auto (eth)", "ib"}});
    PortSettings cx5;
    cx5.link_layer = "Ethernet";
    cx5.desired_port_type = "eth";
    CHECK(drifts(cx5).empty());
    cx5.desired_port_type = "ib";
    CHECK(drifts(cx5) == std::vector<Drift>{{"port_type", "port type", "Ethernet", "ib"}});
}

namespace {

// mlx5_9 as rdmad shows a device whose provider is missing (daemon/inventory/problems.cpp:
// "provider-missing", "verbs provider <p> is not installed: install <package>").
DeviceState provider_missing(const std::string& name, const std::string& package) {
    DeviceState d{name, "0000:09:00.0", {}};
    d.problems = {
        error("provider-missing", "verbs provider mlx5 is not installed: install " + package)};
    d.provider_installed = false;
    d.provider_package = package;
    return d;
}

} // namespace

TEST_CASE("with install_providers \"ask\", a device added without its provider offers to "
          "install its package; \"auto\", \"never\" or an rdmad without the mode do not",
          "[notify]") {
    const std::string dev = "/org/rdmad1/device/_30c42a10300990001";
    for (const auto& [mode, offered] : std::vector<std::pair<std::string, std::string>>{
             {"ask", "ibverbs-providers"}, {"auto", ""}, {"never", ""}, {"", ""}}) {
        Snapshot s = host();
        s.install_providers_mode = mode;
        Tracker t(s);
        t.device_added(dev, provider_missing("mlx5_9", "ibverbs-providers"));
        const auto ns = t.flush();
        REQUIRE(ns.size() == 1);
        CHECK(ns[0].summary == "RDMA device mlx5_9 added");
        CHECK(ns[0].install == offered);
    }
}

TEST_CASE("a provider found missing on a device that stayed offers the install with its "
          "error; other errors, or a rule taking the problem away, offer nothing",
          "[notify]") {
    Snapshot s = host();
    s.install_providers_mode = "ask";
    Tracker t(s);
    // The package was removed: ProviderInstalled and Problems change on mlx5_0.
    t.device_provider(kMlx5, false, "ibverbs-providers");
    t.device_problems(kMlx5, provider_missing("mlx5_0", "ibverbs-providers").problems);
    t.device_problems(kMlx4, {error("port-type-invalid", "port 1 eth needs port 2 eth")});
    auto ns = t.flush();
    REQUIRE(ns.size() == 2);
    CHECK(ns[0].summary == "RDMA error on mlx4_0: port-type-invalid");
    CHECK(ns[0].install == "");
    CHECK(ns[1].key == kMlx5 + "#provider-missing");
    CHECK(ns[1].summary == "RDMA error on mlx5_0: provider-missing");
    CHECK(ns[1].install == "ibverbs-providers");

    // require_provider = false: rdmad drops the problem, ProviderInstalled stays false.
    DeviceState d = provider_missing("mlx5_0", "ibverbs-providers");
    d.problems.clear();
    CHECK(package_to_offer(d, "ask") == "");
    // Installed meanwhile: nothing to offer.
    d = provider_missing("mlx5_0", "ibverbs-providers");
    d.provider_installed = true;
    CHECK(package_to_offer(d, "ask") == "");
    d.provider_installed = false;
    d.provider_package = "";
    CHECK(package_to_offer(d, "ask") == "");
}

TEST_CASE("the mode changing is no news, but decides the next offer", "[notify]") {
    Snapshot s = host();
    s.install_providers_mode = "auto";
    Tracker t(s);
    t.install_providers_mode("ask");
    CHECK_FALSE(t.dirty());
    CHECK(t.flush().empty());
    t.device_added("/org/rdmad1/device/_3x", provider_missing("mlx5_9", "rdma-core"));
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].install == "rdma-core");
}

TEST_CASE("a summed-up notification offers every package once, sorted", "[notify]") {
    Snapshot s = host();
    s.install_providers_mode = "ask";
    Tracker t(s);
    for (int j = 0; j < 4; ++j)
        t.device_added(vf_path(j), provider_missing("mlx5_" + std::to_string(10 + j),
                                                    j % 2 ? "libibverbs" : "ibverbs-providers"));
    t.device_added(vf_path(9), {"mlx5_19", "", {}});
    const auto ns = t.flush();
    REQUIRE(ns.size() == 1);
    CHECK(ns[0].summary == "5 RDMA devices added");
    CHECK(ns[0].install == "ibverbs-providers, libibverbs");
}

TEST_CASE("the outcome of InstallProviders replaces the clicked notification: the packages, "
          "nothing to install, or the D-Bus error",
          "[notify]") {
    const std::string key = kMlx5 + "#provider-missing";
    Notification n = install_outcome(key, {"ibverbs-providers"}, "", "");
    CHECK(n.key == key);
    CHECK(n.summary == "Installing ibverbs-providers");
    CHECK(n.body == "PackageKit is installing ibverbs-providers. The devices' problems show how "
                    "it ends (rdmactl doctor).");
    CHECK(n.install == ""); // no second offer
    n = install_outcome(key, {}, "", "");
    CHECK(n.summary == "No verbs provider to install");
    CHECK(n.urgency == 0);
    n = install_outcome(key, {}, "org.freedesktop.DBus.Error.AccessDenied",
                        "not authorized for org.rdmad1.install-providers");
    CHECK(n.summary == "Cannot install verbs providers");
    CHECK(n.body == "InstallProviders failed: org.freedesktop.DBus.Error.AccessDenied: not "
                    "authorized for org.rdmad1.install-providers");
    CHECK(n.urgency == 2);
    CHECK(n.category == "device.error");
}
