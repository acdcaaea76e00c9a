// SPDX-License-Identifier: MIT
//
// Named rules (DESIGN.md, dbus/*.xml, DOMAIN.md kernel formats), each on the host that shows it.
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace it;

namespace {
bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}
} // namespace

TEST_CASE("a RoCE port has Transport RoCE and RoCEVersions v1,v2", "[rules]") {
    // constructed-mlx5-roce: mlx5_0 port 1, link_layer Ethernet, GID types IB/RoCE v1 and RoCE v2.
    Rig rig("constructed-mlx5-roce");
    const json& p = rig.port("mlx5_0", 1);
    CHECK(p["LinkLayer"] == "Ethernet");
    CHECK(p["Transport"] == "RoCE");
    CHECK(p["RoCEVersions"] == json({"v1", "v2"}));
    rig.stop_daemon();
}

TEST_CASE("an RNIC is iWARP even where link_layer says InfiniBand", "[rules]") {
    // node-exporter-i40iw-mlx4: i40iw0 node_type "4: RNIC", ports/1/link_layer "InfiniBand".
    Rig rig("node-exporter-i40iw-mlx4");
    CHECK(rig.device("i40iw0")["NodeType"] == "RNIC");
    const json& p = rig.port("i40iw0", 1);
    CHECK(p["LinkLayer"] == "InfiniBand");
    CHECK(p["Transport"] == "iWARP");
    CHECK(p["RoCEVersions"] == json::array());
    // The mlx4 CA beside it stays InfiniBand.
    CHECK(rig.port("mlx4_0", 1)["Transport"] == "InfiniBand");
    rig.stop_daemon();
}

TEST_CASE("phys_state 0: <unknown> passes through as <unknown>", "[rules]") {
    Rig rig("azure-hpc-mlx4"); // ports/1/phys_state = "0: <unknown>"
    CHECK(rig.port("mlx4_0", 1)["PhysicalState"] == "<unknown>");
    rig.stop_daemon();
}

TEST_CASE("an invalid phys_state 4: ACTIVE passes through as ACTIVE", "[rules]") {
    Rig rig("procfs-hfi1-mlx4-mlx5"); // mlx5_0 ports/1/phys_state = "4: ACTIVE" (kernel text kept)
    CHECK(rig.port("mlx5_0", 1)["PhysicalState"] == "ACTIVE");
    CHECK(rig.port("mlx5_0", 1)["State"] == "ACTIVE");
    rig.stop_daemon();
}

TEST_CASE("values without a trailing newline parse the same", "[rules]") {
    // gpud-h100-cx7-bf3: mlx5_0's attributes have no "\n": fw_ver=28.41.1000,
    // hca_type=MT4129, board_id=MT_0000000838, link_layer=InfiniBand, phys_state=5: LinkUp,
    // rate=400 Gb/sec (4X NDR), state=4: ACTIVE.
    Rig rig("gpud-h100-cx7-bf3");
    const json& d = rig.device("mlx5_0");
    CHECK(d["FirmwareVersion"] == "28.41.1000");
    CHECK(d["HCAType"] == "MT4129");
    CHECK(d["BoardID"] == "MT_0000000838");
    const json& p = rig.port("mlx5_0", 1);
    CHECK(p["LinkLayer"] == "InfiniBand");
    CHECK(p["PhysicalState"] == "LinkUp");
    CHECK(p["State"] == "ACTIVE");
    CHECK(p["Rate"] == "400 Gb/sec (4X NDR)");
    CHECK(p["RateGbps"] == 400.0);
    CHECK(p["Transport"] == "InfiniBand");
    rig.stop_daemon();
}

TEST_CASE("qib has FirmwareVersion empty", "[rules]") {
    Rig rig("hwloc-qib-ib"); // ib_qib has no fw_ver attribute
    CHECK(rig.device("qib0")["FirmwareVersion"] == "");
    CHECK(rig.device("qib0")["KernelDriver"] == "ib_qib");
    CHECK(rig.device("qib0")["Provider"] == "ipathverbs");
    rig.stop_daemon();
}

TEST_CASE("hfi1 has HCAType empty and is OPA", "[rules]") {
    Rig rig("procfs-hfi1-mlx4-mlx5"); // hfi1 has no hca_type attribute
    CHECK(rig.device("hfi1_0")["HCAType"] == "");
    CHECK(rig.device("hfi1_0")["KernelDriver"] == "hfi1");
    CHECK(rig.device("hfi1_0")["Provider"] == "hfi1verbs");
    CHECK(rig.port("hfi1_0", 1)["Transport"] == "OPA");
    rig.stop_daemon();
}

TEST_CASE("uverbs numbers are mapped by ibdev, not by number", "[rules]") {
    // constructed-uverbs-shuffle: uverbs24/ibdev = mlx5_19, uverbs19/ibdev = mlx5_24.
    Rig rig("constructed-uverbs-shuffle");
    CHECK(rig.device("mlx5_19")["VerbsDevice"] == "/dev/infiniband/uverbs24");
    CHECK(rig.device("mlx5_24")["VerbsDevice"] == "/dev/infiniband/uverbs19");
    rig.stop_daemon();
}

TEST_CASE("LAG: both PF links and the bond are served by mlx5_bond_0", "[rules]") {
    // constructed-mlx5-lag: mlx5_bond_0 on 0000:3b:00.0, GID ndev bond0; ens1f0np0 (3b:00.0)
    // and ens1f1np1 (3b:00.1) are bond0's slaves.
    Rig rig("constructed-mlx5-lag");
    const std::string bond_dev = rig.device_path("mlx5_bond_0");
    for (auto name : {"ens1f0np0", "ens1f1np1", "bond0"}) {
        INFO("link " << name);
        CHECK(rig.link(name)["RdmaCapable"] == "yes");
        CHECK(rig.link(name)["RdmaDevice"] == bond_dev);
        CHECK(rig.link(name)["Hint"] == "");
    }
    CHECK(rig.link("lo")["RdmaCapable"] == "no");
    CHECK(rig.port("mlx5_bond_0", 1)["Link"] == rig.link_path("bond0"));
    rig.stop_daemon();
}

TEST_CASE("unbound mlx5 RDMA auxiliary device: module-not-loaded, load mlx5_ib", "[rules]") {
    // constructed-mlx5-aux-unbound: mlx5_core.rdma.0 under 0000:5e:00.0 with no driver link.
    Rig rig("constructed-mlx5-aux-unbound");
    CHECK(rig.described["Devices"].empty());
    CHECK(rig.link("ens2f0np0")["RdmaCapable"] == "module-not-loaded");
    CHECK(rig.link("ens2f0np0")["Hint"] == "load mlx5_ib");
    CHECK(rig.link("ens2f0np0")["RdmaDevice"] == "/");
    for (auto name : {"enp1s0", "eno1"}) { // virtio_net, bnx2
        INFO("link " << name);
        CHECK(rig.link(name)["RdmaCapable"] == "no");
        CHECK(rig.link(name)["RdmaDevice"] == "/");
    }
    CHECK(rig.link("enp1s0")["Driver"] == "virtio_net");
    CHECK(rig.link("eno1")["Driver"] == "bnx2");
    rig.stop_daemon();
}

TEST_CASE("renamed devices are classified by driver, not by name", "[rules]") {
    Rig rig("constructed-renamed");
    struct Want {
        const char *dev, *driver, *provider, *transport;
    };
    for (auto w : {Want{"rocep59s0f0", "mlx5_core", "mlx5", "RoCE"},
                   Want{"ibp12s0", "mlx5_core", "mlx5", "InfiniBand"},
                   Want{"opap129s", "hfi1", "hfi1verbs", "OPA"}}) {
        INFO("device " << w.dev);
        CHECK(rig.device(w.dev)["KernelDriver"] == w.driver);
        CHECK(rig.device(w.dev)["Provider"] == w.provider);
        CHECK(rig.port(w.dev, 1)["Transport"] == w.transport);
    }
    CHECK(rig.port("rocep59s0f0", 1)["Link"] == rig.link_path("enp59s0f0np0"));
    rig.stop_daemon();
}

namespace {
// A verbs config dir and provider dir holding the given providers, ABI 99.
struct Providers {
    TempDir dir{"rdmad-it-providers"};
    explicit Providers(const std::vector<std::string>& names) {
        fs::create_directories(dir / "libibverbs.d");
        fs::create_directories(dir / "lib");
        for (auto& p : names) {
            write_file(dir / "libibverbs.d" / (p + ".driver"), "driver " + p + "\n");
            write_file(dir / "lib" / ("lib" + p + "-rdmav99.so"), "");
        }
    }
    std::vector<std::string> args(const fs::path& os_release) const {
        return {"--verbs-config-dir=" + (dir / "libibverbs.d").string(),
                "--provider-dir=" + (dir / "lib").string(), "--provider-abi=99",
                "--os-release=" + os_release.string()};
    }
};
} // namespace

TEST_CASE("provider missing: ProviderInstalled false, Debian package, provider-missing problem",
          "[rules][provider]") {
    // procfs-hfi1-mlx4-mlx5 needs mlx4, mlx5, hfi1verbs; install all but mlx5, plus a stale
    // cxgb4 provider with no hardware.
    TempDir etc;
    write_file(etc / "os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"
                                   "VERSION_ID=\"12\"\n");
    Providers prov({"mlx4", "hfi1verbs", "cxgb4"});
    Rig rig("procfs-hfi1-mlx4-mlx5", {prov.args(etc / "os-release"), {}});

    const json& mlx5 = rig.device("mlx5_0");
    CHECK(mlx5["Provider"] == "mlx5");
    CHECK(mlx5["ProviderInstalled"] == false);
    CHECK(mlx5["ProviderPackage"] == "ibverbs-providers");
    CHECK(has(problem_codes(mlx5), "provider-missing"));
    for (auto& p : mlx5["Problems"])
        if (p.value("Code", "") == "provider-missing") {
            CHECK(p["Severity"] == "error");
            INFO("text: " << p.value("Text", ""));
            CHECK(p.value("Text", "").find("ibverbs-providers") != std::string::npos);
        }
    for (auto name : {"mlx4_0", "hfi1_0"}) {
        INFO("device " << name);
        CHECK(rig.device(name)["ProviderInstalled"] == true);
        CHECK(rig.device(name)["ProviderPackage"] == "ibverbs-providers");
        CHECK_FALSE(has(problem_codes(rig.device(name)), "provider-missing"));
        CHECK_FALSE(has(problem_codes(rig.device(name)), "no-provider"));
    }
    // The stale cxgb4 provider names no hardware: nobody reports anything about it.
    for (auto& d : rig.described["Devices"])
        for (auto& p : d["Problems"])
            CHECK(p.value("Text", "").find("cxgb4") == std::string::npos);
    CHECK(rig.described["State"] == "running");
    // Property Get agrees.
    CHECK(rig.client->get(rig.device_path("mlx5_0"), "org.rdmad1.Device", "ProviderInstalled")
              .get<bool>() == false);
    rig.stop_daemon();
}

TEST_CASE("all providers present and a stale .driver file: no provider problem",
          "[rules][provider]") {
    TempDir etc;
    write_file(etc / "os-release", "ID=debian\n");
    Providers prov({"mlx4", "mlx5", "cxgb4"}); // cxgb4: stale, no cxgb4 hardware on this host
    Rig rig("hwloc-cx3-ib", {prov.args(etc / "os-release"), {}});
    for (auto& d : rig.described["Devices"]) {
        INFO("device " << d.value("Name", ""));
        CHECK(d["ProviderInstalled"] == true);
        CHECK_FALSE(has(problem_codes(d), "provider-missing"));
        CHECK_FALSE(has(problem_codes(d), "no-provider"));
    }
    CHECK(rig.described["State"] == "running");
    rig.stop_daemon();
}

TEST_CASE("on RHEL 9 the provider package is libibverbs", "[rules][provider]") {
    TempDir etc;
    write_file(etc / "os-release", "ID=\"rhel\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"9.2\"\n");
    Providers prov({"mlx4", "hfi1verbs"}); // mlx5 missing
    Rig rig("procfs-hfi1-mlx4-mlx5", {prov.args(etc / "os-release"), {}});
    for (auto& d : rig.described["Devices"]) {
        INFO("device " << d.value("Name", ""));
        CHECK(d["ProviderPackage"] == "libibverbs");
    }
    CHECK(rig.device("mlx5_0")["ProviderInstalled"] == false);
    CHECK(has(problem_codes(rig.device("mlx5_0")), "provider-missing"));
    rig.stop_daemon();
}

TEST_CASE("discovery never opens counters", "[rules][strace]") {
    // FAIL, not skip, when strace is absent.
    auto which = run_program({"sh", "-c", "command -v strace"});
    INFO("strace is needed: apt-get install -y strace");
    REQUIRE(which.status == 0);
    TempDir t;
    const auto trace = t / "openat.trace";
    Rig rig("procfs-hfi1-mlx4-mlx5",
            {{}, {"strace", "-f", "-e", "trace=open,openat", "-o", trace.string()}});
    rig.stop_daemon();
    const std::string text = read_file(trace);
    // Sanity: the trace saw discovery (the daemon read port attributes of the testbed).
    CHECK(text.find("/ports/1/") != std::string::npos);
    CHECK(text.find("infiniband") != std::string::npos);
    std::istringstream ls(text);
    int bad = 0;
    for (std::string line; std::getline(ls, line);) {
        auto q1 = line.find('"');
        auto q2 = q1 == std::string::npos ? q1 : line.find('"', q1 + 1);
        if (q2 == std::string::npos)
            continue;
        std::string path = line.substr(q1 + 1, q2 - q1 - 1);
        auto ends = [&](const std::string& s) {
            return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
        };
        if (path.find("/counters/") != std::string::npos ||
            path.find("/hw_counters/") != std::string::npos || ends("/counters") ||
            ends("/hw_counters")) {
            ++bad;
            UNSCOPED_INFO("opened: " << line);
        }
    }
    CHECK(bad == 0);
}
