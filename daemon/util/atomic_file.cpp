// SPDX-License-Identifier: MIT
#include "util/atomic_file.hpp"

#include "util/log.hpp"
#include "util/unique_fd.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace rdmad {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
    throw std::system_error(errno, std::generic_category(), what + " " + path);
}

} // namespace

AtomicFile::AtomicFile(std::string path, bool hidden_temp) : path_(std::move(path)) {
    const auto slash = path_.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash ? slash : 1);
    const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
    // The temporary file is created and removed through a descriptor of its directory, not by
    // its path: a directory path that comes to name another directory midway (a symlink
    // repointed while rdmad.prom is written in slices) would leave it where it was made.
    dir_fd_.reset(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir_fd_)
        fail("cannot create a temporary file for", path_);
    const std::string prefix = hidden_temp ? "." + base + ".rdmad-tmp." : base + ".";
    static constexpr char kChars[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    // As mkostemp(3): six random characters from [A-Za-z0-9], O_EXCL, mode 0600, tried again
    // while the name is taken.
    for (int attempt = 0; attempt < 100 && !fd_; ++attempt) {
        unsigned char random[6];
        if (::getrandom(random, sizeof random, 0) != ssize_t(sizeof random))
            fail("cannot create a temporary file for", path_);
        name_ = prefix;
        for (unsigned char r : random)
            name_ += kChars[r % (sizeof kChars - 1)];
        fd_.reset(::openat(dir_fd_.get(), name_.c_str(),
                           O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
        if (!fd_ && errno != EEXIST)
            break;
    }
    if (!fd_)
        fail("cannot create a temporary file for", path_);
    temp_ = (slash == std::string::npos ? "" : path_.substr(0, slash + 1)) + name_;
}

AtomicFile::~AtomicFile() {
    if (!temp_.empty())
        discard();
}

void AtomicFile::discard() {
    const int saved = errno;
    fd_.reset();
    ::unlinkat(dir_fd_.get(), name_.c_str(), 0);
    temp_.clear();
    errno = saved;
}

void AtomicFile::append(std::string_view content) {
    if (temp_.empty())
        throw std::system_error(EBADF, std::generic_category(), "cannot write " + path_);
    size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd_.get(), content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ENOSPC; // write(2) moved nothing and said no error
            discard();
            // The file it replaces, not the temporary file: its random name made every
            // failed write of rdmad.prom a new error to log and report.
            fail("cannot write", path_);
        }
        done += static_cast<size_t>(n);
    }
}

void AtomicFile::commit(mode_t mode, Sync sync) {
    if (temp_.empty())
        throw std::system_error(EBADF, std::generic_category(), "cannot commit " + path_);
    if (::fchmod(fd_.get(), mode) < 0 || (sync == Sync::durable && ::fsync(fd_.get()) < 0)) {
        discard();
        fail("cannot sync", path_);
    }
    if (fd_.close_checked() < 0) {
        discard();
        fail("cannot close", path_);
    }
    // From the directory the temporary file is in to where `path` names now (the same
    // directory, unless a symlink in its path was repointed: then there when it is on the same
    // file system, else EXDEV, and the temporary file is removed where it is).
    if (::renameat(dir_fd_.get(), name_.c_str(), AT_FDCWD, path_.c_str()) < 0) {
        discard();
        fail("cannot rename into", path_);
    }
    temp_.clear(); // renamed: nothing to remove
    if (sync == Sync::replace_only)
        return;
    // The new content is in place from here on: failing now would tell the caller "nothing
    // changed" about a file that did change (rdmad then refused every later persist, the file
    // no longer being what it last wrote). The rename is not yet durable: say so, and let the
    // next sync of the directory (ours or the kernel's writeback) make it so.
    const auto slash = path_.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash ? slash : 1);
    UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dfd) {
        log::warning("{} written, but its directory cannot be opened to sync it: {}", path_,
                     std::strerror(errno));
        return;
    }
    const int r = ::fsync(dfd.get());
    const int saved = errno;
    dfd.reset();
    if (r < 0)
        log::warning("{} written, but syncing its directory failed: {}; a crash now may "
                     "bring back the previous content",
                     path_, std::strerror(saved));
}

void write_file_atomically(const std::string& path, std::string_view content, mode_t mode,
                           bool hidden_temp, Sync sync) {
    AtomicFile file(path, hidden_temp);
    file.append(content);
    file.commit(mode, sync);
}

void write_file_atomically(const std::string& path,
                           const std::function<void(const FileSink&)>& produce, mode_t mode,
                           bool hidden_temp, Sync sync) {
    AtomicFile file(path, hidden_temp);
    produce([&file](std::string_view content) { file.append(content); });
    file.commit(mode, sync); // an exception from produce() left: the destructor removes it
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
