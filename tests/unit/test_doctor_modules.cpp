// SPDX-License-Identifier: MIT
//
// Kernel modules per consumer (daemon/doctor/modules.hpp) and how they are read
// (daemon/sources/host_reader.hpp). Marks: drivers/infiniband/core/uverbs_main.c (class
// infiniband_verbs, abi_version), ucma.c (misc rdma_cm), user_mad.c (class infiniband_mad).
#include "doctor/modules.hpp"
#include "sources/host_reader.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <sys/utsname.h>

#include <algorithm>

using namespace rdmad;
using namespace rdmad::doctor;

namespace {

HostFacts host(const std::string& uverbs, const std::string& ucm, const std::string& umad,
               const std::string& ipoib) {
    HostFacts h;
    h.modules = {{"ib_uverbs", uverbs, {}},
                 {"rdma_ucm", ucm, {}},
                 {"ib_umad", umad, {}},
                 {"ib_ipoib", ipoib, {}}};
    return h;
}

DeviceState dev(const std::string& transport, bool verbs = true) {
    DeviceState d;
    d.name = "mlx5_0";
    d.verbs_device = verbs ? "/dev/infiniband/uverbs0" : "";
    PortState p;
    p.number = 1;
    p.transport = transport;
    d.ports.push_back(p);
    return d;
}

std::vector<std::string> codes(const std::vector<Problem>& ps) {
    std::vector<std::string> c;
    for (const auto& p : ps)
        c.push_back(p.code);
    return c;
}

} // namespace

TEST_CASE("all modules loaded or built in: nothing", "[doctor]") {
    auto h = host("loaded", "built-in", "loaded", "loaded");
    CHECK(check_modules(dev("InfiniBand"), &h).empty());
}

TEST_CASE("each absent module a consumer needs is named", "[doctor]") {
    auto h = host("absent", "absent", "absent", "absent");
    CHECK(codes(check_modules(dev("InfiniBand", false), &h)) ==
          std::vector<std::string>{"module-ib-uverbs-absent", "module-rdma-ucm-absent",
                                   "module-ib-umad-absent", "module-ib-ipoib-absent"});
    // RoCE needs neither umad nor IPoIB; a device with a verbs device has ib_uverbs loaded.
    CHECK(codes(check_modules(dev("RoCE"), &h)) ==
          std::vector<std::string>{"module-rdma-ucm-absent"});
    // OPA needs umad, not ib_ipoib's InfiniBand advice.
    CHECK(codes(check_modules(dev("OPA"), &h)) ==
          std::vector<std::string>{"module-rdma-ucm-absent", "module-ib-umad-absent"});
    // EFA: only ib_uverbs matters.
    CHECK(check_modules(dev("unspecified"), &h).empty());
    auto ps = check_modules(dev("InfiniBand", false), &h);
    CHECK(ps[0].severity == "warning");
    CHECK(ps[0].remedy.str().find("modprobe ib_uverbs") == 0);
    CHECK(ps[2].severity == "info");
    CHECK(ps[2].text.str().find("opensm") != std::string::npos);
}

TEST_CASE("an unknown module state is module-unknown, not absent", "[doctor]") {
    auto h = host("loaded", "unknown", "loaded", "loaded");
    auto ps = check_modules(dev("RoCE"), &h);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "module-unknown");
    CHECK(ps[0].severity == "info");
}

TEST_CASE("read_host: loaded from sysfs marks, built-in from modules.builtin, else absent",
          "[doctor]") {
    test::TempDir t;
    utsname u{};
    REQUIRE(uname(&u) == 0);
    t.write("sys/class/infiniband_verbs/abi_version", "6\n");
    t.write("sys/class/infiniband_mad/abi_version", "5\n");
    t.write("dev/infiniband/rdma_cm", "");
    t.write(std::string("modules/") + u.release + "/modules.builtin",
            "kernel/drivers/infiniband/core/ib_umad.ko\nkernel/fs/ext4/ext4.ko\n");
    HostPaths paths{(t.path / "sys").string(), (t.path / "dev").string(),
                    (t.path / "modules").string(), ""};
    HostFacts h = read_host(paths);
    CHECK(h.hostname == u.nodename);
    REQUIRE(h.modules.size() == 4);
    CHECK(h.modules[0].name == "ib_uverbs");
    CHECK(h.modules[0].state == "loaded");
    CHECK(h.modules[1].name == "rdma_ucm");
    CHECK(h.modules[1].state == "loaded");
    CHECK(h.modules[2].name == "ib_umad");
    CHECK(h.modules[2].state == "built-in");
    CHECK(h.modules[3].name == "ib_ipoib");
    CHECK(h.modules[3].state == "absent");
    CHECK(std::find(h.modules[3].evidence.begin(), h.modules[3].evidence.end(),
                    (t.path / "sys/module/ib_ipoib").string() + " = absent") !=
          h.modules[3].evidence.end());
    HostFacts none = read_host({(t.path / "nosys").string(), "", "", ""});
    CHECK(none.modules[0].state == "unknown");
    // modules.builtin missing (no /lib/modules on the host) reads as absent; there but not
    // readable (a directory in its place: EISDIR), as unreadable.
    const std::string builtin = std::string("/") + u.release + "/modules.builtin";
    auto builtin_evidence = [&](const HostFacts& f) {
        for (const auto& e : f.modules[0].evidence)
            if (e.find("modules.builtin") != std::string::npos)
                return e;
        return std::string();
    };
    const HostFacts missing = read_host({(t.path / "sys").string(), "", (t.path / "none").string(), ""});
    CHECK(builtin_evidence(missing) ==
          (t.path / "none").string() + builtin + " = absent, looked for ib_uverbs.ko");
    std::filesystem::create_directories(t.path / "dir" / u.release / "modules.builtin");
    const HostFacts odd = read_host({(t.path / "sys").string(), "", (t.path / "dir").string(), ""});
    CHECK(builtin_evidence(odd) ==
          (t.path / "dir").string() + builtin + " = unreadable, looked for ib_uverbs.ko");
}

TEST_CASE("read_host: a class that lists uverbs devices is ib_uverbs loaded without "
          "abi_version; --module-dir's modules.builtin is the one read",
          "[doctor]") {
    // drivers/infiniband/core/uverbs_main.c: ib_uverbs_init() registers the class
    // infiniband_verbs; it exists while the module is loaded. A recorded host (the new user's
    // constructed-sriov) has uverbs0 and uverbs1 there and no abi_version.
    test::TempDir t;
    t.write("sys/class/infiniband_verbs/uverbs0/ibdev", "mlx5_0\n");
    t.write("sys/class/net/lo/type", "772\n");
    t.write("kmod/modules.builtin", "kernel/drivers/infiniband/core/ib_uverbs.ko\n");
    HostPaths paths{(t.path / "sys").string(), (t.path / "dev").string(),
                    (t.path / "nowhere").string(), (t.path / "kmod").string()};
    HostFacts h = read_host(paths);
    REQUIRE(h.modules.size() == 4);
    CHECK(h.modules[0].name == "ib_uverbs");
    CHECK(h.modules[0].state == "built-in"); // the class, and --module-dir's modules.builtin
    CHECK(h.modules[2].name == "ib_umad");
    CHECK(h.modules[2].state == "absent"); // no class infiniband_mad
    CHECK(std::find(h.modules[0].evidence.begin(), h.modules[0].evidence.end(),
                    (t.path / "kmod/modules.builtin").string() + " = lists ib_uverbs.ko") !=
          h.modules[0].evidence.end());
}

TEST_CASE("an InfiniBand port with a netdev has ib_ipoib loaded, whatever its marks say",
          "[doctor]") {
    auto h = host("loaded", "loaded", "loaded", "absent");
    auto d = dev("InfiniBand");
    CHECK(codes(check_modules(d, &h)) == std::vector<std::string>{"module-ib-ipoib-absent"});
    d.ports[0].netdev = "ib0"; // created by ib_ipoib
    CHECK(check_modules(d, &h).empty());
}
