// SPDX-License-Identifier: MIT
//
// The semantics every mutating method shares: check the arguments, ask polkit (or, without
// it, the uid), do the work, reply exactly once; whatever is thrown on the way becomes a named
// error reply, so no exception reaches sdbus-c++'s dispatch (which would end the daemon).
#pragma once

#include "bus/authorizer.hpp"
#include "bus/controller.hpp"
#include "bus/errors.hpp"
#include "util/log.hpp"

#include <memory>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <utility>

namespace rdmad {

/// Where the objects' mutating methods go. Null members answer NotSupported.
struct Methods {
    Controller* controller = nullptr;
    Authorizer* authorizer = nullptr;
};

namespace method_call {

/// Send `error` as the reply; a reply that cannot be sent (the caller left) is only logged.
template <typename Result> void reply_error(Result& result, const sdbus::Error& error) {
    try {
        result.returnError(error);
    } catch (const std::exception& e) {
        log::warning("cannot send the error reply {}: {}", error.getName(), e.what());
    }
}

/// Run `f`; when it throws, reply with the error it names and return false.
template <typename Result, typename F> bool attempt(Result& result, F&& f) {
    try {
        f();
        return true;
    } catch (const sdbus::Error& e) {
        reply_error(result, e);
    } catch (const MethodError& e) {
        reply_error(result, errors::make(e.name(), e.message()));
    } catch (const std::exception& e) {
        reply_error(result, errors::make(errors::Failed, e.what()));
    }
    return false;
}

/// Reply with what `work()` returns (nothing for a method without results).
template <typename... R, typename Work> void answer(sdbus::Result<R...>& result, Work& work) {
    attempt(result, [&] {
        if constexpr (sizeof...(R) == 0) {
            work();
            result.returnResults();
        } else {
            result.returnResults(work());
        }
    });
}

} // namespace method_call

/// A mutating method called by `sender`: `check()` first (argument and object checks, which
/// throw MethodError), then polkit, then `work()` on the loop once allowed; AccessDenied when
/// denied. `work()` returns the method's result (nothing for a method without results).
template <typename... R, typename Check, typename Work>
void call_authorized(const Methods* methods, const std::string& sender,
                     sdbus::Result<R...>&& result, Check check, Work work) {
    auto reply = std::make_shared<sdbus::Result<R...>>(std::move(result));
    if (!method_call::attempt(*reply, [&] {
            if (!methods || !methods->controller || !methods->authorizer)
                throw MethodError(api::kNotSupported, "not configurable");
            check();
        }))
        return;
    methods->authorizer->check(
        sender, [reply, work = std::move(work)](bool allowed, const std::string& why) mutable {
            if (!allowed) {
                method_call::reply_error(*reply, errors::make(errors::AccessDenied, why));
                return;
            }
            method_call::answer(*reply, work);
        });
}

} // namespace rdmad
