// SPDX-License-Identifier: MIT
#include "reconcile/config_loader.hpp"

#include "util/log.hpp"
#include "util/loop_edge.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <system_error>
#include <unistd.h>

namespace rdmad {

ConfigLoader::ConfigLoader(sd_event* event, Done done)
    : done_(std::move(done)), wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!wake_)
        throw std::system_error(errno, std::generic_category(), "config loader eventfd");
    if (int r = sd_event_add_io(event, into(source_), wake_.get(), EPOLLIN, on_done, this); r < 0)
        throw std::system_error(-r, std::generic_category(), "config loader event source");
}

ConfigLoader::~ConfigLoader() {
    if (worker_.joinable())
        worker_.join();
}

void ConfigLoader::start(ReconcilerOptions options) {
    if (running()) {
        again_ = std::move(options);
        return;
    }
    discard_ = false;
    result_.reset();
    error_ = nullptr;
    try {
        worker_ = std::thread([this, options] {
            // Below the loop: on a busy host the loop answering calls wins the CPU from the
            // parse (Linux: setpriority(2) on a thread id sets that thread's nice value).
            errno = 0;
            const int nice = ::getpriority(PRIO_PROCESS, 0);
            if (errno == 0)
                ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), std::min(nice + 10, 19));
            load(options);
        });
    } catch (const std::system_error& e) {
        // No thread to be had (RLIMIT_NPROC, TasksMax=): read on the loop's thread, as the
        // full scan does (util/parallel_reads.cpp); the eventfd hands the result over alike.
        // Thrown out of here, it ended SIGHUP and Reload with EAGAIN, nothing read again.
        log::warning("reading the configuration on the loop: no thread for it ({})", e.what());
        on_loop_ = true;
        load(options);
    }
}

void ConfigLoader::load(const ReconcilerOptions& options) {
    try {
        result_ = Reconciler::load(options);
    } catch (...) {
        error_ = std::current_exception();
    }
    const uint64_t one = 1;
    // An eventfd write of 1 cannot block or fail short of an overflow of 2^64 - 2.
    [[maybe_unused]] ssize_t n = ::write(wake_.get(), &one, sizeof one);
}

int ConfigLoader::on_done(sd_event_source*, int fd, uint32_t, void* userdata) {
    uint64_t count = 0;
    [[maybe_unused]] ssize_t n = ::read(fd, &count, sizeof count);
    return at_loop_edge("reading the configuration",
                        [&] { static_cast<ConfigLoader*>(userdata)->finish(); });
}

void ConfigLoader::finish() {
    if (!running())
        return;
    if (worker_.joinable())
        worker_.join(); // it has written its result: this returns at once
    on_loop_ = false;
    std::optional<Reconciler::Loaded> loaded = std::move(result_);
    result_.reset();
    if (error_) {
        try {
            std::rethrow_exception(error_);
        } catch (const std::exception& e) {
            log::error("reading the configuration failed: {}", e.what());
        }
        loaded.reset();
    }
    if (discard_)
        loaded.reset();
    discard_ = false;
    if (again_) {
        // Start the next read first: done_ may take a while (a full resync).
        ReconcilerOptions next = std::move(*again_);
        again_.reset();
        start(std::move(next));
    }
    done_(std::move(loaded));
}

} // namespace rdmad
