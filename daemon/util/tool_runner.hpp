// SPDX-License-Identifier: MIT
//
// Running outside tools (mstflint's mstconfig) on the sd-event loop, never blocking it: each
// run is a child process whose exit an sd-event child source reports (sd_event_add_child(3);
// SIGCHLD must be blocked, as the Daemon does), whose stdout and stderr io sources read as
// they come, and whose time limit is a timer source that kills its process group. At most
// `at_once` tools run at a time; the others wait in order. Spawned as run_tool() spawns
// (util/run_tool.hpp: no shell, stdin /dev/null, signals at their defaults, a group of its own).
#pragma once

#include "util/event_source.hpp"
#include "util/run_tool.hpp"
#include "util/unique_fd.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <list>
#include <string>
#include <vector>

namespace rdmad {

class ToolRunner {
  public:
    /// What a run ends with (ToolRun as run_tool() fills it); called on the loop, never from
    /// inside run().
    using Done = std::function<void(ToolRun)>;

    /// `event` must outlive the runner. `at_once` >= 1 runs at a time; `max_output` bytes of
    /// each stream kept (the rest read and dropped).
    ToolRunner(sd_event* event, size_t at_once, size_t max_output = 64 * 1024);
    /// Kills (SIGKILL to its group) and reaps every tool still running; no Done is called.
    ~ToolRunner();
    ToolRunner(const ToolRunner&) = delete;
    ToolRunner& operator=(const ToolRunner&) = delete;

    /// Run `argv` (argv[0] a path or a name on PATH) once a slot is free; `done` gets what
    /// became of it: a spawn error (ENOENT, EACCES), its exit status and output, or timed_out
    /// when it ran longer than `timeout` (its process group is then killed). Once the tool
    /// itself has exited, what is left in its group is killed and the output already in the
    /// pipes is taken: a process it left behind never delays its answer. `wanted`, when set,
    /// is asked when the run's slot comes: false drops it unstarted, its Done never called (an
    /// answer that would be thrown away must not hold a slot for up to `timeout`).
    void run(std::vector<std::string> argv, std::chrono::milliseconds timeout, Done done,
             std::function<bool()> wanted = {});

    size_t running() const { return running_.size(); } ///< tools running now
    size_t waiting() const { return waiting_.size(); } ///< runs waiting for a slot

  private:
    struct Request {
        std::vector<std::string> argv;
        std::chrono::milliseconds timeout{0};
        Done done;
        std::function<bool()> wanted;
    };
    struct Job {
        Request request;
        ToolRunner* runner = nullptr;
        pid_t pid = -1;
        ToolRun result;
        UniqueFd out, err; ///< the read ends of its stdout and stderr
        EventSource out_source, err_source, child, timer;
    };
    void start_waiting();
    /// Start `job` (already in running_); false when it ended at once (a spawn error: its
    /// Done is deferred to the loop).
    bool start(std::list<Job>::iterator job);
    /// Read what `fd` of `job` holds now into its stream; false at end of file or an error.
    bool read_some(Job& job, int fd);
    /// The end of `job`: it goes, a waiting run starts, then its Done is called.
    void finish(Job* job);
    static int on_output(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    static int on_child(sd_event_source* s, const siginfo_t* si, void* userdata);
    static int on_timeout(sd_event_source* s, uint64_t usec, void* userdata);

    sd_event* event_;
    size_t at_once_;
    size_t max_output_;
    std::list<Job> running_; ///< stable addresses: the sources' userdata
    std::deque<Request> waiting_;
};

} // namespace rdmad
