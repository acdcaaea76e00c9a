// SPDX-License-Identifier: MIT
//
// Unit tests for read_device() and reread_device_own() (daemon/sources/device_reader.hpp)
// on a sysfs tree written the way the kernel lays it out: a PCI function below its root port
// (Documentation/ABI/testing/sysfs-devices), its RDMA device in infiniband/<name>
// (Documentation/ABI/stable/sysfs-class-infiniband), a RoCE port with two GID entries.
// The news of the device's own directory re-reads it and keeps what the device's parent gave.
#include "sources/device_reader.hpp"
#include "sources/pci_reads.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace rdmad;

namespace {

struct Tree {
    test::TempDir dir{"rdmad-device-reader"};
    std::string root_port, pci, ib;

    Tree() {
        root_port = (dir.path / "devices/pci0000:00/0000:00:01.0").string();
        pci = root_port + "/0000:01:00.0";
        ib = pci + "/infiniband/mlx5_0";
        std::filesystem::create_directories(dir.path / "bus/pci/drivers/mlx5_core");
        for (const std::string& f : {root_port, pci}) {
            std::filesystem::create_directories(f);
            std::filesystem::create_directory_symlink(dir.path / "bus/pci", f + "/subsystem");
            put(f + "/current_link_speed", "8.0 GT/s PCIe\n");
            put(f + "/current_link_width", "16\n");
            put(f + "/max_link_speed", "8.0 GT/s PCIe\n");
            put(f + "/max_link_width", "16\n");
        }
        std::filesystem::create_directory_symlink(dir.path / "bus/pci/drivers/mlx5_core",
                                                  pci + "/driver");
        put(pci + "/sriov_totalvfs", "8\n");
        put(pci + "/sriov_numvfs", "0\n");
        std::filesystem::create_directories(ib);
        std::filesystem::create_directory_symlink("../..", ib + "/device");
        put(ib + "/node_type", "1: CA\n");
        put(ib + "/node_guid", "0c42:a103:0000:0000\n");
        put(ib + "/sys_image_guid", "0c42:a103:0000:0000\n");
        put(ib + "/fw_ver", "16.35.2000\n");
        put(ib + "/hca_type", "MT4119\n");
        put(ib + "/board_id", "MT_0000000008\n");
        put(ib + "/node_desc", "host mlx5_0\n");
        const std::string p = ib + "/ports/1";
        put(p + "/state", "4: ACTIVE\n");
        put(p + "/phys_state", "5: LinkUp\n");
        put(p + "/link_layer", "Ethernet\n");
        put(p + "/rate", "100 Gb/sec (4X EDR)\n");
        put(p + "/lid", "0x0\n");
        put(p + "/sm_lid", "0x0\n");
        put(p + "/gids/0", "fe80:0000:0000:0000:0e42:a1ff:fe00:0000\n");
        put(p + "/gids/1", "fe80:0000:0000:0000:0e42:a1ff:fe00:0000\n");
        put(p + "/gid_attrs/types/0", "IB/RoCE v1\n");
        put(p + "/gid_attrs/types/1", "RoCE v2\n");
        put(p + "/gid_attrs/ndevs/0", "ens1f0\n");
        put(p + "/gid_attrs/ndevs/1", "ens1f0\n");
    }
    static void put(const std::string& path, const std::string& text) {
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
        std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    }
};

} // namespace

TEST_CASE("reread_device_own reads the device's directory again and keeps what the parent gave",
          "[device_reader]") {
    Tree t;
    PciReads pci;
    const DeviceState read = read_device(t.ib, pci);
    pci.clear();
    REQUIRE(read.pci_address == "0000:01:00.0");
    REQUIRE(read.kernel_driver == "mlx5_core");
    REQUIRE(read.node_description == "host mlx5_0");
    REQUIRE(read.sriov.totalvfs == 8);
    REQUIRE(read.pcie_path.size() == 2);
    REQUIRE(read.pcie_path[0].current_link_width == "16");
    REQUIRE(read.ports.size() == 1);
    REQUIRE(read.ports[0].state == "ACTIVE");
    REQUIRE(read.ports[0].transport == "RoCE");
    REQUIRE(read.ports[0].gids.size() == 2);

    // The port goes down and loses a GID entry, the node description changes; the PCIe link
    // retrains and the PF's VF limit changes (the PCI function's news, not the device's).
    Tree::put(t.ib + "/ports/1/state", "1: DOWN\n");
    Tree::put(t.ib + "/ports/1/phys_state", "3: Disabled\n");
    std::filesystem::remove(t.ib + "/ports/1/gids/1");
    Tree::put(t.pci + "/current_link_width", "8\n");
    Tree::put(t.pci + "/sriov_totalvfs", "4\n");
    Tree::put(t.ib + "/node_desc", "renamed mlx5_0\n");

    const DeviceState ports = reread_device_own(read, pci);
    pci.clear();
    CHECK(ports.node_description == "renamed mlx5_0");
    REQUIRE(ports.ports.size() == 1);
    CHECK(ports.ports[0].state == "DOWN");
    CHECK(ports.ports[0].phys_state == "Disabled");
    CHECK(ports.ports[0].transport == "RoCE");
    REQUIRE(ports.ports[0].gids.size() == 1);
    CHECK(ports.ports[0].gids[0].index == 0);
    CHECK(ports.ports[0].netdev == "ens1f0");
    // Kept as read.
    CHECK(ports.pcie_path == read.pcie_path);
    CHECK(ports.sriov.totalvfs == 8);
    CHECK(ports.pci_address == read.pci_address);
    CHECK(ports.kernel_driver == read.kernel_driver);
    CHECK(ports.node_guid == read.node_guid);
    CHECK(ports.syspath == read.syspath);

    // A whole read sees all of it.
    const DeviceState whole = read_device(t.ib, pci);
    CHECK(whole.pcie_path[0].current_link_width == "8");
    CHECK(whole.sriov.totalvfs == 4);
    CHECK(whole.node_description == "renamed mlx5_0");
    CHECK(whole.ports[0].state == "DOWN");
}

TEST_CASE("reread_device_own of a port that went gives no port", "[device_reader]") {
    Tree t;
    PciReads pci;
    const DeviceState read = read_device(t.ib, pci);
    pci.clear();
    REQUIRE(read.ports.size() == 1);
    std::filesystem::remove_all(t.ib + "/ports/1");
    CHECK(reread_device_own(read, pci).ports.empty());
}

namespace {

/// VF 0000:01:00.2 of the Tree's PF with its RDMA device mlx5_2, its `physfn` link to
/// `physfn` (the kernel's is "../<PF>": drivers/pci/iov.c pci_iov_add_virtfn()); returns the
/// RDMA device's syspath. Its own link files read as a VF's do (Unknown, 0).
std::string vf_device(const Tree& t, const std::string& physfn) {
    const std::string vf = t.root_port + "/0000:01:00.2";
    const std::string vf_ib = vf + "/infiniband/mlx5_2";
    std::filesystem::create_directories(vf);
    std::filesystem::create_directory_symlink(t.dir.path / "bus/pci", vf + "/subsystem");
    std::filesystem::create_symlink(physfn, vf + "/physfn");
    Tree::put(vf + "/current_link_speed", "Unknown\n");
    Tree::put(vf + "/current_link_width", "0\n");
    Tree::put(vf + "/max_link_speed", "8.0 GT/s PCIe\n");
    Tree::put(vf + "/max_link_width", "16\n");
    std::filesystem::create_directories(vf_ib + "/ports/1");
    std::filesystem::create_directory_symlink("../..", vf_ib + "/device");
    Tree::put(vf_ib + "/node_type", "1: CA\n");
    Tree::put(vf_ib + "/ports/1/state", "4: ACTIVE\n");
    Tree::put(vf_ib + "/ports/1/link_layer", "Ethernet\n");
    return vf_ib;
}

/// What read_device() gives for a function whose `physfn` names no PF the kernel would: no
/// PF, and the function's own PCIe path (its own files, its root port), nothing read from
/// where the link points.
void check_no_pf(const DeviceState& d) {
    CHECK(d.pci_address == "0000:01:00.2");
    CHECK(d.physical_function.empty());
    CHECK(d.vf_index == -1);
    REQUIRE(d.pcie_path.size() == 2);
    CHECK(d.pcie_path[0].address == "0000:01:00.2");
    CHECK(d.pcie_path[0].current_link_speed == "Unknown");
    CHECK(d.pcie_path[1].address == "0000:00:01.0");
}

} // namespace

TEST_CASE("a VF's PCIe path is its PF's: a VF has no link of its own", "[device_reader]") {
    // drivers/pci/probe.c pcie_report_downtraining(): "Multi-function PCIe devices share the
    // same link/status", not reported for a VF. Whatever a VF's own link files say (here
    // "Unknown" and 0), they are not the link its traffic takes.
    Tree t;
    const std::string vf_ib = vf_device(t, "../0000:01:00.0");
    std::filesystem::create_directory_symlink("../0000:01:00.2", t.pci + "/virtfn0");

    PciReads pci;
    const DeviceState d = read_device(vf_ib, pci);
    CHECK(d.pci_address == "0000:01:00.2");
    CHECK(d.physical_function == "0000:01:00.0");
    CHECK(d.vf_index == 0);
    REQUIRE(d.pcie_path.size() == 2);
    CHECK(d.pcie_path[0].address == "0000:01:00.0");
    CHECK(d.pcie_path[0].current_link_width == "16");
    CHECK(d.pcie_path[1].address == "0000:00:01.0");
}

TEST_CASE("a VF's physfn given as an absolute path into the tree names its PF",
          "[device_reader][hostile]") {
    Tree t;
    PciReads pci;
    const DeviceState d = read_device(vf_device(t, t.pci), pci);
    CHECK(d.physical_function == "0000:01:00.0");
    REQUIRE(d.pcie_path.size() == 2);
    CHECK(d.pcie_path[0].address == "0000:01:00.0");
    CHECK(d.pcie_path[0].current_link_width == "16");
}

TEST_CASE("a VF whose PF is absent (removed while the VF is read) names the PF",
          "[device_reader][hostile]") {
    // Scanner::mark_pci_function() reads the VF again when the PF comes back, by this name.
    Tree t;
    PciReads pci;
    const DeviceState d = read_device(vf_device(t, "../0000:01:00.7"), pci);
    CHECK(d.physical_function == "0000:01:00.7");
    CHECK(d.vf_index == -1);
    REQUIRE(d.pcie_path.size() == 2);
    CHECK(d.pcie_path[0].address == "0000:01:00.7");
    CHECK(d.pcie_path[0].current_link_speed.empty());
    CHECK(d.pcie_path[1].address == "0000:00:01.0");
}

TEST_CASE("a physfn that names no PCI function gives no PF", "[device_reader][hostile]") {
    Tree t;
    PciReads pci;
    SECTION("the function itself") {
        check_no_pf(read_device(vf_device(t, "../0000:01:00.2"), pci));
    }
    SECTION("itself through '.'") {
        check_no_pf(read_device(vf_device(t, "."), pci));
    }
    SECTION("a loop of links") {
        std::filesystem::create_symlink("0000:01:00.6", t.root_port + "/0000:01:00.5");
        std::filesystem::create_symlink("0000:01:00.5", t.root_port + "/0000:01:00.6");
        check_no_pf(read_device(vf_device(t, "../0000:01:00.5"), pci));
    }
    SECTION("a directory named like a PCI address that is no PCI function") {
        // Link files there would be read as the PF's link.
        const std::string fake = (t.dir.path / "devices/0000:09:00.0").string();
        Tree::put(fake + "/current_link_speed", "2.5 GT/s PCIe\n");
        Tree::put(fake + "/current_link_width", "1\n");
        check_no_pf(read_device(vf_device(t, "../../../0000:09:00.0"), pci));
    }
    SECTION("a PCI function outside the tree's devices directory") {
        const std::string fake = (t.dir.path / "elsewhere/0000:09:00.0").string();
        Tree::put(fake + "/current_link_speed", "2.5 GT/s PCIe\n");
        std::filesystem::create_directory_symlink(t.dir.path / "bus/pci", fake + "/subsystem");
        check_no_pf(read_device(vf_device(t, fake), pci));
    }
    SECTION("'..' climbing above /") {
        std::string up;
        for (int i = 0; i < 64; ++i)
            up += "../";
        check_no_pf(read_device(vf_device(t, up + "0000:01:00.0"), pci));
    }
    SECTION("a VF of its own (a PF has no physfn: only VFs get one)") {
        // VF 0000:01:00.3 whose physfn is 0000:01:00.2, whose physfn is 0000:01:00.3.
        const std::string other = t.root_port + "/0000:01:00.3";
        std::filesystem::create_directories(other);
        std::filesystem::create_directory_symlink(t.dir.path / "bus/pci", other + "/subsystem");
        std::filesystem::create_symlink("../0000:01:00.2", other + "/physfn");
        // With sriov_totalvfs, a PF's mark, so that the physfn is what disqualifies it.
        Tree::put(other + "/sriov_totalvfs", "8\n");
        Tree::put(other + "/current_link_speed", "2.5 GT/s PCIe\n");
        check_no_pf(read_device(vf_device(t, "../0000:01:00.3"), pci));
    }
}

TEST_CASE("a physfn that names a PCI function without sriov_totalvfs (no PF) gives no PF",
          "[device_reader][hostile]") {
    // Only a PF carries sriov_totalvfs: drivers/pci/iov.c shows sriov_pf_dev_attrs only where
    // dev_is_pf() (Documentation/ABI/testing/sysfs-bus-pci: it "appears when a physical PCIe
    // device supports SR-IOV"). A bridge or a plain function is no VF's PF.
    Tree t;
    PciReads pci;
    SECTION("the VF's bridge, the root port") {
        check_no_pf(read_device(vf_device(t, ".."), pci));
    }
    SECTION("a plain function beside it, with a slow link of its own") {
        const std::string plain = t.root_port + "/0000:01:00.1";
        std::filesystem::create_directories(plain);
        std::filesystem::create_directory_symlink(t.dir.path / "bus/pci", plain + "/subsystem");
        Tree::put(plain + "/current_link_speed", "2.5 GT/s PCIe\n");
        Tree::put(plain + "/current_link_width", "1\n");
        check_no_pf(read_device(vf_device(t, "../0000:01:00.1"), pci));
    }
    SECTION("the PF itself once its sriov_totalvfs is gone") {
        std::filesystem::remove(t.pci + "/sriov_totalvfs");
        check_no_pf(read_device(vf_device(t, "../0000:01:00.0"), pci));
    }
}

TEST_CASE("a VF's index comes from its own PF's virtfn links, not from another function's "
          "with the PF's address",
          "[device_reader][hostile]") {
    // Two functions 0000:01:00.0, each a PF with a VF 0000:01:00.2: only a hostile tree has
    // two functions of one address (the kernel names a function by its place on the bus).
    Tree t;
    const std::string vf1_ib = vf_device(t, "../0000:01:00.0");
    std::filesystem::create_directory_symlink("../0000:01:00.2", t.pci + "/virtfn0");
    const std::string root2 = (t.dir.path / "devices/pci0000:80/0000:80:01.0").string();
    const std::string pf2 = root2 + "/0000:01:00.0", vf2 = root2 + "/0000:01:00.2";
    for (const std::string& f : {root2, pf2, vf2}) {
        std::filesystem::create_directories(f);
        std::filesystem::create_directory_symlink(t.dir.path / "bus/pci", f + "/subsystem");
    }
    Tree::put(pf2 + "/sriov_totalvfs", "8\n");
    std::filesystem::create_directory_symlink("../0000:01:00.2", pf2 + "/virtfn3");
    std::filesystem::create_symlink("../0000:01:00.0", vf2 + "/physfn");
    const std::string vf2_ib = vf2 + "/infiniband/mlx5_3";
    std::filesystem::create_directories(vf2_ib + "/ports/1");
    std::filesystem::create_directory_symlink("../..", vf2_ib + "/device");
    Tree::put(vf2_ib + "/node_type", "1: CA\n");

    PciReads pci;
    CHECK(read_device(vf1_ib, pci).vf_index == 0);
    const DeviceState d2 = read_device(vf2_ib, pci);
    CHECK(d2.physical_function == "0000:01:00.0");
    CHECK(d2.vf_index == 3);
}
