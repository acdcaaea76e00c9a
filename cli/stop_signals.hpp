// SPDX-License-Identifier: MIT
//
// The signals that end a client's event loop (SIGINT, SIGTERM) as a signalfd, blocked so that
// they wait for poll(2). Used by `rdmactl monitor` and by rdmad-notify (notify/agent.cpp).
#pragma once

#include <fmt/core.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <sys/signalfd.h>
#include <unistd.h>

namespace rdmad {

class StopSignals {
  public:
    /// Blocks SIGINT and SIGTERM and opens the signalfd. Throws std::runtime_error.
    StopSignals() {
        sigemptyset(&set_);
        sigaddset(&set_, SIGINT);
        sigaddset(&set_, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &set_, &old_) < 0)
            throw std::runtime_error(
                fmt::format("cannot block SIGINT and SIGTERM: {}", std::strerror(errno)));
        fd_ = signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd_ < 0) {
            const int e = errno;
            sigprocmask(SIG_SETMASK, &old_, nullptr);
            throw std::runtime_error(fmt::format("cannot create a signalfd: {}", std::strerror(e)));
        }
    }
    ~StopSignals() {
        close(fd_);
        sigprocmask(SIG_SETMASK, &old_, nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
    /// Readable (POLLIN) once SIGINT or SIGTERM came.
    int fd() const { return fd_; }
    /// Takes the pending signal, which would otherwise be delivered once unblocked.
    void consume() {
        signalfd_siginfo si;
        while (read(fd_, &si, sizeof si) == sizeof si) {
        }
    }

  private:
    sigset_t set_{}, old_{};
    int fd_ = -1;
};

} // namespace rdmad
