// SPDX-License-Identifier: MIT
//
// The verbs of rdmactl, one file each. A verb prints to stdout and returns the exit status;
// failures it cannot report itself are thrown as Failure (client.hpp).
#pragma once

#include "client.hpp"

#include <cstdint>
#include <map>
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
    bool fleet = false;   // -H given more than once: a HOST column, one block per host
};

/// One host's Describe() document for the table verbs; `host` is "" without --host (and
/// unused unless Output::fleet).
struct HostDoc {
    std::string host;
    nlohmann::json doc;
};

/// Prints `value` as pretty JSON (2-space indent), the form every --json output takes.
void print_json(const nlohmann::json& value);

/// JSON text made safe for a terminal: DEL escaped as \u007f (dump with ensure_ascii escapes
/// every other control character).
std::string terminal_safe_json(std::string text);

// status, list and links print one table over every host's document (a HOST column first
// when out.fleet, and the lines below the table prefixed "HOST: "); --json is the caller's
// (status_json(), list_json(), links_json() per host).
int verb_status(const std::vector<HostDoc>& docs, const Output& out);
int verb_list(const std::vector<HostDoc>& docs, const Output& out);
int verb_links(const std::vector<HostDoc>& docs, const Output& out);
/// What --json prints for one host: status the whole document, list {"Devices": [...]},
/// links {"Links": [...]}.
nlohmann::json status_json(const nlohmann::json& doc);
nlohmann::json list_json(const nlohmann::json& doc);
nlohmann::json links_json(const nlohmann::json& doc);

/// show NAME on one host: {"Kind": "Devices" or "Links", "Object": the object, "Doc": the
/// Describe() document}. Throws Failure "no RDMA device or netdev named NAME".
nlohmann::json show_lookup(Client& client, const std::string& name);
/// Prints what show_lookup() found (its "Object" with --json).
int verb_show(const nlohmann::json& found, const Output& out);
/// Prints one line per change rdmad signals until SIGINT or SIGTERM (then returns 0).
int verb_monitor(Client& client, const Output& out);
/// Port.SetPortType on port `port` of `device`; prints the request and how the port stands.
int verb_set_port_type(Client& client, const Output& out, const std::string& device, unsigned port,
                       const std::string& type, bool persist);
/// Port.SetPFCNoDrop on the device's port 1 (PFC is per device); `priorities` already checked.
int verb_set_pfc(Client& client, const Output& out, const std::string& device,
                 const std::vector<std::uint8_t>& priorities, bool persist);
/// Port.SetTrust ("dscp" or "pcp", already checked) on the device's port 1 (set per device).
int verb_set_trust(Client& client, const Output& out, const std::string& device,
                   const std::string& trust, bool persist);
/// Port.SetDSCPPriority on the device's port 1 (set per device); `map` already checked.
int verb_set_dscp(Client& client, const Output& out, const std::string& device, const DscpMap& map,
                  bool exclusive, bool persist);
/// Port.SetRDMACM on the device's port 1 (set per device): `roce_mode` "" and `tos` -1 leave
/// that one alone; at least one given (checked).
int verb_set_rdma_cm(Client& client, const Output& out, const std::string& device,
                     const std::string& roce_mode, std::int32_t tos, bool persist);
/// Port.Revert: drops the D-Bus settings of `device` (port 0), or the port type of its port
/// `port`; prints what it asked.
int verb_revert(Client& client, const Output& out, const std::string& device, unsigned port);
/// Manager.Reconcile: a table OBJECT SETTING FROM TO, or a JSON array.
int verb_reconcile(Client& client, const Output& out, bool dry_run);
/// Manager.Reload: prints nothing on success.
int verb_reload(Client& client, const Output& out);
/// install-providers: Manager.InstallProviders(); prints the packages installing.
int verb_install_providers(Client& client, const Output& out);
/// Every problem of the Describe() document `doc`, as doctor --json prints them: the daemon's
/// own, then each device's; only those of the RDMA device `device` when it is not "" (Failure
/// when there is no such device).
nlohmann::json doctor_list(const nlohmann::json& doc, const std::string& device);
/// kExitProblems when a problem of doctor_list() is an error or warning, else 0.
int doctor_status(const nlohmann::json& list);
/// Prints doctor_list() grouped per object and port, with its remedy (and evidence with -v),
/// or as JSON with out.json. Returns doctor_status().
int verb_doctor(const nlohmann::json& list, const Output& out);

/// diff over the hosts that answered: what differs between hosts that should be alike
/// (verb_diff.cpp). `errors`: host -> why it could not be asked (in --json). Returns
/// kExitProblems when something differs, else 0.
int verb_diff(const std::vector<HostDoc>& docs, const std::map<std::string, std::string>& errors,
              const Output& out);

} // namespace rdmactl
