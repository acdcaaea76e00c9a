// SPDX-License-Identifier: MIT
//
// The one code path through which rdmad reads /sys. Plain open/read/readlink/opendir on the
// paths udev gives us: under umockdev the same calls land in the testbed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmad::sysfs {

/// The result of reading one attribute: the text, or the errno of the failed open/read.
struct ReadResult {
    std::string text;
    int error = 0; ///< 0 on success; e.g. ENOENT (absent), EINVAL (empty GID attr), EISDIR
    bool ok() const { return error == 0; }
};

/// Read `<dir>/<relative>` (relative may contain '/'), at most `limit` bytes (sysfs attributes
/// are at most one page). Never throws.
ReadResult read_attribute(const std::string& dir, std::string_view relative, size_t limit = 4096);

/// The text of `<dir>/<relative>` when it reads, as the kernel gave it (bytes: a netdev name
/// in `gid_attrs/ndevs/<i>` must match the name of the netdev itself), std::nullopt otherwise.
/// Text is made valid UTF-8 where it leaves rdmad (the bus model, error replies, the log).
/// An EIO is logged as a warning, once for each path until it reads again.
std::optional<std::string> read_text(const std::string& dir, std::string_view relative);

/// basename of the target of the symlink `<dir>/<relative>` ("mlx5_core" for
/// `device/driver` -> `../../../bus/pci/drivers/mlx5_core`), "" when not a link.
std::string link_basename(const std::string& dir, std::string_view relative);

/// Where the symlink `<dir>/<relative>` points, as an absolute path resolved lexically
/// (`/sys/class/net/eth0` -> `/sys/devices/pci0000:00/0000:00:03.0/net/eth0`); "" when it is
/// not a link. Sysfs links are relative and live in real directories (fs/sysfs/symlink.c:
/// kernfs_get_target_path() builds "../../devices/..."), so one readlink(2) does what
/// realpath(3) does with a readlink per path component.
std::string resolve_link(const std::string& dir, std::string_view relative);

/// Names in directory `<dir>/<relative>` (without "." and ".."), sorted; empty when it does
/// not exist.
std::vector<std::string> list_dir(const std::string& dir, std::string_view relative);

/// The subdirectories of `<dir>/<relative>`, as list_dir() gives names: the entries getdents(2)
/// types DT_DIR (or DT_UNKNOWN, for a file system that does not type them), so that a caller
/// looking for child devices makes no call for the attributes and links beside them.
std::vector<std::string> list_subdirs(const std::string& dir, std::string_view relative);

/// True when `<dir>/<relative>` exists (stat follows links).
bool exists(const std::string& path);

/// True when nothing is at `path`, not even a link (lstat(2) fails with ENOENT); false for a
/// dangling link or a loop of links.
bool absent(const std::string& path);

} // namespace rdmad::sysfs
