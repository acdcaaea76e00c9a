// SPDX-License-Identifier: MIT
//
// Unit tests for parallel_read() (daemon/util/parallel_reads.hpp): the reads of a pass spread
// over a few threads that end with the call.
#include "util/parallel_reads.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <sched.h>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace rdmad;

namespace {

size_t threads_of_this_process() {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
        ++n;
    return n;
}

} // namespace

TEST_CASE("a read of few items stays on the calling thread; of many, it takes at most one "
          "thread less than the CPUs this process may use, and at most 3 more") {
    CHECK(parallel_read_workers(0) == 0);
    CHECK(parallel_read_workers(kParallelReadMin - 1) == 0);
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    const unsigned cpus = static_cast<unsigned>(CPU_COUNT(&set));
    const unsigned want = std::min(cpus, kParallelReadMaxThreads) - 1;
    CHECK(parallel_read_workers(kParallelReadMin) == want);
    CHECK(parallel_read_workers(100000) == want);
    CHECK(kParallelReadMaxThreads == 4);
}

TEST_CASE("every item is read exactly once, each by one of the slots 0..workers, slot 0 on the "
          "caller's thread, and no thread is left when the call returns") {
    const size_t before = threads_of_this_process();
    const size_t items = 10000;
    const unsigned workers = 3;
    auto reads = std::make_unique<std::atomic<int>[]>(items);
    std::vector<std::atomic<size_t>> per_slot(workers + 1);
    const auto caller = std::this_thread::get_id();
    // Catch2's assertions are for the test's own thread: the reads only count.
    std::atomic<bool> slot0_elsewhere{false}, other_on_caller{false}, bad_slot{false};
    parallel_read(items, workers, [&](unsigned slot, size_t i) {
        if (slot > workers) {
            bad_slot = true;
            return;
        }
        reads[i].fetch_add(1);
        per_slot[slot].fetch_add(1);
        const bool on_caller = std::this_thread::get_id() == caller;
        if (slot == 0 && !on_caller)
            slot0_elsewhere = true;
        if (slot != 0 && on_caller)
            other_on_caller = true;
    });
    size_t once = 0;
    for (size_t i = 0; i < items; ++i)
        once += reads[i].load() == 1;
    CHECK(once == items);
    size_t total = 0;
    for (auto& n : per_slot)
        total += n.load();
    CHECK(total == items);
    CHECK_FALSE(bad_slot);
    CHECK_FALSE(slot0_elsewhere);
    CHECK_FALSE(other_on_caller);
    CHECK(threads_of_this_process() == before);
}

TEST_CASE("with no worker, the caller reads every item in order") {
    std::vector<size_t> order;
    parallel_read(5, 0, [&](unsigned slot, size_t i) {
        CHECK(slot == 0);
        order.push_back(i);
    });
    CHECK(order == std::vector<size_t>{0, 1, 2, 3, 4});
    parallel_read(0, 3, [&](unsigned, size_t) { FAIL("no item, no read"); });
}

TEST_CASE("an exception thrown by a read comes back to the caller once every thread has "
          "ended, and the thread that threw takes no more items") {
    const size_t before = threads_of_this_process();
    std::vector<size_t> read;
    CHECK_THROWS_WITH(parallel_read(10, 0,
                                    [&](unsigned, size_t i) {
                                        if (i == 4)
                                            throw std::runtime_error("EIO at item 4");
                                        read.push_back(i);
                                    }),
                      "EIO at item 4");
    CHECK(read == std::vector<size_t>{0, 1, 2, 3});

    // Every read throws, on every thread: one of them is rethrown, nothing is left running.
    std::atomic<int> calls{0};
    CHECK_THROWS_AS(parallel_read(1000, 3,
                                  [&](unsigned, size_t) {
                                      ++calls;
                                      throw std::out_of_range("bad item");
                                  }),
                    std::out_of_range);
    CHECK(calls.load() >= 1);
    CHECK(calls.load() <= 4); // one per thread at most: each stops at its first throw
    CHECK(threads_of_this_process() == before);
}
