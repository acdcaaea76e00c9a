// SPDX-License-Identifier: MIT
//
// Unit tests for the one sysfs code path (daemon/util/sysfs.hpp) and the device paths built
// on it (daemon/sources/device_paths.hpp, pci_reads.hpp), on a scratch tree laid out as the kernel lays out
// /sys (Documentation/ABI/testing/sysfs-devices, sysfs-class-net).
#include "sources/device_paths.hpp"
#include "sources/pci_reads.hpp"
#include "temp_dir.hpp"
#include "util/sysfs.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>

using namespace rdmad;
namespace fs = std::filesystem;

namespace {

/// A tree with one PCI function 0000:3b:00.0 below root port 0000:3a:02.0, its netdev
/// ens1f0np0 and RDMA device mlx5_0, the class links to them, and the pci bus.
struct Tree {
    test::TempDir dir{"rdmad-sysfs"};
    std::string sys = (dir.path / "sys").string();
    std::string root_port = sys + "/devices/pci0000:3a/0000:3a:02.0";
    std::string function = root_port + "/0000:3b:00.0";
    std::string netdev = function + "/net/ens1f0np0";
    std::string ibdev = function + "/infiniband/mlx5_0";

    Tree() {
        fs::create_directories(sys + "/bus/pci/devices");
        fs::create_directories(sys + "/class/net");
        dir.write("sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/net/ens1f0np0/uevent",
                  "INTERFACE=ens1f0np0\nIFINDEX=1002\n");
        dir.write("sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/infiniband/mlx5_0/node_type",
                  "1: CA\n");
        fs::create_symlink("../../../bus/pci", root_port + "/subsystem");
        fs::create_symlink("../../../../bus/pci", function + "/subsystem");
        fs::create_symlink("../../devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/net/ens1f0np0",
                           sys + "/class/net/ens1f0np0");
    }
};

} // namespace

TEST_CASE("read_attribute gives an attribute's text, the errno otherwise") {
    Tree t;
    auto r = sysfs::read_attribute(t.ibdev, "node_type");
    CHECK(r.ok());
    CHECK(r.text == "1: CA\n");
    CHECK(sysfs::read_attribute(t.ibdev, "node_guid").error == ENOENT);
    CHECK(sysfs::read_attribute(t.function, "net").error == EISDIR);
    // At most `limit` bytes.
    CHECK(sysfs::read_attribute(t.ibdev, "node_type", 2).text == "1:");
    CHECK(sysfs::read_text(t.ibdev, "node_type") == "1: CA\n");
    CHECK(sysfs::read_text(t.ibdev, "absent") == std::nullopt);
}

TEST_CASE("read_attribute reads past its 4 KiB stack buffer up to `limit`, and no further") {
    // Larger files (a configuration file, /proc/<pid>/limits) go through the heap buffer that
    // grows by doubling: each size around the stack's and the limit's edges reads back whole.
    test::TempDir dir("rdmad-sysfs-large");
    std::string text;
    for (size_t i = 0; text.size() < 70'000; ++i)
        text += "line " + std::to_string(i) + "\n";
    for (const size_t size : {size_t{4095}, size_t{4096}, size_t{4097}, size_t{8192},
                              size_t{8193}, size_t{65'536}, size_t{70'000}}) {
        CAPTURE(size);
        const std::string file = dir.write("f" + std::to_string(size), text.substr(0, size));
        CHECK(sysfs::read_attribute(file, "", 1u << 20).text == text.substr(0, size));
        CHECK(sysfs::read_attribute(file, "", size).text == text.substr(0, size));
        CHECK(sysfs::read_attribute(file, "", 5000).text == text.substr(0, std::min<size_t>(size, 5000)));
        CHECK(sysfs::read_attribute(file, "", 4096).text == text.substr(0, std::min<size_t>(size, 4096)));
    }
}

TEST_CASE("resolve_link makes a relative sysfs link an absolute device path") {
    Tree t;
    CHECK(sysfs::resolve_link(t.sys + "/class/net", "ens1f0np0") == t.netdev);
    CHECK(sysfs::resolve_link(t.function, "subsystem") == t.sys + "/bus/pci");
    CHECK(sysfs::resolve_link(t.function, "net").empty()); // a directory, not a link
    CHECK(sysfs::resolve_link(t.function, "absent").empty());
    fs::create_symlink("/sys/devices/./virtual//net/lo/", t.sys + "/class/net/lo");
    CHECK(sysfs::resolve_link(t.sys + "/class/net", "lo") == "/sys/devices/virtual/net/lo");
}

TEST_CASE("a device's PCI function is its nearest ancestor on the pci bus") {
    Tree t;
    PciReads pci;
    auto f = pci.function_of(t.ibdev);
    CHECK(f.address == "0000:3b:00.0");
    CHECK(f.syspath == t.function);
    CHECK(pci.function_of(t.netdev).address == "0000:3b:00.0");
    // The function's own parent is the root port (itself excluded).
    CHECK(pci.function_of(t.function).address == "0000:3a:02.0");
    // A PCI-looking name without a subsystem link to pci is not a PCI device.
    fs::create_directories(t.sys + "/devices/virtual/0000:00:00.0/net/dummy0");
    CHECK(pci.function_of(t.sys + "/devices/virtual/0000:00:00.0/net/dummy0").address.empty());
    CHECK(pci.function_of(t.sys + "/devices/virtual/net/lo").syspath.empty());
}

TEST_CASE("a pass reads each PCI function's subsystem link and PCIe link once") {
    Tree t;
    // sysfs-bus-pci: current_link_speed "%s PCIe" (drivers/pci/pci-sysfs.c), width "%u".
    t.dir.write("sys/devices/pci0000:3a/0000:3a:02.0/current_link_speed", "16.0 GT/s PCIe\n");
    t.dir.write("sys/devices/pci0000:3a/0000:3a:02.0/current_link_width", "16\n");
    t.dir.write("sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/current_link_speed",
                "8.0 GT/s PCIe\n");
    PciReads pci;
    auto path = pci.pcie_path(t.function);
    REQUIRE(path.size() == 2);
    CHECK(path[0].address == "0000:3b:00.0");
    CHECK(path[0].current_link_speed == "8.0 GT/s PCIe");
    CHECK(path[0].current_link_width.empty()); // absent: ""
    CHECK(path[1].address == "0000:3a:02.0");
    CHECK(path[1].current_link_speed == "16.0 GT/s PCIe");
    CHECK(path[1].current_link_width == "16");
    CHECK(pci.function_of(t.ibdev).address == "0000:3b:00.0");

    // Within the pass, what was read stands: the root port retrains and the netdev's function
    // leaves the pci bus, and neither is read again.
    t.dir.write("sys/devices/pci0000:3a/0000:3a:02.0/current_link_speed", "2.5 GT/s PCIe\n");
    fs::remove(t.function + "/subsystem");
    CHECK(pci.pcie_path(t.function)[1].current_link_speed == "16.0 GT/s PCIe");
    CHECK(pci.function_of(t.ibdev).address == "0000:3b:00.0");
    // The next pass reads them again.
    pci.clear();
    CHECK(pci.pcie_path(t.function)[1].current_link_speed == "2.5 GT/s PCIe");
    CHECK(pci.function_of(t.ibdev).address == "0000:3a:02.0");
}

TEST_CASE("uevent properties and sysnames are read as the kernel writes them") {
    Tree t;
    CHECK(device_paths::uevent_property(t.netdev, "IFINDEX") == "1002");
    CHECK(device_paths::uevent_property(t.netdev, "INTERFACE") == "ens1f0np0");
    CHECK(device_paths::uevent_property(t.netdev, "IFINDE") == std::nullopt);
    CHECK(device_paths::uevent_property(t.netdev, "DEVNAME") == std::nullopt);
    CHECK(device_paths::uevent_property(t.ibdev, "DEVNAME") == std::nullopt); // no uevent
    CHECK(device_paths::sysname(t.ibdev) == "mlx5_0");
    CHECK(device_paths::sysname("lo") == "lo");
}

TEST_CASE("list_subdirs() names a PCI function's child directories, not its attributes and links",
          "[sysfs]") {
    // A PCI function holds attributes (files), links (driver, subsystem, physfn) and child
    // directories (net/, infiniband/, an auxiliary device mlx5_core.rdma.0).
    Tree t;
    fs::create_directories(t.function + "/mlx5_core.rdma.0");
    t.dir.write("sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/vendor", "0x15b3\n");
    fs::create_symlink("../0000:3b:00.1", t.function + "/virtfn0");
    CHECK(sysfs::list_subdirs(t.function, "") ==
          std::vector<std::string>{"infiniband", "mlx5_core.rdma.0", "net"});
    // list_dir() names them all.
    const auto all = sysfs::list_dir(t.function, "");
    CHECK(std::count(all.begin(), all.end(), "vendor") == 1);
    CHECK(std::count(all.begin(), all.end(), "virtfn0") == 1);
    CHECK(std::count(all.begin(), all.end(), "subsystem") == 1);
    CHECK(sysfs::list_subdirs(t.function, "missing").empty());
}
