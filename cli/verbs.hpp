// SPDX-License-Identifier: MIT
//
// The verbs of rdmactl, one file each. A verb prints to stdout and returns the exit status;
// failures it cannot report itself are thrown as Failure (client.hpp).
#pragma once

#include "client.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rdmactl {

/// Exit status of doctor when rdmad reports an error or a warning.
constexpr int kExitProblems = 3;

struct Output {
    bool json = false;  // --json: the Describe() document, or the part the verb covers
    bool legend = true; // --no-legend clears it: no table headers, summary or blank lines
    bool color = false; // stdout is a terminal, no --no-color, no NO_COLOR, not --json
    bool verbose = false; // -v: doctor prints each problem's evidence
};

/// Prints `value` as pretty JSON (2-space indent), the form every --json output takes.
void print_json(const nlohmann::json& value);

/// JSON text made safe for a terminal: DEL escaped as \u007f (dump with ensure_ascii escapes
/// every other control character).
std::string terminal_safe_json(std::string text);

int verb_status(Client& client, const Output& out);
int verb_list(Client& client, const Output& out);
int verb_show(Client& client, const Output& out, const std::string& name);
int verb_links(Client& client, const Output& out);
/// Prints one line per change rdmad signals until SIGINT or SIGTERM (then returns 0).
int verb_monitor(Client& client, const Output& out);
/// Port.SetPortType on port `port` of `device`; prints the request and how the port stands.
int verb_set_port_type(Client& client, const Output& out, const std::string& device, unsigned port,
                       const std::string& type, bool persist);
/// Port.SetPFCNoDrop on the device's port 1 (PFC is per device); `priorities` already checked.
int verb_set_pfc(Client& client, const Output& out, const std::string& device,
                 const std::vector<std::uint8_t>& priorities, bool persist);
/// Port.Revert: drops the D-Bus settings of `device` (port 0), or the port type of its port
/// `port`; prints what it asked.
int verb_revert(Client& client, const Output& out, const std::string& device, unsigned port);
/// Manager.Reconcile: a table OBJECT SETTING FROM TO, or a JSON array.
int verb_reconcile(Client& client, const Output& out, bool dry_run);
/// Manager.Reload: prints nothing on success.
int verb_reload(Client& client, const Output& out);
/// Every problem, grouped per object and port, with its remedy (and evidence with -v); only
/// those of the RDMA device `device` when it is not "" (Failure when there is no such device).
/// Returns kExitProblems when one is an error or warning.
int verb_doctor(Client& client, const Output& out, const std::string& device);

} // namespace rdmactl
