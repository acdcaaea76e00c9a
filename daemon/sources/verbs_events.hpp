// SPDX-License-Identifier: MIT
//
// Port state changes as verbs async events (IBV_EVENT_PORT_ACTIVE, PORT_ERR, GID_CHANGE,
// LID_CHANGE, ...) on each device's context, read on the sd-event loop. Where a device cannot
// be opened (no provider, no /dev/infiniband/uverbsN, an emulated host) rdmad follows that
// device through "change" uevents only, and says so once in the log.
#pragma once

#include <functional>
#include <map>
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
    ~VerbsEvents();
    VerbsEvents(const VerbsEvents&) = delete;
    VerbsEvents& operator=(const VerbsEvents&) = delete;

    /// Follow exactly the devices named (RDMA device names that have a verbs char device):
    /// open the new ones, close the gone ones. Devices that cannot be opened are tried again
    /// only after they disappear and come back.
    void track(const std::set<std::string>& devices);

  private:
    struct Context {
        ibv_context* context = nullptr;
        sd_event_source* source = nullptr;
        VerbsEvents* owner = nullptr;
        std::string name;
    };
    static int on_io(sd_event_source* s, int fd, uint32_t revents, void* userdata);
    void close(Context& c);

    sd_event* event_;
    Handler handler_;
    std::map<std::string, Context> open_;
    std::set<std::string> unopenable_;
    bool fallback_logged_ = false;
};

} // namespace rdmad
