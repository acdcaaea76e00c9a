// SPDX-License-Identifier: MIT
//
// Files rdmad owns are replaced atomically, so a crash (even kill -9) leaves the old or the new
// content, never a torn file.
#pragma once

#include <string>
#include <string_view>
#include <sys/types.h>

namespace rdmad {

/// Write `content` to `path`: a temporary file in the same directory, write, fsync, rename
/// over `path`, then fsync the directory so the rename itself is durable.
/// Throws std::system_error (with the path) on any failure up to the rename; `path` is then
/// unchanged. Once renamed, `path` holds `content`: a failure to sync the directory is
/// logged as a warning, not thrown. With `hidden_temp` the temporary file is a dot-file named
/// so that no admin's file is taken for it (".<name>.rdmad-tmp.XXXXXX"), for directories that
/// others share and whose readers skip dot-files (NFD's features.d, node-exporter's textfile
/// directory, which reads *.prom only); otherwise it is "<name>.XXXXXX".
void write_file_atomically(const std::string& path, std::string_view content, mode_t mode = 0644,
                           bool hidden_temp = false);

} // namespace rdmad
