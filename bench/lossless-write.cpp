// SPDX-License-Identifier: MIT
//
// bench-lossless-write: the bare cost of the writes rdmad makes when a RoCE device comes back
// and gets `profile = "lossless-roce"` again, made directly with rdmad's own actuators (no
// event loop, no plan, no bus), in the same emulation as rdmad (run under the umockdev preload
// with tests/integration/fake_dcbnl.c and fake_configfs.c ahead of it, as bench/readd.py runs
// rdmad). One repetition, as rdmad does it on the device's add:
//   1. IEEE_GET of the netdev (the DCB source's read of the new device's netdev)
//   2. PFC: IEEE_SET pfc_en 0x08 (priority 3), IEEE_GET read-back
//   3. APP table: IEEE_SET DSCP 26 -> 3 and 48 -> 6, IEEE_GET read-back
//   4. RDMA-CM: read ports/<port>/ of the group (the source's read), then
//      actuators/rdma_cm.hpp set_rdma_cm("RoCE v2", ToS 106): its read, the writes of what
//      differs, its read-back
// Before each repetition, untimed, the driver re-creates the device: the netdev's DCB is reset
// (FAKE_DCBNL_RESET) and the configfs group shows a new device's values
// (rdma_cm_model_fill_group(), found in the preloaded fake_configfs.so).
// Prints one JSON object: per repetition wall and CPU microseconds, and what was written.
//
//   bench-lossless-write --netdev IF --device DEV [--port N] [--reps N]
#include "actuators/dcb_app.hpp"
#include "actuators/dcb_client.hpp"
#include "actuators/rdma_cm.hpp"
#include "sources/rdma_cm_reader.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <fstream>
#include <string>
#include <vector>

namespace {

double cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

std::string list(const std::vector<double>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}

} // namespace

int main(int argc, char** argv) {
    std::string netdev, device;
    uint32_t port = 1;
    int reps = 50;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--netdev") && i + 1 < argc)
            netdev = argv[++i];
        else if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
            device = argv[++i];
        else if (!std::strcmp(argv[i], "--port") && i + 1 < argc)
            port = static_cast<uint32_t>(std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s --netdev IF --device DEV [--port N] [--reps N]\n",
                         argv[0]);
            return 2;
        }
    }
    const char* reset = std::getenv("FAKE_DCBNL_RESET");
    using Fill = int (*)(const char*, const char*, int);
    const auto fill = reinterpret_cast<Fill>(dlsym(RTLD_DEFAULT, "rdma_cm_model_fill_group"));
    if (netdev.empty() || device.empty() || !reset || !fill) {
        std::fprintf(stderr, "bench-lossless-write: needs --netdev, --device, FAKE_DCBNL_RESET "
                             "and fake_configfs.so preloaded\n");
        return 2;
    }
    rdmad::dcb::MnlTransport transport;
    rdmad::dcb::DcbClient client(transport);
    rdmad::dcb::DscpAppGoal goal;
    goal.trust = rdmad::dcb::Trust::dscp;
    goal.dscp_priority = {{26, 3}, {48, 6}};
    const std::string root(rdmad::kConfigfsRoot);
    std::vector<double> wall, cpu;
    int failed = 0;
    for (int r = 0; r < reps; ++r) {
        std::ofstream(reset) << netdev << "\n";
        if (fill("", device.c_str(), 0) != 0) {
            std::fprintf(stderr, "bench-lossless-write: cannot reset the configfs group\n");
            return 1;
        }
        const double c0 = cpu_us();
        const auto t0 = std::chrono::steady_clock::now();
        const rdmad::dcb::DcbResult now = client.get_pfc(netdev);
        const rdmad::dcb::DcbResult pfc = client.set_pfc(netdev, 0x08, now.state);
        const rdmad::dcb::DcbResult app = client.set_dscp_app(netdev, goal, now.app);
        const rdmad::RdmaCmActual cm = rdmad::read_rdma_cm_port(root, device, port);
        const rdmad::RdmaCmWrite w =
            rdmad::set_rdma_cm(root, device, port, std::string(rdmad::kRoceModeV2), 106);
        const auto t1 = std::chrono::steady_clock::now();
        cpu.push_back(cpu_us() - c0);
        wall.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        failed += !now.ok() || !pfc.ok() || !app.ok() || cm.status != rdmad::RdmaCmStatus::ok ||
                  !w.ok();
        if (r == 0)
            std::fprintf(stderr, "bench-lossless-write: configfs files written: %zu\n",
                         w.written.size());
    }
    std::printf("{\"reps\": %d, \"failed\": %d, \"wall_us\": %s, \"cpu_us\": %s}\n", reps, failed,
                list(wall).c_str(), list(cpu).c_str());
    return failed ? 1 : 0;
}
