// SPDX-License-Identifier: MIT
//
// bench-sysfs-read: the bare cost of reading the sysfs files rdmad reads, with no libudev,
// no D-Bus, no model: list the classes, open + read every attribute, readlink every link
// rdmad follows. Prints one line: "<microseconds> <files read> <bytes> <links> <devices>".
//
//   bench-sysfs-read [--root DIR] [--passes N] [--doctor] [--port DEV/PORT [--each]]
//
// --doctor also reads the facts the doctor's checks add (daemon/doctor/): each port's
// `pkeys/0`, the PCIe link attributes of each device's PCI function (a VF's: its PF's) and of
// every bridge above it, each function once a pass, each netdev's `carrier`, `flags` and `mtu`, and the host's module marks; the difference
// from a pass without it is their added cost.
//
// --root DIR reads DIR/sys directly (no preload); without it, /sys (run it under the umockdev
// preload with UMOCKDEV_DIR to read a testbed, as rdmad does). --passes N times N passes and
// prints the fastest (default 1: one pass, like rdmad's start-up scan).
//
// --port DEV/PORT reads only that port's files (what a pass reads per port: state,
// phys_state, link_layer, rate, lid, sm_lid, every gids/I and, for each non-zero GID,
// gid_attrs/types/I and gid_attrs/ndevs/I): the bare cost of re-reading one port after its
// change uevent. --each also prints every pass's microseconds, one line each, after the
// summary line.
#include "bare_reads.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <set>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

using bench::list;

struct Stats {
    long files = 0, bytes = 0, links = 0, devices = 0;
};

Stats st;
bool doctor = false;
std::string read_attr(const std::string& path);
std::string real_dir(const std::string& path);

std::set<std::string> pcie_read; ///< functions whose link files this pass read

void pcie_links(const std::string& pci_dir) {
    // The function, then each parent directory named like a PCI function (its bridges), each
    // once a pass, as rdmad's PciReads reads them.
    std::string dir = pci_dir;
    for (;;) {
        if (!pcie_read.insert(dir).second)
            return; // it and everything above it read already
        for (const char* a :
             {"current_link_speed", "current_link_width", "max_link_speed", "max_link_width"})
            read_attr(dir + "/" + a);
        const auto slash = dir.rfind('/');
        if (slash == std::string::npos)
            return;
        dir.resize(slash);
        const std::string name = dir.substr(dir.rfind('/') + 1);
        if (name.size() < 12 || name[4] != ':' || name[7] != ':' || name[10] != '.')
            return;
    }
}

std::string read_attr(const std::string& path) {
    bench::ReadCount count;
    std::string out = bench::read_attr(path, count);
    st.files += count.files;
    st.bytes += count.bytes;
    return out;
}

void read_port(const std::string& p) {
    bench::ReadCount count;
    bench::read_port(p, doctor, count);
    st.files += count.files;
    st.bytes += count.bytes;
}

std::string real_dir(const std::string& path) {
    char* r = ::realpath(path.c_str(), nullptr);
    if (!r)
        return {};
    std::string out(r);
    std::free(r);
    ++st.links;
    return out;
}

std::string link_base(const std::string& path) {
    char buf[4096];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    if (n <= 0)
        return {};
    ++st.links;
    std::string t(buf, static_cast<size_t>(n));
    auto s = t.rfind('/');
    return s == std::string::npos ? t : t.substr(s + 1);
}

void pass(const std::string& sys) {
    st = {};
    pcie_read.clear();
    const std::string ib = sys + "/class/infiniband/";
    for (const auto& dev : list(ib)) {
        ++st.devices;
        const std::string d = ib + dev + "/";
        for (const char* a : {"node_type", "node_guid", "sys_image_guid", "fw_ver", "hca_type",
                              "board_id", "node_desc"})
            read_attr(d + a);
        link_base(d + "device");
        link_base(d + "device/driver");
        const bool vf = !link_base(d + "device/physfn").empty();
        // A VF's link is its PF's (rdmad: sources/device_reader.cpp).
        if (doctor)
            if (std::string pci = real_dir(d + (vf ? "device/physfn" : "device")); !pci.empty())
                pcie_links(pci);
        for (const auto& port : list(d + "ports"))
            read_port(d + "ports/" + port + "/");
    }
    const std::string uv = sys + "/class/infiniband_verbs/";
    for (const auto& v : list(uv))
        read_attr(uv + v + "/ibdev");
    const std::string net = sys + "/class/net/";
    for (const auto& n : list(net)) {
        for (const char* a : {"ifindex", "operstate", "dev_port", "type"})
            read_attr(net + n + "/" + a);
        if (doctor)
            for (const char* a : {"carrier", "flags", "mtu"})
                read_attr(net + n + "/" + a);
        link_base(net + n + "/device/driver");
        link_base(net + n + "/master");
    }
    // umockdev's testbed keeps auxiliary devices under class/ (a real kernel: bus/auxiliary).
    std::string aux = sys + "/class/auxiliary/";
    if (list(aux).empty())
        aux = sys + "/bus/auxiliary/devices/";
    for (const auto& a : list(aux)) {
        read_attr(aux + a + "/modalias");
        link_base(aux + a + "/driver");
    }
    if (doctor) {
        struct stat sb;
        for (const char* m :
             {"/class/infiniband_verbs/abi_version", "/module/ib_uverbs", "/class/misc/rdma_cm",
              "/module/rdma_ucm", "/class/infiniband_mad/abi_version", "/module/ib_umad",
              "/module/ib_ipoib"})
            ::stat((sys + m).c_str(), &sb);
    }
}

} // namespace

int main(int argc, char** argv) {
    std::string sys = "/sys";
    int passes = 1;
    std::string port;
    bool each = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--root") && i + 1 < argc)
            sys = std::string(argv[++i]) + "/sys";
        else if (!std::strcmp(argv[i], "--passes") && i + 1 < argc)
            passes = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--doctor"))
            doctor = true;
        else if (!std::strcmp(argv[i], "--port") && i + 1 < argc && std::strchr(argv[i + 1], '/'))
            port = argv[++i];
        else if (!std::strcmp(argv[i], "--each"))
            each = true;
        else {
            std::fprintf(stderr,
                         "usage: %s [--root DIR] [--passes N] [--doctor] [--port DEV/PORT [--each]]\n",
                         argv[0]);
            return 2;
        }
    }
    std::string port_dir;
    if (!port.empty()) {
        const auto slash = port.find('/');
        port_dir = sys + "/class/infiniband/" + port.substr(0, slash) + "/ports/" +
                   port.substr(slash + 1) + "/";
    }
    double best = -1;
    std::vector<double> times;
    for (int i = 0; i < passes; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        if (port_dir.empty()) {
            pass(sys);
        } else {
            st = {};
            read_port(port_dir);
            st.devices = st.files > 0;
        }
        auto t1 = std::chrono::steady_clock::now();
        double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        times.push_back(us);
        if (best < 0 || us < best)
            best = us;
    }
    std::printf("%.0f %ld %ld %ld %ld\n", best, st.files, st.bytes, st.links, st.devices);
    if (each)
        for (double us : times)
            std::printf("%.1f\n", us);
    return st.devices > 0 ? 0 : 1;
}
