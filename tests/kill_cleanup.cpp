// SPDX-License-Identifier: MIT
// kill_cleanup.hpp says what this does and why.
#include "kill_cleanup.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace kill_cleanup {

namespace {

// The test's end of the socket to the cleanup process; -1 when there is none.
int channel = -1;

// Records on the socket (SOCK_SEQPACKET: one record a message): a letter, then its argument.
constexpr char kDir = 'D', kForgetDir = 'd', kChild = 'P', kForgetChild = 'p', kCommand = 'C',
               kForgetCommand = 'c';

void send_record(char kind, const std::string& arg) {
    if (channel < 0)
        return;
    std::string rec(1, kind);
    rec += arg;
    while (send(channel, rec.data(), rec.size(), MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
}

// ---- the cleanup process ------------------------------------------------------------------

// True when `pid` has ended (no such process, or a zombie nobody reaped yet).
bool gone(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(f, stat);
    // pid (comm) STATE ...: comm may hold spaces and parentheses, the last ')' ends it.
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size())
        return true;
    const char state = stat[paren + 2];
    return state == 'Z' || state == 'X';
}

void erase_last(std::vector<std::string>& v, const std::string& s) {
    auto it = std::find(v.rbegin(), v.rend(), s);
    if (it != v.rend())
        v.erase(std::next(it).base());
}

[[noreturn]] void clean_up_after(int fd) {
    std::vector<std::string> dirs, commands;
    std::vector<pid_t> children;
    std::vector<char> buf(1 << 16);
    for (;;) {
        const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; // end of file: the test process ended or shut its side down
        const std::string arg(buf.data() + 1, static_cast<size_t>(n) - 1);
        switch (buf[0]) {
        case kDir:
            dirs.push_back(arg);
            break;
        case kForgetDir:
            erase_last(dirs, arg);
            break;
        case kCommand:
            commands.push_back(arg);
            break;
        case kForgetCommand:
            erase_last(commands, arg);
            break;
        case kChild:
            children.push_back(static_cast<pid_t>(std::atol(arg.c_str())));
            break;
        case kForgetChild: {
            auto it = std::find(children.rbegin(), children.rend(),
                                static_cast<pid_t>(std::atol(arg.c_str())));
            if (it != children.rend())
                children.erase(std::next(it).base());
            break;
        }
        default:
            break;
        }
    }
    // Children first: a running rdmad or umockdev would write into the directories again.
    for (pid_t pid : children)
        if (pid > 0)
            kill(pid, SIGKILL);
    for (int i = 0; i < 500; ++i) { // 5 s at most
        if (std::all_of(children.begin(), children.end(), gone))
            break;
        usleep(10000);
    }
    for (const auto& command : commands) {
        std::string c = command;
        char sh[] = "/bin/sh", dash_c[] = "-c";
        char* argv[] = {sh, dash_c, c.data(), nullptr};
        pid_t pid = -1;
        if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ) == 0)
            waitpid(pid, nullptr, 0);
    }
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
        std::error_code ec;
        std::filesystem::remove_all(*it, ec);
    }
    _exit(0);
}

// ---- the test process's signal handler ------------------------------------------------------

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction previous[std::size(kSignals)];
std::atomic<bool> handling{false};

// The running case's name: written into the buffer not shown, then shown (-1: none), so that
// a signal never reads a name half written.
char case_names[2][512];
std::atomic<int> shown_case{-1};

// Async-signal-safe output: write(2) and hand-made decimals only.
struct Line {
    char text[700];
    size_t len = 0;
    void add(const char* s) {
        while (*s && len < sizeof text)
            text[len++] = *s++;
    }
    void add(int v) {
        char digits[12];
        size_t n = 0;
        unsigned u = v < 0 ? 0u - static_cast<unsigned>(v) : static_cast<unsigned>(v);
        do {
            digits[n++] = static_cast<char>('0' + u % 10);
            u /= 10;
        } while (u && n < sizeof digits);
        if (v < 0)
            add("-");
        while (n && len < sizeof text)
            text[len++] = digits[--n];
    }
    void write_to(int fd) const {
        const char* p = text;
        size_t left = len;
        while (left > 0) {
            const ssize_t w = write(fd, p, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return;
            p += w;
            left -= static_cast<size_t>(w);
        }
    }
};

long long now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void on_signal(int sig, siginfo_t* info, void*) {
    const int saved_errno = errno;
    if (handling.exchange(true)) {
        // Another thread is at it: it ends the process once the cleanup is done.
        errno = saved_errno;
        return;
    }
    Line line;
    line.add("\n*** signal ");
    line.add(sig);
    const int shown = shown_case.load();
    if (shown >= 0) {
        line.add(" ended the test during test case \"");
        line.add(case_names[shown]);
        line.add("\"\n");
    } else {
        line.add(" ended the test outside any test case\n");
    }
    line.write_to(STDERR_FILENO);
    if (channel >= 0) {
        // End of file for the cleanup process; it closes its side when it is done.
        shutdown(channel, SHUT_WR);
        const long long deadline = now_ms() + 400;
        for (;;) {
            const long long left = deadline - now_ms();
            if (left <= 0)
                break;
            pollfd p = {channel, POLLIN, 0};
            const int r = poll(&p, 1, static_cast<int>(left));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            char c;
            if (read(channel, &c, 1) <= 0)
                break;
        }
    }
    for (size_t i = 0; i < std::size(kSignals); ++i)
        if (kSignals[i] == sig)
            sigaction(sig, &previous[i], nullptr);
    // A fault the kernel raised for an instruction (SIGSEGV on a bad address: si_code > 0 and
    // not SI_KERNEL) happens again by itself when that instruction runs again; every other
    // signal (kill, raise, abort, and a terminal's Ctrl-C or hang-up, which come with
    // SI_KERNEL) is sent again, to the handler before this one or the default action.
    const bool fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
    if (info == nullptr || !fault || info->si_code <= 0 || info->si_code == SI_KERNEL)
        raise(sig);
    errno = saved_errno;
}

} // namespace

void start() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        std::fprintf(stderr, "kill_cleanup: no socket for the cleanup process: %s\n",
                     std::strerror(errno));
    } else {
        const pid_t pid = fork();
        if (pid == 0) {
            // A session of its own: meson's SIGTERM and SIGKILL to the test's process group,
            // and the terminal's SIGINT, do not reach it. No stdout or stderr of the test
            // either: meson would wait for them to close.
            setsid();
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, nullptr);
            std::signal(SIGINT, SIG_IGN);
            std::signal(SIGHUP, SIG_IGN);
            std::signal(SIGPIPE, SIG_IGN);
            prctl(PR_SET_NAME, "test-cleanup");
            const int null = open("/dev/null", O_RDWR);
            for (int fd = 0; fd <= 2; ++fd)
                dup2(null, fd);
            dup2(sv[1], 3);
            fcntl(3, F_SETFD, FD_CLOEXEC);
            close_range(4, ~0U, 0);
            clean_up_after(3);
        }
        close(sv[1]);
        if (pid < 0) {
            std::fprintf(stderr, "kill_cleanup: cannot fork the cleanup process: %s\n",
                         std::strerror(errno));
            close(sv[0]);
        } else {
            channel = sv[0];
            // A child forked without exec (a test's helper process) must not hold the test's
            // end open: the cleanup process starts when the last holder is gone, so a test
            // killed alone would otherwise be cleaned up only when that child ends.
            // (exec closes it anyway: SOCK_CLOEXEC.)
            pthread_atfork(nullptr, nullptr, [] {
                if (channel >= 0)
                    close(channel);
                channel = -1;
            });
        }
    }
    struct sigaction sa = {};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (int sig : kSignals)
        sigaddset(&sa.sa_mask, sig);
    for (size_t i = 0; i < std::size(kSignals); ++i) {
        sigaction(kSignals[i], nullptr, &previous[i]);
        // A signal ignored from the start (SIGINT for a background job, nohup's SIGHUP) stays
        // ignored.
        if (previous[i].sa_handler != SIG_IGN)
            sigaction(kSignals[i], &sa, nullptr);
    }
}

void remove_when_killed(const std::string& path) {
    send_record(kDir, path);
}
void forget_when_killed(const std::string& path) {
    send_record(kForgetDir, path);
}
void kill_when_killed(pid_t pid) {
    send_record(kChild, std::to_string(pid));
}
void forget_child(pid_t pid) {
    send_record(kForgetChild, std::to_string(pid));
}
void run_when_killed(const std::string& command) {
    send_record(kCommand, command);
}
void forget_command(const std::string& command) {
    send_record(kForgetCommand, command);
}

void set_running_case(const std::string& name) {
    if (name.empty()) {
        shown_case.store(-1);
        return;
    }
    const int next = shown_case.load() == 0 ? 1 : 0;
    const size_t n = std::min(name.size(), sizeof case_names[next] - 1);
    std::memcpy(case_names[next], name.data(), n);
    case_names[next][n] = '\0';
    shown_case.store(next);
}

} // namespace kill_cleanup
