// SPDX-License-Identifier: MIT
//
// Port state changes as verbs async events (IBV_EVENT_PORT_ACTIVE, PORT_ERR, GID_CHANGE,
// LID_CHANGE, ...) on each device's context, read on the sd-event loop. Where a device cannot
// be opened (no provider, no /dev/infiniband/uverbsN, an emulated host) rdmad follows that
// device through "change" uevents only, and says so once in the log.
#pragma once

#include "util/event_source.hpp"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <systemd/sd-event.h>

struct ibv_context;

namespace rdmad {

class VerbsEvents {
  public:
    /// Called with the RDMA device name on every async event of that device.
    using Handler = std::function<void(const std::string& device)>;

    VerbsEvents(sd_event* event, Handler handler);
    VerbsEvents(const VerbsEvents&) = delete;
    VerbsEvents& operator=(const VerbsEvents&) = delete;

    /// Follow exactly the devices named (RDMA device names that have a verbs char device):
    /// close the gone ones at once, open the new ones at once after a quiet spell, and
    /// during a burst from an idle-priority timer, at most once a second. Opening needs
    /// ibv_get_device_list(), which reads every uverbs device of the host again: once per
    /// pass of a 1,000-VF burst it was 17 % of rdmad's CPU. Until its context is open, a
    /// device in a burst is followed as an unopenable one is (change uevents, link changes).
    /// Devices that cannot be opened are tried again only after they disappear and come back.
    void track(const std::set<std::string>& devices);

  private:
    struct CloseDevice {
        void operator()(ibv_context* c) const;
    };
    struct Context {
        std::unique_ptr<ibv_context, CloseDevice> context;
        EventSource source; ///< reads the context's async fd: goes first
        VerbsEvents* owner = nullptr;
        std::string name;
    };
    static int on_io(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    static int on_timer(sd_event_source* s, uint64_t usec, void* userdata);
    void close(Context& c);
    /// Open what `wanted_` names (one ibv_get_device_list()).
    void open_wanted();

    sd_event* event_;
    Handler handler_;
    std::map<std::string, Context> open_; ///< nodes stay put: each source points at its own
    std::set<std::string> unopenable_;
    std::set<std::string> wanted_; ///< tracked, neither open nor unopenable yet
    EventSource timer_;            ///< opens wanted_; off while it is empty
    uint64_t last_open_usec_ = 0;  ///< CLOCK_MONOTONIC of the last open_wanted(), 0 = never
    bool fallback_logged_ = false;
};

} // namespace rdmad
