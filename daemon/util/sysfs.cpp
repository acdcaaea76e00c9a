// SPDX-License-Identifier: MIT
#include "util/sysfs.hpp"

#include "util/log.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>

namespace rdmad::sysfs {
namespace {

std::string join(const std::string& dir, std::string_view relative) {
    std::string path = dir;
    if (!relative.empty()) {
        if (path.empty() || path.back() != '/')
            path += '/';
        path += relative;
    }
    return path;
}

struct FdCloser {
    void operator()(int* fd) const {
        if (*fd >= 0)
            ::close(*fd);
        delete fd;
    }
};

} // namespace

ReadResult read_attribute(const std::string& dir, std::string_view relative, size_t limit) {
    ReadResult result;
    const std::string path = join(dir, relative);
    // O_NONBLOCK: a FIFO in place of an attribute (or --os-release) must not hang start-up.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        result.error = errno;
        return result;
    }
    std::unique_ptr<int, FdCloser> guard(new int(fd));
    struct stat st;
    if (::fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        result.error = S_ISDIR(st.st_mode) ? EISDIR : EINVAL; // sysfs attributes are regular
        return result;
    }
    std::string text(limit, '\0');
    size_t used = 0;
    while (used < limit) {
        ssize_t n = ::read(fd, text.data() + used, limit - used);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            result.error = errno;
            return result;
        }
        if (n == 0)
            break;
        used += static_cast<size_t>(n);
    }
    text.resize(used);
    result.text = std::move(text);
    return result;
}

namespace {

/// An attribute that fails with EIO is the device or its driver failing, not an attribute
/// that is absent (ENOENT) or has no value now (EINVAL: a rate with the link down): say so in
/// the journal, once for each path until it reads again. Bounded, like every text rdmad keeps.
void note_read(const std::string& dir, std::string_view relative, const ReadResult& r) {
    static std::unordered_set<std::string> failing;
    if (r.ok()) {
        if (!failing.empty())
            failing.erase(join(dir, relative));
        return;
    }
    if (r.error != EIO || failing.size() >= 1024)
        return;
    std::string path = join(dir, relative);
    if (failing.insert(path).second)
        log::warning("cannot read {}: {}; the value stays unknown", path, std::strerror(r.error));
}

} // namespace

std::optional<std::string> read_text(const std::string& dir, std::string_view relative) {
    ReadResult r = read_attribute(dir, relative);
    note_read(dir, relative, r);
    if (!r.ok())
        return std::nullopt;
    return std::move(r.text);
}

std::string link_basename(const std::string& dir, std::string_view relative) {
    const std::string path = join(dir, relative);
    char buf[4096];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
    if (n <= 0)
        return {};
    std::string_view target(buf, static_cast<size_t>(n));
    while (!target.empty() && target.back() == '/')
        target.remove_suffix(1);
    auto slash = target.rfind('/');
    return std::string(slash == std::string_view::npos ? target : target.substr(slash + 1));
}

std::vector<std::string> list_dir(const std::string& dir, std::string_view relative) {
    std::vector<std::string> names;
    const std::string path = join(dir, relative);
    DIR* d = ::opendir(path.c_str());
    if (!d)
        return names;
    while (struct dirent* e = ::readdir(d)) {
        std::string_view name(e->d_name);
        if (name == "." || name == "..")
            continue;
        names.emplace_back(name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

bool exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

} // namespace rdmad::sysfs
