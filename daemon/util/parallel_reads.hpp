// SPDX-License-Identifier: MIT
//
// Reads of many independent sysfs directories spread over a few threads, for the scan of the
// whole host (start-up, and a resync after lost uevents). A read of sysfs is a system call per
// file whose work the kernel does on the reader's CPU (kernfs's show()), so a host of 64
// devices is READY in less wall time on two CPUs than on one (bench/README.md, issue #24).
// The threads live for one call: none is left when it returns, so nothing runs beside the
// event loop between passes (a fork for a tool never meets a thread; umockdev's preload, for
// one, keeps a mutex that a fork would copy held; ARCHITECTURE-NOTES.md, umockdev item 12).
#pragma once

#include "util/sysfs.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace rdmad {

/// The threads a read of `items` independent directories uses beside the caller's: none
/// below kParallelReadMin items (a thread's start costs about what a few devices' reads
/// do), else one less than the CPUs this process may run on (sched_getaffinity(2)), at most
/// kParallelReadMaxThreads - 1.
unsigned parallel_read_workers(size_t items);

/// Below this many items a read stays on the calling thread.
inline constexpr size_t kParallelReadMin = 32;
/// Threads of one read at most, the caller's included: sysfs reads of one device contend on
/// no lock of their own, but each thread adds a malloc arena's worth of resident memory.
inline constexpr unsigned kParallelReadMaxThreads = 4;

/// Calls `read(slot, i)` once for every i in [0, items), on the calling thread (slot 0) and on
/// `workers` more threads (slots 1..workers); each takes the next index when it is done with
/// one, so a list of uneven items still balances. `slot` lets the caller give each thread its
/// own cache. Returns once every call has returned. An exception thrown by a call stops the
/// thread that made it from taking more items; the first one is rethrown here, after the
/// join (the items no thread took are then not read).
void parallel_read(size_t items, unsigned workers,
                   const std::function<void(unsigned slot, size_t i)>& read);

/// `read(path, cache)` of each of `paths` that exists (sysfs::exists()), through
/// parallel_read() with `workers` threads, each with a `Cache` of its own; in the order of
/// `paths`, nullopt where one is gone.
template <class Cache, class Read>
auto read_each(const std::vector<std::string>& paths, unsigned workers, Read read) {
    std::vector<std::optional<std::invoke_result_t<Read&, const std::string&, Cache&>>> out(
        paths.size());
    std::vector<Cache> caches(workers + 1);
    parallel_read(paths.size(), workers, [&](unsigned slot, size_t i) {
        if (sysfs::exists(paths[i]))
            out[i] = read(paths[i], caches[slot]);
    });
    return out;
}

} // namespace rdmad
