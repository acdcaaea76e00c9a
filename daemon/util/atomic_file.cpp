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

AtomicFile::AtomicFile(std::string path, bool hidden_temp) : path_(std::move(path)) {
    const auto slash = path_.rfind('/');
    std::string tmpl = path_ + ".XXXXXX";
    if (hidden_temp)
        tmpl = (slash == std::string::npos
                    ? "." + path_
                    : path_.substr(0, slash + 1) + "." + path_.substr(slash + 1)) +
               ".rdmad-tmp.XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    fd_.reset(::mkostemp(name.data(), O_CLOEXEC));
    if (!fd_)
        fail("cannot create a temporary file for", path_);
    temp_ = name.data();
}

AtomicFile::~AtomicFile() {
    if (!temp_.empty())
        discard();
}

void AtomicFile::discard() {
    const int saved = errno;
    fd_.reset();
    ::unlink(temp_.c_str());
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
            const std::string temp = temp_;
            if (n == 0)
                errno = ENOSPC; // write(2) moved nothing and said no error
            discard();
            fail("cannot write", temp);
        }
        done += static_cast<size_t>(n);
    }
}

void AtomicFile::commit(mode_t mode, Sync sync) {
    if (temp_.empty())
        throw std::system_error(EBADF, std::generic_category(), "cannot commit " + path_);
    const std::string temp = temp_;
    if (::fchmod(fd_.get(), mode) < 0 || (sync == Sync::durable && ::fsync(fd_.get()) < 0)) {
        discard();
        fail("cannot sync", temp);
    }
    if (fd_.close_checked() < 0) {
        discard();
        fail("cannot close", temp);
    }
    if (::rename(temp.c_str(), path_.c_str()) < 0) {
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
