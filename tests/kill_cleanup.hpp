// SPDX-License-Identifier: MIT
//
// What a test process made outside itself (temp directories, umockdev testbeds, children, a
// named network namespace) is undone also when the process does not get to undo it: meson
// ends a test that ran out of time with SIGTERM to its process group and SIGKILL 0.5 s later,
// Ctrl-C is SIGINT to the group, and neither runs a destructor.
//
// main() (tests/catch_main.cpp) forks a small cleanup process before any test runs, in a
// session of its own, so that no signal to the test's process group reaches it. The test
// tells it over a socket what to undo and what no longer needs it; when the socket reaches
// end of file (the test process ended, whatever ended it, or the signal handler below shut it
// down), it SIGKILLs the children still registered, waits until they are gone, runs the
// registered commands and removes the registered directories, then exits.
//
// SIGTERM, SIGINT, SIGHUP and the crash signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT)
// first print `*** signal N ended the test during test case "NAME"` on stderr with write(2)
// (tools/count-tests.py reads it), then let the cleanup process do its work, waiting for it
// 0.4 s at most (within meson's 0.5 s), then end the process as the signal would have.
// Nothing in the handler allocates or takes a lock. Catch2's own signal handlers are off
// (CATCH_CONFIG_NO_POSIX_SIGNALS): they reported through the reporter, allocating, before this.
#pragma once

#include <string>
#include <sys/types.h>

namespace kill_cleanup {

// Fork the cleanup process and install the signal handlers (main(), once).
void start();

// `path` (a directory) is removed when the process ends before forget_when_killed(path).
void remove_when_killed(const std::string& path);
void forget_when_killed(const std::string& path);
// `pid` (a child: rdmad, dbus-daemon, a mock) is SIGKILLed, before the directories go.
void kill_when_killed(pid_t pid);
void forget_child(pid_t pid);
// `command` runs under /bin/sh -c (e.g. `ip netns del NAME`), before the directories go.
void run_when_killed(const std::string& command);
void forget_command(const std::string& command);

// The test case running now (catch_main.cpp's listener), "" between cases.
void set_running_case(const std::string& name);

} // namespace kill_cleanup
