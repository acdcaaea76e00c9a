// SPDX-License-Identifier: MIT
#include "util/run_tool.hpp"

#include "util/unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <system_error>
#include <time.h>
#include <unistd.h>

extern char** environ;

namespace rdmad {
namespace {

int64_t now_ms() {
    struct timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

/// How often a run whose pipes stay open checks whether the tool itself has exited (ms).
constexpr int64_t kExitCheckMs = 50;

/// Whether `pid` has exited, without reaping it (waitid(2) WNOWAIT).
bool exited(pid_t pid) {
    siginfo_t info{};
    return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

} // namespace

void make_pipe(UniqueFd& read_end, UniqueFd& write_end) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        throw std::system_error(errno, std::generic_category(), "pipe2");
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
}

void init_child_spawnattr(posix_spawnattr_t& attr) {
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETPGROUP);
}

int spawn_tool(const std::vector<std::string>& argv, int out_fd, int err_fd, pid_t& pid) {
    if (argv.empty())
        return ENOENT;
    std::vector<std::string> args = argv;
    std::vector<char*> cargv;
    for (auto& a : args)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    posix_spawnattr_t attr;
    init_child_spawnattr(attr);
    const int rc = posix_spawnp(&pid, cargv[0], &fa, &attr, cargv.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

ToolRun run_tool(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                 size_t max_output) {
    ToolRun run;
    if (argv.empty()) {
        run.spawn_error = ENOENT;
        return run;
    }
    UniqueFd out_r, out_w, err_r, err_w;
    make_pipe(out_r, out_w);
    make_pipe(err_r, err_w);
    pid_t pid = -1;
    run.spawn_error = spawn_tool(argv, out_w.get(), err_w.get(), pid);
    out_w.reset();
    err_w.reset();
    if (run.spawn_error != 0)
        return run;

    const int64_t deadline = now_ms() + timeout.count();
    bool out_open = true, err_open = true;
    bool reaped = false;   // the tool itself has exited (waitpid() took its status)
    int64_t drain_end = 0; // then: the end of the reading of what it left in the pipes
    int status = 0;
    char buf[4096];
    while (out_open || err_open) {
        const int64_t now = now_ms(), left = deadline - now;
        if (reaped && now >= drain_end)
            break;
        if (!reaped && left <= 0) {
            run.timed_out = true;
            break;
        }
        // Once the tool has exited, what it left in its group is killed and only what is
        // already in the pipes is read: a process it left behind (a daemonized helper, in its
        // group or not) may hold them open, or write, for ever.
        struct pollfd p[2] = {{out_open ? out_r.get() : -1, POLLIN, 0},
                              {err_open ? err_r.get() : -1, POLLIN, 0}};
        const int n = poll(p, 2, reaped ? 0 : int(std::min<int64_t>(left, kExitCheckMs)));
        if (n < 0 && errno != EINTR)
            break;
        if (!reaped && exited(pid)) {
            // Killed while the tool is a zombie: its pid, and so its group's id, is no
            // other's yet.
            kill(-pid, SIGKILL);
            reaped = waitpid(pid, &status, 0) == pid;
            drain_end = now_ms() + kExitCheckMs;
        }
        if (n == 0 && reaped)
            break; // drained
        for (int i = 0; n > 0 && i < 2; ++i) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            const ssize_t got = read(p[i].fd, buf, sizeof buf);
            if (got <= 0) {
                (i == 0 ? out_open : err_open) = false;
                continue;
            }
            std::string& into = i == 0 ? run.out : run.err;
            const size_t room = max_output - std::min(max_output, into.size());
            into.append(buf, std::min(size_t(got), room));
        }
    }
    // Both streams closed: the tool has exited or is about to; else the time is up. Wait for
    // the rest of the time, then kill the group.
    if (run.timed_out)
        kill(-pid, SIGKILL);
    while (!reaped) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return run;
        if (r == 0 && !run.timed_out && now_ms() >= deadline) {
            run.timed_out = true;
            kill(-pid, SIGKILL);
        }
        struct timespec ts = {0, 1'000'000}; // 1 ms
        nanosleep(&ts, nullptr);
    }
    if (WIFEXITED(status) && !run.timed_out)
        run.exit_status = WEXITSTATUS(status);
    return run;
}

} // namespace rdmad
