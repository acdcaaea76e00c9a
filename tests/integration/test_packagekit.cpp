// SPDX-License-Identifier: MIT
//
// Missing verbs providers installed through PackageKit (issue #27): the real packagekitd of
// Debian's packagekit with its dummy and test_fail backends, on the test's private system bus,
// with dbusmock's polkit. The dummy backend (PackageKit 1.2.6 backends/dummy/
// pk-backend-dummy.c) resolves a fixed set of names: "libawesome" to
// "libawesome;42;i386;debian", which it installs with only-trusted (in about 10 s), and
// "vips-doc", which it refuses with only-trusted ("Can't install as untrusted"). test_fail's
// Resolve finishes with no package. `[daemon] provider_package` makes the host's
// ProviderPackage one of those names.
#include "harness.hpp"

#include <catch2/catch.hpp>

#include <sdbus-c++/sdbus-c++.h>

#include <algorithm>
#include <thread>

using namespace it;
using namespace std::chrono_literals;

namespace {

constexpr const char* kHost = "procfs-hfi1-mlx4-mlx5"; // mlx4, mlx5 and hfi1 providers
constexpr const char* kPackagekitd = "/usr/libexec/packagekitd";
constexpr const char* kMlx5 = "/sys/devices/pci0000:03/0000:03:00.0/0000:04:00.0/infiniband/mlx5_0";

bool has_code(const json& device, const std::string& code) {
    const auto codes = problem_codes(device);
    return std::find(codes.begin(), codes.end(), code) != codes.end();
}

/// The text of the device's problem `code`, "" when it has none.
std::string problem_text(const json& device, const std::string& code) {
    for (const auto& p : device["Problems"])
        if (p.value("Code", "") == code)
            return p.value("Text", "");
    return "";
}

bool name_owned(const std::string& name) {
    auto conn = sdbus::createSystemBusConnection();
    auto p = sdbus::createProxy(*conn, "org.freedesktop.DBus", "/org/freedesktop/DBus");
    bool owned = false;
    p->callMethod("NameHasOwner")
        .onInterface("org.freedesktop.DBus")
        .withArguments(name)
        .storeResultsTo(owned);
    return owned;
}

bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
        if (pred())
            return true;
        std::this_thread::sleep_for(50ms);
    }
    return pred();
}

/// dbus-send on the private bus as root; REQUIREs nothing.
RunResult send(const std::string& address, const std::string& dest, const std::string& path,
               const std::string& method, const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv = {
        "dbus-send", "--bus=" + address, "--print-reply", "--dest=" + dest, path, method};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv);
}

/// One host with the mlx5 provider missing, its configuration, PackageKit (`backend`,
/// "fake:MODE" for fake_packagekit.py MODE, or none)
/// and dbusmock's polkit allowing `allowed`, then rdmad (with `args` besides the test's own).
struct PkRig {
    PrivateBus bus;
    Testbed testbed{kHost};
    TempDir dir{"rdmad-it-pk"};
    std::unique_ptr<Background> monitor, polkitd, packagekitd;
    std::unique_ptr<DaemonProcess> daemon;
    std::unique_ptr<Client> client;

    PkRig(const std::string& conf, const std::string& backend,
          const std::vector<std::string>& allowed, const std::vector<std::string>& args = {}) {
        fs::create_directories(dir / "etc");
        fs::create_directories(dir / "libibverbs.d");
        fs::create_directories(dir / "lib");
        write_file(dir / "etc" / "rdmad.conf", conf);
        write_file(dir / "os-release", "ID=debian\nVERSION_ID=\"12\"\n");
        for (const char* p : {"mlx4", "hfi1verbs"})
            add_provider(p);
        // Every InstallPackages call PackageKit receives, with its package ids, and every
        // Cancel.
        monitor = std::make_unique<Background>(std::vector<std::string>{
            "dbus-monitor", "--address", bus.address(),
            "type='method_call',interface='org.freedesktop.PackageKit.Transaction',"
            "member='InstallPackages'",
            "type='method_call',interface='org.freedesktop.PackageKit.Transaction',"
            "member='Cancel'"});
        polkitd = std::make_unique<Background>(std::vector<std::string>{
            "/usr/bin/python3", "-m", "dbusmock", "--template", "polkitd"});
        REQUIRE(eventually([] { return name_owned("org.freedesktop.PolicyKit1"); }, 20s));
        allow(allowed);
        if (backend.rfind("fake:", 0) == 0) {
            // fake_packagekit.py MODE: a PackageKit that misbehaves.
            packagekitd = std::make_unique<Background>(
                std::vector<std::string>{"/usr/bin/python3", env_or_fail("FAKE_PACKAGEKIT"),
                                         backend.substr(5), (dir / "finish").string()});
            INFO(packagekitd->err());
            REQUIRE(eventually([] { return name_owned("org.freedesktop.PackageKit"); }, 30s));
        } else if (!backend.empty()) {
            // --keep-environment: packagekitd clears its environment at start, the private
            // bus's address included.
            packagekitd = std::make_unique<Background>(std::vector<std::string>{
                kPackagekitd, "--backend", backend, "--disable-timer", "--keep-environment"});
            INFO(packagekitd->err());
            REQUIRE(eventually([] { return name_owned("org.freedesktop.PackageKit"); }, 30s));
        }
        std::vector<std::string> argv = {"--verbs-config-dir=" + (dir / "libibverbs.d").string(),
                                         "--provider-dir=" + (dir / "lib").string(),
                                         "--provider-abi=99",
                                         "--os-release=" + (dir / "os-release").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        daemon = std::make_unique<DaemonProcess>(
            DaemonOptions{argv, {}}, std::function<void()>{},
            std::map<std::string, std::string>{
                {"CONFIGURATION_DIRECTORY", (dir / "etc").string()}});
        client = std::make_unique<Client>();
    }

    /// What rdma-core's package installs for provider `p` (rdmad is given ABI 99).
    void add_provider(const std::string& p) {
        write_file(dir / "libibverbs.d" / (p + ".driver"), "driver " + p + "\n");
        write_file(dir / "lib" / ("lib" + p + "-rdmav99.so"), "");
    }

    void allow(const std::vector<std::string>& actions) {
        std::string arg = "array:string:";
        for (size_t i = 0; i < actions.size(); ++i)
            arg += (i ? "," : "") + actions[i];
        auto res = send(bus.address(), "org.freedesktop.PolicyKit1",
                        "/org/freedesktop/PolicyKit1/Authority",
                        "org.freedesktop.DBus.Mock.SetAllowed", {arg});
        INFO(res.err);
        REQUIRE(res.status == 0);
    }

    json mlx5() {
        json doc = client->describe();
        for (auto& d : doc["Devices"])
            if (d.value("Name", "") == "mlx5_0")
                return d;
        FAIL("no mlx5_0");
        return {};
    }

    /// The package ids of every InstallPackages PackageKit was sent so far, in order.
    std::vector<std::string> installs() const {
        std::vector<std::string> ids;
        std::istringstream in(monitor->out());
        bool in_call = false;
        for (std::string line; std::getline(in, line);) {
            if (!line.empty() && line[0] != ' ') { // a message's header line
                in_call = line.rfind("method call", 0) == 0 &&
                          line.find("member=InstallPackages") != std::string::npos;
                continue;
            }
            auto q = line.find("string \"");
            if (in_call && q != std::string::npos)
                ids.push_back(line.substr(q + 8, line.rfind('"') - q - 8));
        }
        return ids;
    }

    /// The object paths of every Transaction.Cancel() PackageKit was sent so far, in order.
    std::vector<std::string> cancels() const {
        std::vector<std::string> paths;
        std::istringstream in(monitor->out());
        for (std::string line; std::getline(in, line);) {
            if (line.rfind("method call", 0) != 0 ||
                line.find("member=Cancel") == std::string::npos)
                continue;
            auto at = line.find(" path=");
            if (at != std::string::npos)
                paths.push_back(line.substr(at + 6, line.find(';', at) - at - 6));
        }
        return paths;
    }

    RunResult install_providers() {
        return send(bus.address(), "org.rdmad1", "/org/rdmad1",
                    "org.rdmad1.Manager.InstallProviders");
    }

    ~PkRig() {
        if (daemon) {
            record_log("rdmad", daemon->log());
            daemon->stop();
        }
        if (packagekitd)
            record_log("packagekitd", packagekitd->err() + packagekitd->out());
    }
};

const std::string kInstallAction = "org.freedesktop.packagekit.package-install";

} // namespace

TEST_CASE("packagekit: auto installs the missing provider's package once, and the provider "
          "shows installed when its files appear",
          "[packagekit]") {
    PkRig r("[daemon]\ninstall_providers = \"auto\"\nprovider_package = \"libawesome\"\n", "dummy",
            {kInstallAction});
    // The dummy backend takes about 10 s: rdmad shows the install while it runs.
    REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-installing"); }, 20s));
    json d = r.mlx5();
    CHECK(d["ProviderInstalled"] == false);
    CHECK(d["ProviderPackage"] == "libawesome");
    CHECK(problem_text(d, "provider-installing") ==
          "PackageKit is installing libawesome for verbs provider mlx5");
    // mlx4 and hfi1 have their providers: nothing about them.
    const json doc = r.client->describe();
    for (auto& dev : doc["Devices"])
        if (dev.value("Name", "") != "mlx5_0")
            CHECK_FALSE(has_code(dev, "provider-installing"));
    r.add_provider("mlx5"); // what the package installs, before PackageKit says Finished
    REQUIRE(eventually([&] { return r.mlx5()["ProviderInstalled"] == true; }, 40s));
    d = r.mlx5();
    CHECK_FALSE(has_code(d, "provider-missing"));
    CHECK_FALSE(has_code(d, "provider-installing"));
    CHECK_FALSE(has_code(d, "provider-install-failed"));
    // Exactly the package Resolve gave for "libawesome", once.
    CHECK(r.installs() == std::vector<std::string>{"libawesome;42;i386;debian"});
}

TEST_CASE("packagekit: ask installs nothing until an authorized InstallProviders; an "
          "unauthorized caller gets AccessDenied",
          "[packagekit][polkit]") {
    PkRig r("[daemon]\nprovider_package = \"libawesome\"\n", "dummy", {kInstallAction});
    // "ask" is the default: the provider is reported missing, nothing is installed.
    std::this_thread::sleep_for(1s);
    json d = r.mlx5();
    CHECK(has_code(d, "provider-missing"));
    CHECK_FALSE(has_code(d, "provider-installing"));
    CHECK(r.installs().empty());
    CHECK(r.client->describe()["InstallProvidersMode"] == "ask");

    // polkit does not allow org.rdmad1.install-providers: AccessDenied, nothing installed.
    RunResult res = r.install_providers();
    INFO(res.out << res.err);
    CHECK(res.status != 0);
    CHECK(res.err.find("org.freedesktop.DBus.Error.AccessDenied") != std::string::npos);
    CHECK(res.err.find("org.rdmad1.install-providers") != std::string::npos);
    std::this_thread::sleep_for(500ms);
    CHECK(r.installs().empty());
    CHECK_FALSE(has_code(r.mlx5(), "provider-installing"));

    // rdmactl says which action was refused, and exits 1.
    res = run_program({env_or_fail("RDMACTL"), "install-providers"});
    INFO(res.out << res.err);
    CHECK(res.status == 1);
    CHECK(res.err.rfind("rdmactl: not authorized (polkit action org.rdmad1.install-providers): ",
                        0) == 0);
    CHECK(r.installs().empty());

    // Allowed: it returns the package it started, which PackageKit installs once.
    r.allow({kInstallAction, "org.rdmad1.install-providers"});
    res = run_program({env_or_fail("RDMACTL"), "install-providers"});
    INFO(res.out << res.err);
    REQUIRE(res.status == 0);
    CHECK(res.out == "libawesome\n\nPackageKit is installing it ('rdmactl doctor' shows how it "
                     "ends).\n");
    CHECK(has_code(r.mlx5(), "provider-installing"));
    // Asked again while it runs: the same package, not a second install.
    res = r.install_providers();
    INFO(res.out << res.err);
    REQUIRE(res.status == 0);
    CHECK(res.out.find("string \"libawesome\"") != std::string::npos);
    r.add_provider("mlx5");
    REQUIRE(eventually([&] { return r.mlx5()["ProviderInstalled"] == true; }, 40s));
    CHECK_FALSE(has_code(r.mlx5(), "provider-installing"));
    CHECK(r.installs() == std::vector<std::string>{"libawesome;42;i386;debian"});
}

TEST_CASE("packagekit: install_providers = never refuses InstallProviders", "[packagekit]") {
    PkRig r("[daemon]\ninstall_providers = \"never\"\nprovider_package = \"libawesome\"\n", "dummy",
            {kInstallAction, "org.rdmad1.install-providers"});
    // What rdmad-notify reads before it offers the action (Manager.InstallProvidersMode).
    CHECK(r.client->describe()["InstallProvidersMode"] == "never");
    RunResult res = r.install_providers();
    INFO(res.out << res.err);
    CHECK(res.status != 0);
    CHECK(res.err.find("org.rdmad1.Error.NotSupported") != std::string::npos);
    res = run_program({env_or_fail("RDMACTL"), "install-providers"});
    INFO(res.out << res.err);
    CHECK(res.status == 1);
    // The refusal names the file, the setting that allows it and the command by hand (the
    // rig's host is Debian; its missing provider's package is libawesome).
    CHECK(res.err == "rdmactl: install_providers is \"never\" (rdmad.conf): set \"ask\" or "
                     "\"auto\" to allow this, or run apt install libawesome\n");
    std::this_thread::sleep_for(500ms);
    CHECK(r.installs().empty());
    CHECK(has_code(r.mlx5(), "provider-missing"));
}

TEST_CASE("packagekit: a refused install is a problem with the backend's text and the command, "
          "tried again only after a Reload or a hotplug",
          "[packagekit]") {
    // The dummy backend refuses vips-doc with only-trusted.
    PkRig r("[daemon]\ninstall_providers = \"auto\"\nprovider_package = \"vips-doc\"\n", "dummy",
            {kInstallAction, "org.rdmad1.configure"});
    REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-install-failed"); }, 30s));
    CHECK(problem_text(r.mlx5(), "provider-install-failed") ==
          "PackageKit could not install vips-doc: Can't install as untrusted; "
          "run apt install vips-doc");
    CHECK(r.installs() == std::vector<std::string>{"vips-doc;7.12.4-2.fc8;noarch;linva"});
    // No retry loop: later passes (a change event re-reads the device) try nothing.
    r.testbed.uevent(kMlx5, "change");
    std::this_thread::sleep_for(2s);
    CHECK(r.installs().size() == 1);
    CHECK(has_code(r.mlx5(), "provider-install-failed"));
    // A Reload is the next attempt.
    RunResult res = send(r.bus.address(), "org.rdmad1", "/org/rdmad1", "org.rdmad1.Manager.Reload");
    INFO(res.out << res.err);
    REQUIRE(res.status == 0);
    REQUIRE(eventually([&] { return r.installs().size() == 2; }, 30s));
    REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-install-failed"); }, 30s));
    // So is a hotplug (the device added again, as a driver reload does).
    r.testbed.uevent(kMlx5, "add");
    REQUIRE(eventually([&] { return r.installs().size() == 3; }, 30s));
    REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-install-failed"); }, 30s));
    std::this_thread::sleep_for(1s);
    CHECK(r.installs().size() == 3);
}

TEST_CASE("packagekit: test_fail resolves nothing; no PackageKit at all: the command to run",
          "[packagekit]") {
    SECTION("test_fail backend") {
        PkRig r("[daemon]\ninstall_providers = \"auto\"\nprovider_package = \"libawesome\"\n",
                "test_fail", {kInstallAction});
        REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-install-failed"); }, 30s));
        CHECK(problem_text(r.mlx5(), "provider-install-failed") ==
              "PackageKit could not install libawesome: PackageKit knows no package libawesome "
              "to install; run apt install libawesome");
        CHECK(r.installs().empty());
    }
    SECTION("PackageKit absent") {
        PkRig r("[daemon]\ninstall_providers = \"auto\"\nprovider_package = \"libawesome\"\n", "",
                {});
        REQUIRE(eventually([&] { return has_code(r.mlx5(), "packagekit-missing"); }, 30s));
        const std::string text = problem_text(r.mlx5(), "packagekit-missing");
        INFO(text);
        CHECK(text.rfind("PackageKit is not on the system bus, so rdmad cannot install "
                         "libawesome (",
                         0) == 0);
        CHECK(text.find("): run apt install libawesome") != std::string::npos);
    }
}

TEST_CASE("packagekit: signals from anyone but PackageKit's owner, or for a name not asked, are "
          "ignored; a second Finished changes nothing",
          "[packagekit]") {
    // fake_packagekit.py spoof: an intruder sends rdmad's connection Package
    // "libawesome;666;all;evil" and Finished(success) for the Resolve transaction before the
    // owner resolves libawesome to "libawesome;42;i386;debian" (with an "other" package too).
    PkRig r("[daemon]\ninstall_providers = \"auto\"\nprovider_package = \"libawesome\"\n",
            "fake:spoof", {});
    // The fake's InstallPackages succeeds and installs no file: the provider is still missing.
    REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-install-failed"); }, 30s));
    CHECK(problem_text(r.mlx5(), "provider-install-failed") ==
          "PackageKit installed libawesome, but verbs provider mlx5 is still missing; run apt "
          "install libawesome");
    CHECK(r.installs() == std::vector<std::string>{"libawesome;42;i386;debian"});
    CHECK(r.daemon->log().find("ignored a PackageKit Package signal from :") != std::string::npos);
    std::this_thread::sleep_for(1s);
    CHECK(r.installs().size() == 1);
}

TEST_CASE("packagekit: PackageKit leaving the bus mid-transaction ends the install as failed at "
          "once",
          "[packagekit]") {
    PkRig r("[daemon]\ninstall_providers = \"auto\"\nprovider_package = \"libawesome\"\n",
            "fake:vanish", {});
    // The fake exits 0.1 s into Resolve; without NameOwnerChanged rdmad would wait its 30
    // minute bound.
    REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-install-failed"); }, 20s));
    CHECK(problem_text(r.mlx5(), "provider-install-failed") ==
          "PackageKit could not install libawesome: PackageKit left the bus during the "
          "transaction; run apt install libawesome");
    CHECK(r.installs().empty());
    CHECK(r.daemon->stop() == 0); // a clean SIGTERM exit: nothing crashed
}

TEST_CASE("packagekit: a Finished signal of the wrong signature ends the install as failed",
          "[packagekit]") {
    // fake_packagekit.py badsig: Package(s) and Finished(s), from PackageKit's owner itself.
    PkRig r("[daemon]\ninstall_providers = \"auto\"\nprovider_package = \"libawesome\"\n",
            "fake:badsig", {});
    REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-install-failed"); }, 20s));
    CHECK(problem_text(r.mlx5(), "provider-install-failed") ==
          "PackageKit could not install libawesome: PackageKit's Finished signal is not (uu) but "
          "(s); run apt install libawesome");
    CHECK(r.installs().empty());
    CHECK(r.daemon->stop() == 0);
}

TEST_CASE("packagekit: InstallProviders called 20 times at once, by callers that leave before "
          "the reply, and during a Reload, installs the package once",
          "[packagekit][polkit]") {
    PkRig r("[daemon]\nprovider_package = \"libawesome\"\n", "dummy",
            {kInstallAction, "org.rdmad1.install-providers", "org.rdmad1.configure"});
    std::vector<std::thread> callers;
    for (int i = 0; i < 20; ++i)
        callers.emplace_back([&] {
            // Without --print-reply dbus-send exits once the call is sent.
            run_program({"dbus-send", "--bus=" + r.bus.address(), "--dest=org.rdmad1",
                         "--type=method_call", "/org/rdmad1",
                         "org.rdmad1.Manager.InstallProviders"});
        });
    callers.emplace_back(
        [&] { send(r.bus.address(), "org.rdmad1", "/org/rdmad1", "org.rdmad1.Manager.Reload"); });
    for (auto& t : callers)
        t.join();
    RunResult res = r.install_providers();
    INFO(res.out << res.err);
    REQUIRE(res.status == 0);
    CHECK(res.out.find("string \"libawesome\"") != std::string::npos);
    REQUIRE(eventually([&] { return r.installs().size() == 1; }, 20s));
    r.add_provider("mlx5");
    REQUIRE(eventually([&] { return r.mlx5()["ProviderInstalled"] == true; }, 40s));
    CHECK(r.installs() == std::vector<std::string>{"libawesome;42;i386;debian"});
    CHECK(r.daemon->stop() == 0);
}

TEST_CASE("packagekit: a PackageKit that never answers CreateTransaction ends the install as "
          "failed after sd-bus's 25 s call timeout, once",
          "[packagekit]") {
    // fake_packagekit.py silent. sd-bus's default method call timeout is 25 s
    // (sd_bus_call_method_async(3) with usec 0; its synthetic error says "Method call timed out").
    PkRig r("[daemon]\ninstall_providers = \"auto\"\nprovider_package = \"libawesome\"\n",
            "fake:silent", {});
    std::this_thread::sleep_for(2s);
    CHECK(has_code(r.mlx5(), "provider-installing")); // the loop still answers meanwhile
    REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-install-failed"); }, 45s));
    CHECK(problem_text(r.mlx5(), "provider-install-failed") ==
          "PackageKit could not install libawesome: PackageKit: Method call timed out; run apt "
          "install libawesome");
    CHECK(r.installs().empty());
    CHECK(r.daemon->stop() == 0);
}

TEST_CASE("packagekit: an install that outlasts --packagekit-timeout is failed and its "
          "transaction cancelled, once",
          "[packagekit]") {
    // fake_packagekit.py hang: Resolve of the first transaction (/t1) never finishes.
    PkRig r("[daemon]\ninstall_providers = \"auto\"\nprovider_package = \"libawesome\"\n",
            "fake:hang", {}, {"--packagekit-timeout=3"});
    REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-installing"); }, 10s));
    CHECK(r.cancels().empty()); // not before the time bound
    REQUIRE(eventually([&] { return has_code(r.mlx5(), "provider-install-failed"); }, 15s));
    CHECK(problem_text(r.mlx5(), "provider-install-failed") ==
          "PackageKit could not install libawesome: PackageKit did not finish the transaction in "
          "time; run apt install libawesome");
    REQUIRE(eventually([&] { return !r.cancels().empty(); }, 5s));
    std::this_thread::sleep_for(1s);
    CHECK(r.cancels() == std::vector<std::string>{"/t1"});
    CHECK(r.installs().empty());
    CHECK(r.daemon->stop() == 0);
}

TEST_CASE("packagekit: the install's Percentage from PackageKit is shown in provider-installing, "
          "a tenth at a time, and an intruder's is not",
          "[packagekit]") {
    // fake_packagekit.py progress: InstallPackages announces Percentage 101 (PackageKit's
    // "unknown"), 40, 45, then an intruder sends rdmad 99; Finished waits for the file.
    PkRig r("[daemon]\ninstall_providers = \"auto\"\nprovider_package = \"libawesome\"\n",
            "fake:progress", {});
    const std::string installing = "PackageKit is installing libawesome for verbs provider mlx5";
    REQUIRE(eventually(
        [&] { return problem_text(r.mlx5(), "provider-installing") == installing + " (40% done)"; },
        20s));
    // 45 is the same tenth as 40, and 99 comes from a connection that is not PackageKit's.
    std::this_thread::sleep_for(1s);
    CHECK(problem_text(r.mlx5(), "provider-installing") == installing + " (40% done)");
    r.add_provider("mlx5");
    write_file(r.dir / "finish", "");
    REQUIRE(eventually([&] { return r.mlx5()["ProviderInstalled"] == true; }, 20s));
    CHECK_FALSE(has_code(r.mlx5(), "provider-installing"));
    CHECK(r.installs() == std::vector<std::string>{"libawesome;42;i386;debian"});
    CHECK(r.daemon->stop() == 0);
}
