// SPDX-License-Identifier: MIT
//
// The semantics every mutating method shares: check the arguments, ask polkit (or, without
// it, the uid), do the work, reply exactly once; whatever is thrown on the way becomes a named
// error reply, so no exception reaches sd-bus's dispatch (which would end the daemon).
#pragma once

#include "bus/authorizer.hpp"
#include "bus/controller.hpp"
#include "bus/errors.hpp"
#include "util/log.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <systemd/sd-bus.h>
#include <utility>

namespace rdmad {

/// Where the objects' mutating methods go. Null members answer NotSupported.
struct Methods {
    Controller* controller = nullptr;
    Authorizer* authorizer = nullptr;
};

namespace method_call {

/// A method call kept for its later reply.
using Call = std::shared_ptr<sd_bus_message>;
inline Call keep(sd_bus_message* m) { return Call(sd_bus_message_ref(m), sd_bus_message_unref); }

/// Reply to `call` with the error `name`; a reply that cannot be sent (the caller left) is
/// only logged.
inline void reply_error(sd_bus_message* call, const char* name, std::string_view message) {
    sd_bus_error e = SD_BUS_ERROR_NULL;
    errors::set(&e, name, message);
    if (int r = sd_bus_reply_method_error(call, &e); r < 0)
        log::warning("cannot send the error reply {}: {}", name, std::strerror(-r));
    sd_bus_error_free(&e);
}

/// Run `work(call)`, which sends the reply; when it throws, reply with the error it names.
template <typename Work> void answer(sd_bus_message* call, Work& work) noexcept {
    try {
        if (int r = work(call); r < 0)
            log::warning("cannot send the reply: {}", std::strerror(-r));
    } catch (const MethodError& e) {
        reply_error(call, e.name(), e.message());
    } catch (const std::exception& e) {
        reply_error(call, errors::Failed, e.what());
    } catch (...) {
        reply_error(call, errors::Failed, "unexpected error");
    }
}

} // namespace method_call

/// A mutating method: `check()` first (argument and object checks, which throw MethodError),
/// then polkit for the caller, then `work(call)` on the loop once allowed, which replies
/// (returning sd_bus_reply_method_return()'s result); AccessDenied when denied. Returns what
/// the sd-bus handler returns: 1 (the reply comes later) or a negative errno with `error` set.
/// `action` is the polkit action asked.
template <typename Check, typename Work>
int call_authorized(const Methods& methods, sd_bus_message* m, sd_bus_error* error, Check check,
                    Work work, const char* action = Authorizer::kAction) {
    return errors::guard(error, [&] {
        if (!methods.controller || !methods.authorizer)
            throw MethodError(api::kNotSupported, "not configurable");
        check();
        const char* s = sd_bus_message_get_sender(m);
        const std::string sender = s ? s : "";
        if (methods.authorizer->pending(sender) >= Authorizer::kMaxPendingPerCaller)
            throw MethodError(api::kBusy, "too many of this caller's calls wait for authorization");
        method_call::Call call = method_call::keep(m);
        methods.authorizer->check(
            sender,
            [call, work = std::move(work)](bool allowed, const std::string& why) mutable {
                if (!allowed) {
                    method_call::reply_error(call.get(), errors::AccessDenied, why);
                    return;
                }
                method_call::answer(call.get(), work);
            },
            action);
        return 1;
    });
}

} // namespace rdmad
