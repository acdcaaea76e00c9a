// SPDX-License-Identifier: MIT
//
// The one owner of a file descriptor: closed when it goes.
#pragma once

#include <unistd.h>
#include <utility>

namespace rdmad {

/// A file descriptor closed when it goes; -1 for none.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& o) noexcept {
        if (this != &o)
            reset(std::exchange(o.fd_, -1));
        return *this;
    }
    ~UniqueFd() { reset(); }

    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    /// Give the descriptor up without closing it.
    int release() { return std::exchange(fd_, -1); }
    /// Close the descriptor held (its error ignored: see close_checked()) and hold `fd`.
    void reset(int fd = -1) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = fd;
    }
    /// Close now and say how it went: close(2)'s result, for a write whose data must be on
    /// disk (a failed close may be the report of a failed write-back).
    int close_checked() { return fd_ >= 0 ? ::close(std::exchange(fd_, -1)) : 0; }

  private:
    int fd_ = -1;
};

} // namespace rdmad
