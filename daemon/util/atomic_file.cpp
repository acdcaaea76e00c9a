// SPDX-License-Identifier: MIT
#include "util/atomic_file.hpp"

#include "util/log.hpp"
#include "util/unique_fd.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace rdmad {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
    throw std::system_error(errno, std::generic_category(), what + " " + path);
}

} // namespace

void write_file_atomically(const std::string& path, std::string_view content, mode_t mode,
                           bool hidden_temp, Sync sync) {
    write_file_atomically(
        path, [content](const FileSink& put) { put(content); }, mode, hidden_temp, sync);
}

void write_file_atomically(const std::string& path,
                           const std::function<void(const FileSink&)>& produce, mode_t mode,
                           bool hidden_temp, Sync sync) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash ? slash : 1);
    std::string tmpl = path + ".XXXXXX";
    if (hidden_temp)
        tmpl = (slash == std::string::npos
                    ? "." + path
                    : path.substr(0, slash + 1) + "." + path.substr(slash + 1)) +
               ".rdmad-tmp.XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    UniqueFd fd(::mkostemp(name.data(), O_CLOEXEC));
    if (!fd)
        fail("cannot create a temporary file for", path);
    const std::string tmp(name.data());
    auto cleanup = [&] {
        int saved = errno;
        fd.reset();
        ::unlink(tmp.c_str());
        errno = saved;
    };
    const FileSink put = [&](std::string_view content) {
        size_t done = 0;
        while (done < content.size()) {
            ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                cleanup();
                fail("cannot write", tmp);
            }
            done += static_cast<size_t>(n);
        }
    };
    try {
        produce(put);
    } catch (...) {
        if (fd) // not yet cleaned up by a failed write
            cleanup();
        throw;
    }
    if (::fchmod(fd.get(), mode) < 0 || (sync == Sync::durable && ::fsync(fd.get()) < 0)) {
        cleanup();
        fail("cannot sync", tmp);
    }
    if (fd.close_checked() < 0) {
        ::unlink(tmp.c_str());
        fail("cannot close", tmp);
    }
    if (::rename(tmp.c_str(), path.c_str()) < 0) {
        int saved = errno;
        ::unlink(tmp.c_str());
        errno = saved;
        fail("cannot rename into", path);
    }
    if (sync == Sync::replace_only)
        return;
    // The new content is in place from here on: failing now would tell the caller "nothing
    // changed" about a file that did change (rdmad then refused every later persist, the file
    // no longer being what it last wrote). The rename is not yet durable: say so, and let the
    // next sync of the directory (ours or the kernel's writeback) make it so.
    UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dfd) {
        log::warning("{} written, but its directory cannot be opened to sync it: {}", path,
                     std::strerror(errno));
        return;
    }
    const int r = ::fsync(dfd.get());
    const int saved = errno;
    dfd.reset();
    if (r < 0)
        log::warning("{} written, but syncing its directory failed: {}; a crash now may "
                     "bring back the previous content",
                     path, std::strerror(saved));
}

} // namespace rdmad

namespace rdmad {

void remove_file_durably(const std::string& path) {
    if (::unlink(path.c_str()) < 0) {
        if (errno == ENOENT)
            return;
        throw std::system_error(errno, std::generic_category(), "cannot remove " + path);
    }
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : path.substr(0, slash);
    if (const UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); d)
        ::fsync(d.get());
}

} // namespace rdmad
