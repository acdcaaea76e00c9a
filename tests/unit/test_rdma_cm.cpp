// SPDX-License-Identifier: MIT
//
// RDMA-CM defaults per port: sources/rdma_cm_reader.hpp and actuators/rdma_cm.hpp, on a temp
// directory playing configfs. A plain directory cannot do what configfs does on mkdir (the
// kernel fills `ports/<n>/`) or on write (the kernel parses and may refuse), so FakeCmaKernel
// below stands in for kernel drivers/infiniband/core/cma_configfs.c and cma.c behind the two
// calls set_rdma_cm() makes (ConfigfsCalls). It models:
//   - make_cma_dev(): mkdir of rdma_cm/<dev> -> ENODEV for a device it does not know, EEXIST
//     when present, else the group with ports/1..N/default_roce_mode and default_roce_tos;
//   - the show functions: "%s\n" of "IB/RoCE v1" / "RoCE v2", "%u\n" of the ToS;
//   - the store functions: ib_cache_gid_parse_type_str() (exact, one trailing newline) ->
//     EINVAL, cma_set_default_gid_type() -> EINVAL for a mode not among the port's GID types,
//     decimal ToS with ERANGE above 255 (kstrtou8 also takes hex and octal; rdmad sends none);
//   - cma_add_one()'s defaults: RoCE v2 where the port supports it, else its first type; ToS 0;
//   - the values living with the device, not the group (rmdir keeps them);
// and, for the tests of what rdmad must not trust, two kernels that do not exist upstream: one
// without default_roce_tos (before Linux 4.11) and one that takes a write and keeps the old value.
// Reads go to the files themselves, through the code the daemon runs.
#include "actuators/rdma_cm.hpp"
#include "sources/rdma_cm_reader.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

using namespace rdmad;
using Catch::Matchers::Contains;
using rdmad::test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string v1(kRoceModeV1);
const std::string v2(kRoceModeV2);

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

class FakeCmaKernel {
  public:
    /// configfs mounted on `root` with rdma_cm registered (the rdma_cm module loaded).
    explicit FakeCmaKernel(fs::path root) : root_(std::move(root)) {
        fs::create_directories(root_ / "rdma_cm");
    }

    /// A device whose port i (1-based) supports the GID types supported[i-1], with
    /// cma_add_one()'s defaults.
    void add_device(const std::string& name, std::vector<std::vector<std::string>> supported) {
        Device& d = devices_[name];
        for (auto& types : supported) {
            Port p;
            const bool has_v2 = std::find(types.begin(), types.end(), v2) != types.end();
            p.mode = has_v2 ? v2 : types.front();
            p.supported = std::move(types);
            d.ports.push_back(std::move(p));
        }
    }

    bool has_tos_file = true; ///< false: a kernel before 4.11
    bool keep_writes = true;  ///< false: writes succeed but the value stays (no such kernel)
    int mkdirs = 0;           ///< make_group() calls that made a group
    std::vector<std::pair<std::string, std::string>> writes; ///< (path, text) of each write

    ConfigfsCalls calls() {
        return {[this](const std::string& p) { return make_group(p); },
                [this](const std::string& p, std::string_view t) { return write(p, t); }};
    }

    int make_group(const std::string& path) {
        const fs::path p(path);
        if (!fs::exists(p.parent_path()))
            return ENOENT;
        if (p.parent_path() != root_ / "rdma_cm")
            return EPERM; // only the rdma_cm subsystem has make_group
        if (fs::exists(p))
            return EEXIST;
        auto it = devices_.find(p.filename().string());
        if (it == devices_.end())
            return ENODEV;
        ++mkdirs;
        for (size_t i = 0; i < it->second.ports.size(); ++i) {
            fs::create_directories(p / "ports" / std::to_string(i + 1));
            show(it->first, static_cast<uint32_t>(i + 1));
        }
        return 0;
    }

    int write(const std::string& path, std::string_view text) {
        writes.emplace_back(path, std::string(text));
        const fs::path p(path);
        if (!fs::exists(p))
            return ENOENT;
        const uint32_t port =
            static_cast<uint32_t>(std::stoul(p.parent_path().filename().string()));
        const std::string dev = p.parent_path().parent_path().parent_path().filename().string();
        Port& port_model = devices_.at(dev).ports.at(port - 1);
        std::string_view value = text;
        if (!value.empty() && value.back() == '\n')
            value.remove_suffix(1);
        if (p.filename() == "default_roce_mode") {
            if (value != v1 && value != v2)
                return EINVAL; // ib_cache_gid_parse_type_str()
            if (std::find(port_model.supported.begin(), port_model.supported.end(), value) ==
                port_model.supported.end())
                return EINVAL; // cma_set_default_gid_type()
            if (keep_writes)
                port_model.mode = std::string(value);
        } else {
            if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
                return EINVAL;
            const unsigned long n = std::stoul(std::string(value));
            if (n > 255)
                return ERANGE;
            if (keep_writes)
                port_model.tos = static_cast<uint8_t>(n);
        }
        show(dev, port);
        return 0;
    }

    /// rmdir of the group: the values stay with the device.
    void remove_group(const std::string& name) { fs::remove_all(root_ / "rdma_cm" / name); }

  private:
    struct Port {
        std::vector<std::string> supported;
        std::string mode;
        uint8_t tos = 0;
    };
    struct Device {
        std::vector<Port> ports;
    };

    /// The files of the port as the show functions print them.
    void show(const std::string& dev, uint32_t port) {
        const Port& p = devices_.at(dev).ports.at(port - 1);
        const fs::path dir = root_ / "rdma_cm" / dev / "ports" / std::to_string(port);
        std::ofstream(dir / "default_roce_mode", std::ios::binary) << p.mode << "\n";
        if (has_tos_file)
            std::ofstream(dir / "default_roce_tos", std::ios::binary)
                << static_cast<unsigned>(p.tos) << "\n";
    }

    fs::path root_;
    std::map<std::string, Device> devices_;
};

/// A temp directory with configfs "mounted" on <tmp>/config.
struct Configfs {
    TempDir tmp{"rdmad-rdma-cm"};
    std::string root = (tmp.path / "config").string();
    FakeCmaKernel kernel{tmp.path / "config"};
};

RdmaCmActual ok_port(uint32_t port, const std::string& mode, std::optional<uint8_t> tos) {
    RdmaCmActual a;
    a.port = port;
    a.status = RdmaCmStatus::ok;
    a.roce_mode = mode;
    a.tos = tos;
    return a;
}

} // namespace

TEST_CASE("rdma_cm: default_roce_mode parses only the kernel's two strings", "[rdma_cm]") {
    CHECK(parse_roce_mode("RoCE v2\n") == v2);
    CHECK(parse_roce_mode("IB/RoCE v1\n") == v1);
    CHECK(parse_roce_mode("RoCE v2") == v2);
    // A script in the wild wrote "RoCE V2": the kernel refuses it, so must the parser.
    CHECK_FALSE(parse_roce_mode("RoCE V2\n"));
    CHECK_FALSE(parse_roce_mode("RoCE v2\n\n"));
    CHECK_FALSE(parse_roce_mode(" RoCE v2\n"));
    CHECK_FALSE(parse_roce_mode("RoCE v1\n"));
    CHECK_FALSE(parse_roce_mode("Invalid GID type\n")); // ib_cache_gid_type_str() of no type
    CHECK_FALSE(parse_roce_mode("\n"));
    CHECK_FALSE(parse_roce_mode(""));
}

TEST_CASE("rdma_cm: default_roce_tos parses \"%u\\n\" of a u8 and nothing else", "[rdma_cm]") {
    CHECK(parse_roce_tos("0\n") == uint8_t{0});
    CHECK(parse_roce_tos("106\n") == uint8_t{106});
    CHECK(parse_roce_tos("255\n") == uint8_t{255});
    CHECK(parse_roce_tos("32") == uint8_t{32});
    CHECK_FALSE(parse_roce_tos("256\n"));
    CHECK_FALSE(parse_roce_tos("1000\n"));
    CHECK_FALSE(parse_roce_tos("-1\n"));
    CHECK_FALSE(parse_roce_tos("+1\n"));
    CHECK_FALSE(parse_roce_tos("0x20\n"));
    CHECK_FALSE(parse_roce_tos("040\n"));
    CHECK_FALSE(parse_roce_tos(" 5\n"));
    CHECK_FALSE(parse_roce_tos("\n"));
    CHECK_FALSE(parse_roce_tos(""));
}

TEST_CASE("rdma_cm: a device whose group does not exist reads as no_group and nothing is "
          "created",
          "[rdma_cm]") {
    Configfs c;
    c.kernel.add_device("mlx5_0", {{v1, v2}, {v1, v2}});
    const auto ports = read_rdma_cm(c.root, "mlx5_0", {1, 2});
    REQUIRE(ports.size() == 2);
    for (uint32_t i = 0; i < 2; ++i) {
        CHECK(ports[i].port == i + 1);
        CHECK(ports[i].status == RdmaCmStatus::no_group);
        CHECK(ports[i].roce_mode.empty());
        CHECK_FALSE(ports[i].tos);
        CHECK_THAT(ports[i].message, Contains(c.root + "/rdma_cm/mlx5_0 does not exist"));
    }
    CHECK(fs::is_empty(fs::path(c.root) / "rdma_cm"));
    CHECK(c.kernel.mkdirs == 0);
}

TEST_CASE("rdma_cm: a group's ports read as the kernel prints them", "[rdma_cm]") {
    Configfs c;
    c.kernel.add_device("mlx5_0", {{v1, v2}, {v1}});
    REQUIRE(c.kernel.make_group(c.root + "/rdma_cm/mlx5_0") == 0);
    CHECK(read_rdma_cm(c.root, "mlx5_0", {1, 2}) ==
          std::vector<RdmaCmActual>{ok_port(1, v2, 0), ok_port(2, v1, 0)});
    CHECK(slurp(fs::path(c.root) / "rdma_cm/mlx5_0/ports/1/default_roce_mode") == "RoCE v2\n");

    SECTION("a port the device does not have fails with ENOENT, naming it") {
        const RdmaCmActual a = read_rdma_cm_port(c.root, "mlx5_0", 3);
        CHECK(a.status == RdmaCmStatus::failed);
        CHECK(a.error == ENOENT);
        CHECK_THAT(a.message,
                   Contains("ports/3/default_roce_mode") && Contains("mlx5_0 has no port 3"));
    }
    SECTION("the values outlive the group: removed, it reads as no_group again") {
        REQUIRE(set_rdma_cm(c.root, "mlx5_0", 1, v1, 26, c.kernel.calls()).ok());
        c.kernel.remove_group("mlx5_0");
        CHECK(read_rdma_cm_port(c.root, "mlx5_0", 1).status == RdmaCmStatus::no_group);
        const RdmaCmWrite again = set_rdma_cm(c.root, "mlx5_0", 1, v1, 26, c.kernel.calls());
        CHECK(again.ok());
        CHECK(again.created_group);
        CHECK(again.before == ok_port(1, v1, 26));
        CHECK(again.written.empty());
    }
}

TEST_CASE("rdma_cm: a file that does not read as the kernel prints fails with EPROTO",
          "[rdma_cm]") {
    Configfs c;
    c.kernel.add_device("rxe0", {{v1, v2}});
    REQUIRE(c.kernel.make_group(c.root + "/rdma_cm/rxe0") == 0);
    const fs::path dir = fs::path(c.root) / "rdma_cm/rxe0/ports/1";
    SECTION("the mode") {
        std::ofstream(dir / "default_roce_mode") << "Invalid GID type\n";
        const RdmaCmActual a = read_rdma_cm_port(c.root, "rxe0", 1);
        CHECK(a.status == RdmaCmStatus::failed);
        CHECK(a.error == EPROTO);
        CHECK_THAT(a.message, Contains("reads \"Invalid GID type\""));
    }
    SECTION("the ToS: the mode stands, the ToS is unknown") {
        std::ofstream(dir / "default_roce_tos") << "300\n";
        const RdmaCmActual a = read_rdma_cm_port(c.root, "rxe0", 1);
        CHECK(a.status == RdmaCmStatus::ok);
        CHECK(a.roce_mode == v2);
        CHECK_FALSE(a.tos);
        CHECK(a.error == EPROTO);
        CHECK_THAT(a.message, Contains("default_roce_tos reads \"300\""));
    }
}

TEST_CASE("rdma_cm: a kernel before 4.11 has a mode and no ToS", "[rdma_cm]") {
    Configfs c;
    c.kernel.has_tos_file = false;
    c.kernel.add_device("mlx4_0", {{v1, v2}});
    REQUIRE(c.kernel.make_group(c.root + "/rdma_cm/mlx4_0") == 0);
    const RdmaCmActual a = read_rdma_cm_port(c.root, "mlx4_0", 1);
    CHECK(a.status == RdmaCmStatus::ok);
    CHECK(a.roce_mode == v2);
    CHECK_FALSE(a.tos);
    CHECK(a.error == 0);
    CHECK_THAT(a.message, Contains("default_roce_tos does not exist") && Contains("4.11"));

    SECTION("setting the mode works; setting a ToS is a named ENOENT") {
        CHECK(set_rdma_cm(c.root, "mlx4_0", 1, v1, std::nullopt, c.kernel.calls()).ok());
        const RdmaCmWrite w = set_rdma_cm(c.root, "mlx4_0", 1, std::nullopt, 26, c.kernel.calls());
        CHECK(w.error == ENOENT);
        CHECK_THAT(w.message, Contains("ports/1/default_roce_tos") && Contains("4.11"));
    }
}

TEST_CASE("rdma_cm: no configfs mounted is a named error", "[rdma_cm]") {
    TempDir tmp("rdmad-rdma-cm");
    const std::string root = (tmp.path / "config").string();
    FakeCmaKernel kernel(tmp.path / "other"); // knows the device, but not at `root`
    kernel.add_device("mlx5_0", {{v1, v2}});

    SECTION("no <root> at all: configfs not in the kernel or its module not loaded") {
        const RdmaCmActual a = read_rdma_cm_port(root, "mlx5_0", 1);
        CHECK(a.status == RdmaCmStatus::no_configfs);
        CHECK(a.error == ENOENT);
        CHECK_THAT(a.message, Contains(root) && Contains("modprobe configfs"));
    }
    SECTION("the bare mount point: not mounted") {
        fs::create_directory(root);
        const auto ports = read_rdma_cm(root, "mlx5_0", {1, 2});
        REQUIRE(ports.size() == 2);
        CHECK(ports[1].port == 2);
        CHECK(ports[1].status == RdmaCmStatus::no_configfs);
        CHECK_THAT(ports[1].message, Contains("configfs is not mounted on " + root) &&
                                         Contains("mount -t configfs none " + root) &&
                                         Contains("sys-kernel-config.mount"));

        const RdmaCmWrite w = set_rdma_cm(root, "mlx5_0", 1, v2, 26, kernel.calls());
        CHECK(w.error == ENOENT);
        CHECK_THAT(w.message, Contains("mount -t configfs none " + root) &&
                                  Contains("sys-kernel-config.mount"));
        CHECK(kernel.writes.empty());
        CHECK(kernel.mkdirs == 0);
        CHECK(fs::is_empty(root));
    }
    SECTION("configfs mounted, with another subsystem but no rdma_cm: unsupported") {
        fs::create_directories(fs::path(root) / "nvmet");
        const RdmaCmActual a = read_rdma_cm_port(root, "mlx5_0", 1);
        CHECK(a.status == RdmaCmStatus::unsupported);
        CHECK_THAT(a.message, Contains(root + "/rdma_cm does not exist") &&
                                  Contains("modprobe rdma_cm") &&
                                  Contains("CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS"));
        const RdmaCmWrite w = set_rdma_cm(root, "mlx5_0", 1, v2, std::nullopt, kernel.calls());
        CHECK(w.error == ENOENT);
        CHECK(w.message == a.message);
    }
}

TEST_CASE("rdma_cm: the group is created once and only the differing file is written",
          "[rdma_cm]") {
    Configfs c;
    c.kernel.add_device("mlx5_0", {{v1, v2}, {v1, v2}});
    const std::string dir = c.root + "/rdma_cm/mlx5_0/ports/1";

    // cma_add_one(): RoCE v2, ToS 0. Ask for RoCE v2 and ToS 106 (DSCP 26, ECN capable).
    const RdmaCmWrite w = set_rdma_cm(c.root, "mlx5_0", 1, v2, 106, c.kernel.calls());
    CHECK(w.ok());
    CHECK(w.message.empty());
    CHECK(w.created_group);
    CHECK(c.kernel.mkdirs == 1);
    CHECK(w.before == ok_port(1, v2, 0));
    CHECK(w.after == ok_port(1, v2, 106));
    CHECK(w.written == std::vector<std::string>{dir + "/default_roce_tos"});
    CHECK(c.kernel.writes ==
          std::vector<std::pair<std::string, std::string>>{{dir + "/default_roce_tos", "106\n"}});
    // The other port keeps its defaults.
    CHECK(read_rdma_cm_port(c.root, "mlx5_0", 2) == ok_port(2, v2, 0));

    SECTION("asking again changes nothing and makes no group") {
        const RdmaCmWrite again = set_rdma_cm(c.root, "mlx5_0", 1, v2, 106, c.kernel.calls());
        CHECK(again.ok());
        CHECK_FALSE(again.created_group);
        CHECK(again.written.empty());
        CHECK(c.kernel.mkdirs == 1);
        CHECK(c.kernel.writes.size() == 1);
    }
    SECTION("the mode alone: one write of \"IB/RoCE v1\\n\", the ToS left alone") {
        const RdmaCmWrite m = set_rdma_cm(c.root, "mlx5_0", 1, v1, std::nullopt, c.kernel.calls());
        CHECK(m.ok());
        CHECK(m.after == ok_port(1, v1, 106));
        REQUIRE(c.kernel.writes.size() == 2);
        CHECK(c.kernel.writes[1] ==
              std::pair<std::string, std::string>{dir + "/default_roce_mode", "IB/RoCE v1\n"});
    }
    SECTION("a group another writer made between the check and mkdir (EEXIST) is fine") {
        c.kernel.add_device("mlx5_1", {{v1, v2}});
        ConfigfsCalls racing = c.kernel.calls();
        racing.make_group = [&](const std::string& path) {
            REQUIRE(c.kernel.make_group(path) == 0); // the other writer
            return c.kernel.make_group(path);        // rdmad's, second
        };
        const RdmaCmWrite r = set_rdma_cm(c.root, "mlx5_1", 1, v1, std::nullopt, racing);
        CHECK(r.ok());
        CHECK_FALSE(r.created_group);
        CHECK(r.after == ok_port(1, v1, 0));
    }
}

TEST_CASE("rdma_cm: a mode the port does not support is EINVAL, naming the file", "[rdma_cm]") {
    Configfs c;
    // An InfiniBand port: roce_gid_type_mask_support() gives only IB_GID_TYPE_IB.
    c.kernel.add_device("mlx5_2", {{v1}});
    const RdmaCmWrite w = set_rdma_cm(c.root, "mlx5_2", 1, v2, 32, c.kernel.calls());
    CHECK(w.error == EINVAL);
    CHECK_THAT(w.message, Contains("cannot write \"RoCE v2\" to " + c.root +
                                   "/rdma_cm/mlx5_2/ports/1/default_roce_mode") &&
                              Contains("port 1 of mlx5_2 does not support that RoCE mode"));
    // The ToS write is independent of the mode's and stands.
    CHECK(w.after == ok_port(1, v1, 32));
}

TEST_CASE("rdma_cm: a value the kernel does not keep (the read-back differs) is not ok",
          "[rdma_cm]") {
    Configfs c;
    c.kernel.add_device("mlx5_0", {{v1, v2}});
    c.kernel.keep_writes = false;
    const RdmaCmWrite w = set_rdma_cm(c.root, "mlx5_0", 1, v1, 26, c.kernel.calls());
    CHECK_FALSE(w.ok());
    CHECK(w.error == EIO);
    CHECK(c.kernel.writes.size() == 2);
    CHECK(w.after == ok_port(1, v2, 0));
    CHECK_THAT(w.message, Contains("default_roce_mode reads \"RoCE v2\" after \"IB/RoCE v1\" was "
                                   "written") &&
                              Contains("default_roce_tos reads 0 after 26 was written"));
}

TEST_CASE("rdma_cm: a device the kernel does not know is ENODEV from mkdir", "[rdma_cm]") {
    Configfs c;
    const RdmaCmWrite w = set_rdma_cm(c.root, "mlx5_9", 1, v2, std::nullopt, c.kernel.calls());
    CHECK(w.error == ENODEV);
    CHECK_THAT(w.message, Contains("cannot create " + c.root + "/rdma_cm/mlx5_9") &&
                              Contains("no RDMA device mlx5_9"));
    CHECK(c.kernel.writes.empty());
    CHECK(fs::is_empty(fs::path(c.root) / "rdma_cm"));
}

TEST_CASE("rdma_cm: requests that name no mode or no device are refused before any call",
          "[rdma_cm]") {
    Configfs c;
    c.kernel.add_device("mlx5_0", {{v1, v2}});
    for (const auto& [device, port, mode] :
         std::vector<std::tuple<std::string, uint32_t, std::string>>{
             {"mlx5_0", 1, "RoCE v3"},
             {"mlx5_0", 1, "RoCE V2"},
             {"mlx5_0", 0, v2},
             {"../mlx5_0", 1, v2},
             {"..", 1, v2},
             {"", 1, v2},
             {std::string(64, 'a'), 1, v2}}) {
        const RdmaCmWrite w =
            set_rdma_cm(c.root, device, port, mode, std::nullopt, c.kernel.calls());
        CHECK(w.error == EINVAL);
        CHECK_FALSE(w.message.empty());
    }
    CHECK(c.kernel.mkdirs == 0);
    CHECK(c.kernel.writes.empty());
    CHECK(read_rdma_cm_port(c.root, "..", 1).error == EINVAL);
}

TEST_CASE("rdma_cm: the real write opens an existing file and never creates one", "[rdma_cm]") {
    TempDir tmp("rdmad-rdma-cm");
    const std::string file = tmp.write("default_roce_tos", "0\n");
    CHECK(write_configfs_attribute(file, "106\n") == 0);
    CHECK(slurp(file) == "106\n");
    const std::string missing = (tmp.path / "default_roce_mode").string();
    CHECK(write_configfs_attribute(missing, "RoCE v2\n") == ENOENT);
    CHECK_FALSE(fs::exists(missing));
    CHECK(make_configfs_group((tmp.path / "rdma_cm").string()) == 0);
    CHECK(make_configfs_group((tmp.path / "rdma_cm").string()) == EEXIST);
}
