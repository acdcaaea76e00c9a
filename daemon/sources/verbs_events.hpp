// SPDX-License-Identifier: MIT
//
// Port state changes as verbs async events (IBV_EVENT_PORT_ACTIVE, PORT_ERR, GID_CHANGE,
// LID_CHANGE, ...) on each device's context, read on the sd-event loop. Where a device cannot
// be opened (no provider, no /dev/infiniband/uverbsN, an emulated host) rdmad follows that
// device through "change" uevents only, and says so once in the log.
//
// libibverbs is loaded with dlopen() when the first device whose verbs char device exists is
// to be opened, not linked: linked, it and the libnl-3 and libnl-route-3 it links were 0.63
// MiB of every rdmad's resident memory (their relocated pages and text; bench/smaps.sh), on
// hosts where no device can be opened as well (ib_uverbs not loaded, no /dev/infiniband in
// the namespace). libibverbs itself lists only devices whose char device stat()s (rdma-core
// libibverbs/init.c try_access_device()), so a device without one is not openable either way.
// The library, once loaded, stays loaded (its providers are loaded by it).
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
    /// RDMA device name -> the path of its verbs char device ("/dev/infiniband/uverbs0").
    using Devices = std::map<std::string, std::string>;

    VerbsEvents(sd_event* event, Handler handler);
    VerbsEvents(const VerbsEvents&) = delete;
    VerbsEvents& operator=(const VerbsEvents&) = delete;

    /// Follow exactly the devices given (those that have a verbs char device in sysfs):
    /// close the gone ones at once, open the new ones at once after a quiet spell, and
    /// during a burst from an idle-priority timer, at most once a second. Opening needs
    /// ibv_get_device_list(), which reads every uverbs device of the host again: once per
    /// pass of a 1,000-VF burst it was 17 % of rdmad's CPU. Until its context is open, a
    /// device in a burst is followed as an unopenable one is (change uevents, link changes).
    /// Devices that cannot be opened are tried again only after they disappear and come back.
    /// A device whose char device path does not exist is not openable, and needs no
    /// libibverbs to say so.
    void track(const Devices& devices);

  private:
    /// Closes with the loaded library's ibv_close_device().
    struct CloseDevice {
        int (*close)(ibv_context*); ///< null when value-initialized (no initializer: GCC would not
                                    ///< default-construct the unique_ptr inside VerbsEvents)
        void operator()(ibv_context* c) const { close(c); }
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
    /// Note `name` as a device that cannot be opened (said once in the log).
    void not_openable(const std::string& name);
    /// Open what `wanted_` names (one ibv_get_device_list()).
    void open_wanted();

    sd_event* event_;
    Handler handler_;
    std::map<std::string, Context> open_; ///< nodes stay put: each source points at its own
    std::set<std::string> unopenable_;
    Devices wanted_; ///< tracked, neither open nor unopenable yet
    EventSource timer_;            ///< opens wanted_; off while it is empty
    uint64_t last_open_usec_ = 0;  ///< CLOCK_MONOTONIC of the last open_wanted(), 0 = never
    bool fallback_logged_ = false;
};

} // namespace rdmad
