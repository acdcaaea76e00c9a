// SPDX-License-Identifier: MIT
//
// sriov_numvfs (rdmad.conf(5); Device.SRIOVNumVFs, SRIOVTotalVFs, DesiredSRIOVNumVFs in
// dbus/org.rdmad1.Device.xml) applied by the real rdmad to a umockdev testbed, the test playing
// the kernel: fake_sriov.c answers rdmad's writes to sriov_numvfs as drivers/pci/iov.c
// sriov_numvfs_store() does (EBUSY from one non-zero count to another, ERANGE above
// sriov_totalvfs) and logs each one; when a write is accepted the test adds (or removes) the VFs
// as mlx5_core would: a PCI function with a `physfn` link, its InfiniBand RDMA device and its
// IPoIB netdev each.
//
// Host: gcm-dgx-a100 (recorded: facebookresearch/gcm's DGX-A100 health-check data, 8
// ConnectX-6 HDR InfiniBand PFs, 15b3:101b; tests/fixtures/hosts/gcm-dgx-a100.umockdev.notes).
// The recording lists no SR-IOV files: the test gives mlx5_0's PCI function 0000:0c:00.0 the
// `sriov_totalvfs` (16) and `sriov_numvfs` (0) a ConnectX-6 shows after `mlxconfig set
// SRIOV_EN=1 NUM_OF_VFS=16` and a reset, before any VF is enabled. Its VFs are 15b3:101c
// (ConnectX-6 Virtual Function, pci.ids), at routing IDs PF + 1 + i (the VF offset and
// stride of 1 that ConnectX cards report).
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <sstream>
#include <thread>

using namespace it;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

const std::string kHost = "gcm-dgx-a100";
const std::string kPfPci = "/devices/pci0000:0b/0000:0b:00.0/0000:0c:00.0";
const std::string kPfIb = "/sys" + kPfPci + "/infiniband/mlx5_0";
const std::string kPfNet = "/sys" + kPfPci + "/net/ib0";

std::string vf_address(unsigned i) {
    const unsigned devfn = 1 + i; // the PF is function 0 of device 0
    char text[32];
    std::snprintf(text, sizeof text, "0000:0c:%02x.%x", devfn / 8, devfn % 8);
    return text;
}
std::string vf_pci(unsigned i) {
    return "/devices/pci0000:0b/0000:0b:00.0/" + vf_address(i);
}
std::string vf_name(unsigned i) {
    return "mlx5_" + std::to_string(10 + i);
}

/// What mlx5_core makes for VF `i` of the PF: the PCI function, its RDMA device (one
/// InfiniBand port, as the PF's) and its IPoIB netdev.
std::string vf_text(unsigned i) {
    const std::string pci = vf_pci(i), bdf = vf_address(i), name = vf_name(i);
    const std::string net = "ib" + std::to_string(10 + i);
    const std::string ifindex = std::to_string(1100 + i);
    char guid[32];
    std::snprintf(guid, sizeof guid, "0000:0000:0000:%04x", 0x100 + i);
    return "P: " + pci +
           "\nE: SUBSYSTEM=pci\nE: DRIVER=mlx5_core\nE: PCI_CLASS=20700\n"
           "E: PCI_ID=15B3:101C\nE: PCI_SLOT_NAME=" +
           bdf +
           "\nA: class=0x020700\\n\n"
           "A: device=0x101c\\n\nL: driver=../../../../bus/pci/drivers/mlx5_core\n"
           "L: physfn=../0000:0c:00.0\nA: vendor=0x15b3\\n\n\n"
           "P: " +
           pci + "/infiniband/" + name + "\nE: SUBSYSTEM=infiniband\nE: NAME=" + name +
           "\nL: device=../../../" + bdf +
           "\nA: fw_ver=20.31.2354\\n\nA: hca_type=MT4124\\n\n"
           "A: node_guid=" +
           guid +
           "\\n\nA: node_type=1: CA\\n\n"
           "A: ports/1/link_layer=InfiniBand\\n\nA: ports/1/phys_state=5: LinkUp\\n\n"
           "A: ports/1/rate=200 Gb/sec (4X HDR)\\n\nA: ports/1/state=4: ACTIVE\\n\n\n"
           "P: " +
           pci + "/net/" + net + "\nE: SUBSYSTEM=net\nE: INTERFACE=" + net +
           "\nE: IFINDEX=" + ifindex + "\nL: device=../../../" + bdf +
           "\nA: dev_port=0\\n\n"
           "A: ifindex=" +
           ifindex + "\\n\nA: iflink=" + ifindex +
           "\\n\nA: mtu=2044\\n\n"
           "A: operstate=up\\n\nA: type=32\\n\n\n";
}

struct SriovRig {
    explicit SriovRig(std::map<std::string, std::string> env_more = {})
        : testbed(kHost), env(std::move(env_more)) {
        fs::create_directories(cfg.path() / "etc");
        fs::create_directories(cfg.path() / "state");
        testbed.set_attr("/sys" + kPfPci, "sriov_totalvfs", "16\n");
        testbed.set_attr("/sys" + kPfPci, "sriov_numvfs", "0\n");
    }
    PrivateBus bus;
    Testbed testbed;
    TempDir cfg{"rdmad-it-sriov"};
    std::map<std::string, std::string> env;
    std::unique_ptr<DaemonProcess> daemon;
    std::unique_ptr<Client> client;
    unsigned vfs = 0; // the VFs in the testbed now

    std::string log_path() const { return (cfg.path() / "sriov.log").string(); }
    void config(const std::string& text) { write_file(cfg.path() / "etc" / "rdmad.conf", text); }
    std::string tb(const std::string& syspath) const { return testbed.root() + syspath; }

    void start() {
        DaemonOptions o;
        o.args = {"--legacy-mlx4-conf=" + (cfg.path() / "no-mlx4.conf").string(),
                  "--modprobe-dir=" + (cfg.path() / "modprobe.d").string()};
        auto e = env;
        e["LD_PRELOAD"] = preload_ahead(env_or_fail("FAKE_SRIOV"));
        e["FAKE_SRIOV_LOG"] = log_path();
        e["CONFIGURATION_DIRECTORY"] = (cfg.path() / "etc").string();
        e["STATE_DIRECTORY"] = (cfg.path() / "state").string();
        daemon =
            std::make_unique<DaemonProcess>(std::move(o), std::function<void()>{}, std::move(e));
        client = std::make_unique<Client>();
    }
    void stop() {
        client.reset();
        REQUIRE(daemon->stop() == 0);
        daemon.reset();
    }

    /// Every write rdmad made to sriov_numvfs: "<PCI address> <value> <errno>".
    std::vector<std::string> writes() const {
        std::vector<std::string> out;
        if (!fs::exists(log_path()))
            return out;
        std::istringstream in(read_file(log_path()));
        for (std::string line; std::getline(in, line);)
            out.push_back(line);
        return out;
    }
    bool wait_writes(size_t n, std::chrono::milliseconds timeout = 10s) {
        const auto deadline = Clock::now() + timeout;
        while (writes().size() < n && Clock::now() < deadline)
            std::this_thread::sleep_for(10ms);
        return writes().size() >= n;
    }

    /// The kernel's side of an accepted write: the VFs go (0) or come (n), with their uevents.
    void kernel_sets(unsigned n) {
        if (n == 0) {
            for (unsigned i = 0; i < vfs; ++i) {
                const std::string pci = "/sys" + vf_pci(i);
                // Children first: umockdev removes a device's own class and bus links only.
                for (const std::string& dev : {pci + "/net/ib" + std::to_string(10 + i),
                                               pci + "/infiniband/" + vf_name(i), pci}) {
                    testbed.uevent(dev, "remove");
                    testbed.remove(dev);
                }
                fs::remove(tb("/sys" + kPfPci + "/virtfn" + std::to_string(i)));
            }
            vfs = 0;
            return;
        }
        for (unsigned i = 0; i < n; ++i) {
            testbed.add(vf_text(i)); // umockdev sends each device's "add"
            testbed.set_link("/sys" + kPfPci, "virtfn" + std::to_string(i), "../" + vf_address(i));
        }
        vfs = n;
    }

    json describe() { return client->describe(); }
    json device(const std::string& name) {
        const json all = describe();
        for (auto& d : all["Devices"])
            if (d.value("Name", "") == name)
                return d;
        return json();
    }
    bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout = 10s) {
        const auto deadline = Clock::now() + timeout;
        for (;;) {
            if (pred())
                return true;
            if (Clock::now() >= deadline)
                return false;
            std::this_thread::sleep_for(20ms);
        }
    }
    /// mlx5_0 shows `n` VFs enabled, asked and in sync, and `n` VF devices point at it.
    bool settled(unsigned n) {
        const json all = describe();
        std::string pf_path;
        unsigned on_pf = 0;
        bool pf_ok = false;
        for (auto& d : all["Devices"])
            if (d.value("Name", "") == "mlx5_0") {
                pf_path = d.value("Path", "");
                pf_ok = d.value("SRIOVNumVFs", 99u) == n &&
                        d.value("DesiredSRIOVNumVFs", -2) == static_cast<int>(n) &&
                        d["Ports"][0].value("InSync", false);
            }
        for (auto& d : all["Devices"])
            if (d.value("PhysicalFunction", "/") == pf_path)
                ++on_pf;
        return pf_ok && on_pf == n;
    }
};

bool has_code(const json& device, const std::string& code) {
    const auto all = problem_codes(device);
    return std::find(all.begin(), all.end(), code) != all.end();
}

std::vector<std::string> sriov_codes(const json& device) {
    std::vector<std::string> out;
    for (const auto& c : problem_codes(device))
        if (c.rfind("sriov-", 0) == 0)
            out.push_back(c);
    return out;
}

} // namespace

TEST_CASE("sriov: 0 -> 8 -> 4 writes 8, then 0 and 4; a driver reload re-creates the 4 VFs",
          "[sriov][reconcile]") {
    SriovRig r;
    r.config("[[rule]]\npci_address = \"0000:0c:00.0\"\nsriov_numvfs = 8\n");
    r.start();
    REQUIRE(r.wait_writes(1));
    CHECK(r.writes() == std::vector<std::string>{"0000:0c:00.0 8 0"});
    r.kernel_sets(8);
    REQUIRE(r.eventually([&] { return r.settled(8); }));
    const json pf = r.device("mlx5_0");
    CHECK(pf["SRIOVTotalVFs"] == 16);
    CHECK(pf["DesiredOrigin"] ==
          json::array({json{{"Key", "sriov_numvfs"},
                            {"Origin", (r.cfg.path() / "etc" / "rdmad.conf").string() + ":1"}}}));
    // A VF matched by nothing asks nothing and has no SR-IOV of its own.
    CHECK(r.device("mlx5_10")["DesiredSRIOVNumVFs"] == -1);
    CHECK(r.device("mlx5_10")["SRIOVTotalVFs"] == 0);
    // The VFs' adds forget what was done (a device came): the PF in sync, nothing more written.
    CHECK(r.writes().size() == 1);

    // 8 -> 4: through 0, as the kernel requires (fake_sriov.c answers EBUSY otherwise).
    r.config("[[rule]]\npci_address = \"0000:0c:00.0\"\nsriov_numvfs = 4\n");
    r.daemon->signal(SIGHUP);
    REQUIRE(r.wait_writes(3));
    r.kernel_sets(0);
    r.kernel_sets(4);
    REQUIRE(r.eventually([&] { return r.settled(4); }));
    CHECK(r.writes() ==
          std::vector<std::string>{"0000:0c:00.0 8 0", "0000:0c:00.0 0 0", "0000:0c:00.0 4 0"});

    // A driver reload (mlx5_core removed and loaded again): the PF's RDMA device goes, its VFs
    // with it (mlx5_core disables SR-IOV when it unbinds: sriov_numvfs reads 0), then the PF's
    // device comes back. rdmad writes 4 again, once.
    const std::string dir = r.tb(kPfIb), gone = dir + ".gone";
    r.testbed.uevent(kPfIb, "remove");
    fs::rename(dir, gone);
    r.kernel_sets(0);
    write_file(r.tb("/sys" + kPfPci + "/sriov_numvfs"), "0\n");
    REQUIRE(r.eventually([&] { return r.device("mlx5_0").is_null(); }));
    fs::rename(gone, dir);
    r.testbed.uevent(kPfIb, "add");
    REQUIRE(r.wait_writes(4));
    r.kernel_sets(4);
    REQUIRE(r.eventually([&] { return r.settled(4); }));
    std::this_thread::sleep_for(300ms);
    CHECK(r.writes() == std::vector<std::string>{"0000:0c:00.0 8 0", "0000:0c:00.0 0 0",
                                                 "0000:0c:00.0 4 0", "0000:0c:00.0 4 0"});
    for (unsigned i = 0; i < 4; ++i) {
        INFO(vf_name(i));
        CHECK(r.device(vf_name(i))["PCIAddress"] == vf_address(i));
    }
    CHECK(sriov_codes(r.device("mlx5_0")).empty());
    r.stop();
}

TEST_CASE("sriov: more VFs than sriov_totalvfs is sriov-numvfs-too-many and nothing is written",
          "[sriov][reconcile]") {
    SriovRig r;
    r.config("[[rule]]\npci_address = \"0000:0c:00.0\"\nsriov_numvfs = 17\n");
    r.start();
    REQUIRE(r.eventually([&] {
        const json d = r.device("mlx5_0");
        return d.is_object() && d.value("DesiredSRIOVNumVFs", -1) == 17;
    }));
    const json pf = r.device("mlx5_0");
    CHECK(sriov_codes(pf) == std::vector<std::string>{"sriov-numvfs-too-many"});
    CHECK(pf["SRIOVNumVFs"] == 0);
    CHECK(pf["Ports"][0]["InSync"] == false);
    std::this_thread::sleep_for(300ms);
    CHECK(r.writes().empty());
    r.stop();
}

TEST_CASE("sriov: the VF count, total and desired count show in rdmad.prom, rdmactl show and "
          "rdmactl status",
          "[sriov][export]") {
    SriovRig r;
    const std::string prom_dir = (r.cfg.path() / "prom").string();
    fs::create_directories(prom_dir);
    // 17 > sriov_totalvfs (16): nothing is written, so the counts stay as the testbed has them.
    r.config("[export]\nprometheus_dir = \"" + prom_dir + "\"\nnfd_dir = \"\"\n\n" +
             "[[rule]]\npci_address = \"0000:0c:00.0\"\nsriov_numvfs = 17\n");
    r.start();
    INFO(r.daemon->log());
    const std::string prom = prom_dir + "/rdmad.prom";
    // The families of daemon/export/prometheus.cpp with the PF's sysfs counts (0 enabled of 16)
    // and the 17 asked; a VF-less device (mlx5_10 is no PF) has none of them.
    REQUIRE(r.eventually([&] {
        return fs::exists(prom) &&
               read_file(prom).find("rdmad_device_desired_sriov_numvfs{device=\"mlx5_0\"} 17\n") !=
                   std::string::npos;
    }));
    const std::string text = read_file(prom);
    CHECK(text.find("rdmad_device_sriov_numvfs{device=\"mlx5_0\"} 0\n") != std::string::npos);
    CHECK(text.find("rdmad_device_sriov_totalvfs{device=\"mlx5_0\"} 16\n") != std::string::npos);
    CHECK(text.find("sriov_numvfs{device=\"mlx5_10\"}") == std::string::npos);
    const std::string ctl = env_or_fail("RDMACTL");
    const RunResult show = run_program({ctl, "show", "mlx5_0"});
    INFO(show.out << show.err);
    CHECK(show.out.find("SRIOVNumVFs: 0\n") != std::string::npos);
    CHECK(show.out.find("SRIOVTotalVFs: 16\n") != std::string::npos);
    CHECK(show.out.find("DesiredSRIOVNumVFs: 17") != std::string::npos);
    const RunResult status = run_program({ctl, "status"});
    INFO(status.out << status.err);
    CHECK(status.out.find("mlx5_0 port 1: not in sync: SRIOVNumVFs 0, desired 17\n") !=
          std::string::npos);
    r.stop();
}

TEST_CASE("sriov: a write the driver refuses (ENOMEM) is sriov-numvfs-failed with the errno text, "
          "tried once per add or Reload",
          "[sriov][reconcile]") {
    SriovRig r({{"FAKE_SRIOV_ERRNO", std::to_string(ENOMEM)}});
    r.config("[[rule]]\npci_address = \"0000:0c:00.0\"\nsriov_numvfs = 8\n");
    r.start();
    REQUIRE(r.wait_writes(1));
    REQUIRE(r.eventually([&] {
        const json d = r.device("mlx5_0");
        return d.is_object() && has_code(d, "sriov-numvfs-failed");
    }));
    const json pf = r.device("mlx5_0");
    CHECK(sriov_codes(pf) == std::vector<std::string>{"sriov-numvfs-failed"});
    std::string text;
    for (auto& p : pf["Problems"])
        if (p.value("Code", "") == "sriov-numvfs-failed")
            text = p.value("Text", "");
    CHECK(text == "SRIOVNumVFs 0 -> 8: /sys/bus/pci/devices/0000:0c:00.0/sriov_numvfs: writing 8: "
                  "Cannot allocate memory");
    CHECK(pf["SRIOVNumVFs"] == 0);
    // Another event on the PF (its netdev changes) plans again, but does not write again.
    r.testbed.uevent(kPfNet, "change");
    std::this_thread::sleep_for(500ms);
    CHECK(r.writes() == std::vector<std::string>{"0000:0c:00.0 8 " + std::to_string(ENOMEM)});
    // A Reload tries once more.
    r.daemon->signal(SIGHUP);
    REQUIRE(r.wait_writes(2));
    std::this_thread::sleep_for(500ms);
    CHECK(r.writes().size() == 2);
    r.stop();
}
