// SPDX-License-Identifier: MIT
//
// Reading the configuration off the loop: Reconciler::load() runs on a thread of its own, and
// the loop takes what it read when an eventfd says it is done. Megabytes of drop-ins then
// cost the loop nothing while they are parsed: D-Bus calls are answered meanwhile. The loop
// thread does everything else (the worker touches no daemon state, only the files).
#pragma once

#include "reconcile/reconciler.hpp"
#include "util/event_source.hpp"
#include "util/unique_fd.hpp"

#include <exception>
#include <functional>
#include <optional>
#include <thread>

namespace rdmad {

class ConfigLoader {
  public:
    /// Called on the loop with what a load read; nullopt when it is not to be taken (it
    /// failed, logged, or discard() was called while it ran).
    using Done = std::function<void(std::optional<Reconciler::Loaded>)>;

    /// Throws std::system_error when the eventfd or its event source cannot be made.
    ConfigLoader(sd_event* event, Done done);
    /// Waits for a load that runs (the worker cannot be stopped in the middle of a file).
    ~ConfigLoader();
    ConfigLoader(const ConfigLoader&) = delete;
    ConfigLoader& operator=(const ConfigLoader&) = delete;

    /// Read the files `options` names on the worker. While a load runs, another start()
    /// reads again once it is done (that read sees the files as they are after this call);
    /// any number of calls meanwhile make one more read. Where no thread can be started
    /// (std::system_error: RLIMIT_NPROC, TasksMax=), the read is done here, on the caller's
    /// thread, and its result taken on the loop all the same.
    void start(ReconcilerOptions options);
    bool running() const { return worker_.joinable() || on_loop_; }
    /// A newer read was taken on the loop: the load running now is not wanted.
    void discard() { discard_ = running(); }

  private:
    static int on_done(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    void finish();
    /// Reconciler::load() into result_ or error_, then wake_ written (on the worker, or on the
    /// loop when there was no thread).
    void load(const ReconcilerOptions& options);

    Done done_;
    UniqueFd wake_;      ///< eventfd the worker writes when it is done
    EventSource source_; ///< reads wake_ on the loop
    // Written by the worker before it writes wake_, read by the loop after join().
    std::optional<Reconciler::Loaded> result_;
    std::exception_ptr error_;
    std::thread worker_;
    bool discard_ = false;
    bool on_loop_ = false;                   ///< start() read on the caller's thread; not taken yet
    std::optional<ReconcilerOptions> again_; ///< a start() while the worker ran
};

} // namespace rdmad
