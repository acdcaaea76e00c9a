// SPDX-License-Identifier: MIT
//
// rdmactl against the real daemon (only when meson knows rdmactl_exe: RDMACTL is set).
#include "harness.hpp"

#include <catch2/catch.hpp>

using namespace it;

namespace {
bool have_rdmactl() {
    if (env_or_empty("RDMACTL").empty()) {
        WARN("rdmactl is not built (no rdmactl_exe in meson): rdmactl checks not run");
        return false;
    }
    return true;
}
} // namespace

TEST_CASE("rdmactl --json status equals Describe(); rdmactl status names every device",
          "[rdmactl]") {
    if (!have_rdmactl())
        return;
    const std::string ctl = env_or_fail("RDMACTL");
    Rig rig("procfs-hfi1-mlx4-mlx5");
    auto r = run_program({ctl, "--json", "status"});
    INFO("stderr: " << r.err);
    CHECK(r.status == 0);
    json parsed;
    REQUIRE_NOTHROW(parsed = json::parse(r.out));
    CHECK(parsed == rig.client->describe());

    auto s = run_program({ctl, "status"});
    INFO("stdout: " << s.out << "\nstderr: " << s.err);
    CHECK(s.status == 0);
    for (auto& d : rig.described["Devices"])
        CHECK(s.out.find(d["Name"].get<std::string>()) != std::string::npos);
    rig.stop_daemon();
}

TEST_CASE("rdmactl without a daemon exits 1 with 'not running'; bad usage exits 2",
          "[rdmactl]") {
    if (!have_rdmactl())
        return;
    const std::string ctl = env_or_fail("RDMACTL");
    PrivateBus bus; // a bus with nobody owning org.rdmad1
    auto r = run_program({ctl, "status"});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("not running") != std::string::npos);

    auto u = run_program({ctl, "bogus"});
    INFO("bogus stdout: " << u.out << "\nstderr: " << u.err);
    CHECK(u.status == 2);
}
