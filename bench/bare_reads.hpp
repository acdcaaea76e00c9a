// SPDX-License-Identifier: MIT
//
// The bare reads the benchmarks' floors are made of, done as rdmad does them (open, read until
// EOF into a 4 KiB buffer, close; no libudev): one attribute, a directory's names, one RDMA
// port's files. bench-sysfs-read and bench-uevent-echo share them, so both floors read the
// same way.
#pragma once

#include <algorithm>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace bench {

struct ReadCount {
    long files = 0; ///< attributes read (opened)
    long bytes = 0;
};

/// The attribute at `path` ("" when it cannot be opened), counted in `count`.
inline std::string read_attr(const std::string& path, ReadCount& count) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return {};
    char buf[4096];
    std::string out;
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    ++count.files;
    count.bytes += static_cast<long>(out.size());
    return out;
}

/// The entries of directory `path` but "." and "..", sorted.
inline std::vector<std::string> list(const std::string& path) {
    std::vector<std::string> names;
    DIR* d = ::opendir(path.c_str());
    if (!d)
        return names;
    while (dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
            names.emplace_back(e->d_name);
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

/// An unused GID table entry (all zero, or the link-local prefix with a zero interface ID).
inline bool zero_gid(const std::string& g) {
    return g.rfind("0000:0000:0000:0000:0000:0000:0000:0000", 0) == 0 ||
           g.rfind("fe80:0000:0000:0000:0000:0000:0000:0000", 0) == 0;
}

/// What a pass reads of the port whose directory is `p` (".../ports/<n>/"): state,
/// phys_state, link_layer, rate, lid, sm_lid (with `pkey`, pkeys/0), and each GID entry, with
/// gid_attrs/types/I and gid_attrs/ndevs/I of the non-zero ones. Returns the state's text.
inline std::string read_port(const std::string& p, bool pkey, ReadCount& count) {
    std::string state;
    for (const char* a : {"state", "phys_state", "link_layer", "rate", "lid", "sm_lid"}) {
        std::string t = read_attr(p + a, count);
        if (!std::strcmp(a, "state"))
            state = std::move(t);
    }
    if (pkey)
        read_attr(p + "pkeys/0", count);
    struct stat sb;
    const bool attrs = ::stat((p + "gid_attrs").c_str(), &sb) == 0;
    for (const auto& i : list(p + "gids")) {
        if (zero_gid(read_attr(p + "gids/" + i, count)) || !attrs)
            continue;
        read_attr(p + "gid_attrs/types/" + i, count);
        read_attr(p + "gid_attrs/ndevs/" + i, count);
    }
    return state;
}

} // namespace bench
