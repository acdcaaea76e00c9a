// SPDX-License-Identifier: MIT
//
// rdmad-wait-online: waits until the selected RDMA ports are usable, as rdmad tells it on the
// system bus, like systemd-networkd-wait-online waits for networkd's links. It reads rdmad's
// objects once (GetManagedObjects) after subscribing to their signals (InterfacesAdded,
// InterfacesRemoved, PropertiesChanged, rdmad's NameOwnerChanged), then sleeps in poll(2) on
// the bus until a signal comes or the time is up; it never reads sysfs and never polls.
// Exit status: 0 ready, 1 timed out, 2 usage error or rdmad not on the bus. No exception
// leaves main().
#include "bus_objects.hpp"
#include "config.h"
#include "rdmad_api.hpp"
#include "readiness.hpp"

#include <fmt/core.h>
#include <sdbus-c++/sdbus-c++.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <getopt.h>
#include <optional>
#include <poll.h>
#include <set>
#include <stdexcept>
#include <string_view>

namespace {

using namespace rdmad::wait_online;
namespace api = rdmad::api;
using Clock = std::chrono::steady_clock;

constexpr int kExitReady = 0;
constexpr int kExitTimeout = 1;
constexpr int kExitUsage = 2; // also: rdmad is not on the bus
constexpr unsigned kDefaultTimeout = 120;
// The longest --timeout: a day; a boot that waits longer waits forever (0).
constexpr unsigned kMaxTimeout = 86400;
constexpr const char* kObjectManager = "org.freedesktop.DBus.ObjectManager";
// How long one read of rdmad's objects may take (about 0.4 s at 1,024 devices,
// bench/README.md): the same bound as rdmad-notify's.
constexpr std::chrono::seconds kReadTimeout{60};

struct Options {
    Selection selection;
    unsigned timeout = kDefaultTimeout; // seconds, 0: forever
    bool quiet = false;
};

void print_help(std::FILE* out) {
    fmt::print(out,
               "Usage: rdmad-wait-online [OPTION]...\n"
               "Wait until the selected RDMA ports are usable, as rdmad reports them: ACTIVE\n"
               "and LinkUp, on InfiniBand with a subnet manager and a valid LID, on RoCE with\n"
               "a GID to use (RecommendedGID). Without -d, every port rdmad knows (at least one).\n"
               "\n"
               "Options:\n"
               "  -d, --device=DEVICE[:PORT]  wait for this RDMA device (every port, or PORT);\n"
               "                              again for more devices\n"
               "      --transport=TRANSPORT   only ports of this transport: ib, roce or iwarp\n"
               "      --any                   one usable port of the selection is enough\n"
               "      --timeout=SECONDS       give up after SECONDS (default {}, 0 waits\n"
               "                              forever, at most {})\n"
               "  -q, --quiet                 print nothing but errors\n"
               "  -h, --help                  show this help and exit\n"
               "      --version               show the version and exit\n"
               "\n"
               "Exit status: 0 when the ports are usable, 1 when the time is up (each port\n"
               "not usable is named, with the reason), 2 for a usage error or when rdmad is\n"
               "not on the system bus.\n",
               kDefaultTimeout, kMaxTimeout);
}

int usage_error(const std::string& message) {
    fmt::print(stderr,
               "rdmad-wait-online: {}\nTry 'rdmad-wait-online --help' for more information.\n",
               message);
    return kExitUsage;
}

void say(const Options& o, const std::string& line) {
    if (!o.quiet)
        fmt::print(stderr, "rdmad-wait-online: {}\n", line);
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items)
        out += (out.empty() ? "" : ", ") + i;
    return out;
}

class Waiter {
  public:
    Waiter(sdbus::IConnection& bus, const Options& options)
        : bus_(bus), options_(options),
          rdmad_(sdbus::createProxy(bus, api::kBusName, api::kManagerPath)) {}

    int run();

  private:
    void subscribe();
    /// GetManagedObjects into objects_, waiting no longer than the deadline; the D-Bus error
    /// (name: message) when rdmad did not answer, "" when it did.
    std::string read_objects();
    /// Judges objects_; prints the ports that became usable since the last time.
    Verdict judge_now();

    sdbus::IConnection& bus_;
    const Options& options_;
    std::optional<Clock::time_point> deadline_; // none: wait forever
    std::unique_ptr<sdbus::IProxy> rdmad_;
    Objects objects_;
    bool reread_ = false;          // rdmad has a new owner: read everything again
    bool rdmad_gone_ = false;      // rdmad left the bus and has not come back
    std::set<std::string> usable_; // printed already
    std::vector<sdbus::Slot> slots_;
};

void Waiter::subscribe() {
    const std::string sender = fmt::format("type='signal',sender='{}',", api::kBusName);
    // A malformed signal is skipped: the next one, or the time limit, still ends the wait.
    auto guarded = [](auto handler) {
        return [handler](sdbus::Message& m) {
            try {
                handler(m);
            } catch (const sdbus::Error& e) {
                fmt::print(stderr, "rdmad-wait-online: ignoring a malformed {} signal: {}\n",
                           m.getMemberName(), e.getMessage());
            }
        };
    };
    slots_.push_back(
        bus_.addMatch(sender + fmt::format("path='{}',interface='{}',member='InterfacesAdded'",
                                           api::kManagerPath, kObjectManager),
                      guarded([this](sdbus::Message& m) {
                          sdbus::ObjectPath path;
                          Interfaces interfaces;
                          m >> path >> interfaces;
                          add_interfaces(objects_, path, interfaces);
                      })));
    slots_.push_back(
        bus_.addMatch(sender + fmt::format("path='{}',interface='{}',member='InterfacesRemoved'",
                                           api::kManagerPath, kObjectManager),
                      guarded([this](sdbus::Message& m) {
                          sdbus::ObjectPath path;
                          std::vector<std::string> interfaces;
                          m >> path >> interfaces;
                          remove_interfaces(objects_, path, interfaces);
                      })));
    slots_.push_back(bus_.addMatch(
        sender + fmt::format("path_namespace='{}',interface='org.freedesktop.DBus.Properties',"
                             "member='PropertiesChanged'",
                             api::kManagerPath),
        guarded([this](sdbus::Message& m) {
            std::string interface;
            Properties changed;
            m >> interface >> changed;
            change_properties(objects_, m.getPath(), interface, changed);
        })));
    slots_.push_back(bus_.addMatch(api::kNameOwnerChangedMatch, guarded([this](sdbus::Message& m) {
                                       std::string name, old_owner, new_owner;
                                       m >> name >> old_owner >> new_owner;
                                       // Its objects went with it; a new rdmad is read anew.
                                       objects_ = {};
                                       rdmad_gone_ = new_owner.empty();
                                       reread_ = !new_owner.empty();
                                   })));
}

std::string Waiter::read_objects() {
    ManagedObjects managed;
    auto timeout = std::chrono::duration_cast<std::chrono::microseconds>(kReadTimeout);
    if (deadline_)
        timeout =
            std::clamp(std::chrono::ceil<std::chrono::microseconds>(*deadline_ - Clock::now()),
                       std::chrono::microseconds(1), timeout);
    try {
        rdmad_->callMethod("GetManagedObjects")
            .onInterface(kObjectManager)
            .withTimeout(timeout)
            .storeResultsTo(managed);
    } catch (const sdbus::Error& e) {
        return fmt::format("{}: {}", e.getName(), e.getMessage());
    }
    objects_ = objects_from(managed);
    rdmad_gone_ = false;
    return {};
}

Verdict Waiter::judge_now() {
    Verdict v = judge(objects_, options_.selection);
    std::vector<std::string> news;
    for (const auto& port : v.usable)
        if (usable_.insert(port).second)
            news.push_back(port);
    if (!news.empty() && !v.ready)
        say(options_, "usable: " + join(news));
    return v;
}

int Waiter::run() {
    if (options_.timeout)
        deadline_ = Clock::now() + std::chrono::seconds(options_.timeout);
    // Subscribe first, then read: no change falls between the two (a signal that came before
    // the reply is applied after it again, which leaves the value the reply had).
    subscribe();
    if (const std::string error = read_objects(); !error.empty()) {
        // rdmad owns its name but did not answer in time (being started by the bus, or
        // stuck): the time is up, rdmad is there.
        if (deadline_ && Clock::now() >= *deadline_) {
            say(options_, fmt::format("timed out after {} s", options_.timeout));
            say(options_, fmt::format("not ready: rdmad did not answer ({})", error));
            return kExitTimeout;
        }
        fmt::print(stderr, "rdmad-wait-online: rdmad is not on the system bus ({})\n", error);
        return kExitUsage;
    }
    Verdict v = judge_now();
    if (!v.ready) {
        for (const auto& line : v.waiting)
            say(options_, "not ready: " + line);
        say(options_, options_.timeout ? fmt::format("waiting up to {} s", options_.timeout)
                                       : std::string("waiting"));
    }
    for (;;) {
        while (bus_.processPendingRequest()) {
        }
        if (reread_) {
            reread_ = false;
            if (const std::string error = read_objects(); !error.empty())
                say(options_, "cannot read rdmad's objects: " + error);
        }
        v = judge_now();
        if (v.ready) {
            say(options_, "ready: " + join(v.usable));
            return kExitReady;
        }
        const auto poll_data = bus_.getEventLoopPollData();
        int timeout = poll_data.getPollTimeout(); // -1: none
        if (deadline_) {
            const auto now = Clock::now();
            if (now >= *deadline_) {
                say(options_, fmt::format("timed out after {} s", options_.timeout));
                if (rdmad_gone_)
                    say(options_, "not ready: rdmad left the system bus and has not come back");
                for (const auto& line : v.waiting)
                    say(options_, "not ready: " + line);
                return kExitTimeout;
            }
            const auto left =
                std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - now).count();
            if (timeout < 0 || left < timeout)
                timeout = static_cast<int>(left);
        }
        pollfd fd{poll_data.fd, poll_data.events, 0};
        if (poll(&fd, 1, timeout) < 0 && errno != EINTR)
            throw std::runtime_error(fmt::format("poll failed: {}", std::strerror(errno)));
    }
}

// The option getopt_long() just refused, as given: "--name" of a long one ("--name=value"
// without its value), "-c" of a short one. getopt_long() sets optopt to a long option's
// value, not a character, so the argument itself names a long one.
std::string option_given(char** argv) {
    const std::string_view arg = argv[optind - 1];
    if (arg.rfind("--", 0) == 0)
        return std::string(arg.substr(0, arg.find('=')));
    return fmt::format("-{}", char(optopt));
}

} // namespace

int main(int argc, char** argv) {
    enum { kOptTransport = 256, kOptAny, kOptTimeout, kOptVersion };
    static const option long_options[] = {
        {"device", required_argument, nullptr, 'd'},
        {"transport", required_argument, nullptr, kOptTransport},
        {"any", no_argument, nullptr, kOptAny},
        {"timeout", required_argument, nullptr, kOptTimeout},
        {"quiet", no_argument, nullptr, 'q'},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, kOptVersion},
        {nullptr, 0, nullptr, 0},
    };
    Options options;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":d:qh", long_options, nullptr)) != -1) {
        switch (c) {
        case 'd': {
            std::string error;
            auto target = parse_target(optarg, error);
            if (!target)
                return usage_error("-d " + error);
            options.selection.targets.push_back(*target);
            break;
        }
        case kOptTransport: {
            auto transport = parse_transport(optarg);
            if (!transport)
                return usage_error(fmt::format(
                    "--transport: \"{}\" is not a transport (ib, roce or iwarp)", optarg));
            options.selection.transport = *transport;
            break;
        }
        case kOptAny:
            options.selection.any = true;
            break;
        case kOptTimeout: {
            const std::string_view v(optarg);
            unsigned s = 0;
            auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), s);
            if (v.empty() || ec != std::errc() || end != v.data() + v.size() || s > kMaxTimeout)
                return usage_error(fmt::format(
                    "--timeout: \"{}\" is not a number of seconds from 0 to {}", v, kMaxTimeout));
            options.timeout = s;
            break;
        }
        case 'q':
            options.quiet = true;
            break;
        case 'h':
            print_help(stdout);
            return 0;
        case kOptVersion:
            fmt::print("rdmad-wait-online {}\n", RDMAD_VERSION);
            return 0;
        case ':':
            return usage_error(fmt::format("option {} needs an argument", option_given(argv)));
        default:
            return usage_error(fmt::format("unknown option {}", option_given(argv)));
        }
    }
    if (optind < argc)
        return usage_error(fmt::format("unexpected argument \"{}\"", argv[optind]));

    std::unique_ptr<sdbus::IConnection> bus;
    try {
        bus = sdbus::createSystemBusConnection();
    } catch (const sdbus::Error& e) {
        fmt::print(stderr, "rdmad-wait-online: cannot reach the system bus: {}\n", e.getMessage());
        return kExitUsage;
    }
    try {
        Waiter waiter(*bus, options);
        return waiter.run();
    } catch (const sdbus::Error& e) {
        fmt::print(stderr, "rdmad-wait-online: {}: {}\n", e.getName(), e.getMessage());
    } catch (const std::exception& e) {
        fmt::print(stderr, "rdmad-wait-online: {}\n", e.what());
    }
    // The bus failed while waiting: rdmad cannot be reached any more.
    return kExitUsage;
}
