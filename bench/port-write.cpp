// SPDX-License-Identifier: MIT
//
// bench-port-write: the bare cost of what rdmad's mlx4 port-type actuator does to sysfs, with
// no rdmad around it: write "eth\n" to each /sys/bus/pci/devices/<pci>/mlx4_port<n> named in
// LIST, in LIST's order, opened as daemon/actuators/port_type.cpp opens it (O_WRONLY, no
// O_TRUNC), then open and read every one of them back. Prints one line:
// "<write microseconds> <read-back microseconds> <files> <files not reading eth>".
//
//   bench-port-write --list FILE [--root DIR] [--value TYPE]
//
// FILE holds one "<pci address> <port>" a line (bench/reconcile.py writes the order rdmad
// wrote in). --root DIR writes DIR/sys directly (no preload); without it, /sys (run it under
// the umockdev preload with UMOCKDEV_DIR, as rdmad runs). --value TYPE writes TYPE instead of
// eth (the driver resets the tree with it, untimed).
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

int main(int argc, char** argv) {
    std::string sys = "/sys", list, value = "eth";
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--root") && i + 1 < argc)
            sys = std::string(argv[++i]) + "/sys";
        else if (!std::strcmp(argv[i], "--list") && i + 1 < argc)
            list = argv[++i];
        else if (!std::strcmp(argv[i], "--value") && i + 1 < argc)
            value = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s --list FILE [--root DIR] [--value TYPE]\n", argv[0]);
            return 2;
        }
    }
    std::ifstream in(list);
    if (list.empty() || !in) {
        std::fprintf(stderr, "bench-port-write: cannot read the list '%s'\n", list.c_str());
        return 2;
    }
    std::vector<std::string> paths;
    std::string pci;
    unsigned port = 0;
    while (in >> pci >> port)
        paths.push_back(sys + "/bus/pci/devices/" + pci + "/mlx4_port" + std::to_string(port));
    const std::string text = value + "\n"; // the kernel wants the newline

    int failed = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (const auto& p : paths) {
        int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
            std::fprintf(stderr, "bench-port-write: %s: %s\n", p.c_str(), std::strerror(errno));
            ++failed;
        }
        if (fd >= 0)
            ::close(fd);
    }
    auto t1 = std::chrono::steady_clock::now();
    long wrong = 0;
    for (const auto& p : paths) {
        char buf[64];
        ssize_t n = -1;
        int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) {
            n = ::read(fd, buf, sizeof buf);
            ::close(fd);
        }
        if (n < static_cast<ssize_t>(text.size()) || std::memcmp(buf, text.data(), text.size()))
            ++wrong;
    }
    auto t2 = std::chrono::steady_clock::now();
    using us = std::chrono::duration<double, std::micro>;
    std::printf("%.0f %.0f %zu %ld\n", us(t1 - t0).count(), us(t2 - t1).count(), paths.size(),
                wrong);
    return failed || wrong || paths.empty() ? 1 : 0;
}
