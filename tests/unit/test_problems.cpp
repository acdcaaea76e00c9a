// SPDX-License-Identifier: MIT
//
// Unit tests for device problem detection (daemon/inventory/problems.hpp). Facts: DOMAIN.md
// §4.1 (libibverbs drops devices without /dev/infiniband/uverbsN), §4.3/§7.6 (silently without
// a provider), §4.4 (packages), §3.2 (port state).
#include "inventory/problems.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace rdmad;
using Catch::Matchers::Contains;

namespace {

PortState port(uint32_t n, const std::string& state, const std::string& phys = "LinkUp") {
    PortState p;
    p.number = n;
    p.state = state;
    p.phys_state = phys;
    p.link_layer = "Ethernet";
    p.transport = "RoCE";
    return p;
}

DeviceState healthy() {
    DeviceState d;
    d.name = "mlx5_0";
    d.node_type = "CA";
    d.pci_address = "0000:3b:00.0";
    d.kernel_driver = "mlx5_core";
    d.provider = "mlx5";
    d.provider_installed = true;
    d.provider_package = "ibverbs-providers";
    d.verbs_device = "/dev/infiniband/uverbs0";
    d.ports.push_back(port(1, "ACTIVE"));
    return d;
}

/// What Device.Problems shows: the doctor's "info" findings (checks without their facts here, which
/// say "unknown") are tested with each check in test_doctor_*.cpp.
std::vector<Problem> serious(std::vector<Problem> ps) {
    ps.erase(std::remove_if(ps.begin(), ps.end(),
                            [](const Problem& p) { return !in_problems_property(p); }),
             ps.end());
    return ps;
}

size_t count_code(const std::vector<Problem>& ps, const std::string& code) {
    return static_cast<size_t>(
        std::count_if(ps.begin(), ps.end(), [&](const Problem& p) { return p.code == code; }));
}

const Problem& find_code(const std::vector<Problem>& ps, const std::string& code) {
    auto it = std::find_if(ps.begin(), ps.end(), [&](const Problem& p) { return p.code == code; });
    REQUIRE(it != ps.end());
    return *it;
}

} // namespace

TEST_CASE("a healthy device (provider installed, uverbs present, ports ACTIVE) has no problems") {
    CHECK(serious(device_problems(healthy())).empty());
}

TEST_CASE("a missing provider is an error whose text names the package to install") {
    auto d = healthy();
    d.provider_installed = false;
    d.provider_package = "ibverbs-providers";
    auto ps = serious(device_problems(d));
    REQUIRE(count_code(ps, "provider-missing") == 1);
    const auto& p = find_code(ps, "provider-missing");
    CHECK(p.severity == "error");
    CHECK_THAT(p.text, Contains("ibverbs-providers"));
    CHECK(count_code(ps, "no-provider") == 0);
}

TEST_CASE("a missing SUSE shared provider names both of its packages") {
    auto d = healthy();
    d.provider_installed = false;
    d.provider_package = "libibverbs libmlx5-1";
    const auto problems = serious(device_problems(d)); // find_code returns into this vector
    const auto& p = find_code(problems, "provider-missing");
    CHECK_THAT(p.text, Contains("libibverbs libmlx5-1"));
}

TEST_CASE("an installed provider (even of an older rdma-core build) raises no provider problem") {
    auto d = healthy();
    d.provider = "mlx4";
    d.provider_installed = true;
    auto ps = serious(device_problems(d));
    CHECK(count_code(ps, "provider-missing") == 0);
    CHECK(count_code(ps, "no-provider") == 0);
    CHECK(ps.empty());
}

TEST_CASE("a device with no rdma-core provider (usNIC) is warned about, not told to install") {
    auto d = healthy();
    d.kernel_driver = "enic";
    d.provider = "";
    d.provider_installed = false;
    d.provider_package = "";
    auto ps = serious(device_problems(d));
    CHECK(count_code(ps, "provider-missing") == 0);
    const auto& p = find_code(ps, "no-provider");
    CHECK(p.severity == "warning");
    CHECK_THAT(p.text, Contains("enic"));
}

TEST_CASE("a device without /dev/infiniband/uverbsN warns that ib_uverbs is missing") {
    auto d = healthy();
    d.verbs_device = "";
    auto ps = serious(device_problems(d));
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "no-verbs-device");
    CHECK(ps[0].severity == "warning");
    CHECK_THAT(ps[0].text, Contains("ib_uverbs"));
}

TEST_CASE("ib_uverbs known not loaded: one problem says so, not a second for the missing verbs "
          "device") {
    // The same fault once (found by a new user: two warnings per device for one module).
    auto d = healthy();
    d.verbs_device = "";
    HostFacts host;
    host.modules = {{"ib_uverbs", "absent", {"/sys/module/ib_uverbs = absent"}}};
    auto ps = serious(device_problems(d, doctor::Facts{nullptr, &host}));
    CHECK(count_code(ps, "no-verbs-device") == 0);
    CHECK(count_code(ps, "module-ib-uverbs-absent") == 1);
    // Loaded (or not known), yet no verbs device: the device's own warning stays.
    host.modules = {{"ib_uverbs", "loaded", {}}};
    ps = serious(device_problems(d, doctor::Facts{nullptr, &host}));
    CHECK(count_code(ps, "no-verbs-device") == 1);
    CHECK(count_code(ps, "module-ib-uverbs-absent") == 0);
}

TEST_CASE("a DOWN port is reported as port-not-active") {
    auto d = healthy();
    d.ports[0] = port(1, "DOWN", "Disabled");
    auto ps = serious(device_problems(d));
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].code == "port-not-active");
    CHECK(ps[0].severity == "warning");
    CHECK_THAT(ps[0].text, Contains("DOWN"));
}

TEST_CASE("each inactive port is one problem; ACTIVE ports are none") {
    auto d = healthy();
    d.ports = {port(1, "ACTIVE"), port(2, "INIT", "LinkUp"), port(3, "DOWN", "Polling")};
    auto ps = serious(device_problems(d));
    CHECK(count_code(ps, "port-not-active") == 2);
    CHECK(ps.size() == 2);
}

TEST_CASE("several problems of one device are all reported") {
    auto d = healthy();
    d.provider_installed = false;
    d.verbs_device = "";
    d.ports[0] = port(1, "DOWN", "Disabled");
    auto ps = serious(device_problems(d));
    CHECK(count_code(ps, "provider-missing") == 1);
    CHECK(count_code(ps, "no-verbs-device") == 1);
    CHECK(count_code(ps, "port-not-active") == 1);
}

TEST_CASE("the doctor's info findings go to ProblemDetails only; its warnings and errors, and "
          "every other problem, to Problems as well") {
    // With no facts (doctor::Facts{}), checks such as the PCIe link and the kernel modules
    // cannot read what they need: they report severity "info" with a code ending in
    // "-unknown" (daemon/doctor/doctor.hpp), never a guess.
    auto d = healthy();
    d.ports[0].state = "DOWN";
    d.ports[0].phys_state = "Polling";
    const auto all = device_problems(d);
    size_t info = 0;
    for (const Problem& p : all) {
        INFO(p.code << " " << p.severity);
        CHECK(p.details_only == (p.severity == "info"));
        CHECK(in_problems_property(p) == (p.severity != "info"));
        info += p.severity == "info";
    }
    CHECK(info > 0);
    CHECK(count_code(serious(all), "port-not-active") == 1); // a warning: in Problems
    // A problem that is not the doctor's (the reconciler's dbus-override, severity info)
    // stays in Problems.
    CHECK(in_problems_property(Problem{"dbus-override", "info", "port 2 type eth set over D-Bus"}));
}
