// SPDX-License-Identifier: MIT
//
// rdmactl doctor against the real daemon on constructed-doctor and constructed-efa
// (tests/fixtures/make-constructed.py), and the locked-memory check against a real process's
// /proc/<pid>/limits (fs/proc/base.c proc_pid_limits()). Every value asserted is an attribute of
// the fixture (its .umockdev.notes lists them) or follows from a kernel format: iboe_get_mtu()
// (include/rdma/ib_addr.h), the P_Key membership bit (IBTA vol. 1 §10.9.1).
#include "harness.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

using namespace it;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

// `expect_status` -1: not checked.
json doctor_json(const std::vector<std::string>& args, int expect_status) {
    std::vector<std::string> argv{env_or_fail("RDMACTL"), "--json", "doctor"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_program(argv);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    if (expect_status >= 0)
        CHECK(r.status == expect_status);
    json parsed;
    REQUIRE_NOTHROW(parsed = json::parse(r.out));
    return parsed;
}

std::vector<json> find(const json& list, const std::string& object, const std::string& code) {
    std::vector<json> out;
    for (const auto& p : list)
        if (p.value("object", "") == object && p.value("code", "") == code)
            out.push_back(p);
    return out;
}

json one(const json& list, const std::string& object, const std::string& code) {
    auto found = find(list, object, code);
    INFO(object << " " << code << " in " << list.dump(2));
    REQUIRE(found.size() == 1);
    return found[0];
}

bool has_evidence(const json& p, const std::string& e) {
    for (const auto& x : p["evidence"])
        if (x == e)
            return true;
    return false;
}

std::vector<std::string> serious_codes(const json& list, const std::string& object) {
    std::vector<std::string> codes;
    for (const auto& p : list)
        if (p.value("object", "") == object &&
            (p.value("severity", "") == "error" || p.value("severity", "") == "warning"))
            codes.push_back(p.value("code", ""));
    return codes;
}

const char* kIbdev0 = "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/mlx5_0";

} // namespace

TEST_CASE("doctor explains an IB port without SM, a limited P_Key, a degraded PCIe link, "
          "RoCE MTU 4096 and a RoCE port without carrier",
          "[doctor][rdmactl]") {
    Rig rig("constructed-doctor");
    const json list = doctor_json({}, 3);

    // mlx5_0: INIT + LinkUp, sm_lid 0x0 -> no subnet manager.
    json sm = one(list, "mlx5_0", "port-not-active");
    CHECK(sm["severity"] == "warning");
    CHECK(sm["port"] == 1);
    CHECK_THAT(sm["text"].get<std::string>(), Contains("no subnet manager"));
    CHECK_THAT(sm["remedy"].get<std::string>(), Contains("opensm"));
    CHECK(has_evidence(sm, "/sys/class/infiniband/mlx5_0/ports/1/state = INIT"));
    CHECK(has_evidence(sm, "/sys/class/infiniband/mlx5_0/ports/1/phys_state = LinkUp"));
    CHECK(has_evidence(sm, "/sys/class/infiniband/mlx5_0/ports/1/sm_lid = 0x0"));
    CHECK(has_evidence(sm, "/sys/class/infiniband/mlx5_0/ports/1/lid = 0x0"));

    // mlx5_0: pkeys/0 = 0x7fff -> limited member.
    json pk = one(list, "mlx5_0", "pkey-limited-member");
    CHECK(pk["severity"] == "warning");
    CHECK(pk["port"] == 1);
    CHECK(pk["evidence"] == json::array({"/sys/class/infiniband/mlx5_0/ports/1/pkeys/0 = 0x7fff"}));
    CHECK_THAT(pk["remedy"].get<std::string>(), Contains("partitions.conf"));

    // mlx5_0: both ends can do 16.0 GT/s x16, the link runs 8.0 GT/s x16.
    json pcie = one(list, "mlx5_0", "pcie-degraded");
    CHECK(pcie["severity"] == "warning");
    CHECK(pcie["port"] == 0);
    CHECK_THAT(pcie["text"].get<std::string>(), Contains("0000:3b:00.0 - 0000:3a:00.0"));
    CHECK_THAT(pcie["text"].get<std::string>(), Contains("8 GT/s x16"));
    CHECK_THAT(pcie["text"].get<std::string>(), Contains("16 GT/s x16"));
    CHECK(
        has_evidence(pcie, "/sys/bus/pci/devices/0000:3b:00.0/current_link_speed = 8.0 GT/s PCIe"));
    CHECK(has_evidence(pcie, "/sys/bus/pci/devices/0000:3a:00.0/max_link_speed = 16.0 GT/s PCIe"));
    CHECK(has_evidence(pcie, "/sys/bus/pci/devices/0000:3a:00.0/max_link_width = 16"));
    CHECK_FALSE(pcie["remedy"].get<std::string>().empty());

    // mlx5_0 is InfiniBand: ib_umad matters, and the fixture has no infiniband_mad class.
    json umad = one(list, "mlx5_0", "module-ib-umad-absent");
    CHECK(umad["severity"] == "info");
    CHECK(has_evidence(umad, "/sys/class/infiniband_mad/abi_version = absent"));
    CHECK(umad["remedy"].get<std::string>().rfind("modprobe ib_umad", 0) == 0);

    // node_desc "localhost mlx5_0": a problem unless this host is called localhost.
    utsname u{};
    REQUIRE(uname(&u) == 0);
    const std::string host = std::string(u.nodename).substr(0, std::string(u.nodename).find('.'));
    auto nd = find(list, "mlx5_0", "node-description-no-hostname");
    if (std::string("localhost mlx5_0").find(host) == std::string::npos) {
        REQUIRE(nd.size() == 1);
        CHECK(nd[0]["severity"] == "info");
        CHECK(has_evidence(nd[0], "/sys/class/infiniband/mlx5_0/node_desc = localhost mlx5_0"));
        CHECK_THAT(nd[0]["remedy"].get<std::string>(), Contains("rdma-ndd"));
    } else {
        CHECK(nd.empty());
    }

    // mlx5_1: MTU 1500 (RoCE MTU 1024, fine), Gen3 x8 card in a Gen4 x16 slot running Gen3 x8:
    // nothing to warn about.
    CHECK(serious_codes(list, "mlx5_1").empty());
    CHECK(find(list, "mlx5_1", "roce-mtu-2048").empty());
    CHECK(find(list, "mlx5_1", "pcie-degraded").empty());
    CHECK(find(list, "mlx5_1", "pcie-slot-limited").empty());

    // Port MTUs: the netdev's, and iboe_get_mtu() of it on RoCE (1500 -> 1024, 4096 -> 2048);
    // 0 on InfiniBand (its active MTU is not in sysfs).
    CHECK(rig.port("mlx5_1", 1)["NetdevMTU"] == 1500);
    CHECK(rig.port("mlx5_1", 1)["ActiveMTU"] == 1024);
    CHECK(rig.port("mlx5_2", 1)["NetdevMTU"] == 4096);
    CHECK(rig.port("mlx5_2", 1)["ActiveMTU"] == 2048);
    CHECK(rig.port("mlx5_0", 1)["NetdevMTU"] == 0);
    CHECK(rig.port("mlx5_0", 1)["ActiveMTU"] == 0);
    CHECK(variant_json(rig.client->get(rig.device_path("mlx5_2") + "/port/1", "org.rdmad1.Port",
                                       "ActiveMTU")) == 2048);

    // mlx5_2: MTU 4096 gives RoCE MTU 2048.
    json mtu = one(list, "mlx5_2", "roce-mtu-2048");
    CHECK(mtu["severity"] == "warning");
    CHECK(mtu["port"] == 1);
    CHECK_THAT(mtu["text"].get<std::string>(), Contains("MTU 4096"));
    CHECK_THAT(mtu["text"].get<std::string>(), Contains("RoCE MTU of 2048"));
    CHECK(has_evidence(mtu, "/sys/class/net/ens2f1np1/mtu = 4096"));
    CHECK_THAT(mtu["remedy"].get<std::string>(), Contains("4192"));
    CHECK(serious_codes(list, "mlx5_2") == std::vector<std::string>{"roce-mtu-2048"});
    // RoCE ports get no InfiniBand advice.
    CHECK(find(list, "mlx5_2", "pkey-unknown").empty());
    CHECK(find(list, "mlx5_2", "module-ib-umad-absent").empty());

    // mlx5_3: DOWN, netdev up (flags 0x1003) without carrier.
    json down = one(list, "mlx5_3", "port-not-active");
    CHECK_THAT(down["text"].get<std::string>(), Contains("ens3f0np0 has no carrier"));
    CHECK(has_evidence(down, "/sys/class/net/ens3f0np0/carrier = 0"));
    CHECK(has_evidence(down, "/sys/class/net/ens3f0np0/flags = 0x1003"));
    CHECK(has_evidence(down, "/sys/class/net/ens3f0np0/operstate = down"));
    CHECK_THAT(down["remedy"].get<std::string>(), Contains("cable"));

    // D-Bus: ProblemDetails agrees with Describe(); Problems keeps (code, severity, text) of
    // the errors and warnings only.
    const std::string path = rig.device_path("mlx5_2");
    json details = variant_json(rig.client->get(path, "org.rdmad1.Device", "ProblemDetails"));
    const json& described = rig.device("mlx5_2")["ProblemDetails"];
    REQUIRE(details.size() == described.size());
    for (size_t i = 0; i < details.size(); ++i) {
        CHECK(details[i][0] == described[i]["Code"]);
        CHECK(details[i][1] == described[i]["Severity"]);
        CHECK(details[i][2] == described[i]["Text"]);
        CHECK(details[i][3] == described[i]["Evidence"]);
        CHECK(details[i][4] == described[i]["Remedy"]);
        CHECK(details[i][5] == described[i]["Port"]);
    }
    json problems = variant_json(rig.client->get(path, "org.rdmad1.Device", "Problems"));
    REQUIRE(problems.size() == 1);
    CHECK(problems[0][0] == "roce-mtu-2048");
    CHECK(problems[0][1] == "warning");

    // Narrowed to one device: only its problems; mlx5_1 has info only, so exit 0.
    json narrowed = doctor_json({"mlx5_2"}, 3);
    for (const auto& p : narrowed)
        CHECK(p["object"] == "mlx5_2");
    json quiet = doctor_json({"mlx5_1"}, 0);
    for (const auto& p : quiet)
        CHECK(p["severity"] == "info");
    auto missing = run_program({env_or_fail("RDMACTL"), "doctor", "mlx5_9"});
    CHECK(missing.status == 1);
    CHECK_THAT(missing.err, Contains("no RDMA device named mlx5_9"));

    // Text: grouped by device and port, remedy always, evidence with -v.
    auto text = run_program({env_or_fail("RDMACTL"), "-v", "doctor", "mlx5_2"});
    INFO(text.out);
    CHECK(text.status == 3);
    CHECK_THAT(text.out, Contains("mlx5_2:\n"));
    // Under "port 1:" the text's own "port 1: " is not said again.
    CHECK_THAT(text.out, Contains("  port 1:\n    warning: netdev ens2f1np1 has MTU 4096"));
    CHECK_THAT(text.out, Contains("      remedy: set the MTU of ens2f1np1"));
    CHECK_THAT(text.out, Contains("      read: /sys/class/net/ens2f1np1/mtu = 4096\n"));
    auto plain = run_program({env_or_fail("RDMACTL"), "doctor", "mlx5_2"});
    CHECK(plain.out.find("read: ") == std::string::npos);

    // The port comes up (the SM configured it): one uevent re-reads the device, and the
    // problem is gone.
    rig.testbed.set_attr(kIbdev0, "ports/1/state", "4: ACTIVE");
    rig.testbed.set_attr(kIbdev0, "ports/1/lid", "0x5");
    rig.testbed.set_attr(kIbdev0, "ports/1/sm_lid", "0x1");
    rig.testbed.uevent(kIbdev0, "change");
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        json d = rig.client->describe();
        gone = true;
        for (const auto& dev : d["Devices"])
            if (dev["Name"] == "mlx5_0")
                for (const auto& p : dev["ProblemDetails"])
                    gone = gone && p["Code"] != "port-not-active";
        if (!gone)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(gone);
    rig.stop_daemon();
}

TEST_CASE("an EFA-like device is transport unspecified and gets no IB or RoCE advice",
          "[doctor][rdmactl]") {
    Rig rig("constructed-efa");
    CHECK(rig.port("efa_0", 1)["Transport"] == "unspecified");
    const json list = doctor_json({"efa_0"}, -1);
    for (const auto& p : list) {
        const std::string code = p["code"];
        INFO(code);
        CHECK(code.rfind("roce-", 0) != 0);
        CHECK(code.rfind("pkey-", 0) != 0);
        CHECK(code.rfind("node-description", 0) != 0);
        CHECK(code != "module-ib-umad-absent");
        CHECK(code != "module-rdma-ucm-absent");
        CHECK(code != "port-not-active");
    }
    // Its PCI function sits directly under pci0000:00: no bridge, so the link is unknown.
    json pcie = one(list, "efa_0", "pcie-unknown");
    CHECK(pcie["severity"] == "info");
    CHECK_THAT(pcie["text"].get<std::string>(), Contains("0000:00:06.0"));
    CHECK(has_evidence(pcie, "/sys/bus/pci/devices/0000:00:06.0/max_link_speed = absent"));
    rig.stop_daemon();
}

namespace {

/// A real process whose comm is "slurmd" (a copy of sleep(1) under that name) with
/// RLIMIT_MEMLOCK 64 KiB, as a Slurm node daemon started with the kernel's old default.
struct FakeLauncher {
    TempDir dir{"rdmad-it-memlock"};
    pid_t pid = -1;
    FakeLauncher() {
        const fs::path exe = dir / "slurmd";
        fs::copy_file("/bin/sleep", exe);
        pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            unsetenv("LD_PRELOAD");
            const rlimit lim{65536, 65536};
            setrlimit(RLIMIT_MEMLOCK, &lim);
            execl(exe.c_str(), "slurmd", "120", static_cast<char*>(nullptr));
            _exit(127);
        }
        // Until exec has renamed it.
        for (int i = 0; i < 200; ++i) {
            std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
            std::string c;
            std::getline(comm, c);
            if (c == "slurmd")
                break;
            std::this_thread::sleep_for(5ms);
        }
    }
    void stop() {
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
            pid = -1;
        }
    }
    ~FakeLauncher() { stop(); }
};

std::vector<json> memlock_findings(const json& described) {
    std::vector<json> out;
    for (const auto& dev : described["Devices"])
        if (dev["Name"] == "mlx5_0")
            for (const auto& p : dev["ProblemDetails"])
                if (p["Code"] == "memlock-low")
                    out.push_back(p);
    return out;
}

} // namespace

TEST_CASE("doctor: a launcher with a low locked-memory limit is named, read again on Reload",
          "[doctor]") {
    Rig rig("constructed-mlx5-roce");
    CHECK(memlock_findings(rig.described).empty()); // no launcher runs here
    FakeLauncher slurmd;
    rig.client->manager().callMethod("Reload").onInterface("org.rdmad1.Manager");
    json d;
    for (int i = 0; i < 100; ++i) { // the pass Reload schedules
        d = rig.client->describe();
        if (!memlock_findings(d).empty())
            break;
        std::this_thread::sleep_for(20ms);
    }
    auto found = memlock_findings(d);
    REQUIRE(found.size() == 1);
    CHECK(found[0]["Severity"] == "warning");
    CHECK(found[0]["Text"].get<std::string>().find("slurmd (pid " + std::to_string(slurmd.pid) +
                                                   ") has a locked-memory limit of 64 KiB") == 0);
    CHECK(found[0]["Evidence"] == json::array({"/proc/" + std::to_string(slurmd.pid) +
                                               "/limits = Max locked memory 65536 65536 bytes"}));
    CHECK(found[0]["Remedy"].get<std::string>().find("systemctl edit slurmd.service") == 0);
    // A warning: it is in Problems too.
    bool in_problems = false;
    for (const auto& dev : d["Devices"])
        if (dev["Name"] == "mlx5_0")
            for (const auto& p : dev["Problems"])
                in_problems = in_problems || p["Code"] == "memlock-low";
    CHECK(in_problems);

    slurmd.stop();
    rig.client->manager().callMethod("Reload").onInterface("org.rdmad1.Manager");
    for (int i = 0; i < 100; ++i) {
        d = rig.client->describe();
        if (memlock_findings(d).empty())
            break;
        std::this_thread::sleep_for(20ms);
    }
    CHECK(memlock_findings(d).empty());
    rig.stop_daemon();
}
