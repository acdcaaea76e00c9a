// SPDX-License-Identifier: MIT
//
// `rdmactl monitor` against the real daemon: one line per change for a scripted sequence
// (a port going down, a netdev going away), in human and --json form, until SIGINT.
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <regex>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>

extern char** environ;

namespace {

using namespace it;
using namespace std::chrono_literals;

// rdmactl monitor in the background, stdout to a file; environment without the umockdev
// preload (the pitfall list: spawn, never fork, with the preload loaded).
class Monitor {
  public:
    Monitor(const std::vector<std::string>& args, const fs::path& out) : out_(out) {
        std::vector<std::string> argv{env_or_fail("RDMACTL")};
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<char*> cargv;
        for (auto& a : argv)
            cargv.push_back(a.data());
        cargv.push_back(nullptr);
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e)
            if (std::string(*e).rfind("LD_PRELOAD=", 0) != 0)
                env.emplace_back(*e);
        std::vector<char*> cenv;
        for (auto& e : env)
            cenv.push_back(e.data());
        cenv.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        REQUIRE(posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), cenv.data()) == 0);
        posix_spawn_file_actions_destroy(&fa);
        kill_when_killed(pid_);
    }
    ~Monitor() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
            forget_child(pid_);
        }
    }
    /// SIGINT, then the exit status (REQUIREs it ends within 5 s).
    int interrupt() {
        ::kill(pid_, SIGINT);
        for (int i = 0; i < 500; ++i) {
            int st = 0;
            if (::waitpid(pid_, &st, WNOHANG) == pid_) {
                forget_child(pid_);
                pid_ = -1;
                return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            }
            std::this_thread::sleep_for(10ms);
        }
        FAIL("rdmactl monitor did not stop on SIGINT");
        return -1;
    }
    std::vector<std::string> lines() const {
        std::vector<std::string> out;
        std::istringstream in(read_file(out_));
        for (std::string l; std::getline(in, l);)
            out.push_back(l);
        return out;
    }
    bool has(const std::string& line) const {
        for (auto& l : lines())
            if (l == line)
                return true;
        return false;
    }

  private:
    fs::path out_;
    pid_t pid_ = -1;
};

bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
        if (pred())
            return true;
        std::this_thread::sleep_for(20ms);
    }
    return pred();
}

const std::string kPci1 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.1";

} // namespace

TEST_CASE("rdmactl monitor prints one line per change of a scripted sequence, until SIGINT") {
    Rig rig("constructed-mlx5-roce");
    TempDir tmp;
    Monitor human({"monitor"}, tmp.path() / "human.txt");
    Monitor js({"--json", "monitor"}, tmp.path() / "json.txt");
    // The monitors subscribe, then Describe(); give them that moment (no signal tells us).
    std::this_thread::sleep_for(1s);

    // 1. Port 1 of mlx5_0 goes down (kernel format "%d: %s", 1 DOWN).
    const std::string ib0 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0";
    rig.testbed.set_attr(ib0, "ports/1/state", "1: DOWN\n");
    rig.testbed.uevent(ib0, "change");
    REQUIRE(wait_for([&] { return human.has("mlx5_0 port 1: State ACTIVE -> DOWN"); }, 5s));

    // 2. The netdev of the second function goes away.
    const std::string net1 = kPci1 + "/net/ens1f1np1";
    rig.testbed.uevent(net1, "remove");
    rig.testbed.remove(net1);
    REQUIRE(wait_for([&] { return human.has("removed link ens1f1np1"); }, 5s));

    CHECK(human.interrupt() == 0);
    CHECK(js.interrupt() == 0);

    // Human: exactly these changes, each once.
    auto lines = human.lines();
    CHECK(std::count(lines.begin(), lines.end(), "mlx5_0 port 1: State ACTIVE -> DOWN") == 1);
    CHECK(std::count(lines.begin(), lines.end(), "removed link ens1f1np1") == 1);
    // The device's problems as show has them, "severity: text (code)": ProblemDetails'
    // evidence (sysfs paths) and remedy made lines of kilobytes (found by a new user).
    // One line per problem that came or went, not the lists before and after (a new user
    // saw 2,017 characters), and no Problems line beside it.
    size_t down = 0;
    for (const auto& l : lines) {
        CHECK(l.rfind("mlx5_0: Problems ", 0) != 0);
        if (l.rfind("mlx5_0: ProblemDetails + warning: port 1 is DOWN", 0) == 0) {
            ++down;
            CHECK(l.find("(port-not-active)") != std::string::npos);
            CHECK(l.find("/sys/") == std::string::npos);
        }
    }
    CHECK(down == 1);

    // JSON: one object per line, the same events.
    bool state = false, removed = false;
    for (auto& l : js.lines()) {
        json e = json::parse(l); // every line is JSON on its own
        if (e.value("event", "") == "changed" && e.value("property", "") == "State") {
            CHECK(e.value("object", "") == "mlx5_0 port 1");
            CHECK(e["old"] == "ACTIVE");
            CHECK(e["new"] == "DOWN");
            state = true;
        }
        if (e.value("event", "") == "removed" && e.value("object", "") == "ens1f1np1")
            removed = true;
    }
    CHECK(state);
    CHECK(removed);
}

TEST_CASE("rdmactl monitor prints DesiredOrigin as Describe() names it: (key, origin) lines, "
          "{\"Key\", \"Origin\"} objects") {
    Rig rig("constructed-mlx5-roce");
    TempDir tmp;
    Monitor human({"monitor"}, tmp.path() / "human.txt");
    Monitor js({"--json", "monitor"}, tmp.path() / "json.txt");
    std::this_thread::sleep_for(1s);

    // A D-Bus call asks PFC no-drop on priority 3 (root may, without polkit).
    auto set = run_program({env_or_fail("RDMACTL"), "set-pfc", "mlx5_0", "3"});
    INFO(set.out << set.err);
    REQUIRE(wait_for([&] {
        return human.has("mlx5_0: DesiredOrigin [] -> [(pfc_no_drop, D-Bus)]");
    }, 5s));
    CHECK(human.interrupt() == 0);
    CHECK(js.interrupt() == 0);
    bool seen = false;
    for (auto& l : js.lines()) {
        json e = json::parse(l);
        if (e.value("event", "") == "changed" && e.value("property", "") == "DesiredOrigin") {
            CHECK(e["new"] == json::parse(R"([{"Key": "pfc_no_drop", "Origin": "D-Bus"}])"));
            seen = true;
        }
    }
    CHECK(seen);
}

namespace {

/// A port's phys_state as no kernel writes it (sysfs.c phys_state_show() prints "%u: %s\n"):
/// escape sequences (OSC title, CSI clear, the C1 CSI as UTF-8), BEL, CR, LF, a line that
/// looks like rdmactl's own, U+2028 LINE SEPARATOR, invalid UTF-8, then 100 KB.
std::string hostile_phys_state(const std::string& tag) {
    return "3: Dis\x1b]0;" + tag + "\x07" + "abled\r\nmlx5_9: FAKE " + tag + "\x1b[2J\xc2\x9b" +
           "31m\xe2\x80\xa8SEP\xff\xfe" + std::string(100 * 1024, 'A') + "\n";
}

/// No terminal control and no line made by the hostile text: `out` has no C0 control but LF
/// (and TAB), no C1 control (UTF-8 C2 80-9F), no line that starts with the fake one.
void check_terminal_safe(const std::string& out) {
    for (size_t i = 0; i < out.size(); ++i) {
        const auto c = static_cast<unsigned char>(out[i]);
        INFO("byte " << i << ": " << int(c));
        CHECK((c >= 0x20 || c == '\n' || c == '\t'));
        CHECK(c != 0x7f);
        if (c == 0xc2 && i + 1 < out.size()) {
            const auto n = static_cast<unsigned char>(out[i + 1]);
            CHECK(!(n >= 0x80 && n <= 0x9f));
        }
    }
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);)
        CHECK(l.rfind("mlx5_9: FAKE", 0) == std::string::npos);
}

} // namespace

TEST_CASE("rdmactl show and monitor keep hostile sysfs text in one problem line, without "
          "terminal controls",
          "[hostile]") {
    Rig rig("constructed-mlx5-roce");
    const std::string ib0 = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0";
    TempDir tmp;
    Monitor human({"monitor"}, tmp.path() / "human.txt");
    std::this_thread::sleep_for(1s); // subscribed, Describe() done
    rig.testbed.set_attr(ib0, "ports/1/state", "1: DOWN\n");
    rig.testbed.set_attr(ib0, "ports/1/phys_state", hostile_phys_state("one"));
    rig.testbed.uevent(ib0, "change");
    auto shown = [&](const std::string& tag) {
        for (const auto& l : human.lines())
            if (l.rfind("mlx5_0: ProblemDetails ", 0) == 0 && l.find(tag) != std::string::npos)
                return true;
        return false;
    };
    REQUIRE(wait_for([&] { return shown("FAKE one"); }, 5s));
    rig.testbed.set_attr(ib0, "ports/1/phys_state", hostile_phys_state("two"));
    rig.testbed.uevent(ib0, "change");
    REQUIRE(wait_for([&] { return shown("FAKE two"); }, 5s));
    CHECK(human.interrupt() == 0);
    const std::string monitored = read_file(tmp.path() / "human.txt");
    check_terminal_safe(monitored);
    // One line a problem that came (+) or went (-), "severity: text (code)": the first text
    // came, then went when the second came.
    const std::string came = "mlx5_0: ProblemDetails + warning: port 1 is DOWN (Dis?]",
                      went = "mlx5_0: ProblemDetails - warning: port 1 is DOWN (Dis?]";
    std::vector<std::string> details;
    for (const auto& l : human.lines())
        if (l.rfind("mlx5_0: ProblemDetails ", 0) == 0 && l.find("FAKE") != std::string::npos)
            details.push_back(l.substr(0, came.size()) + "|" + l.substr(l.size() - 18));
    std::sort(details.begin(), details.end());
    CHECK(details == std::vector<std::string>{came + "| (port-not-active)",
                                              came + "| (port-not-active)",
                                              went + "| (port-not-active)"});

    const RunResult show = run_program({env_or_fail("RDMACTL"), "show", "mlx5_0"});
    CHECK(show.status == 0);
    check_terminal_safe(show.out);
    const std::regex one_line(R"(^ *ProblemDetails: (info|warning|error): .* \([a-z0-9-]+\)$)");
    size_t lines = 0;
    std::istringstream in(show.out);
    for (std::string l; std::getline(in, l);)
        if (l.find("ProblemDetails:") != std::string::npos &&
            l.find("FAKE two") != std::string::npos) {
            INFO(l.substr(0, 200) << " ... " << l.substr(l.size() > 200 ? l.size() - 200 : 0));
            ++lines;
            CHECK(std::regex_match(l, one_line));
            CHECK(l.find("port-not-active") != std::string::npos);
        }
    CHECK(lines == 1);
}
