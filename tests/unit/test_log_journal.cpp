// SPDX-License-Identifier: MIT
//
// The structured fields of log::with()/log::about() (daemon/util/log.hpp) reach the journal.
// libsystemd's sd_journal_sendv() sends one datagram in the journal's native protocol to the
// fixed path /run/systemd/journal/socket (systemd.journal-fields(7), "Native Protocol" in
// systemd's docs/JOURNAL_NATIVE_PROTOCOL.md: "KEY=value\n" per field, or "KEY\n", a
// little-endian u64 length, the value and "\n" for a value with a newline). The test runs the
// logging in a child in its own mount namespace with a tmpfs on /run/systemd, where it listens
// on that path itself: no journald and no systemd as PID 1 needed, and the host's /run is not
// touched.
#include "util/log.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

/// Decode one native-protocol datagram into its fields (the last value of a repeated key).
std::map<std::string, std::string> decode_native(const std::string& d) {
    std::map<std::string, std::string> out;
    size_t at = 0;
    while (at < d.size()) {
        size_t nl = d.find('\n', at);
        if (nl == std::string::npos)
            break;
        std::string line = d.substr(at, nl - at);
        size_t eq = line.find('=');
        if (eq != std::string::npos) {
            out[line.substr(0, eq)] = line.substr(eq + 1);
            at = nl + 1;
            continue;
        }
        uint64_t len = 0;
        std::memcpy(&len, d.data() + nl + 1, sizeof len);
        out[line] = d.substr(nl + 1 + sizeof len, len);
        at = nl + 1 + sizeof len + len + 1;
    }
    return out;
}

/// In a child: a private /run/systemd/journal/socket, JOURNAL_STREAM set, one log::with()
/// call; exit status 0 when its datagram carries exactly the expected fields (besides
/// libsystemd's CODE_*), else a number
/// saying which step failed (the child cannot use Catch's assertions).
int child_logs_and_checks() {
    if (unshare(CLONE_NEWNS) < 0)
        return 10;
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0)
        return 11;
    ::mkdir("/run", 0755);
    ::mkdir("/run/systemd", 0755);
    if (mount("tmpfs", "/run/systemd", "tmpfs", 0, "mode=0755") < 0)
        return 12;
    if (::mkdir("/run/systemd/journal", 0755) < 0)
        return 13;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa {};
    sa.sun_family = AF_UNIX;
    std::strcpy(sa.sun_path, "/run/systemd/journal/socket");
    if (fd < 0 || bind(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa) < 0)
        return 14;
    ::setenv("JOURNAL_STREAM", "8:1234", 1); // what systemd sets for a service's stderr
    rdmad::log::with(rdmad::log::Level::warning,
                     rdmad::log::about("mlx5_0", "enp1s0f0np0", "0000:01:00.0", 1),
                     "port type: {} -> {} failed", "ib", "eth");
    std::string buf(65536, '\0');
    ssize_t n = recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n <= 0)
        return 15;
    buf.resize(static_cast<size_t>(n));
    const std::map<std::string, std::string> want = {
        {"MESSAGE", "port type: ib -> eth failed"},
        {"PRIORITY", "4"}, // LOG_WARNING, syslog(3)
        {"SYSLOG_IDENTIFIER", "rdmad"},
        {"RDMA_DEVICE", "mlx5_0"},
        {"PORT", "1"},
        {"NETDEV", "enp1s0f0np0"},
        {"PCI_ADDRESS", "0000:01:00.0"},
    };
    auto got = decode_native(buf);
    // sd_journal_sendv() is a macro adding where it was called (CODE_FILE=, CODE_LINE=,
    // CODE_FUNC=, sd-journal.h): libsystemd's, not rdmad's fields.
    for (const char* k : {"CODE_FILE", "CODE_LINE", "CODE_FUNC"})
        got.erase(k);
    if (got == want)
        return 0;
    for (const auto& [k, v] : got) // for the test's log: what arrived instead
        std::fprintf(stderr, "journal field %s=%s\n", k.c_str(), v.c_str());
    return 16;
}

} // namespace

TEST_CASE("log::with(about(...)) sends RDMA_DEVICE=, PORT=, NETDEV=, PCI_ADDRESS= to the "
          "journal socket") {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(child_logs_and_checks());
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    // 10-14: setting up the private socket failed (needs CAP_SYS_ADMIN, as the integration
    // tests' root does); 15: nothing was sent; 16: the fields differ.
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("log::about() leaves out empty values") {
    using F = rdmad::log::Fields;
    CHECK(rdmad::log::about("mlx5_0") == F{{"RDMA_DEVICE", "mlx5_0"}});
    CHECK(rdmad::log::about("", "eth0") == F{{"NETDEV", "eth0"}});
    CHECK(rdmad::log::about("", "", "", 0).empty());
}
