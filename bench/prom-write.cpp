// SPDX-License-Identifier: MIT
//
// bench-prom-write: the CPU time of one rdmad.prom write at N generated devices, as the export
// writer makes it (PrometheusRenderer::update() after a change of one port, then write() into
// write_file_atomically() with Sync::replace_only), against the bare cost of writing the same
// bytes (the whole text, rendered beforehand) to the same file the same way. Each device is a
// ConnectX RoCE port as the recorded constructed-mlx5-roce fixture has it (4 GIDs, PFC read
// with priority 3 on, DSCP trust with two entries, priority 4 asked on too) and its netdev.
// Prints one JSON object: the median microseconds of CPU of one write, both ways (the two
// alternated write by write, so that the machine's load falls on both alike), their ratio,
// the file size.
//
//   bench-prom-write [--devices N] [--writes N] [--dir DIR]
#include "export/prometheus.hpp"
#include "inventory/inventory.hpp"
#include "util/atomic_file.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

using namespace rdmad;

namespace {

double cpu_us() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

DeviceState roce_device(int i) {
    const std::string name = "mlx5_" + std::to_string(i);
    const std::string netdev = "enp" + std::to_string(i) + "s0f0np0";
    const Gid link_local = *Gid::parse("fe80:0000:0000:0000:0202:c9ff:fe00:0001");
    const Gid ipv4 = *Gid::parse("0000:0000:0000:0000:0000:ffff:c0a8:0101");
    PortState p;
    p.number = 1;
    p.state = "ACTIVE";
    p.phys_state = "LinkUp";
    p.link_layer = "Ethernet";
    p.transport = "RoCE";
    p.roce_versions = {"v1", "v2"};
    p.netdev = netdev;
    p.gids = {{0, link_local, "IB/RoCE v1", netdev},
              {1, link_local, "RoCE v2", netdev},
              {2, ipv4, "IB/RoCE v1", netdev},
              {3, ipv4, "RoCE v2", netdev}};
    p.recommended_gid = {3, ipv4, "RoCE v2", netdev, "192.168.1.1"};
    p.pfc.status = PfcActual::Status::ok;
    p.pfc.priorities = {3};
    p.pfc.trust = "dscp";
    p.pfc.dscp_map = {{26, 3}, {48, 6}};
    p.pfc_no_drop = {3};
    p.desired_pfc_no_drop = {3, 4};
    DeviceState d;
    d.name = name;
    d.syspath = "/sys/devices/pci0000:00/0000:00:01.0/infiniband/" + name;
    d.node_type = "CA";
    d.kernel_driver = "mlx5_core";
    d.provider = "mlx5";
    d.provider_installed = true;
    d.ports = {p};
    return d;
}

} // namespace

int main(int argc, char** argv) {
    int devices = 1024, writes = 200;
    std::string dir = "/tmp";
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--devices") && i + 1 < argc)
            devices = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--writes") && i + 1 < argc)
            writes = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: bench-prom-write [--devices N] [--writes N] [--dir DIR]\n");
            return 2;
        }
    }
    HostState host;
    for (int i = 0; i < devices; ++i) {
        DeviceState d = roce_device(i);
        LinkState l;
        l.index = 1000 + i;
        l.name = d.ports[0].netdev;
        l.rdma_device = d.name;
        l.rdma_capable = "yes";
        host.links[l.index] = l;
        host.devices[d.syspath] = std::move(d);
    }
    Inventory inventory;
    exports::PrometheusRenderer renderer;
    exports::ManagerFacts facts;
    facts.state = "running";
    renderer.changed(inventory.replace(host));
    const std::string path = dir + "/bench-prom-write.prom";
    const std::string whole = renderer.render(inventory, facts);

    std::vector<double> rdmad_us, bare_us;
    for (int w = 0; w < writes; ++w) {
        // The writer's way: one port changes (its in-sync flips), update(), write().
        DeviceState d = *inventory.device_named("mlx5_" + std::to_string(w % devices));
        d.ports[0].in_sync = !d.ports[0].in_sync;
        const ChangeSet changes = inventory.put_device(d);
        double start = cpu_us();
        renderer.changed(changes);
        renderer.update(inventory, facts);
        write_file_atomically(
            path, [&](const FileSink& put) { renderer.write(inventory, put); }, 0644, true,
            Sync::replace_only);
        rdmad_us.push_back(cpu_us() - start);
        // The bare cost: the same bytes, already rendered, in the same kind of write.
        start = cpu_us();
        write_file_atomically(path, whole, 0644, true, Sync::replace_only);
        bare_us.push_back(cpu_us() - start);
    }
    std::remove(path.c_str());
    std::printf("{\"devices\": %d, \"writes\": %d, \"bytes\": %zu, \"write_cpu_us\": %.1f, "
                "\"bare_cpu_us\": %.1f, \"ratio\": %.2f}\n",
                devices, writes, whole.size(), median(rdmad_us), median(bare_us),
                median(rdmad_us) / median(bare_us));
    return 0;
}
