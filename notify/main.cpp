// SPDX-License-Identifier: MIT
//
// rdmad-notify: options, then the agent. Exit status 0 on SIGINT/SIGTERM, 1 when a bus
// cannot be reached or fails, 2 for a usage error. No exception leaves main().
#include "agent.hpp"
#include "config.h"

#include <fmt/core.h>

#include <charconv>
#include <cstdio>
#include <exception>
#include <getopt.h>
#include <string_view>

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
// The window's bounds: shorter than 50 ms coalesces nothing of a burst; longer than a minute
// is no longer news.
constexpr long kMinWindowMs = 50;
constexpr long kMaxWindowMs = 60000;

void print_help(std::FILE* out) {
    fmt::print(out,
               "Usage: rdmad-notify [OPTION]...\n"
               "Post desktop notifications for rdmad's RDMA devices and ports: a port\n"
               "going down or coming up, a new error, devices added or removed.\n"
               "\n"
               "Options:\n"
               "  --window=MS  coalesce changes until none came for MS milliseconds\n"
               "               (default 1000, {}-{}); at most 5 windows after the first\n"
               "  --help       show this help and exit\n"
               "  --version    show the version and exit\n"
               "\n"
               "Exit status: 0 when stopped by SIGINT or SIGTERM, 1 when a bus fails,\n"
               "2 for a usage error.\n",
               kMinWindowMs, kMaxWindowMs);
}

int usage_error(const std::string& message) {
    fmt::print(stderr, "rdmad-notify: {}\nTry 'rdmad-notify --help' for more information.\n",
               message);
    return kExitUsage;
}

} // namespace

int main(int argc, char** argv) {
    enum { kOptWindow = 256, kOptHelp, kOptVersion };
    static const option options[] = {
        {"window", required_argument, nullptr, kOptWindow},
        {"help", no_argument, nullptr, kOptHelp},
        {"version", no_argument, nullptr, kOptVersion},
        {nullptr, 0, nullptr, 0},
    };
    rdmad::notify::AgentOptions agent;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", options, nullptr)) != -1) {
        switch (c) {
        case kOptWindow: {
            const std::string_view v(optarg);
            long ms = 0;
            auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
            if (ec != std::errc() || end != v.data() + v.size() || ms < kMinWindowMs ||
                ms > kMaxWindowMs)
                return usage_error(fmt::format("--window: \"{}\" is not a number of milliseconds "
                                               "from {} to {}",
                                               v, kMinWindowMs, kMaxWindowMs));
            agent.quiet = std::chrono::milliseconds(ms);
            agent.longest = 5 * agent.quiet;
            break;
        }
        case kOptHelp:
            print_help(stdout);
            return 0;
        case kOptVersion:
            fmt::print("rdmad-notify {}\n", RDMAD_VERSION);
            return 0;
        default:
            return usage_error(optopt ? fmt::format("unknown option -{}", char(optopt))
                                      : fmt::format("unknown option {}", argv[optind - 1]));
        }
    }
    if (optind < argc)
        return usage_error(fmt::format("unexpected argument \"{}\"", argv[optind]));
    try {
        return rdmad::notify::run_agent(agent);
    } catch (const std::exception& e) {
        fmt::print(stderr, "rdmad-notify: {}\n", e.what());
        return kExitFailure;
    }
}
