// SPDX-License-Identifier: MIT
//
// Reading the files an admin (or rdmad itself) keeps as desired state: /etc/rdmad/rdmad.conf,
// its conf.d drop-ins, the legacy /etc/rdma/mlx4.conf, rdmad's state.conf and its modprobe.d
// file. They are outside input: a FIFO must not block the daemon, /dev/zero must not exhaust
// its memory.
#pragma once

#include <cstddef>
#include <string>

namespace rdmad {

/// Largest desired-state file rdmad reads: 1 MiB, some 10,000 rules, far above any real one.
inline constexpr size_t kMaxConfigFileBytes = 1 << 20;

/// The outcome of read_config_file().
struct FileRead {
    enum class Status {
        ok,      ///< `text` holds the whole file
        missing, ///< ENOENT or ENOTDIR: the file does not exist
        failed,  ///< `error` says why, e.g. "not a regular file", "larger than 1 MiB"
    };
    Status status = Status::missing;
    std::string text;
    std::string error; ///< a reason without the path, for "<path>: <reason>"
};

/// Read the whole regular file at `path`. Opens with O_NONBLOCK (a FIFO or device never
/// blocks), refuses anything fstat() does not call a regular file, and refuses files larger
/// than `max_bytes` (checked while reading too, for files that grow). With `no_follow` a
/// symbolic link is refused (O_NOFOLLOW), for files in rdmad's own state directory.
/// Never throws except std::bad_alloc.
FileRead read_config_file(const std::string& path, size_t max_bytes = kMaxConfigFileBytes,
                          bool no_follow = false);

} // namespace rdmad
