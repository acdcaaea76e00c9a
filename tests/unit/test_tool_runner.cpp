// SPDX-License-Identifier: MIT
//
// ToolRunner (daemon/util/tool_runner.hpp): outside tools run as children the sd-event loop
// watches, at most N at a time, killed at their time limit, without holding the loop (issue
// #26: a hanging mstconfig held rdmad's loop for 10 s per function).
#include "util/tool_runner.hpp"

#include "reconcile/mstconfig_jobs.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <systemd/sd-event.h>
#include <thread>
#include <vector>

using namespace rdmad;
using namespace std::chrono_literals;

namespace {

struct Loop {
    sd_event* event = nullptr;
    Loop() {
        // sd_event_add_child(3): SIGCHLD blocked, as the daemon has it.
        sigset_t chld;
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        pthread_sigmask(SIG_BLOCK, &chld, nullptr);
        REQUIRE(sd_event_new(&event) >= 0);
    }
    ~Loop() { sd_event_unref(event); }
    template <typename F> bool run_until(F done, std::chrono::seconds limit = 10s) {
        const auto until = std::chrono::steady_clock::now() + limit;
        while (!done() && std::chrono::steady_clock::now() < until)
            sd_event_run(event, 100'000);
        return done();
    }
};

} // namespace

TEST_CASE("tool runner: at most N run at once, the rest in order; each answer is its own",
          "[tool]") {
    Loop loop;
    ToolRunner runner(loop.event, 2);
    std::vector<std::string> outs;
    for (int i = 0; i < 5; ++i)
        runner.run({"/bin/sh", "-c", "sleep 0.2; echo " + std::to_string(i)}, 5s,
                   [&](ToolRun r) {
                       CHECK(r.exit_status == 0);
                       outs.push_back(r.out);
                   });
    CHECK(runner.running() == 2);
    CHECK(runner.waiting() == 3);
    CHECK(outs.empty()); // answers come from the loop
    size_t most = 0;
    REQUIRE(loop.run_until([&] {
        most = std::max(most, runner.running());
        return outs.size() == 5;
    }));
    CHECK(most == 2);
    // Started in order, two at a time, all sleeping as long: 0 and 1 end before 4.
    CHECK(outs.back() == "4\n");
    CHECK(runner.running() == 0);
}

TEST_CASE("tool runner: a hanging tool is killed at its limit, its group with it, while the "
          "loop runs other sources",
          "[tool]") {
    Loop loop;
    ToolRunner runner(loop.event, 4);
    std::optional<ToolRun> hung;
    const auto start = std::chrono::steady_clock::now();
    runner.run({"/bin/sh", "-c", "sleep 30 & sleep 30"}, 500ms, [&](ToolRun r) { hung = r; });
    // A 50 ms timer of the same loop keeps firing while the tool hangs.
    int ticks = 0;
    sd_event_source* tick = nullptr;
    REQUIRE(sd_event_add_time_relative(
                loop.event, &tick, CLOCK_MONOTONIC, 50'000, 1000,
                [](sd_event_source* s, uint64_t, void* userdata) {
                    ++*static_cast<int*>(userdata);
                    return sd_event_source_set_time_relative(s, 50'000) < 0
                               ? -1
                               : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                },
                &ticks) >= 0);
    REQUIRE(loop.run_until([&] { return hung.has_value(); }));
    sd_event_source_disable_unref(tick);
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(hung->timed_out);
    CHECK(hung->exit_status == -1);
    CHECK(took >= 500ms);
    CHECK(took < 5s);
    CHECK(ticks >= 5); // 500 ms of 50 ms ticks, give or take a loaded machine
}

TEST_CASE("tool runner: a missing tool is ENOENT from the loop; a tool that exits leaving a "
          "process on its stdout answers at once",
          "[tool]") {
    Loop loop;
    ToolRunner runner(loop.event, 4);
    std::optional<ToolRun> missing;
    runner.run({"/nonexistent/mstconfig", "-d", "x", "query"}, 5s,
               [&](ToolRun r) { missing = r; });
    CHECK_FALSE(missing.has_value());
    REQUIRE(loop.run_until([&] { return missing.has_value(); }));
    CHECK(missing->spawn_error == ENOENT);

    for (const char* script : {"echo 'LINK_TYPE_P1 ETH(2)'; echo e >&2; (sleep 30 &); exit 0",
                               "echo 'LINK_TYPE_P1 ETH(2)'; echo e >&2; setsid sleep 3 & exit 0"}) {
        std::optional<ToolRun> left;
        const auto begin = std::chrono::steady_clock::now();
        runner.run({"/bin/sh", "-c", script}, 20s, [&](ToolRun r) { left = r; });
        REQUIRE(loop.run_until([&] { return left.has_value(); }));
        CHECK(std::chrono::steady_clock::now() - begin < 2s);
        CHECK_FALSE(left->timed_out);
        CHECK(left->exit_status == 0);
        CHECK(left->out == "LINK_TYPE_P1 ETH(2)\n");
        CHECK(left->err == "e\n");
    }
}

TEST_CASE("tool runner: a tool that exits leaving a child in a session of its own flooding its "
          "stdout answers at once, and the loop goes on",
          "[tool]") {
    // The escaped children (setsid: out of the group the runner kills) write without end into
    // the pipe the tool's stdout was, three at once: the read of what is left in the pipes
    // after the tool's exit must still end, and the pipe's close ends them (SIGPIPE).
    Loop loop;
    ToolRunner runner(loop.event, 4, 4096);
    std::optional<ToolRun> left;
    const auto begin = std::chrono::steady_clock::now();
    runner.run({"/bin/sh", "-c",
                "echo 'LINK_TYPE_P1 ETH(2)'; "
                "setsid sh -c 'cat /dev/zero & cat /dev/zero & exec cat /dev/zero' & "
                "sleep 0.3; exit 0"},
               20s, [&](ToolRun r) { left = r; });
    REQUIRE(loop.run_until([&] { return left.has_value(); }));
    CHECK(std::chrono::steady_clock::now() - begin < 3s);
    CHECK_FALSE(left->timed_out);
    CHECK(left->exit_status == 0);
    CHECK(left->out.rfind("LINK_TYPE_P1 ETH(2)\n", 0) == 0);
    CHECK(left->out.size() <= 4096);
}

TEST_CASE("mstconfig jobs: queries a Reload made stale are not started when their turn comes; "
          "the newest one runs next",
          "[tool]") {
    // Five Reloads while a function's query runs (a slow or hanging tool): each asks the
    // function again. The reading of every query but the newest is dropped, so running the
    // stale ones only delays the newest by their whole time (with a hanging tool: a time
    // limit each, kMstconfigAtOnce at a time).
    test::TempDir dir;
    const std::string log = (dir.path / "calls.log").string();
    const std::string tool = dir.write("mstconfig", "#!/bin/sh\necho \"$*\" >> " + log +
                                                        "\nsleep 0.5\nexit 1\n");
    std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
    Loop loop;
    std::vector<std::string> read;
    MstconfigJobs jobs(loop.event,
                       {[&](const std::string& pci, const FirmwarePortType&) {
                            read.push_back(pci);
                        },
                        [](Outcome) {}},
                       1, 5s);
    jobs.query(tool, "0000:3b:00.0", 1);
    for (int i = 0; i < 5; ++i) {
        jobs.forget();
        jobs.query(tool, "0000:3b:00.0", 1);
    }
    REQUIRE(loop.run_until([&] { return !read.empty(); }));
    // Let a stale run that was (wrongly) started end before counting.
    std::this_thread::sleep_for(700ms);
    loop.run_until([] { return false; }, 1s);
    CHECK(read == std::vector<std::string>{"0000:3b:00.0"});
    // The first (already running at the Reloads) and the newest: two runs, not six.
    std::ifstream in(log);
    size_t runs = 0;
    for (std::string line; std::getline(in, line);)
        ++runs;
    CHECK(runs == 2);
}
