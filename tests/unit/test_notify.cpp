// SPDX-License-Identifier: MIT
//
// Notifier (daemon/util/notify.hpp): sd_notify messages that never wait for the reader.
#include "util/notify.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace rdmad;

namespace {

/// A bound datagram socket that stands for systemd's notify socket, NOTIFY_SOCKET set to it.
struct Receiver {
    rdmad::test::TempDir dir{"rdmad-notify"};
    int fd = -1;
    explicit Receiver(bool abstract = false) {
        fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        REQUIRE(fd >= 0);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        std::string name = (dir.path / "notify").string();
        socklen_t len = sizeof sa;
        if (abstract) {
            name = "@rdmad-unit-notify-" + std::to_string(::getpid());
            sa.sun_path[0] = '\0';
            name.copy(sa.sun_path + 1, name.size() - 1, 1);
            len = socklen_t(offsetof(sockaddr_un, sun_path) + name.size());
        } else {
            name.copy(sa.sun_path, sizeof sa.sun_path - 1);
        }
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), len) == 0);
        ::setenv("NOTIFY_SOCKET", name.c_str(), 1);
    }
    ~Receiver() {
        ::unsetenv("NOTIFY_SOCKET");
        ::close(fd);
    }
    /// The next datagram, "" when none is queued.
    std::string take() const {
        char buf[512];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        return n > 0 ? std::string(buf, size_t(n)) : std::string();
    }
};

} // namespace

TEST_CASE("a notify message reaches the socket NOTIFY_SOCKET names, path or abstract") {
    for (bool abstract : {false, true}) {
        Receiver r(abstract);
        Notifier n;
        CHECK(n.send("STATUS=3 RDMA devices, 5 netdevs"));
        CHECK(r.take() == "STATUS=3 RDMA devices, 5 netdevs");
    }
}

TEST_CASE("without NOTIFY_SOCKET, or with one rdmad cannot use, sending is a no-op") {
    ::unsetenv("NOTIFY_SOCKET");
    CHECK_FALSE(Notifier().send("STATUS=x"));
    ::setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
    CHECK_FALSE(Notifier().send("STATUS=x"));
    ::unsetenv("NOTIFY_SOCKET");
}

TEST_CASE("a notify socket nobody reads makes sends fail at once, never wait; once read, they "
          "go through again") {
    Receiver r;
    Notifier n;
    // The queue holds net.unix.max_dgram_qlen datagrams (Linux: net/unix/af_unix.c), fewer when
    // the sender's buffer fills first: past either, libsystemd's blocking sd_notify() waits
    // for the reader, forever if there is none.
    const auto start = std::chrono::steady_clock::now();
    unsigned queued = 0;
    unsigned attempts = 0;
    while (attempts < 100000 && n.send("STATUS=pass " + std::to_string(attempts++)))
        ++queued;
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(queued > 0);
    CHECK(attempts < 100000); // it did fill up
    CHECK(n.dropped() == 1);
    CHECK_FALSE(n.send("STATUS=full"));
    CHECK(n.dropped() == 2);
    CHECK(took < std::chrono::seconds(5));
    CHECK(r.take() == "STATUS=pass 0");
    CHECK(n.send("STATUS=room again"));
}
