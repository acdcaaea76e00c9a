// SPDX-License-Identifier: MIT
#include "util/sysfs.hpp"

#include "util/log.hpp"
#include "util/unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
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

/// join(dir, relative) as a NUL-terminated path for one system call, on the stack when it fits:
/// a start-up reads about 150 attributes per device, and a heap path cost each of them an
/// allocation or two (4 % of a 1,024-device start-up's instructions).
class JoinedPath {
  public:
    JoinedPath(const std::string& dir, std::string_view relative) {
        const bool slash = !relative.empty() && (dir.empty() || dir.back() != '/');
        const size_t n = dir.size() + (slash ? 1 : 0) + (relative.empty() ? 0 : relative.size());
        if (n >= sizeof stack_) {
            heap_ = join(dir, relative);
            path_ = heap_.c_str();
            return;
        }
        char* p = stack_;
        std::memcpy(p, dir.data(), dir.size());
        p += dir.size();
        if (slash)
            *p++ = '/';
        if (!relative.empty()) {
            std::memcpy(p, relative.data(), relative.size());
            p += relative.size();
        }
        *p = '\0';
        path_ = stack_;
    }
    JoinedPath(const JoinedPath&) = delete;
    JoinedPath& operator=(const JoinedPath&) = delete;
    const char* c_str() const { return path_; }

  private:
    char stack_[512];
    std::string heap_;
    const char* path_ = nullptr;
};

} // namespace

ReadResult read_attribute(const std::string& dir, std::string_view relative, size_t limit) {
    ReadResult result;
    const JoinedPath path(dir, relative);
    // O_NONBLOCK: a FIFO in place of an attribute (or --os-release) must not hang start-up.
    const UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!file) {
        result.error = errno;
        return result;
    }
    // No fstat(2): a directory fails read(2) with EISDIR, and a FIFO with no writer reads
    // empty (O_NONBLOCK) or fails with EAGAIN. Reads go into a stack buffer, so an attribute
    // costs no allocation but its text's. A read may move fewer bytes than asked (POSIX
    // allows it; tests/fault makes every one short), so read until EOF or `limit`: sysfs
    // gives the whole attribute in the first read (fs/kernfs/file.c), the second sees EOF.
    // A larger `limit` (a 1 MiB configuration file) grows a heap buffer by doubling only
    // once the stack is full: sized to the limit up front, every read of a small file with a
    // large limit cost a zeroed mapping of that size (system.conf at each Reload: 1 MiB, the
    // largest share of a Reload's time on the loop under the D-Bus fuzzer).
    char stack[4096];
    std::string heap;
    char* buf = stack;
    size_t room = std::min(limit, sizeof(stack));
    size_t used = 0;
    while (used < limit) {
        if (used == room) { // full, and the limit allows more
            const size_t grown = std::min(limit, room * 2);
            if (buf == stack)
                heap.assign(stack, used);
            heap.resize(grown);
            buf = heap.data();
            room = grown;
        }
        const ssize_t n = ::read(file.get(), buf + used, room - used);
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
    result.text.assign(buf, used);
    return result;
}

namespace {

/// An attribute that fails with EIO is the device or its driver failing, not an attribute
/// that is absent (ENOENT) or has no value now (EINVAL: a rate with the link down): say so in
/// the journal, once for each path until it reads again. Bounded, like every text rdmad keeps.
void note_read(const std::string& dir, std::string_view relative, const ReadResult& r) {
    static std::mutex lock; // a pass may read on several threads (util/parallel_reads.hpp)
    static std::unordered_set<std::string> failing;
    std::lock_guard guard(lock);
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

namespace {

/// The target of the symlink at `path`, "" when it is none.
std::string read_link(const char* path) {
    char buf[4096];
    ssize_t n = ::readlink(path, buf, sizeof(buf) - 1);
    if (n <= 0)
        return {};
    return std::string(buf, static_cast<size_t>(n));
}

} // namespace

std::string link_basename(const std::string& dir, std::string_view relative) {
    const std::string link = read_link(JoinedPath(dir, relative).c_str());
    std::string_view target(link);
    while (!target.empty() && target.back() == '/')
        target.remove_suffix(1);
    auto slash = target.rfind('/');
    return std::string(slash == std::string_view::npos ? target : target.substr(slash + 1));
}

std::string resolve_link(const std::string& dir, std::string_view relative) {
    const std::string path = join(dir, relative);
    const std::string target = read_link(path.c_str());
    if (target.empty())
        return {};
    // Start from the link's directory (or "/" for an absolute target) and apply the target's
    // components: ".." drops one, "." and empty ones nothing.
    std::string out = target.front() == '/' ? std::string() : path.substr(0, path.rfind('/'));
    std::string_view rest(target);
    while (!rest.empty()) {
        const auto slash = rest.find('/');
        const std::string_view part = rest.substr(0, slash);
        rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
        if (part.empty() || part == ".")
            continue;
        if (part == "..") {
            const auto up = out.rfind('/');
            out.resize(up == std::string::npos ? 0 : up);
            continue;
        }
        out += '/';
        out += part;
    }
    return out.empty() ? std::string("/") : out;
}

namespace {

std::vector<std::string> list_entries(const std::string& dir, std::string_view relative,
                                      bool dirs_only) {
    std::vector<std::string> names;
    const std::string path = join(dir, relative);
    DIR* d = ::opendir(path.c_str());
    if (!d)
        return names;
    while (struct dirent* e = ::readdir(d)) {
        std::string_view name(e->d_name);
        if (name == "." || name == "..")
            continue;
        if (dirs_only && e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
            continue;
        names.emplace_back(name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace

std::vector<std::string> list_dir(const std::string& dir, std::string_view relative) {
    return list_entries(dir, relative, false);
}

std::vector<std::string> list_subdirs(const std::string& dir, std::string_view relative) {
    return list_entries(dir, relative, true);
}

bool exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

bool absent(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) != 0 && errno == ENOENT;
}

} // namespace rdmad::sysfs
