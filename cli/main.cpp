// SPDX-License-Identifier: MIT
//
// rdmactl: option parsing, verb dispatch, exit status. 0 success, 1 failure (rdmad not running
// included; with several hosts: one of them could not be asked), 2 usage error (found before
// any call to rdmad), 3 doctor found problems or diff differences. No exception leaves main().
#include "client.hpp"
#include "config.h"
#include "fleet.hpp"
#include "help.hpp"
#include "rdmad_api.hpp"
#include "table.hpp"
#include "terminal.hpp"
#include "verbs.hpp"

#include <fmt/core.h>
#include <sdbus-c++/Error.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <getopt.h>
#include <map>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace rdmactl {

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int usage_error(const std::string& message) {
    fmt::print(stderr, "rdmactl: {}\nTry 'rdmactl --help' for more information.\n",
               sanitize(message));
    return kExitUsage;
}

// "unknown verb 'stauts'; did you mean 'status'?"
int unknown_verb(const std::string& verb) {
    const std::string closest = closest_verb(verb);
    if (closest.empty())
        return usage_error(fmt::format("unknown verb '{}'", verb));
    return usage_error(fmt::format("unknown verb '{}'; did you mean '{}'?", verb, closest));
}

struct Command {
    std::vector<std::string> hosts; // -H, in the order given; empty: the local system bus
    Output output;
    std::string verb = "status";
    std::vector<std::string> args;
    bool persist = false;
    bool dry_run = false;
    bool no_pager = false;
    bool no_color = false;
    std::chrono::milliseconds timeout = kDefaultHostTimeout; // --timeout, several hosts
    bool timeout_given = false;
    // set-port-type, set-pfc, set-dscp, set-rdma-cm: the checked arguments.
    unsigned port = 0;
    std::vector<std::uint8_t> priorities;
    DscpMap dscp_map;
    bool exclusive = false;
    std::string roce_mode; // --roce-mode; "" leaves it
    std::int32_t tos = -1; // --tos; -1 leaves it
    bool roce_mode_given = false;
};

enum {
    ARG_VERSION = 0x100,
    ARG_JSON,
    ARG_NO_LEGEND,
    ARG_PERSIST,
    ARG_DRY_RUN,
    ARG_NO_PAGER,
    ARG_NO_COLOR,
    ARG_TIMEOUT,
    ARG_EXCLUSIVE,
    ARG_ROCE_MODE,
    ARG_TOS
};

// The verbs that take --persist: those that ask rdmad a setting (Port.Set*).
bool set_verb(const std::string& verb) {
    return verb == "set-port-type" || verb == "set-pfc" || verb == "set-trust" ||
           verb == "set-dscp" || verb == "set-rdma-cm";
}

// A decimal number of at most `digits` digits, no sign or spaces.
bool parse_decimal(std::string_view text, std::size_t digits, unsigned& value) {
    if (text.empty() || text.size() > digits || !std::all_of(text.begin(), text.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        }))
        return false;
    value = 0;
    for (char c : text)
        value = value * 10 + static_cast<unsigned>(c - '0');
    return true;
}

bool parse_port(const std::string& text, unsigned& port) {
    // IB port numbers are 8 bits; 0 is the switch port.
    return parse_decimal(text, 3, port) && port >= 1 && port <= 255;
}

// "a,b" -> {"a", "b"}; "" -> {""}; empty items kept ("a," -> {"a", ""}).
std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        items.push_back(text.substr(start, comma - start));
        if (comma == std::string::npos)
            return items;
        start = comma + 1;
    }
}

// "3,4" -> {3, 4}; at least one priority, as rdmad.conf(5) and Port.SetPFCNoDrop require.
// Returns the message of a usage error, "" when fine.
std::string parse_priorities(const std::string& text, std::vector<std::uint8_t>& out) {
    out.clear();
    if (text.empty())
        return "PRIORITIES must be a comma list of 0-7";
    for (const std::string& item : split_commas(text)) {
        if (item.size() != 1 || !std::isdigit(static_cast<unsigned char>(item[0])))
            return fmt::format("bad priority '{}': PRIORITIES must be a comma list of 0-7",
                               item);
        const auto prio = static_cast<std::uint8_t>(item[0] - '0');
        if (prio > rdmad::api::kMaxPriority)
            return fmt::format("priority {} is above {}", item, rdmad::api::kMaxPriority);
        if (std::find(out.begin(), out.end(), prio) != out.end())
            return fmt::format("priority {} given twice", item);
        out.push_back(prio);
    }
    return {};
}

// "26:3,48:6" -> {(26, 3), (48, 6)}: DSCP 0-63 (the 6-bit field of RFC 2474) to priority 0-7,
// at least one entry, each DSCP once, as Port.SetDSCPPriority and rdmad.conf(5)'s
// dscp_priority require. Returns the message of a usage error, "" when fine.
std::string parse_dscp_map(const std::string& text, DscpMap& out) {
    constexpr unsigned kMaxDscp = 63;
    const char* kForm = "MAP must be a comma list of DSCP:PRIORITY (DSCP 0-63, priority 0-7), "
                        "e.g. 26:3,48:6";
    out.clear();
    if (text.empty())
        return kForm;
    for (const std::string& item : split_commas(text)) {
        const std::size_t colon = item.find(':');
        unsigned dscp = 0, prio = 0;
        if (colon == std::string::npos ||
            !parse_decimal(std::string_view(item).substr(0, colon), 3, dscp) ||
            !parse_decimal(std::string_view(item).substr(colon + 1), 3, prio))
            return fmt::format("bad entry '{}': {}", item, kForm);
        if (dscp > kMaxDscp)
            return fmt::format("DSCP {} is above {} in '{}'", dscp, kMaxDscp, item);
        if (prio > rdmad::api::kMaxPriority)
            return fmt::format("priority {} is above {} in '{}'", prio, rdmad::api::kMaxPriority,
                               item);
        for (const auto& entry : out)
            if (entry.first == dscp)
                return fmt::format("DSCP {} given twice", dscp);
        out.emplace_back(static_cast<std::uint8_t>(dscp), static_cast<std::uint8_t>(prio));
    }
    return {};
}

// -H's value: one [USER@]HOST or a comma list of them, appended to `hosts`. Returns the
// message of a usage error, "" when fine.
std::string add_hosts(const std::string& text, std::vector<std::string>& hosts) {
    for (const std::string& host : split_commas(text)) {
        if (host.empty())
            return "--host needs a [USER@]HOST (or a comma list of them)";
        if (std::find(hosts.begin(), hosts.end(), host) != hosts.end())
            return fmt::format("host '{}' given twice", host);
        hosts.push_back(host);
    }
    return {};
}

// The verbs that ask several hosts at once (-H given more than once).
bool fleet_verb(const std::string& verb) {
    return verb == "status" || verb == "list" || verb == "links" || verb == "show" ||
           verb == "doctor" || verb == "diff";
}

// The verbs that name a DEVICE first: how many arguments they need and take at most.
struct VerbArity {
    const char* verb;
    std::size_t needed;
    std::size_t wanted;
    const char* usage; // "set-pfc needs DEVICE PRIORITIES"
};
constexpr VerbArity kArities[] = {
    {"set-port-type", 3, 3, "DEVICE PORT TYPE"},
    {"set-pfc", 2, 2, "DEVICE PRIORITIES"},
    {"set-trust", 2, 2, "DEVICE dscp|pcp"},
    {"set-dscp", 2, 2, "DEVICE MAP"},
    {"set-rdma-cm", 1, 1, "DEVICE"},
    {"revert", 1, 2, "DEVICE [PORT]"},
};

const VerbArity* find_arity(const std::string& verb) {
    for (const auto& a : kArities)
        if (verb == a.verb)
            return &a;
    return nullptr;
}

// Returns -1 to go on, else the exit status.
int parse(int argc, char** argv, Command& cmd) {
    static const option options[] = {
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, ARG_VERSION},
        {"json", no_argument, nullptr, ARG_JSON},
        {"host", required_argument, nullptr, 'H'},
        {"no-legend", no_argument, nullptr, ARG_NO_LEGEND},
        {"persist", no_argument, nullptr, ARG_PERSIST},
        {"dry-run", no_argument, nullptr, ARG_DRY_RUN},
        {"no-pager", no_argument, nullptr, ARG_NO_PAGER},
        {"no-color", no_argument, nullptr, ARG_NO_COLOR},
        {"verbose", no_argument, nullptr, 'v'},
        {"timeout", required_argument, nullptr, ARG_TIMEOUT},
        {"exclusive", no_argument, nullptr, ARG_EXCLUSIVE},
        {"roce-mode", required_argument, nullptr, ARG_ROCE_MODE},
        {"tos", required_argument, nullptr, ARG_TOS},
        {nullptr, 0, nullptr, 0},
    };
    opterr = 0; // our own messages, one line each
    int c;
    while ((c = getopt_long(argc, argv, ":hH:v", options, nullptr)) != -1) {
        switch (c) {
        case 'h':
            print_help(stdout);
            return 0;
        case ARG_VERSION:
            fmt::print("rdmactl {}\n", RDMAD_VERSION);
            return 0;
        case ARG_JSON:
            cmd.output.json = true;
            break;
        case 'H':
            if (std::string error = add_hosts(optarg, cmd.hosts); !error.empty())
                return usage_error(error);
            break;
        case ARG_NO_LEGEND:
            cmd.output.legend = false;
            break;
        case ARG_PERSIST:
            cmd.persist = true;
            break;
        case ARG_DRY_RUN:
            cmd.dry_run = true;
            break;
        case ARG_NO_PAGER:
            cmd.no_pager = true;
            break;
        case ARG_NO_COLOR:
            cmd.no_color = true;
            break;
        case 'v':
            cmd.output.verbose = true;
            break;
        case ARG_TIMEOUT: {
            const std::string text = optarg;
            if (text.empty() || text.size() > 5 ||
                !std::all_of(
                    text.begin(), text.end(),
                    [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }) ||
                std::stoul(text) < 1 || std::stoul(text) > 3600)
                return usage_error(
                    fmt::format("bad --timeout '{}': a number of seconds from 1 to 3600", text));
            cmd.timeout = std::chrono::seconds(std::stoul(text));
            cmd.timeout_given = true;
            break;
        }
        case ARG_EXCLUSIVE:
            cmd.exclusive = true;
            break;
        case ARG_ROCE_MODE:
            // The values of configfs default_roce_mode (kernel drivers/infiniband/core/cma.c
            // ib_cache_gid_type_str()), as Port.SetRDMACM takes them.
            cmd.roce_mode = optarg;
            cmd.roce_mode_given = true;
            if (cmd.roce_mode != "RoCE v2" && cmd.roce_mode != "IB/RoCE v1")
                return usage_error(fmt::format(
                    "bad --roce-mode '{}': \"RoCE v2\" or \"IB/RoCE v1\"", cmd.roce_mode));
            break;
        case ARG_TOS: {
            unsigned tos = 0;
            if (!parse_decimal(optarg, 3, tos) || tos > 255)
                return usage_error(fmt::format("bad --tos '{}': a ToS byte from 0 to 255", optarg));
            cmd.tos = static_cast<std::int32_t>(tos);
            break;
        }
        case ':':
            return usage_error(fmt::format("option '{}' needs an argument", argv[optind - 1]));
        default: {
            // optopt is the offending short option, or a long option's value (not a char).
            const bool is_short = optopt > 0 && optopt < 0x100 && std::isprint(optopt);
            return usage_error(
                fmt::format("unknown option '{}'", is_short ? fmt::format("-{}", char(optopt))
                                                            : std::string(argv[optind - 1])));
        }
        }
    }
    if (optind < argc)
        cmd.verb = argv[optind++];
    for (; optind < argc; ++optind)
        cmd.args.emplace_back(argv[optind]);

    std::size_t wanted = 0;
    if (cmd.verb == "show") {
        if (cmd.args.empty())
            return usage_error("show needs a NAME");
        if (cmd.args[0].empty())
            return usage_error("NAME must not be empty");
        wanted = 1;
    } else if (const VerbArity* arity = find_arity(cmd.verb)) {
        if (cmd.args.size() < arity->needed)
            return usage_error(fmt::format("{} needs {}", cmd.verb, arity->usage));
        wanted = arity->wanted;
    } else if (cmd.verb == "doctor") {
        if (!cmd.args.empty() && cmd.args[0].empty())
            return usage_error("DEVICE must not be empty");
        wanted = 1;
    } else if (cmd.verb == "help") {
        wanted = 1;
        if (!cmd.args.empty() && !find_verb(cmd.args[0]))
            return unknown_verb(cmd.args[0]);
    } else if (!find_verb(cmd.verb)) {
        return unknown_verb(cmd.verb);
    }
    if (cmd.args.size() > wanted)
        return usage_error(
            fmt::format("too many arguments for {}: '{}'", cmd.verb, cmd.args[wanted]));
    if (cmd.verb == "set-rdma-cm" && !cmd.roce_mode_given && cmd.tos < 0)
        return usage_error("set-rdma-cm needs --roce-mode, --tos or both");
    if (cmd.persist && !set_verb(cmd.verb))
        return usage_error("--persist is only for the set-* verbs");
    if (cmd.exclusive && cmd.verb != "set-dscp")
        return usage_error("--exclusive is only for set-dscp");
    if ((cmd.roce_mode_given || cmd.tos >= 0) && cmd.verb != "set-rdma-cm")
        return usage_error(fmt::format("{} is only for set-rdma-cm",
                                       cmd.roce_mode_given ? "--roce-mode" : "--tos"));
    if (cmd.dry_run && cmd.verb != "reconcile")
        return usage_error("--dry-run is only for reconcile");
    if (cmd.verb == "diff" && cmd.hosts.size() < 2)
        return usage_error("diff compares hosts: give two or more with -H");
    if (cmd.hosts.size() > 1 && cmd.verb != "help" && !fleet_verb(cmd.verb))
        return usage_error(fmt::format("{} talks to one host: give -H once", cmd.verb));
    if (cmd.timeout_given && cmd.hosts.size() < 2)
        return usage_error("--timeout is only for several hosts (-H given twice or more)");
    cmd.output.fleet = cmd.hosts.size() > 1;

    if (set_verb(cmd.verb) || cmd.verb == "revert") {
        if (cmd.args[0].empty())
            return usage_error("DEVICE must not be empty");
    }
    if (cmd.verb == "revert" && cmd.args.size() > 1 && !parse_port(cmd.args[1], cmd.port))
        return usage_error(fmt::format("bad PORT '{}': a port number from 1", cmd.args[1]));
    if (cmd.verb == "set-port-type") {
        if (!parse_port(cmd.args[1], cmd.port))
            return usage_error(fmt::format("bad PORT '{}': a port number from 1", cmd.args[1]));
        const std::string& type = cmd.args[2];
        if (!rdmad::api::valid_port_type(type))
            return usage_error(fmt::format("bad TYPE '{}': ib, eth or auto", type));
    }
    if (cmd.verb == "set-pfc") {
        if (std::string error = parse_priorities(cmd.args[1], cmd.priorities); !error.empty())
            return usage_error(error);
    }
    if (cmd.verb == "set-trust" && cmd.args[1] != "dscp" && cmd.args[1] != "pcp")
        return usage_error(fmt::format("bad TRUST '{}': dscp or pcp", cmd.args[1]));
    if (cmd.verb == "set-dscp") {
        if (std::string error = parse_dscp_map(cmd.args[1], cmd.dscp_map); !error.empty())
            return usage_error(error);
    }
    return -1;
}

// The verbs whose output can be long enough for a pager (as systemctl pages status and list).
bool pages(const std::string& verb) {
    return verb == "status" || verb == "list" || verb == "show" || verb == "links" ||
           verb == "doctor" || verb == "diff" || verb == "help";
}

// One line on stderr, as fail() prints it, without ending the command.
void print_error(const std::string& message) {
    const std::string line = "rdmactl: " + sanitize(message);
    std::fprintf(stderr, "%s\n",
                 paint(color_for(STDERR_FILENO, false) ? sgr::kRed : nullptr, line).c_str());
}

// A verb on several hosts (Output::fleet): every host asked at once (fleet.cpp), one table
// (status, list, links), one block per host headed "==> HOST <==" (show, doctor), or the
// comparison (diff); --json an object keyed by host ({"error": "..."} for a host that could
// not be asked). A host that could not be asked is one line on stderr. Exit status: 1 when
// a host could not be asked, else the verb's worst (3 for doctor problems or diff
// differences), else 0.
int dispatch_fleet(const Command& cmd) {
    const Output& out = cmd.output;
    const std::string name = cmd.args.empty() ? std::string() : cmd.args[0];
    std::function<nlohmann::json(Client&)> ask = [](Client& c) { return c.describe(); };
    if (cmd.verb == "show")
        ask = [name](Client& c) { return show_lookup(c, name); };
    if (cmd.verb == "doctor")
        ask = [name](Client& c) { return doctor_list(c.describe(), name); };
    const std::vector<HostAnswer> answers = ask_hosts(cmd.hosts, ask, cmd.timeout);

    std::vector<HostDoc> docs;
    std::map<std::string, std::string> errors;
    int status = 0;
    nlohmann::json keyed = nlohmann::json::object();
    for (const auto& a : answers) {
        if (!a.error.empty()) {
            errors[a.host] = a.error;
            keyed[a.host] = {{"error", a.error}};
            continue;
        }
        docs.push_back({a.host, a.value});
        if (cmd.verb == "doctor")
            status = std::max(status, doctor_status(a.value));
        if (cmd.verb == "status")
            keyed[a.host] = status_json(a.value);
        else if (cmd.verb == "list")
            keyed[a.host] = list_json(a.value);
        else if (cmd.verb == "links")
            keyed[a.host] = links_json(a.value);
        else if (cmd.verb == "show")
            keyed[a.host] = a.value.at("Object");
        else
            keyed[a.host] = a.value;
    }

    if (cmd.verb == "diff") {
        status = verb_diff(docs, errors, out);
    } else if (out.json) {
        print_json(keyed);
    } else if (cmd.verb == "status") {
        verb_status(docs, out);
    } else if (cmd.verb == "list") {
        verb_list(docs, out);
    } else if (cmd.verb == "links") {
        verb_links(docs, out);
    } else {
        // show, doctor: each host's block as one host would print it.
        bool first = true;
        for (const auto& [host, value] : docs) {
            if (!first && out.legend)
                fmt::print("\n");
            first = false;
            fmt::print("==> {} <==\n", sanitize(host));
            if (cmd.verb == "show")
                verb_show(value, out);
            else
                verb_doctor(value, out);
        }
    }
    if (!errors.empty()) {
        // After the output, as fail() does: what the pager shows ends first.
        std::fflush(stdout);
        end_pager();
        for (const auto& a : answers)
            if (!a.error.empty())
                print_error(host_error(a.host, a.error));
        return kExitFailure;
    }
    return status;
}

int dispatch(const Command& cmd) {
    if (cmd.verb == "help") {
        if (cmd.args.empty())
            print_help(stdout);
        else
            print_verb_help(stdout, *find_verb(cmd.args[0]));
        return 0;
    }
    if (cmd.output.fleet)
        return dispatch_fleet(cmd);
    const std::string host = cmd.hosts.empty() ? std::string() : cmd.hosts[0];
    Client client(host);
    const Output& out = cmd.output;
    if (cmd.verb == "status" || cmd.verb == "list" || cmd.verb == "links") {
        const nlohmann::json doc = client.describe();
        if (out.json) {
            print_json(cmd.verb == "list"    ? list_json(doc)
                       : cmd.verb == "links" ? links_json(doc)
                                             : status_json(doc));
            return 0;
        }
        const std::vector<HostDoc> docs{{host, doc}};
        if (cmd.verb == "list")
            return verb_list(docs, out);
        if (cmd.verb == "links")
            return verb_links(docs, out);
        return verb_status(docs, out);
    }
    if (cmd.verb == "show")
        return verb_show(show_lookup(client, cmd.args[0]), out);
    if (cmd.verb == "monitor")
        return verb_monitor(client, cmd.output);
    if (cmd.verb == "doctor")
        return verb_doctor(
            doctor_list(client.describe(), cmd.args.empty() ? std::string() : cmd.args[0]), out);
    if (cmd.verb == "set-port-type")
        return verb_set_port_type(client, cmd.output, cmd.args[0], cmd.port, cmd.args[2],
                                  cmd.persist);
    if (cmd.verb == "set-pfc")
        return verb_set_pfc(client, cmd.output, cmd.args[0], cmd.priorities, cmd.persist);
    if (cmd.verb == "set-trust")
        return verb_set_trust(client, cmd.output, cmd.args[0], cmd.args[1], cmd.persist);
    if (cmd.verb == "set-dscp")
        return verb_set_dscp(client, cmd.output, cmd.args[0], cmd.dscp_map, cmd.exclusive,
                             cmd.persist);
    if (cmd.verb == "set-rdma-cm")
        return verb_set_rdma_cm(client, cmd.output, cmd.args[0], cmd.roce_mode, cmd.tos,
                                cmd.persist);
    if (cmd.verb == "revert")
        return verb_revert(client, cmd.output, cmd.args[0], cmd.port);
    if (cmd.verb == "reconcile")
        return verb_reconcile(client, cmd.output, cmd.dry_run);
    if (cmd.verb == "reload")
        return verb_reload(client, cmd.output);
    if (cmd.verb == "install-providers")
        return verb_install_providers(client, cmd.output);
    throw Failure("unhandled verb " + sanitize(cmd.verb));
}

int fail(const std::string& message) {
    end_pager(); // the message comes after what the pager shows, not inside it
    // Best effort: stderr may be gone too.
    print_error(message);
    return kExitFailure;
}

} // namespace

std::string terminal_safe_json(std::string text) {
    // With ensure_ascii, nlohmann escapes every character above U+007F (C1 controls such as
    // U+009B CSI included) and below U+0020; DEL (0x7f) is the one control left raw.
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (c == '\x7f')
            out += "\\u007f";
        else
            out += c;
    }
    return out;
}

void print_json(const nlohmann::json& value) {
    fmt::print("{}\n", terminal_safe_json(value.dump(2, ' ', true,
                                                      nlohmann::json::error_handler_t::replace)));
}

int run(int argc, char** argv) {
    try {
        Command cmd;
        int status = parse(argc, argv, cmd);
        bool paged = false;
        if (status < 0) {
            // Colour is decided before the pager takes stdout: less -R shows it on the terminal.
            cmd.output.color = !cmd.output.json && color_for(STDOUT_FILENO, cmd.no_color);
            if (!cmd.output.json && !cmd.no_pager && pages(cmd.verb))
                paged = start_pager();
            status = dispatch(cmd);
        }
        // Output to a full disk or a closed pipe is a failure, not a silent success; a pager
        // the user quit before the end is not.
        const bool flushed = std::fflush(stdout) == 0 && !std::ferror(stdout);
        const int error = errno;
        end_pager();
        if (!flushed && !(paged && error == EPIPE))
            return fail("cannot write to standard output");
        return status;
    } catch (const Failure& e) {
        return fail(e.what());
    } catch (const sdbus::Error& e) {
        return fail(error_message(e));
    } catch (const std::exception& e) {
        return fail(e.what());
    } catch (...) {
        return fail("unexpected error");
    }
}

} // namespace rdmactl

int main(int argc, char** argv) {
    return rdmactl::run(argc, argv);
}
