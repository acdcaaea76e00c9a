// SPDX-License-Identifier: MIT
//
// Unit tests for [daemon] load_modules (daemon/reconcile/settings/kernel_modules.cpp): which
// module for which NIC, the modprobe.d blacklist honoured, the user-space access modules of
// [daemon] modules, and rdmad's modules-load.d file (daemon/actuators/kmod_loader.hpp).
// NICs are the fixture hosts' (tests/fixtures/make-constructed.py): an Intel E810 8086:1593 at
// 0000:3b:00.0 bound to ice whose auxiliary device ice.iwarp.0 has no driver
// (constructed-irdma-unbound), and a Broadcom BCM57508 14e4:1750 bound to bnxt_en
// (constructed-bnxt-re). NIC -> RDMA module: DOMAIN.md §5 (ice.iwarp -> irdma, bnxt_en ->
// bnxt_re).
#include "actuators/kmod_loader.hpp"
#include "config/config_file.hpp"
#include "inventory/rdma_capability.hpp"
#include "reconcile/plan.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

using namespace rdmad;
using rdmad::test::TempDir;

namespace {

LinkState nic(int32_t index, const std::string& name, const std::string& pci,
              const std::string& driver) {
    LinkState l;
    l.index = index;
    l.name = name;
    l.syspath = "/sys/devices/pci0000:3a/0000:3a:00.0/" + pci + "/net/" + name;
    l.pci_address = pci;
    l.driver = driver;
    l.operstate = "up";
    return l;
}

/// The E810 of constructed-irdma-unbound and the BCM57508 of constructed-bnxt-re (its auxiliary
/// device left out: the companion table), no RDMA device, classified as rdmad's scanner does (no
/// module index: the fallback table).
HostState two_nics_without_rdma() {
    HostState host;
    host.links[1002] = nic(1002, "enp59s0f0", "0000:3b:00.0", "ice");
    host.links[1003] = nic(1003, "ens3f0np0", "0000:41:00.0", "bnxt_en");
    AuxDevice aux{"ice.iwarp.0", "0000:3b:00.0", "", "auxiliary:ice.iwarp"};
    classify_links(host, {aux},
                   {[](const std::string&) { return std::string(); },
                    [](const std::string&) { return false; }});
    return host;
}

ModulePlanInput loading(KernelModulesActual actual = {}) {
    ModulePlanInput in;
    in.load = true;
    in.actual = std::move(actual);
    in.actual.read = true;
    return in;
}

Plan plan_for(const HostState& host, const ModulePlanInput& in) {
    return make_plan(host, {}, {}, {}, in);
}

std::vector<std::string> loads(const Plan& plan) {
    std::vector<std::string> out;
    for (const auto& a : plan.actions)
        if (a.kind == Action::Kind::module_load)
            out.push_back(a.value + "@" + a.netdev);
    return out;
}

const Action* file_action(const Plan& plan) {
    for (const auto& a : plan.actions)
        if (a.kind == Action::Kind::modules_load_file ||
            a.kind == Action::Kind::modules_load_file_remove)
            return &a;
    return nullptr;
}

DeviceState an_rdma_device() {
    DeviceState d;
    d.name = "rdmap59s0f0";
    d.syspath = "/sys/class/infiniband/rdmap59s0f0";
    return d;
}

} // namespace

TEST_CASE("load_modules loads the RDMA driver each NIC without one needs: irdma for the E810, "
          "bnxt_re for the BCM57508") {
    const HostState host = two_nics_without_rdma();
    REQUIRE(host.links.at(1002).rdma_module == "irdma");
    REQUIRE(host.links.at(1003).rdma_module == "bnxt_re");
    const Plan plan = plan_for(host, loading());
    CHECK(loads(plan) == std::vector<std::string>{"bnxt_re@ens3f0np0", "irdma@enp59s0f0"});
    CHECK(plan.problems.count("") == 0);
    CHECK(file_action(plan) == nullptr); // persist_modules is off and there is no file
}

TEST_CASE("two NICs that need the same module load it once") {
    HostState host = two_nics_without_rdma();
    host.links[1004] = nic(1004, "enp59s0f1", "0000:3b:00.1", "ice");
    AuxDevice a0{"ice.iwarp.0", "0000:3b:00.0", "", "auxiliary:ice.iwarp"};
    AuxDevice a1{"ice.iwarp.1", "0000:3b:00.1", "", "auxiliary:ice.iwarp"};
    classify_links(host, {a0, a1}, {{}, {}});
    CHECK(loads(plan_for(host, loading())) ==
          std::vector<std::string>{"bnxt_re@ens3f0np0", "irdma@enp59s0f0,enp59s0f1"});
}

TEST_CASE("a module a modprobe.d blacklist line names is not loaded, and a problem says so") {
    KernelModulesActual actual;
    actual.blacklisted = {"irdma"};
    Plan plan = plan_for(two_nics_without_rdma(), loading(actual));
    CHECK(loads(plan) == std::vector<std::string>{"bnxt_re@ens3f0np0"});
    REQUIRE(plan.problems[""].size() == 1);
    const Problem& p = plan.problems[""][0];
    CHECK(p.code == "module-blacklisted");
    CHECK(p.severity == "warning");
    CHECK_THAT(p.text, Catch::Matchers::Contains("irdma") &&
                           Catch::Matchers::Contains("enp59s0f0") &&
                           Catch::Matchers::Contains("blacklist"));
}

TEST_CASE("with load_modules off nothing is loaded, whatever the NICs need") {
    ModulePlanInput in = loading();
    in.load = false;
    in.modules = {"ib_umad"};
    HostState host = two_nics_without_rdma();
    host.devices["/sys/class/infiniband/rdmap59s0f0"] = an_rdma_device();
    CHECK(plan_for(host, in).actions.empty());
}

TEST_CASE("a plan whose modules were not read does nothing with them") {
    ModulePlanInput in;
    in.load = true; // but actual.read is false: a plan for some devices only
    CHECK(plan_for(two_nics_without_rdma(), in).actions.empty());
}

TEST_CASE("a NIC whose module is loaded but not bound gets no second load") {
    KernelModulesActual actual;
    actual.loaded = {"irdma"};
    CHECK(loads(plan_for(two_nics_without_rdma(), loading(actual))) ==
          std::vector<std::string>{"bnxt_re@ens3f0np0"});
}

TEST_CASE("[daemon] modules loads the access modules that are not loaded while an RDMA device "
          "is present") {
    HostState host;
    ModulePlanInput in = loading();
    in.modules = {"ib_umad", "rdma_ucm"};
    in.actual.loaded = {"rdma_ucm"};
    CHECK(loads(plan_for(host, in)).empty()); // no RDMA device: nothing to use them on
    host.devices["/sys/class/infiniband/rdmap59s0f0"] = an_rdma_device();
    CHECK(loads(plan_for(host, in)) == std::vector<std::string>{"ib_umad@"});
    in.actual.blacklisted = {"ib_umad"};
    const Plan plan = plan_for(host, in);
    CHECK(loads(plan).empty());
    REQUIRE(plan.problems.count(""));
    CHECK(plan.problems.at("")[0].code == "module-blacklisted");
}

TEST_CASE("persist_modules writes the modules to load, and not again when the file says so") {
    ModulePlanInput in = loading();
    in.persist = true;
    const HostState host = two_nics_without_rdma();
    const Plan first = plan_for(host, in);
    const Action* write = file_action(first);
    REQUIRE(write);
    CHECK(write->kind == Action::Kind::modules_load_file);
    CHECK(write->modules == std::vector<std::string>{"bnxt_re", "irdma"});
    in.actual.file = std::vector<std::string>{"bnxt_re", "irdma"};
    CHECK(file_action(plan_for(host, in)) == nullptr);
}

TEST_CASE("persist_modules does not list a module the module directory does not have (it is "
          "still tried, and module-not-found says why)") {
    ModulePlanInput in = loading();
    in.persist = true;
    in.actual.absent = {"bnxt_re"}; // this kernel's modules have no bnxt_re
    const Plan plan = plan_for(two_nics_without_rdma(), in);
    const Action* write = file_action(plan);
    REQUIRE(write);
    CHECK(write->modules == std::vector<std::string>{"irdma"});
    CHECK(loads(plan) == std::vector<std::string>{"bnxt_re@ens3f0np0", "irdma@enp59s0f0"});
    in.actual.absent = {"bnxt_re", "irdma"}; // neither: no file at all
    CHECK(file_action(plan_for(two_nics_without_rdma(), in)) == nullptr);
}

TEST_CASE("a module the file lists stays there once loaded (its NIC is then served), and goes "
          "when it is neither loaded nor needed") {
    ModulePlanInput in = loading();
    in.persist = true;
    HostState served; // irdma loaded, the E810 has its RDMA device: no link needs a module
    served.links[1002] = nic(1002, "enp59s0f0", "0000:3b:00.0", "ice");
    in.actual.file = std::vector<std::string>{"irdma"};
    in.actual.loaded = {"irdma"};
    CHECK(file_action(plan_for(served, in)) == nullptr);
    in.actual.loaded.clear(); // the NIC is gone and irdma with it
    const Plan plan = plan_for(served, in);
    const Action* remove = file_action(plan);
    REQUIRE(remove);
    CHECK(remove->kind == Action::Kind::modules_load_file_remove);
}

TEST_CASE("rdmad's modules-load.d file goes when persist_modules or load_modules is off") {
    for (const bool load : {false, true}) {
        ModulePlanInput in = loading();
        in.load = load;
        in.persist = false;
        in.actual.file = std::vector<std::string>{"irdma"};
        const Plan plan = plan_for(two_nics_without_rdma(), in);
        const Action* remove = file_action(plan);
        REQUIRE(remove);
        CHECK(remove->kind == Action::Kind::modules_load_file_remove);
    }
}

TEST_CASE("the modules-load.d file is written atomically, one module a line, and reads back") {
    TempDir dir;
    write_modules_load(dir.path.string(), {"bnxt_re", "irdma"});
    const std::string path = modules_load_path(dir.path.string());
    CHECK(path == dir.path.string() + "/rdmad.conf");
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(parse_modules_load_text(text) == std::vector<std::string>{"bnxt_re", "irdma"});
    CHECK(text.substr(text.size() - 14) == "bnxt_re\nirdma\n");
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
    // Nothing else is left in the directory (the temporary file was renamed over).
    size_t entries = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path)) {
        (void)e;
        ++entries;
    }
    CHECK(entries == 1);
    remove_modules_load(dir.path.string());
    CHECK_FALSE(std::filesystem::exists(path));
    remove_modules_load(dir.path.string()); // a missing file is fine
}

TEST_CASE("modules-load.d comments, blank lines and spaces are read as systemd-modules-load "
          "reads them") {
    CHECK(parse_modules_load_text("# c\n; c\n\n  irdma \t\nib_umad") ==
          std::vector<std::string>{"irdma", "ib_umad"});
}

TEST_CASE("[daemon] load_modules, modules and persist_modules parse, and a bad value says where") {
    auto parsed = parse_config_text("[daemon]\nload_modules = true\npersist_modules = true\n"
                                    "modules = [\"ib_umad\", \"rdma_ucm\", \"ib_umad\"]\n",
                                    "f.conf");
    REQUIRE(std::holds_alternative<ConfigFile>(parsed));
    const ConfigFile& f = std::get<ConfigFile>(parsed);
    CHECK(f.load_modules == true);
    CHECK(f.persist_modules == true);
    CHECK(f.modules == std::vector<std::string>{"ib_umad", "rdma_ucm"});
    DesiredConfig merged;
    CHECK_FALSE(merged.modules.load); // off unless asked
    merge_config(merged, ConfigFile(f), "f.conf");
    CHECK(merged.modules == ModulesConfig{true, {"ib_umad", "rdma_ucm"}, true});

    auto bad = parse_config_text("[daemon]\nmodules = [\"irdma\"]\n", "f.conf");
    REQUIRE(std::holds_alternative<ConfigError>(bad));
    CHECK(std::get<ConfigError>(bad).to_string() ==
          "f.conf:2:12: unknown module \"irdma\" (expected \"ib_uverbs\", \"rdma_ucm\", "
          "\"ib_umad\" or \"ib_ipoib\")");
    auto wrong = parse_config_text("[daemon]\nload_modules = \"yes\"\n", "f.conf");
    REQUIRE(std::holds_alternative<ConfigError>(wrong));
    CHECK(std::get<ConfigError>(wrong).to_string() ==
          "f.conf:2:16: load_modules must be true or false, not a string");
}
