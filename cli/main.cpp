// SPDX-License-Identifier: MIT
//
// rdmactl: option parsing, verb dispatch, exit status. 0 success, 1 failure (rdmad not running
// included), 2 usage error. No exception leaves main().
#include "client.hpp"
#include "config.h"
#include "table.hpp"
#include "verbs.hpp"

#include <fmt/core.h>
#include <sdbus-c++/Error.h>

#include <cctype>
#include <cstdio>
#include <exception>
#include <getopt.h>
#include <string>
#include <vector>

namespace rdmactl {

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

void print_help() {
    std::fputs("Usage: rdmactl [OPTIONS] [VERB]\n"
               "Query rdmad, the RDMA device daemon, on the system bus (org.rdmad1).\n"
               "\n"
               "Verbs:\n"
               "  status                   show every RDMA port, the devices' problems and\n"
               "                           the netdevs whose RDMA driver is not loaded\n"
               "                           (the default)\n"
               "  list                     list RDMA devices\n"
               "  show NAME                show every property of the RDMA device NAME and\n"
               "                           its ports, else of the netdev NAME\n"
               "  links                    list netdevs and the RDMA device serving each\n"
               "  monitor                  print one line per change (devices, ports and\n"
               "                           netdevs added, removed, renamed, properties\n"
               "                           changed, rdmad stopped and started) until\n"
               "                           interrupted\n"
               "\n"
               "Options:\n"
               "  -h, --help               show this help and exit\n"
               "      --version            show the version and exit\n"
               "      --json               print the JSON of org.rdmad1.Manager.Describe()\n"
               "                           instead of tables: status the whole document,\n"
               "                           list {\"Devices\": [...]}, links {\"Links\": [...]},\n"
               "                           show the device or netdev object, monitor one\n"
               "                           JSON object per line\n"
               "  -H, --host=[USER@]HOST   talk to rdmad on HOST's system bus over ssh\n"
               "      --no-legend          print no table headers and no summary lines\n"
               "\n"
               "Exit status: 0 success, 1 failure (also when rdmad is not running),\n"
               "2 usage error.\n",
               stdout);
}

int usage_error(const std::string& message) {
    fmt::print(stderr, "rdmactl: {}\nTry 'rdmactl --help' for more information.\n",
               sanitize(message));
    return kExitUsage;
}

struct Command {
    std::string host;
    Output output;
    std::string verb = "status";
    std::vector<std::string> args;
};

enum { ARG_VERSION = 0x100, ARG_JSON, ARG_NO_LEGEND };

// Returns -1 to go on, else the exit status.
int parse(int argc, char** argv, Command& cmd) {
    static const option options[] = {
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, ARG_VERSION},
        {"json", no_argument, nullptr, ARG_JSON},
        {"host", required_argument, nullptr, 'H'},
        {"no-legend", no_argument, nullptr, ARG_NO_LEGEND},
        {nullptr, 0, nullptr, 0},
    };
    opterr = 0; // our own messages, one line each
    int c;
    while ((c = getopt_long(argc, argv, ":hH:", options, nullptr)) != -1) {
        switch (c) {
        case 'h':
            print_help();
            return 0;
        case ARG_VERSION:
            fmt::print("rdmactl {}\n", RDMAD_VERSION);
            return 0;
        case ARG_JSON:
            cmd.output.json = true;
            break;
        case 'H':
            if (*optarg == '\0')
                return usage_error("--host needs a [USER@]HOST");
            cmd.host = optarg;
            break;
        case ARG_NO_LEGEND:
            cmd.output.legend = false;
            break;
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
    } else if (cmd.verb != "status" && cmd.verb != "list" && cmd.verb != "links" &&
               cmd.verb != "monitor") {
        return usage_error(fmt::format("unknown verb '{}'", cmd.verb));
    }
    if (cmd.args.size() > wanted)
        return usage_error(
            fmt::format("too many arguments for {}: '{}'", cmd.verb, cmd.args[wanted]));
    return -1;
}

int dispatch(const Command& cmd) {
    Client client(cmd.host);
    if (cmd.verb == "list")
        return verb_list(client, cmd.output);
    if (cmd.verb == "show")
        return verb_show(client, cmd.output, cmd.args[0]);
    if (cmd.verb == "links")
        return verb_links(client, cmd.output);
    if (cmd.verb == "monitor")
        return verb_monitor(client, cmd.output);
    return verb_status(client, cmd.output);
}

int fail(const std::string& message) {
    // Best effort: stderr may be gone too.
    std::fprintf(stderr, "rdmactl: %s\n", sanitize(message).c_str());
    return kExitFailure;
}

} // namespace

void print_json(const nlohmann::json& value) {
    fmt::print("{}\n", value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

int run(int argc, char** argv) {
    try {
        Command cmd;
        int status = parse(argc, argv, cmd);
        if (status < 0)
            status = dispatch(cmd);
        // Output to a full disk or a closed pipe is a failure, not a silent success.
        if (std::fflush(stdout) != 0 || std::ferror(stdout))
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
