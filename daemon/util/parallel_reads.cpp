// SPDX-License-Identifier: MIT
#include "util/parallel_reads.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <sched.h>
#include <system_error>
#include <thread>
#include <vector>

namespace rdmad {

unsigned parallel_read_workers(size_t items) {
    if (items < kParallelReadMin)
        return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    // The CPUs of this process's affinity mask (CPUAffinity= in a unit), not the machine's.
    const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return static_cast<unsigned>(std::clamp(cpus, 1, int(kParallelReadMaxThreads)) - 1);
}

void parallel_read(size_t items, unsigned workers,
                   const std::function<void(unsigned slot, size_t i)>& read) {
    std::atomic<size_t> next{0};
    std::mutex failed_lock;
    std::exception_ptr failed;
    auto run = [&](unsigned slot) {
        try {
            for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < items;)
                read(slot, i);
        } catch (...) {
            std::lock_guard lock(failed_lock);
            if (!failed)
                failed = std::current_exception();
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(workers);
    try {
        for (unsigned slot = 1; slot <= workers; ++slot)
            threads.emplace_back(run, slot);
    } catch (const std::system_error&) {
        // No thread to be had (RLIMIT_NPROC, TasksMax=): the caller's thread reads the rest.
    }
    run(0);
    for (auto& t : threads)
        t.join();
    if (failed)
        std::rethrow_exception(failed);
}

} // namespace rdmad
