// SPDX-License-Identifier: MIT
//
// Files rdmad owns are replaced atomically, so a crash (even kill -9) leaves the old or the new
// content, never a torn file.
#pragma once

#include "util/unique_fd.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace rdmad {

/// Whether write_file_atomically() waits for the disk.
enum class Sync {
    /// fsync the file before the rename and the directory after it: once the call returns,
    /// the new content survives a crash (rdmad's state and its modprobe.d file).
    durable,
    /// No fsync: readers see the old content or the new, never a torn file, but a crash soon
    /// after may bring back the old one. For files rdmad writes again at every start and
    /// change (the exports), as node-exporter's textfile collector documents (write a
    /// temporary file, then mv it into place); an fsync there blocked rdmad's event loop for
    /// 4-16 ms at each write of a 1.1 MB rdmad.prom.
    replace_only,
};

/// A file replaced atomically, written in as many steps as the caller likes (the export
/// writer writes rdmad.prom in slices between events): the new content goes to a temporary
/// file in the same directory, which commit() renames over `path`. Until then `path` is
/// unchanged, and the temporary file is removed when the object ends without commit() or a
/// step fails, from the directory it was made in even if the directory's path has come to name
/// another since (a symlink repointed). Not copyable; two descriptors held (the file, its
/// directory).
class AtomicFile {
  public:
    /// Create the temporary file for `path` (named as write_file_atomically() says, by
    /// `hidden_temp`). Throws std::system_error (with the path) when it cannot.
    AtomicFile(std::string path, bool hidden_temp);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    /// Write `content` after what was written. Throws std::system_error (naming `path`, the
    /// same at every attempt); the temporary file is then removed and the object is spent.
    void append(std::string_view content);
    /// fchmod to `mode`, fsync (Sync::durable), rename over the path, fsync the directory
    /// (Sync::durable; a failure there is logged, not thrown: the content is in place).
    /// Throws std::system_error up to the rename, `path` then unchanged. Once only.
    void commit(mode_t mode, Sync sync);

  private:
    void discard();
    std::string path_;
    std::string temp_; ///< the temporary file's path; "" once spent (committed, discarded)
    std::string name_; ///< its name in dir_fd_
    UniqueFd dir_fd_;  ///< O_PATH descriptor of the directory it was made in
    UniqueFd fd_;
};

/// Write `content` to `path`: a temporary file in the same directory, write, fsync, rename
/// over `path`, then fsync the directory so the rename itself is durable (without the two
/// fsyncs for Sync::replace_only).
/// Throws std::system_error (with the path) on any failure up to the rename; `path` is then
/// unchanged. Once renamed, `path` holds `content`: a failure to sync the directory is
/// logged as a warning, not thrown. With `hidden_temp` the temporary file is a dot-file named
/// so that no admin's file is taken for it (".<name>.rdmad-tmp.XXXXXX"), for directories that
/// others share and whose readers skip dot-files (NFD's features.d, node-exporter's textfile
/// directory, which reads *.prom only); otherwise it is "<name>.XXXXXX".
void write_file_atomically(const std::string& path, std::string_view content, mode_t mode = 0644,
                           bool hidden_temp = false, Sync sync = Sync::durable);

/// Gives a file's content piece by piece, in order, to write_file_atomically().
using FileSink = std::function<void(std::string_view)>;

/// As above, with the content produced piece by piece: `produce` calls its argument with each
/// piece, in order, and each is written as it comes, so that a large file (rdmad.prom, 1.3 MB
/// at 1,024 devices) needs no whole copy in memory. An exception from `produce` removes the
/// temporary file and propagates; `path` is then unchanged.
void write_file_atomically(const std::string& path,
                           const std::function<void(const FileSink&)>& produce, mode_t mode = 0644,
                           bool hidden_temp = false, Sync sync = Sync::durable);

} // namespace rdmad

namespace rdmad {

/// Remove `path`, a file rdmad owns, then fsync its directory so the removal survives a crash.
/// A missing file is fine; throws std::system_error (with the path) otherwise.
void remove_file_durably(const std::string& path);

} // namespace rdmad
