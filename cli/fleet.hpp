// SPDX-License-Identifier: MIT
//
// Asking several hosts at once: one child process and one ssh connection (Client) per host,
// all started together, so that the whole takes about as long as the slowest host, and no
// longer than the timeout.
#pragma once

#include "client.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace rdmactl {

/// How long ask_hosts() waits for the hosts by default (--timeout).
constexpr std::chrono::seconds kDefaultHostTimeout{30};

/// One host's answer: `value` when `error` is "", else why the host could not be asked (a
/// Failure's one line: "cannot reach HOST over ssh: ...", "rdmad is not running on HOST ...",
/// "no answer from HOST within 30 s").
struct HostAnswer {
    std::string host;
    nlohmann::json value;
    std::string error;
};

/// Runs `ask` on a Client of every host of `hosts`, each in a child process of its own, all at
/// once, waiting at most `timeout` (wall time from the start, ssh's connection included); a
/// host still silent then is killed with its ssh (its process group) and gets the error
/// "no answer from HOST within N s". A Failure (or D-Bus error) `ask` or the connection
/// throws becomes the host's `error`; nothing is thrown. Returns the answers in the order of
/// `hosts`. Call it before any other sd-bus use in this process (fork).
std::vector<HostAnswer> ask_hosts(const std::vector<std::string>& hosts,
                                  const std::function<nlohmann::json(Client&)>& ask,
                                  std::chrono::milliseconds timeout);

/// `message` as the error line of `host`: as it is when it names the host already ("cannot
/// reach HOST over ssh: ..."), else "HOST: message".
std::string host_error(const std::string& host, const std::string& message);

} // namespace rdmactl
