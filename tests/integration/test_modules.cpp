// SPDX-License-Identifier: MIT
//
// [daemon] load_modules (rdmad.conf(5)) with the real libkmod: rdmad on
// constructed-irdma-unbound (an Intel E810 8086:1593 at 0000:3b:00.0 bound to ice whose
// auxiliary device ice.iwarp.0 has no driver: netdev enp59s0f0 is "module-not-loaded", hint
// "load irdma"), given a module directory of its own (--module-dir) that depmod built from a
// tree whose irdma.ko is no module, so that the kernel refuses it as it refuses a module it
// cannot take. The errno is the kernel's for that file on this machine (expected_errno()).
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <sys/stat.h>
#include <thread>

using namespace it;
using namespace std::chrono_literals;

namespace {

/// The errno finit_module(2) gives for a file that is no module (init_module(2), ERRORS):
/// ENOSYS where the kernel has no module support (no /proc/modules; kernel/sys_ni.c), EPERM
/// without CAP_SYS_MODULE or with /proc/sys/kernel/modules_disabled = 1, EKEYREJECTED where
/// signatures are enforced (/sys/module/module/parameters/sig_enforce = Y), else ENOEXEC
/// (kernel/module/main.c: elf_validity_check() on a file that is not ELF). Read before any
/// testbed redirects /sys.
int expected_errno() {
    if (!fs::exists("/proc/modules"))
        return ENOSYS;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("CapEff:", 0) == 0) {
            const unsigned long long caps = std::stoull(line.substr(7), nullptr, 16);
            if (!(caps & (1ull << 16))) // CAP_SYS_MODULE, uapi linux/capability.h
                return EPERM;
        }
    std::ifstream disabled("/proc/sys/kernel/modules_disabled");
    if (std::string v; disabled >> v && v == "1")
        return EPERM;
    std::ifstream enforce("/sys/module/module/parameters/sig_enforce");
    if (std::string v; enforce >> v && v == "Y")
        return EKEYREJECTED;
    return ENOEXEC;
}

std::string depmod() {
    for (const char* p : {"/usr/sbin/depmod", "/sbin/depmod"})
        if (fs::exists(p))
            return p;
    FAIL("depmod (Debian's kmod) is needed to build the test's module index");
    return {};
}

/// `config` with the exports off: no rdmad.prom or NFD file outside the test's directory.
std::string exports_off(const std::string& config) {
    return config + "\n[export]\nprometheus_dir = \"\"\nnfd_dir = \"\"\n";
}

struct ModulesRig {
    PrivateBus bus;
    TempDir dir{"rdmad-it-modules"};
    std::unique_ptr<Testbed> testbed;
    std::unique_ptr<DaemonProcess> daemon;
    std::unique_ptr<Client> client;
    const int errno_expected = expected_errno();

    /// `modules`: the .ko files of the tree (text, no module); `config`: rdmad.conf;
    /// `modprobe`: a modprobe.d file of the test's own modprobe.d directory.
    ModulesRig(const std::string& host, const std::vector<std::string>& modules,
               const std::string& config, const std::string& modprobe = "") {
        for (auto d : {"etc", "state", "modprobe.d", "modules-load.d"})
            fs::create_directories(dir / d);
        const fs::path tree = dir / "root" / "lib" / "modules" / "9.9.9";
        for (const auto& m : modules) {
            const fs::path ko = tree / "kernel" / "drivers" / "infiniband" / (m + ".ko");
            fs::create_directories(ko.parent_path());
            write_file(ko, "not a module\n");
        }
        fs::create_directories(tree);
        // depmod writes modules.dep(.bin) and the other indexes libkmod reads; it names a file
        // that is no ELF ("failed to load symbols ... Exec format error") and lists it anyway.
        const RunResult r = run_program({depmod(), "-b", (dir / "root").string(), "9.9.9"});
        INFO(r.err);
        REQUIRE(r.status == 0);
        REQUIRE(fs::exists(tree / "modules.dep.bin"));
        write_file(dir / "etc" / "rdmad.conf", exports_off(config));
        if (!modprobe.empty())
            write_file(dir / "modprobe.d" / "test.conf", modprobe);
        testbed = std::make_unique<Testbed>(host);
        DaemonOptions o;
        o.args = {"--legacy-mlx4-conf=" + (dir / "no-mlx4.conf").string(),
                  "--modprobe-dir=" + (dir / "modprobe.d").string(),
                  "--module-dir=" + tree.string(),
                  "--modules-load-dir=" + (dir / "modules-load.d").string()};
        std::map<std::string, std::string> env = {
            {"CONFIGURATION_DIRECTORY", (dir / "etc").string()},
            {"STATE_DIRECTORY", (dir / "state").string()},
        };
        daemon = std::make_unique<DaemonProcess>(std::move(o), std::function<void()>{}, env);
        client = std::make_unique<Client>();
    }

    json problems() { return client->describe()["Problems"]; }
    json loaded() { return client->describe()["LoadedModules"]; }
    /// The problem with `code` in Manager.Problems, null when none.
    json problem(const std::string& code) {
        for (auto& p : problems())
            if (p.value("Code", "") == code)
                return p;
        return nullptr;
    }
    /// How many times rdmad's log says it tried to load `module`.
    size_t attempts(const std::string& module) const {
        // The executor's line: "host kernel module irdma (enp59s0f0): not loaded -> loaded ..."
        std::istringstream log(daemon->log());
        size_t n = 0;
        for (std::string line; std::getline(log, line);)
            n += line.find("kernel module " + module + " ") != std::string::npos &&
                 line.find("not loaded -> loaded") != std::string::npos;
        return n;
    }
    void reload() { client->manager().callMethod("Reload").onInterface("org.rdmad1.Manager"); }
};

} // namespace

TEST_CASE("modules: load_modules loads the E810's irdma through libkmod once, and the kernel's "
          "refusal is a problem with its error",
          "[modules]") {
    ModulesRig rig("constructed-irdma-unbound", {"irdma"}, "[daemon]\nload_modules = true\n");
    const std::string error = std::strerror(rig.errno_expected);
    json p = rig.problem("module-load-failed");
    INFO(rig.problems().dump() << "\n" << rig.daemon->log());
    REQUIRE(p.is_object());
    CHECK(p["Severity"] == "error");
    const std::string text = p["Text"];
    CHECK(text.find("irdma") != std::string::npos);
    CHECK(text.find("enp59s0f0") != std::string::npos);
    CHECK(text.find(": " + error) != std::string::npos); // EPERM adds where to allow it
    CHECK(rig.loaded() == json::array());
    // The Link still says what would serve it.
    const json described = rig.client->describe();
    for (auto& l : described["Links"])
        if (l["Name"] == "enp59s0f0") {
            CHECK(l["RdmaCapable"] == "module-not-loaded");
            CHECK(l["Hint"] == "load irdma");
        }
    // Once: passes that follow (a Reconcile dry run plans again) do not try it again...
    std::this_thread::sleep_for(500ms);
    CHECK(rig.attempts("irdma") == 1);
    // ... until a Reload, which tries once more.
    rig.reload();
    std::this_thread::sleep_for(300ms);
    CHECK(rig.attempts("irdma") == 2);
    CHECK(rig.problem("module-load-failed").is_object());
    CHECK(rig.daemon->stop() == 0);
}

TEST_CASE("modules: a module a modprobe.d blacklist line names is not loaded, and a problem "
          "says so",
          "[modules]") {
    ModulesRig rig("constructed-irdma-unbound", {"irdma"}, "[daemon]\nload_modules = true\n",
                   "blacklist irdma\n");
    json p = rig.problem("module-blacklisted");
    INFO(rig.problems().dump() << "\n" << rig.daemon->log());
    REQUIRE(p.is_object());
    CHECK(p["Severity"] == "warning");
    const std::string text = p["Text"];
    CHECK(text.find("irdma") != std::string::npos);
    CHECK(text.find("blacklist") != std::string::npos);
    CHECK(rig.problem("module-load-failed").is_null());
    CHECK(rig.attempts("irdma") == 0);
    CHECK(rig.daemon->stop() == 0);
}

TEST_CASE("modules: a module the module directory does not have is module-not-found", "[modules]") {
    ModulesRig rig("constructed-irdma-unbound", {}, "[daemon]\nload_modules = true\n");
    json p = rig.problem("module-not-found");
    INFO(rig.problems().dump() << "\n" << rig.daemon->log());
    REQUIRE(p.is_object());
    const std::string text = p["Text"];
    CHECK(text.find(std::string(": ") + std::strerror(ENOENT) +
                    " (not in the index of the module directory ") != std::string::npos);
    // The directory searched: the rig's --module-dir, which depmod built for kernel 9.9.9.
    CHECK(text.find("/root/lib/modules/9.9.9: is the package of this kernel's modules "
                    "installed?") != std::string::npos);
    CHECK(rig.daemon->stop() == 0);
    // libkmod's own "could not find module by name='irdma'" goes to rdmad's debug log, not
    // beside rdmad's report on stderr (a new user saw the same failure twice).
    CHECK(rig.daemon->log().find("kmod_module_insert_module") == std::string::npos);
}

TEST_CASE("modules: an empty or relative --modules-load-dir, --module-dir or --modprobe-dir is a "
          "usage error (exit 2) naming the option, before anything is written",
          "[modules]") {
    const std::string rdmad = env_or_fail("RDMAD");
    for (const std::string option : {"--modules-load-dir", "--module-dir", "--modprobe-dir"})
        for (const std::string value : {"", "etc/modules-load.d"}) {
            const auto r = run_program({rdmad, option + "=" + value});
            INFO(option << "=" << value << "\nstderr: " << r.err);
            CHECK(r.status == 2);
            CHECK(r.err ==
                  "rdmad: " + option + " takes an absolute directory, not '" + value + "'\n");
        }
}

TEST_CASE("modules: load_modules off (the default) loads nothing", "[modules]") {
    ModulesRig rig("constructed-irdma-unbound", {"irdma"}, "");
    CHECK(rig.problems() == json::array());
    CHECK(rig.loaded() == json::array());
    CHECK(rig.attempts("irdma") == 0);
    CHECK(rig.daemon->stop() == 0);
}

TEST_CASE("modules: [daemon] modules loads rdma_ucm on a host with an RDMA device, with the "
          "kernel's error when it refuses",
          "[modules]") {
    // constructed-irdma-iwarp: rdmap59s0f0 served by irdma; no /sys/module/rdma_ucm.
    ModulesRig rig("constructed-irdma-iwarp", {"rdma_ucm"},
                   "[daemon]\nload_modules = true\nmodules = [\"rdma_ucm\"]\n");
    json p = rig.problem("module-load-failed");
    INFO(rig.problems().dump() << "\n" << rig.daemon->log());
    REQUIRE(p.is_object());
    const std::string text = p["Text"];
    const std::string error = std::strerror(rig.errno_expected);
    CHECK(text.find("rdma_ucm") != std::string::npos);
    CHECK(text.find(": " + error) != std::string::npos);
    CHECK(rig.daemon->stop() == 0);
}

TEST_CASE("modules: persist_modules writes rdmad's modules-load.d file once and does not "
          "rewrite it when it says the same",
          "[modules]") {
    ModulesRig rig("constructed-irdma-unbound", {"irdma"},
                   "[daemon]\nload_modules = true\npersist_modules = true\n");
    const fs::path file = rig.dir / "modules-load.d" / "rdmad.conf";
    INFO(rig.daemon->log());
    REQUIRE(fs::exists(file));
    const std::string text = read_file(file);
    CHECK(text.substr(text.find("\nirdma")) == "\nirdma\n"); // after the header, one module
    struct stat before {};
    REQUIRE(stat(file.c_str(), &before) == 0);
    CHECK((before.st_mode & 07777) == 0644);
    rig.reload();
    rig.client->manager()
        .callMethod("Reconcile")
        .onInterface("org.rdmad1.Manager")
        .withArguments(false);
    struct stat after {};
    REQUIRE(stat(file.c_str(), &after) == 0);
    CHECK(after.st_ino == before.st_ino); // an atomic rewrite would be a new inode
    // Turned off: rdmad removes its own file.
    write_file(rig.dir / "etc" / "rdmad.conf", exports_off("[daemon]\nload_modules = true\n"));
    rig.reload();
    CHECK_FALSE(fs::exists(file));
    CHECK(rig.daemon->stop() == 0);
}

TEST_CASE("modules: a NIC that goes and comes back gets its module tried once more, and its "
          "problem goes with it",
          "[modules]") {
    ModulesRig rig("constructed-irdma-unbound", {"irdma"}, "[daemon]\nload_modules = true\n");
    const std::string devpath = "/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/net/enp59s0f0";
    // The fixture's own record of enp59s0f0 (tests/fixtures/hosts/constructed-irdma-unbound).
    const std::string record =
        "P: " + devpath +
        "\nE: SUBSYSTEM=net\nE: INTERFACE=enp59s0f0\nE: IFINDEX=1002\n"
        "A: addr_len=6\\n\nA: address=b4:96:91:a1:b2:c0\\n\nA: carrier=1\\n\n"
        "A: dev_port=0\\n\nL: device=../../../0000:3b:00.0\n"
        "A: ifindex=1002\\n\nA: iflink=1002\\n\nA: mtu=1500\\n\n"
        "A: operstate=up\\n\nA: type=1\\n\n\n";
    INFO(rig.daemon->log());
    REQUIRE(rig.attempts("irdma") == 1);
    const auto eventually = [](const std::function<bool()>& pred) {
        for (int i = 0; i < 500 && !pred(); ++i)
            std::this_thread::sleep_for(20ms);
        return pred();
    };
    rig.testbed->uevent("/sys" + devpath, "remove");
    rig.testbed->remove("/sys" + devpath);
    CHECK(eventually([&] { return rig.problem("module-load-failed").is_null(); }));
    rig.testbed->add(record);
    rig.testbed->uevent("/sys" + devpath, "add");
    CHECK(eventually([&] { return rig.attempts("irdma") == 2; }));
    CHECK(rig.problem("module-load-failed").is_object());
    CHECK(rig.daemon->stop() == 0);
}

TEST_CASE("modules: persist_modules does not list a module the module directory does not have",
          "[modules]") {
    // irdma is not in the rig's module directory: tried, module-not-found, and not written to
    // rdmad's modules-load.d file, where systemd-modules-load would fail on it at every boot.
    ModulesRig rig("constructed-irdma-unbound", {},
                   "[daemon]\nload_modules = true\npersist_modules = true\n");
    INFO(rig.daemon->log());
    REQUIRE(rig.problem("module-not-found").is_object());
    CHECK_FALSE(fs::exists(rig.dir / "modules-load.d" / "rdmad.conf"));
    CHECK(rig.daemon->stop() == 0);
}
