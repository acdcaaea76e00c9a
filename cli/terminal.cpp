// SPDX-License-Identifier: MIT
#include "terminal.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rdmactl {

namespace {

pid_t pager_pid = -1;

bool env_set(const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
}

} // namespace

bool color_for(int fd, bool disabled) {
    if (disabled || env_set("NO_COLOR") || !isatty(fd))
        return false;
    const char* term = std::getenv("TERM");
    return !(term && std::strcmp(term, "dumb") == 0);
}

std::string paint(const char* color, std::string_view text) {
    if (!color || !*color)
        return std::string(text);
    return std::string(color) + std::string(text) + sgr::kReset;
}

const char* severity_color(std::string_view severity) {
    if (severity == "error")
        return sgr::kRed;
    if (severity == "warning")
        return sgr::kYellow;
    return nullptr;
}

const char* state_color(std::string_view state) {
    return state == "ACTIVE" ? sgr::kGreen : nullptr;
}

bool start_pager() {
    if (pager_pid > 0 || !isatty(STDOUT_FILENO))
        return false;
    const char* pager = std::getenv("RDMACTL_PAGER");
    if (!pager)
        pager = std::getenv("PAGER");
    if (!pager)
        pager = "less";
    if (!*pager || std::strcmp(pager, "cat") == 0)
        return false;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return false;
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        // The pager: reads the pipe, writes to the terminal. less's defaults as systemd sets
        // them: F quit when one screen, R raw colours, S chop long lines, X no init, M long
        // prompt, K quit on ^C.
        dup2(fds[0], STDIN_FILENO);
        if (!std::getenv("LESS"))
            setenv("LESS", "FRSXMK", 1);
        execl("/bin/sh", "sh", "-c", pager, static_cast<char*>(nullptr));
        _exit(127);
    }
    close(fds[0]);
    if (dup2(fds[1], STDOUT_FILENO) < 0) {
        close(fds[1]);
        kill(pid, SIGTERM);
        waitpid(pid, nullptr, 0);
        return false;
    }
    close(fds[1]);
    // The pager quitting early (q in less) closes the pipe: a write then fails with EPIPE
    // instead of killing rdmactl.
    std::signal(SIGPIPE, SIG_IGN);
    pager_pid = pid;
    return true;
}

void end_pager() {
    if (pager_pid <= 0)
        return;
    std::fflush(stdout);
    // The pager sees end of file once the last write end closes.
    close(STDOUT_FILENO);
    while (waitpid(pager_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    pager_pid = -1;
}

} // namespace rdmactl
