// SPDX-License-Identifier: MIT
//
// org.rdmad1.Manager: errors, Version, State, object path stability across restarts.
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <thread>

using namespace it;

namespace {
/// The name and message of the D-Bus error `call` throws ("<no error>" twice when none).
std::pair<std::string, std::string> error_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const sdbus::Error& e) {
        return {e.getName(), e.getMessage()};
    }
    return {"<no error>", "<no error>"};
}

std::string error_name_of(const std::function<void()>& call) {
    return error_of(call).first;
}

std::string error_message_of(const std::function<void()>& call) {
    return error_of(call).second;
}

std::set<std::string> all_paths(const json& d) {
    std::set<std::string> out;
    for (auto& dev : d["Devices"]) {
        out.insert(dev["Name"].get<std::string>() + "=" + dev["Path"].get<std::string>());
        for (auto& p : dev["Ports"])
            out.insert(dev["Name"].get<std::string>() + "/" + std::to_string(p["Number"].get<unsigned>()) +
                       "=" + p["Path"].get<std::string>());
    }
    for (auto& l : d["Links"])
        out.insert("link " + l["Name"].get<std::string>() + "=" + l["Path"].get<std::string>());
    return out;
}
} // namespace

TEST_CASE("Manager: errors, Version and State", "[manager]") {
    Rig rig("procfs-hfi1-mlx4-mlx5");
    auto& c = *rig.client;
    CHECK(error_name_of([&] { c.device_by_name("nope"); }) == "org.rdmad1.Error.NoSuchObject");
    CHECK(error_name_of([&] { c.device_by_name(""); }) == "org.rdmad1.Error.InvalidArgument");
    CHECK(error_name_of([&] { c.device_by_name(std::string(65, 'x')); }) ==
          "org.rdmad1.Error.InvalidArgument");
    CHECK(error_name_of([&] { c.link_by_name("nope0"); }) == "org.rdmad1.Error.NoSuchObject");
    CHECK(error_name_of([&] { c.link_by_name(""); }) == "org.rdmad1.Error.InvalidArgument");
    CHECK(error_name_of([&] { c.link_by_name(std::string(16, 'x')); }) ==
          "org.rdmad1.Error.InvalidArgument");
    CHECK(c.device_by_name("mlx5_0") == rig.device_path("mlx5_0"));
    // A name the caller gave comes back on one line (org.rdmad1(5): control characters in
    // names read "?", tab and newline included).
    CHECK(error_message_of([&] { c.device_by_name("mlx4_0\n"); }) == "no RDMA device named mlx4_0?");
    CHECK(error_message_of([&] { c.link_by_name("eth\t0"); }) == "no netdev named eth?0");

    const std::string version = env_or_fail("RDMAD_VERSION");
    CHECK(c.get("/org/rdmad1", "org.rdmad1.Manager", "Version").get<std::string>() == version);
    CHECK(rig.described["Version"] == version);
    CHECK(c.get("/org/rdmad1", "org.rdmad1.Manager", "State").get<std::string>() == "running");
    CHECK(rig.described["State"] == "running");
    rig.stop_daemon();
}

TEST_CASE("object paths are stable across a daemon restart", "[manager]") {
    Rig rig("constructed-renamed");
    const auto first = all_paths(rig.described);
    REQUIRE(first.size() > 3);
    rig.stop_daemon();
    rig.daemon = std::make_unique<DaemonProcess>();
    rig.client = std::make_unique<Client>();
    const auto second = all_paths(rig.client->describe());
    CHECK(first == second);
    rig.stop_daemon();
}

TEST_CASE("rdmad answers after more passes than its notify socket holds, when nobody reads it",
          "[manager]") {
    // DaemonProcess reads NOTIFY_SOCKET only until READY=1, like a systemd too busy to read.
    // Every Reload is a pass and a STATUS= message; a blocking sd_notify() stopped the loop
    // once net.unix.max_dgram_qlen of them were queued (4096 here in CI, 10 by default).
    const int qlen = std::stoi(read_file("/proc/sys/net/unix/max_dgram_qlen"));
    Rig rig("procfs-hfi1-mlx4-mlx5");
    auto& m = rig.client->manager();
    for (int i = 0; i < qlen + 20; ++i) {
        INFO("Reload " << i + 1 << " of " << qlen + 20);
        m.callMethod("Reload").onInterface("org.rdmad1.Manager").withTimeout(5'000'000);
    }
    CHECK(rig.client->list_devices().size() == 3); // mlx4_0, mlx5_0, hfi1_0 (the fixture)
    rig.stop_daemon();
}

TEST_CASE("the watchdog ping never stops rdmad when nobody reads its notify socket", "[manager]") {
    // WATCHDOG=1 every 10 ms (half of WATCHDOG_USEC, sd_watchdog_enabled(3)) into a notify
    // socket that holds 10 datagrams: the socket takes its queue length from
    // net.unix.max_dgram_qlen when it is created, so it is lowered only for that moment (in
    // this file's own network namespace: private-netns.sh).
    // libsystemd's own watchdog ping (sd_event_set_watchdog) would block once 10 were queued.
    const fs::path qlen_file = "/proc/sys/net/unix/max_dgram_qlen";
    const std::string qlen = read_file(qlen_file);
    Rig rig("procfs-hfi1-mlx4-mlx5");
    rig.stop_daemon();
    rig.client.reset();
    write_file(qlen_file, "10\n");
    try {
        rig.daemon = std::make_unique<DaemonProcess>(
            DaemonOptions{}, std::function<void()>{},
            std::map<std::string, std::string>{{"WATCHDOG_USEC", "20000"}});
    } catch (...) {
        write_file(qlen_file, qlen);
        throw;
    }
    write_file(qlen_file, qlen);
    rig.client = std::make_unique<Client>();
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // 50 pings: the queue is full
    for (int i = 0; i < 3; ++i) {
        CHECK(rig.client->list_devices().size() == 3); // mlx4_0, mlx5_0, hfi1_0 (the fixture)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    rig.stop_daemon();
}
