// SPDX-License-Identifier: MIT
//
// The dispatcher: runs the dispatcher scripts (script_dir.hpp) for each event (events.hpp),
// one event at a time and one script at a time, on the daemon's sd-event loop without ever
// waiting for a script. Each script is started with posix_spawn(3) in its own process group,
// stdin /dev/null, stdout and stderr to the journal (identifier "rdmad-dispatcher", /dev/null
// without a journal), no other file descriptor, every signal default and unblocked, and an
// environment of PATH and the event's RDMAD_* variables; `script OBJECT EVENT`. Its exit is an
// sd-event child source (SIGCHLD must be blocked: the daemon blocks it), its time limit a
// timer source, after which the process group gets SIGKILL. Events that arrive meanwhile
// wait in a queue, in order; past `max_queue` events the queue keeps the latest event of each
// object (events.hpp coalesce()), logged once per overflow.
#pragma once

#include "config/desired.hpp"
#include "dispatch/events.hpp"
#include "dispatch/script_dir.hpp"
#include "inventory/inventory.hpp"
#include "util/event_source.hpp"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include <vector>

namespace rdmad::dispatch {

class Dispatcher {
  public:
    /// `config` is asked at each event (SIGHUP may change [dispatcher]); `event` must outlive
    /// the dispatcher. Throws std::runtime_error when an event source cannot be created.
    Dispatcher(sd_event* event, std::function<DispatcherConfig()> config, size_t max_queue = 16384);
    ~Dispatcher(); ///< a script still running is killed (SIGKILL to its group) and reaped
    Dispatcher(const Dispatcher&) = delete;
    Dispatcher& operator=(const Dispatcher&) = delete;

    /// From now on, changes are events: `inventory` as it is now is known, without events.
    void start(const Inventory& inventory);
    /// `changes` were applied to `inventory`: queue their events (none before start()).
    void changed(const Inventory& inventory, const ChangeSet& changes);

  private:
    void kick();
    void next();
    bool spawn(const Script& script);
    void log_listing(const Listing& listing);
    static int on_kick(sd_event_source* s, void* userdata);
    static int on_child(sd_event_source* s, const siginfo_t* si, void* userdata);
    static int on_timeout(sd_event_source* s, uint64_t usec, void* userdata);

    sd_event* event_;
    std::function<DispatcherConfig()> config_;
    size_t max_queue_;
    bool started_ = false;
    Known known_;
    std::deque<Event> queue_;
    bool overflowed_ = false; ///< logged; reset when the queue empties
    EventSource kick_;
    // The event being dispatched and the script running for it.
    std::optional<Event> current_;
    std::vector<Script> scripts_;
    size_t next_script_ = 0;
    Script running_;
    pid_t pid_ = -1;
    uint64_t started_usec_ = 0;
    uint32_t timeout_sec_ = 0;
    bool timed_out_ = false;
    EventSource child_;
    EventSource timer_;
    std::map<std::string, std::string> refused_logged_; ///< path -> Refused::version logged
    std::vector<std::string> errors_logged_;
};

} // namespace rdmad::dispatch
