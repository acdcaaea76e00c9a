// SPDX-License-Identifier: MIT
//
// Running an outside tool (mstflint's mstconfig) the way a daemon must: without a shell (argv
// as given, posix_spawnp(3)), with stdin on /dev/null, its stdout and stderr captured up to a
// bound, signals back at their defaults in the child (rdmad blocks SIGTERM, SIGCHLD, ...), and a
// time limit after which the tool's process group is killed. run_tool() is synchronous (for
// tests and one-off reads); the daemon's loop runs tools with util/tool_runner.hpp.
#pragma once

#include "util/unique_fd.hpp"

#include <chrono>
#include <spawn.h>
#include <string>
#include <vector>

namespace rdmad {

/// What became of one run.
struct ToolRun {
    /// posix_spawnp(3)'s error: ENOENT when `argv[0]` is not there (not on PATH, or the path
    /// given does not exist), EACCES when it is not executable; 0 when the tool ran.
    int spawn_error = 0;
    /// The exit status when it exited, -1 when it was killed (timed_out, or a signal).
    int exit_status = -1;
    bool timed_out = false; ///< killed (SIGKILL to its process group) at the time limit
    std::string out;        ///< stdout, at most max_output bytes
    std::string err;        ///< stderr, at most max_output bytes
    bool ok() const { return spawn_error == 0 && exit_status == 0; }
};

/// Initialize `attr` for a program rdmad starts (a tool, a dispatcher script): every signal
/// unblocked and at its default (rdmad blocks SIGTERM, SIGCHLD, ...: neither the program nor
/// its children may inherit that) and a process group of its own (a time limit kills the
/// whole group). The caller destroys it (posix_spawnattr_destroy()).
void init_child_spawnattr(posix_spawnattr_t& attr);

/// A pipe for a tool's output, both ends close-on-exec; throws std::system_error.
void make_pipe(UniqueFd& read_end, UniqueFd& write_end);

/// Start `argv` (argv[0] a path, or a name looked up on PATH) with this process's environment,
/// stdin on /dev/null, stdout on `out_fd` and stderr on `err_fd`, the attributes of
/// init_child_spawnattr() and no other descriptor; `pid` gets its pid. Returns
/// posix_spawnp(3)'s error (0 when it runs; ENOENT for an empty argv).
int spawn_tool(const std::vector<std::string>& argv, int out_fd, int err_fd, pid_t& pid);

/// Run `argv` (argv[0] a path, or a name looked up on PATH) with this process's environment.
/// Kills it after `timeout`; keeps at most `max_output` bytes of each stream (the rest is read
/// and dropped, so a chatty tool never blocks on a full pipe). Once the tool itself has exited,
/// what is left in its process group is killed and what is already in the pipes is read (for
/// at most 50 ms): a process it left behind that holds them open never turns its answer into
/// a time-out. Never throws for what the tool
/// does; throws std::system_error when a pipe cannot be made.
ToolRun run_tool(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                 size_t max_output = 64 * 1024);

} // namespace rdmad
