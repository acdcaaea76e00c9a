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
//
// vf_guids (rdmad.conf(5); Device.DesiredVFGUIDs, Device.VFIndex): fake_vfguid.c answers
// rdmad's RTM_SETLINK requests on the PF's IPoIB netdev ib0 (ifindex 1008 in the recording) as
// net/core/rtnetlink.c does and logs each one; playing the VF's driver it writes the GUIDs into
// the VF's node_guid and GID 0, or leaves them (FAKE_VFGUID_BOUND, mlx5 with a bound VF).
// Each VF comes with node GUID 0000:0000:0000:01<n> and port GUID (GID 0) 0000:0000:0000:02<n>
// of its own.
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <sstream>
#include <thread>
#include <tuple>

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

/// The last group of VF `i`'s port GUID as it comes (0x200 + i).
std::string port_guid_low(unsigned i) {
    char text[8];
    std::snprintf(text, sizeof text, "%04x", 0x200 + i);
    return text;
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
           "A: ports/1/gids/0=fe80:0000:0000:0000:0000:0000:0000:" +
           port_guid_low(i) +
           "\\n\nA: ports/1/link_layer=InfiniBand\\n\nA: ports/1/phys_state=5: LinkUp\\n\n"
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
    std::string guid_log_path() const { return (cfg.path() / "vfguid.log").string(); }
    void config(const std::string& text) { write_file(cfg.path() / "etc" / "rdmad.conf", text); }
    std::string tb(const std::string& syspath) const { return testbed.root() + syspath; }

    void start() {
        DaemonOptions o;
        o.args = {"--legacy-mlx4-conf=" + (cfg.path() / "no-mlx4.conf").string(),
                  "--modprobe-dir=" + (cfg.path() / "modprobe.d").string()};
        auto e = env;
        e["LD_PRELOAD"] = preload_ahead({env_or_fail("FAKE_SRIOV"), env_or_fail("FAKE_VFGUID")});
        e["FAKE_SRIOV_LOG"] = log_path();
        e["FAKE_VFGUID_LOG"] = guid_log_path();
        e["FAKE_VFGUID_PF"] = "1008=" + tb("/sys" + kPfPci); // ib0's IFINDEX in the recording
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

    /// The lines of a shim's log, none when it is not there yet.
    static std::vector<std::string> lines_of(const std::string& path) {
        std::vector<std::string> out;
        if (!fs::exists(path))
            return out;
        std::istringstream in(read_file(path));
        for (std::string line; std::getline(in, line);)
            out.push_back(line);
        return out;
    }
    /// Every write rdmad made to sriov_numvfs: "<PCI address> <value> <errno>".
    std::vector<std::string> writes() const { return lines_of(log_path()); }
    bool wait_writes(size_t n, std::chrono::milliseconds timeout = 10s) {
        const auto deadline = Clock::now() + timeout;
        while (writes().size() < n && Clock::now() < deadline)
            std::this_thread::sleep_for(10ms);
        return writes().size() >= n;
    }

    /// Every RTM_SETLINK rdmad sent for VF GUIDs, sorted: "<ifindex> vf <n> node <guid> port
    /// <guid> <errno>".
    std::vector<std::string> guid_writes() const {
        std::vector<std::string> out = lines_of(guid_log_path());
        std::sort(out.begin(), out.end());
        return out;
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
            // pci_iov_add_virtfn(): the PF's virtfn<i> link, then the VF's driver probes it.
            testbed.set_link("/sys" + kPfPci, "virtfn" + std::to_string(i), "../" + vf_address(i));
            testbed.add(vf_text(i)); // umockdev sends each device's "add"
        }
        vfs = n;
    }

    /// A driver reload (mlx5_core removed and loaded again): the PF's RDMA device goes, its VFs
    /// with it (mlx5_core disables SR-IOV when it unbinds: sriov_numvfs reads 0), then the
    /// PF's device comes back. False when rdmad did not see the PF go.
    bool reload_driver() {
        const std::string dir = tb(kPfIb), gone = dir + ".gone";
        testbed.uevent(kPfIb, "remove");
        fs::rename(dir, gone);
        kernel_sets(0);
        write_file(tb("/sys" + kPfPci + "/sriov_numvfs"), "0\n");
        const bool went = eventually([&] { return device("mlx5_0").is_null(); });
        fs::rename(gone, dir);
        testbed.uevent(kPfIb, "add");
        return went;
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
    REQUIRE(r.reload_driver());
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

namespace {

const std::string kGuidRule = "[[rule]]\npci_address = \"0000:0c:00.0\"\nsriov_numvfs = 4\n"
                              "vf_guids = { node = \"00:11:22:33:44:55:66:00\", "
                              "port = \"0011:2233:4455:6700\" }\n";

/// The requests for VFs 0-3 of kGuidRule: VF n gets node 0x0011223344556600 + n and port
/// 0x0011223344556700 + n, on ib0 (ifindex 1008); `error` the kernel's answer.
std::vector<std::string> guid_requests(int error = 0) {
    std::vector<std::string> out;
    for (unsigned n = 0; n < 4; ++n)
        out.push_back("1008 vf " + std::to_string(n) + " node 0011:2233:4455:660" +
                      std::to_string(n) + " port 0011:2233:4455:670" + std::to_string(n) + " " +
                      std::to_string(error));
    return out;
}

/// VFs 0-3 read back the GUIDs of kGuidRule, and the PF asks them.
bool guids_in_place(SriovRig& r) {
    const json all = r.describe();
    unsigned good = 0;
    for (auto& d : all["Devices"])
        for (unsigned n = 0; n < 4; ++n)
            if (d.value("Name", "") == vf_name(n) &&
                d.value("NodeGUID", "") == "0011:2233:4455:660" + std::to_string(n) &&
                d.value("VFIndex", -1) == static_cast<int>(n))
                ++good;
    const json pf = r.device("mlx5_0");
    return good == 4 && pf.is_object() && pf["DesiredVFGUIDs"].size() == 4 &&
           pf["Ports"][0].value("InSync", false);
}

std::vector<std::string> vf_guid_codes(const json& device) {
    std::vector<std::string> out;
    for (const auto& c : problem_codes(device))
        if (c.rfind("vf-guid-", 0) == 0)
            out.push_back(c);
    return out;
}

std::string problem_text(const json& device, const std::string& code) {
    for (auto& p : device["Problems"])
        if (p.value("Code", "") == code)
            return p.value("Text", "");
    return "";
}

} // namespace

TEST_CASE("vf_guids: the VFs sriov_numvfs makes get the range's GUIDs, again after a driver "
          "reload; VFs that hold them are not written",
          "[sriov][vf_guids][reconcile]") {
    SriovRig r;
    r.config(kGuidRule);
    r.start();
    REQUIRE(r.wait_writes(1));
    r.kernel_sets(4);
    REQUIRE(r.eventually([&] { return guids_in_place(r); }));
    CHECK(r.guid_writes() == guid_requests());
    const json pf = r.device("mlx5_0");
    CHECK(pf["DesiredVFGUIDs"][3] == json{{"VF", 3},
                                          {"NodeGUID", "0011:2233:4455:6603"},
                                          {"PortGUID", "0011:2233:4455:6703"}});
    CHECK(pf["VFIndex"] == -1);
    // The port GUID read back: the interface ID of the VF port's GID 0.
    CHECK(r.device(vf_name(2))["Ports"][0]["GIDs"][0]["GID"] ==
          "fe80:0000:0000:0000:0011:2233:4455:6702");

    // A driver reload: the VFs come back with the GUIDs the driver gives them, and get the
    // range's again, once each.
    REQUIRE(r.reload_driver());
    REQUIRE(r.wait_writes(2));
    r.kernel_sets(4);
    REQUIRE(r.eventually([&] { return r.guid_writes().size() == 8 && guids_in_place(r); }));
    auto twice = guid_requests();
    for (const auto& line : guid_requests())
        twice.push_back(line);
    std::sort(twice.begin(), twice.end());
    CHECK(r.guid_writes() == twice);

    // rdmad starts again on VFs that hold their GUIDs: compared, none written.
    r.stop();
    r.start();
    REQUIRE(r.eventually([&] { return guids_in_place(r); }));
    std::this_thread::sleep_for(500ms);
    CHECK(r.guid_writes().size() == 8);
    CHECK(vf_guid_codes(r.device("mlx5_0")).empty());
    r.stop();
}

TEST_CASE("vf_guids: a kernel that refuses them (EOPNOTSUPP) is vf-guid-failed with its text, "
          "written once per add or Reload",
          "[sriov][vf_guids][reconcile]") {
    SriovRig r({{"FAKE_VFGUID_ERRNO", std::to_string(EOPNOTSUPP)}});
    r.config(kGuidRule);
    r.start();
    REQUIRE(r.wait_writes(1));
    r.kernel_sets(4);
    REQUIRE(r.eventually([&] { return r.guid_writes().size() == 4; }));
    REQUIRE(r.eventually([&] { return has_code(r.device("mlx5_0"), "vf-guid-failed"); }));
    CHECK(r.guid_writes() == guid_requests(EOPNOTSUPP));
    const json pf = r.device("mlx5_0");
    CHECK(problem_text(pf, "vf-guid-failed") ==
          "DesiredVFGUIDs vf 0: 0000:0000:0000:0100 0000:0000:0000:0200 -> vf 0: "
          "0011:2233:4455:6600 0011:2233:4455:6700: RTM_SETLINK ib0 (ifindex 1008) vf 0 "
          "node_guid 0011:2233:4455:6600 port_guid 0011:2233:4455:6700: Operation not supported");
    CHECK(pf["Ports"][0]["InSync"] == false);
    CHECK(r.device(vf_name(0))["NodeGUID"] == "0000:0000:0000:0100");
    // Another event on the PF plans again, but does not write again.
    r.testbed.uevent(kPfNet, "change");
    std::this_thread::sleep_for(500ms);
    CHECK(r.guid_writes().size() == 4);
    // A Reload tries once more.
    r.daemon->signal(SIGHUP);
    REQUIRE(r.eventually([&] { return r.guid_writes().size() == 8; }));
    std::this_thread::sleep_for(500ms);
    CHECK(r.guid_writes().size() == 8);
    r.stop();
}

TEST_CASE("vf_guids: a bound VF that keeps its old GUIDs (mlx5) is vf-guid-pending naming the "
          "rebind; its rebind brings them and clears it",
          "[sriov][vf_guids][reconcile]") {
    SriovRig r(std::map<std::string, std::string>{{"FAKE_VFGUID_BOUND", "1"}});
    r.config(kGuidRule);
    r.start();
    REQUIRE(r.wait_writes(1));
    r.kernel_sets(4);
    REQUIRE(r.eventually([&] { return has_code(r.device("mlx5_0"), "vf-guid-pending"); }));
    REQUIRE(r.eventually([&] { return r.guid_writes().size() == 4; }));
    CHECK(r.guid_writes() == guid_requests());
    const std::string text = problem_text(r.device("mlx5_0"), "vf-guid-pending");
    CHECK(text.find("mlx5_10 (0000:0c:00.1) reads node_guid 0000:0000:0000:0100 and port GUID "
                    "0000:0000:0000:0200") != std::string::npos);
    CHECK(text.find("echo 0000:0c:00.1 > /sys/bus/pci/drivers/mlx5_core/unbind") !=
          std::string::npos);
    std::this_thread::sleep_for(500ms);
    CHECK(r.guid_writes().size() == 4); // never a loop

    // The admin rebinds the VFs: mlx5 gives each its vport's GUIDs when it binds (the test
    // plays it by writing them, then the VF's RDMA device goes and comes).
    for (unsigned n = 0; n < 4; ++n) {
        const std::string ib = "/sys" + vf_pci(n) + "/infiniband/" + vf_name(n);
        r.testbed.uevent(ib, "remove");
        write_file(r.tb(ib) + "/node_guid", "0011:2233:4455:660" + std::to_string(n) + "\n");
        write_file(r.tb(ib) + "/ports/1/gids/0",
                   "fe80:0000:0000:0000:0011:2233:4455:670" + std::to_string(n) + "\n");
        r.testbed.uevent(ib, "add");
    }
    REQUIRE(r.eventually([&] { return guids_in_place(r); }));
    CHECK(vf_guid_codes(r.device("mlx5_0")).empty());
    CHECK(r.guid_writes().size() == 4);
    r.stop();
}

TEST_CASE("vf_guids: a request the kernel never answers fails once after the receive time "
          "limit; the PF's other VFs are not sent in that pass, so the loop waits once",
          "[sriov][vf_guids][reconcile]") {
    // rtnetlink answers a request within the sender's sendmsg() (netlink_unicast_kernel() runs
    // rtnetlink_rcv(), whose netlink_rcv_skb() queues the ACK): a request that has none after
    // the time limit will not get one, nor will the next on the same netdev.
    SriovRig r(std::map<std::string, std::string>{{"FAKE_VFGUID_NOACK", "1"}});
    r.config("[[rule]]\npci_address = \"0000:0c:00.0\"\n"
             "vf_guids = { node = \"00:11:22:33:44:55:66:00\", port = \"0011:2233:4455:6700\" }\n");
    r.testbed.set_attr("/sys" + kPfPci, "sriov_numvfs", "4\n");
    r.kernel_sets(4); // before rdmad starts: its first plan has all four
    const auto begin = Clock::now();
    r.start();
    REQUIRE(r.eventually(
        [&] {
            const json pf = r.device("mlx5_0");
            size_t n = 0;
            for (auto& p : pf["Problems"])
                n += p.value("Code", "") == "vf-guid-failed";
            return n == 4;
        },
        30s));
    // One 5 s receive time limit (MnlTransport's), not one per VF.
    CHECK(Clock::now() - begin < 12s);
    CHECK(r.guid_writes().size() == 1);
    std::vector<std::string> texts;
    const json pf = r.device("mlx5_0");
    for (auto& p : pf["Problems"])
        if (p.value("Code", "") == "vf-guid-failed")
            texts.push_back(p.value("Text", ""));
    std::sort(texts.begin(), texts.end());
    CHECK(texts[0].find("vf 0 node_guid 0011:2233:4455:6600 port_guid 0011:2233:4455:6700: "
                        "Connection timed out") != std::string::npos);
    for (unsigned n = 1; n < 4; ++n)
        CHECK(texts[n].find("vf " + std::to_string(n) + " node_guid") != std::string::npos);
    // No retry: another event on the PF plans again, but sends nothing.
    r.testbed.uevent(kPfNet, "change");
    std::this_thread::sleep_for(1s);
    CHECK(r.guid_writes().size() == 1);
    r.stop();
}

namespace {

/// vf_text(i) with its `physfn` link to `target` instead of "../0000:0c:00.0".
std::string vf_text_physfn(unsigned i, const std::string& target) {
    std::string text = vf_text(i);
    const std::string kernel = "L: physfn=../0000:0c:00.0\n";
    text.replace(text.find(kernel), kernel.size(), "L: physfn=" + target + "\n");
    return text;
}

/// The texts of the doctor's pcie-* findings on `device` (rdmactl --json doctor).
std::vector<std::string> pcie_texts(const std::string& device) {
    const RunResult r = run_program({env_or_fail("RDMACTL"), "--json", "doctor", device});
    INFO("rdmactl doctor: " << r.out << r.err);
    json list;
    REQUIRE_NOTHROW(list = json::parse(r.out));
    std::vector<std::string> out;
    for (const auto& p : list)
        if (p.value("object", "") == device && p.value("code", "").rfind("pcie-", 0) == 0)
            out.push_back(p.value("text", ""));
    return out;
}

} // namespace

TEST_CASE("sriov: a VF's physfn that names no PF the kernel would gives no PhysicalFunction and "
          "no link read from where it points; a PF replaced while its VFs come is theirs again",
          "[sriov][hostile]") {
    SriovRig r;
    // The PF's link trained down (8 of 16 GT/s), its bridge's at full speed.
    const std::string bridge = "/sys/devices/pci0000:0b/0000:0b:00.0";
    for (const auto& [dev, speed] :
         {std::pair{"/sys" + kPfPci, "8.0"}, std::pair{bridge, "16.0"}}) {
        r.testbed.set_attr(dev, "current_link_speed", std::string(speed) + " GT/s PCIe\n");
        r.testbed.set_attr(dev, "current_link_width", "16\n");
        r.testbed.set_attr(dev, "max_link_speed", "16.0 GT/s PCIe\n");
        r.testbed.set_attr(dev, "max_link_width", "16\n");
    }
    // A PCI function's look-alike outside the testbed's /sys, with a 2.5 GT/s x1 link.
    const fs::path outside = r.cfg.path() / "0000:0c:00.0";
    fs::create_directories(r.cfg.path() / "bus" / "pci");
    fs::create_directories(outside);
    fs::create_directory_symlink(r.cfg.path() / "bus" / "pci", outside / "subsystem");
    write_file(outside / "current_link_speed", "2.5 GT/s PCIe\n");
    write_file(outside / "current_link_width", "1\n");
    write_file(outside / "max_link_speed", "2.5 GT/s PCIe\n");
    write_file(outside / "max_link_width", "1\n");
    r.config("");
    r.start();
    REQUIRE(r.eventually([&] { return !r.device("mlx5_0").is_null(); }));
    const std::string pf_path = r.device("mlx5_0")["Path"];

    // From the VF's directory (/sys/devices/pci0000:0b/0000:0b:00.0/<VF>) five ".." reach /.
    const std::string to_root = "../../../../..";
    const std::vector<std::string> hostile = {
        to_root + "/../../../../../0000:0c:00.0", // above /: /0000:0c:00.0
        "../" + vf_address(2),                    // the VF itself
        to_root + outside.string(),               // a look-alike outside /sys
        "../" + vf_address(5),                    // a VF (whose physfn names VF 4)
        "../" + vf_address(4),
    };
    r.testbed.add(vf_text(0));
    for (unsigned i = 1; i <= hostile.size(); ++i)
        r.testbed.add(vf_text_physfn(i, hostile[i - 1]));
    REQUIRE(r.eventually([&] { return !r.device(vf_name(5)).is_null(); }));
    REQUIRE(r.eventually([&] { return r.device(vf_name(0))["PhysicalFunction"] == pf_path; }));
    // The doctor checks VF 0 on its PF's link, and says so.
    const auto vf0 = pcie_texts(vf_name(0));
    INFO(json(vf0).dump());
    REQUIRE(vf0.size() == 1);
    CHECK(vf0[0].find("PCIe link of physical function 0000:0c:00.0 - 0000:0b:00.0 runs at 8 "
                      "GT/s x16") != std::string::npos);
    for (unsigned i = 1; i <= hostile.size(); ++i) {
        INFO(vf_name(i) << " physfn -> " << hostile[i - 1]);
        const json d = r.device(vf_name(i));
        CHECK(d["PCIAddress"] == vf_address(i));
        CHECK(d["PhysicalFunction"] == "/");
        for (const auto& text : pcie_texts(vf_name(i))) {
            CHECK(text.find("physical function") == std::string::npos);
            CHECK(text.find("2.5 GT/s") == std::string::npos);
        }
    }

    // VF 1's physfn names its PF from the next pass on: it is the PF's VF then.
    const std::string vf1 = "/sys" + vf_pci(1);
    fs::remove(r.tb(vf1 + "/physfn"));
    r.testbed.set_link(vf1, "physfn", "../0000:0c:00.0");
    r.testbed.uevent(vf1, "change");
    CHECK(r.eventually([&] { return r.device(vf_name(1))["PhysicalFunction"] == pf_path; }));

    // The PF's function goes (its RDMA device and netdev with it) while VFs 6-9 come, then
    // comes back: they are its VFs.
    const std::string pf = r.tb("/sys" + kPfPci);
    for (const std::string& dev : {kPfNet, kPfIb, "/sys" + kPfPci})
        r.testbed.uevent(dev, "remove");
    fs::rename(pf, pf + ".gone");
    for (unsigned i = 6; i < 10; ++i)
        r.testbed.add(vf_text(i));
    REQUIRE(r.eventually([&] { return r.device("mlx5_0").is_null(); }));
    REQUIRE(r.eventually([&] { return !r.device(vf_name(9)).is_null(); }));
    fs::rename(pf + ".gone", pf);
    for (const std::string& dev : {"/sys" + kPfPci, kPfIb, kPfNet})
        r.testbed.uevent(dev, "add");
    REQUIRE(r.eventually([&] { return !r.device("mlx5_0").is_null(); }));
    const std::string pf_back = r.device("mlx5_0")["Path"];
    for (unsigned i = 6; i < 10; ++i) {
        INFO(vf_name(i));
        CHECK(r.eventually([&] { return r.device(vf_name(i))["PhysicalFunction"] == pf_back; }));
    }
    r.stop();
}

TEST_CASE("sriov: a VF's physfn naming a PCI function that is no PF (its bridge, another card's "
          "function without sriov_totalvfs) gives no PhysicalFunction and no link read from there",
          "[sriov][hostile]") {
    // Only a PF carries sriov_totalvfs (drivers/pci/iov.c sriov_pf_dev_attrs, shown where
    // dev_is_pf()): SriovRig gives it to mlx5_0's function alone, as the kernel would.
    SriovRig r;
    // The VFs' bridge, a PCI function as the kernel shows one (its subsystem link), and
    // mlx5_1's function, its link trained down to 2.5 GT/s x1 below a 16 GT/s x16 bridge.
    const std::string bridge = "/sys/devices/pci0000:0b/0000:0b:00.0";
    const std::string other_bridge = "/sys/devices/pci0000:11/0000:11:00.0";
    const std::string other = other_bridge + "/0000:12:00.0";
    for (const auto& [dev, speed, width] :
         {std::tuple{bridge, "16.0", "16"}, std::tuple{other_bridge, "16.0", "16"},
          std::tuple{other, "2.5", "1"}}) {
        r.testbed.set_attr(dev, "current_link_speed", std::string(speed) + " GT/s PCIe\n");
        r.testbed.set_attr(dev, "current_link_width", std::string(width) + "\n");
        r.testbed.set_attr(dev, "max_link_speed", "16.0 GT/s PCIe\n");
        r.testbed.set_attr(dev, "max_link_width", "16\n");
    }
    r.testbed.set_link(bridge, "subsystem", "../../../bus/pci");
    r.config("");
    r.start();
    REQUIRE(r.eventually([&] { return !r.device("mlx5_0").is_null(); }));
    REQUIRE(r.eventually([&] { return !r.device("mlx5_1").is_null(); }));
    const std::string pf_path = r.device("mlx5_0")["Path"];

    // From the VF's directory, ".." is its bridge; "../../.." is /sys/devices.
    const std::vector<std::string> hostile = {"..",
                                              "../../../pci0000:11/0000:11:00.0/0000:12:00.0"};
    r.testbed.add(vf_text(0));
    for (unsigned i = 1; i <= hostile.size(); ++i)
        r.testbed.add(vf_text_physfn(i, hostile[i - 1]));
    REQUIRE(r.eventually([&] { return !r.device(vf_name(2)).is_null(); }));
    REQUIRE(r.eventually([&] { return r.device(vf_name(0))["PhysicalFunction"] == pf_path; }));
    for (unsigned i = 1; i <= hostile.size(); ++i) {
        INFO(vf_name(i) << " physfn -> " << hostile[i - 1]);
        const json d = r.device(vf_name(i));
        CHECK(d["PCIAddress"] == vf_address(i));
        CHECK(d["PhysicalFunction"] == "/");
        // The VF's own link, up to its bridge: the VF has no link files, so it is unknown.
        const auto texts = pcie_texts(vf_name(i));
        INFO(json(texts).dump());
        REQUIRE(texts.size() == 1);
        CHECK(texts[0].find("PCIe link " + vf_address(i) + " - 0000:0b:00.0 unknown") !=
              std::string::npos);
        CHECK(texts[0].find("physical function") == std::string::npos);
        CHECK(texts[0].find("2.5 GT/s") == std::string::npos);
    }
    r.stop();
}
