// SPDX-License-Identifier: MIT
//
// The verbs of rdmactl, one file each. A verb prints to stdout and returns the exit status;
// failures it cannot report itself are thrown as Failure (client.hpp).
#pragma once

#include "client.hpp"

#include <string>

namespace rdmactl {

struct Output {
    bool json = false;  // --json: the Describe() document, or the part the verb covers
    bool legend = true; // --no-legend clears it: no table headers, no summary lines
};

/// Prints `value` as pretty JSON (2-space indent), the form every --json output takes.
void print_json(const nlohmann::json& value);

int verb_status(Client& client, const Output& out);
int verb_list(Client& client, const Output& out);
int verb_show(Client& client, const Output& out, const std::string& name);
int verb_links(Client& client, const Output& out);
/// Prints one line per change rdmad signals until SIGINT or SIGTERM (then returns 0).
int verb_monitor(Client& client, const Output& out);

} // namespace rdmactl
