// SPDX-License-Identifier: MIT
#include "util/tool_runner.hpp"

#include "util/loop_edge.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rdmad {

ToolRunner::ToolRunner(sd_event* event, size_t at_once, size_t max_output)
    : event_(event), at_once_(std::max<size_t>(at_once, 1)), max_output_(max_output) {}

ToolRunner::~ToolRunner() {
    for (auto& job : running_) {
        job.out_source.reset();
        job.err_source.reset();
        job.timer.reset();
        if (job.pid > 0) {
            // Its child source goes first (not owned: sd-event neither kills nor reaps it).
            sd_event_source_unref(job.child.release());
            kill(-job.pid, SIGKILL);
            kill(job.pid, SIGKILL);
            while (waitpid(job.pid, nullptr, 0) < 0 && errno == EINTR) {
            }
        }
    }
}

void ToolRunner::run(std::vector<std::string> argv, std::chrono::milliseconds timeout, Done done,
                     std::function<bool()> wanted) {
    waiting_.push_back(Request{std::move(argv), timeout, std::move(done), std::move(wanted)});
    start_waiting();
}

void ToolRunner::start_waiting() {
    while (running_.size() < at_once_ && !waiting_.empty()) {
        if (waiting_.front().wanted && !waiting_.front().wanted()) {
            waiting_.pop_front();
            continue;
        }
        running_.emplace_back();
        auto job = std::prev(running_.end());
        job->request = std::move(waiting_.front());
        job->runner = this;
        waiting_.pop_front();
        start(job);
    }
}

bool ToolRunner::start(std::list<Job>::iterator job) {
    UniqueFd out_w, err_w;
    make_pipe(job->out, out_w);
    make_pipe(job->err, err_w);
    fcntl(job->out.get(), F_SETFL, O_NONBLOCK);
    fcntl(job->err.get(), F_SETFL, O_NONBLOCK);
    job->result.spawn_error = spawn_tool(job->request.argv, out_w.get(), err_w.get(), job->pid);
    out_w.reset();
    err_w.reset();
    if (job->result.spawn_error == 0 &&
        sd_event_add_child(event_, into(job->child), job->pid, WEXITED, on_child, &*job) < 0) {
        // Not watched: not run (SIGCHLD is not blocked, or the loop is out of memory).
        kill(-job->pid, SIGKILL);
        kill(job->pid, SIGKILL);
        while (waitpid(job->pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        job->pid = -1;
        job->result.spawn_error = ECHILD;
    }
    if (job->result.spawn_error != 0) {
        // Its Done comes from the loop, as every other's: never from inside run().
        job->pid = -1;
        sd_event_add_defer(
            event_, into(job->timer),
            [](sd_event_source*, void* userdata) {
                auto* j = static_cast<Job*>(userdata);
                j->runner->finish(j);
                return 0;
            },
            &*job);
        return false;
    }
    sd_event_add_io(event_, into(job->out_source), job->out.get(), EPOLLIN, on_output, &*job);
    sd_event_add_io(event_, into(job->err_source), job->err.get(), EPOLLIN, on_output, &*job);
    sd_event_add_time_relative(event_, into(job->timer), CLOCK_MONOTONIC,
                               uint64_t(job->request.timeout.count()) * 1000, 10'000, on_timeout,
                               &*job);
    return true;
}

bool ToolRunner::read_some(Job& job, int fd) {
    char buf[4096];
    std::string& into = fd == job.out.get() ? job.result.out : job.result.err;
    for (;;) {
        const ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && errno == EAGAIN)
            return true;
        if (got <= 0)
            return false;
        const size_t room = max_output_ - std::min(max_output_, into.size());
        into.append(buf, std::min(size_t(got), room));
    }
}

int ToolRunner::on_output(sd_event_source*, int fd, uint32_t, void* userdata) {
    auto* job = static_cast<Job*>(userdata);
    if (!job->runner->read_some(*job, fd)) {
        // End of this stream: its source goes (the job may still run).
        (fd == job->out.get() ? job->out_source : job->err_source).reset();
    }
    return 0;
}

int ToolRunner::on_timeout(sd_event_source*, uint64_t, void* userdata) {
    auto* job = static_cast<Job*>(userdata);
    job->result.timed_out = true;
    // Its child source reports the end of the kill.
    kill(-job->pid, SIGKILL);
    kill(job->pid, SIGKILL);
    return 0;
}

int ToolRunner::on_child(sd_event_source*, const siginfo_t* si, void* userdata) {
    auto* job = static_cast<Job*>(userdata);
    // Not reaped yet (sd-event reaps it after this callback), so its group id is still its
    // own: what it left in its group ends with it, and what it wrote is in the pipes now.
    kill(-job->pid, SIGKILL);
    if (si->si_code == CLD_EXITED && !job->result.timed_out)
        job->result.exit_status = si->si_status;
    for (int fd : {job->out.get(), job->err.get()})
        job->runner->read_some(*job, fd);
    // Unreferenced, not disabled: sd-event reaps the child after this callback.
    sd_event_source_unref(job->child.release());
    job->runner->finish(job);
    return 0;
}

void ToolRunner::finish(Job* job) {
    auto it = std::find_if(running_.begin(), running_.end(), [&](const Job& j) { return &j == job; });
    if (it == running_.end())
        return;
    Done done = std::move(it->request.done);
    ToolRun result = std::move(it->result);
    running_.erase(it); // its sources go (sd-event keeps the one dispatching until it returns)
    start_waiting();
    at_loop_edge("tool run", [&] {
        if (done)
            done(std::move(result));
    });
}

} // namespace rdmad
