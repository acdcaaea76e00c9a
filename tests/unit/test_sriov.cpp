// SPDX-License-Identifier: MIT
//
// sriov_numvfs (reconcile/settings/sriov_numvfs.cpp; its key and plan are in
// test_settings.cpp): the reader's parse of the kernel's "%u\n", the actuator's steps on plain
// files (a non-zero count changes through 0: kernel drivers/pci/iov.c
// sriov_numvfs_store() answers EBUSY otherwise; Documentation/PCI/pci-iov-howto.rst).
#include "actuators/sriov.hpp"
#include "export/prometheus.hpp"
#include "sources/sriov_reader.hpp"
#include "temp_dir.hpp"
#include "util/text.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

using namespace rdmad;

namespace {

const std::string kPf = "/sys/devices/pci0000:0b/0000:0b:00.0/0000:0c:00.0/infiniband/mlx5_0";

/// An mlx5 InfiniBand PF with `numvfs` of `totalvfs` VFs enabled.
DeviceState pf(std::optional<uint32_t> numvfs, std::optional<uint32_t> totalvfs) {
    DeviceState d;
    d.name = "mlx5_0";
    d.syspath = kPf;
    d.pci_address = "0000:0c:00.0";
    d.kernel_driver = "mlx5_core";
    d.sriov.numvfs = numvfs;
    d.sriov.totalvfs = totalvfs;
    PortState p;
    p.number = 1;
    p.link_layer = "InfiniBand";
    p.transport = "InfiniBand";
    d.ports.push_back(p);
    return d;
}

std::string contents(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST_CASE("sriov_numvfs and sriov_totalvfs read as the kernel prints them (\"%u\\n\" of a u16)") {
    CHECK(parse_vf_count("8\n") == 8u);
    CHECK(parse_vf_count("0\n") == 0u);
    CHECK(parse_vf_count("65535") == 65535u);
    CHECK(parse_vf_count("65536\n") == std::nullopt);
    CHECK(parse_vf_count("08\n") == std::nullopt);
    CHECK(parse_vf_count("-1\n") == std::nullopt);
    CHECK(parse_vf_count("\n") == std::nullopt);
    CHECK(parse_vf_count("4 \n") == std::nullopt);
}

TEST_CASE("a PF whose sriov_totalvfs or sriov_numvfs is no count has neither, and says which "
          "file shows what") {
    test::TempDir dir;
    const std::string pci = dir.path.string();
    const auto read = [&](const std::string& total, std::optional<std::string> num) {
        dir.write("sriov_totalvfs", total);
        std::filesystem::remove(dir.path / "sriov_numvfs");
        if (num)
            dir.write("sriov_numvfs", *num);
        return read_sriov(pci);
    };
    const auto unreadable = [&](const std::string& total, std::optional<std::string> num) {
        const SriovActual s = read(total, num);
        CHECK(s.totalvfs == std::nullopt);
        CHECK(s.numvfs == std::nullopt);
        return s.unreadable;
    };
    CHECK(unreadable("abc\n", "0\n") == "sriov_totalvfs = \"abc\"");
    CHECK(unreadable("-1\n", "0\n") == "sriov_totalvfs = \"-1\"");
    CHECK(unreadable("4294967296\n", "0\n") == "sriov_totalvfs = \"4294967296\"");
    CHECK(unreadable("", "0\n") == "sriov_totalvfs = \"\"");
    CHECK(unreadable("8\n", "x\ty\n") == "sriov_numvfs = \"x?y\"");
    CHECK(unreadable("8\n", std::nullopt) == "sriov_numvfs = (absent)");
    // A huge value is quoted at most kMaxQuotedBytes, then "...".
    const std::string huge = unreadable(std::string(100000, '9'), "0\n");
    CHECK(huge == "sriov_totalvfs = \"" + std::string(kMaxQuotedBytes, '9') + "...\"");

    const SriovActual ok = read("16\n", "4\n");
    CHECK(ok.totalvfs == 16u);
    CHECK(ok.numvfs == 4u);
    CHECK(ok.unreadable.empty());
}

TEST_CASE("8 VFs -> 4 writes 0 then 4, each read back; 0 -> 4 and 4 -> 0 write once") {
    test::TempDir dir;
    const std::string pci = dir.path.string();
    const std::string file = "0000:0c:00.0/sriov_numvfs";
    dir.write(file, "8\n");
    SriovWrite w = set_sriov_numvfs("0000:0c:00.0", 4, pci);
    CHECK(w.ok());
    CHECK(w.wrote == std::vector<uint32_t>{0, 4});
    CHECK(contents(dir.path / file) == "4\n");

    w = set_sriov_numvfs("0000:0c:00.0", 4, pci);
    CHECK(w.ok());
    CHECK(w.wrote.empty()); // the count it has: no write
    w = set_sriov_numvfs("0000:0c:00.0", 0, pci);
    CHECK(w.wrote == std::vector<uint32_t>{0});
    w = set_sriov_numvfs("0000:0c:00.0", 4, pci);
    CHECK(w.wrote == std::vector<uint32_t>{4});
}

TEST_CASE("a PF whose sriov_numvfs cannot be read or opened fails with the path and errno text") {
    test::TempDir dir;
    SriovWrite w = set_sriov_numvfs("0000:0c:00.0", 4, dir.path.string());
    CHECK(w.error == EIO);
    CHECK(w.message == dir.path.string() + "/0000:0c:00.0/sriov_numvfs: cannot be read");
    CHECK(w.wrote.empty());
    CHECK(set_sriov_numvfs("../etc", 4, dir.path.string()).error == EINVAL);
}

TEST_CASE("rdmad.prom shows a PF's VF counts, actual and asked; a device without SR-IOV none") {
    HostState host;
    DeviceState d = pf(4, 16);
    d.desired_sriov_numvfs = 8;
    host.devices[d.syspath] = d;
    DeviceState other = pf(std::nullopt, std::nullopt);
    other.name = "mlx5_1";
    other.syspath = "/sys/devices/pci0000:11/0000:11:00.0/0000:12:00.0/infiniband/mlx5_1";
    host.devices[other.syspath] = other;
    const std::string text = exports::render_prometheus(host, {});
    CHECK(text.find("rdmad_device_sriov_numvfs{device=\"mlx5_0\"} 4\n") != std::string::npos);
    CHECK(text.find("rdmad_device_sriov_totalvfs{device=\"mlx5_0\"} 16\n") != std::string::npos);
    CHECK(text.find("rdmad_device_desired_sriov_numvfs{device=\"mlx5_0\"} 8\n") !=
          std::string::npos);
    CHECK(text.find("sriov_numvfs{device=\"mlx5_1\"}") == std::string::npos);
    CHECK(text.find("sriov_totalvfs{device=\"mlx5_1\"}") == std::string::npos);
}
