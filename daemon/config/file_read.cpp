// SPDX-License-Identifier: MIT
#include "config/file_read.hpp"

#include "util/unique_fd.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rdmad {
namespace {

std::string size_text(size_t bytes) {
    if (bytes % (1 << 20) == 0)
        return fmt::format("{} MiB", bytes >> 20);
    if (bytes % (1 << 10) == 0)
        return fmt::format("{} KiB", bytes >> 10);
    return fmt::format("{} bytes", bytes);
}

FileRead failed(std::string error) {
    FileRead r;
    r.status = FileRead::Status::failed;
    r.error = std::move(error);
    return r;
}

} // namespace

FileRead read_config_file(const std::string& path, size_t max_bytes, bool no_follow) {
    const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (no_follow ? O_NOFOLLOW : 0);
    const UniqueFd fd(::open(path.c_str(), flags));
    if (!fd) {
        if (errno == ENOENT || errno == ENOTDIR)
            return {};
        if (errno == ELOOP && no_follow)
            return failed("is a symbolic link; rdmad does not follow links in its state directory");
        return failed(std::string("cannot open: ") + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) < 0) {
        const int err = errno;
        return failed(std::string("cannot stat: ") + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode))
        return failed("not a regular file");
    const std::string too_big = "larger than " + size_text(max_bytes);
    if (static_cast<unsigned long long>(st.st_size) > max_bytes)
        return failed(too_big);
    FileRead r;
    r.status = FileRead::Status::ok;
    r.text.reserve(static_cast<size_t>(st.st_size));
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const int err = errno;
            return failed(std::string("cannot read: ") + std::strerror(err));
        }
        if (n == 0)
            break;
        if (r.text.size() + static_cast<size_t>(n) > max_bytes)
            return failed(too_big);
        r.text.append(buf, static_cast<size_t>(n));
    }
    return r;
}

} // namespace rdmad
