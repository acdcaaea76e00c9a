// SPDX-License-Identifier: MIT
//
// PFC set back after another writer changed it (daemon/reconcile/reconciler.hpp
// pfc_changed(), execute()): one SET per correction, verified by the plan's own read, and a
// netdev changed back more than kMaxPfcCorrections times within kPfcContestUsec is left alone
// and reported as pfc-contested. The DCB answers come from a fake kernel laid out like
// net/dcb/dcbnl.c (fake_dcb_kernel.hpp).
#include "reconcile/reconciler.hpp"

#include "fake_dcb_kernel.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace rdmad;
using rdmad::test::FakeKernel;
namespace fs = std::filesystem;

namespace {

/// The reconciler owns its transport; the test keeps the fake kernel to look at and change.
struct Forward final : dcb::NetlinkTransport {
    explicit Forward(FakeKernel& k) : kernel(k) {}
    FakeKernel& kernel;
    ssize_t send(std::span<const uint8_t> b) override { return kernel.send(b); }
    ssize_t recv(std::span<uint8_t> b) override { return kernel.recv(b); }
    uint32_t port_id() const override { return kernel.port_id(); }
};

struct Rig : rdmad::test::TempDir {
    FakeKernel kernel;
    uint64_t now = 1'000'000;
    Inventory inv;
    std::unique_ptr<Reconciler> r;

    explicit Rig(const std::string& config = "[[rule]]\ndevice = \"mlx5_0\"\npfc_no_drop = [3]\n")
        : TempDir("rdmad-reconciler-pfc") {
        fs::create_directories(path / "etc");
        fs::create_directories(path / "state");
        std::ofstream(path / "etc" / "rdmad.conf") << config;
        ReconcilerOptions o;
        o.config_dir = (path / "etc").string();
        o.state_dir = (path / "state").string();
        o.legacy_mlx4_conf = (path / "mlx4.conf").string();
        o.modprobe_dir = (path / "modprobe.d").string();
        o.now_usec = [this] { return now; };
        r = std::make_unique<Reconciler>(o, std::make_unique<Forward>(kernel));
        REQUIRE_FALSE(r->reload());
        kernel.netdevs["eth0"].pfc_en = 0; // nothing no-drop
        DeviceState d;
        d.name = "mlx5_0";
        d.syspath = "/sys/devices/pci0000:00/0000:04:00.0/infiniband/mlx5_0";
        d.pci_address = "0000:04:00.0";
        d.kernel_driver = "mlx5_core";
        PortState p;
        p.number = 1;
        p.link_layer = "Ethernet";
        p.netdev = "eth0";
        d.ports.push_back(p);
        inv.devices[d.syspath] = d;
    }

    /// One pass as the daemon makes it: plan (one IEEE_GET per netdev with a PFC rule), run.
    size_t pass() {
        const Plan plan = r->plan(inv);
        return r->execute(plan).size();
    }
    /// Another process sets eth0's PFC, and the kernel tells rdmad (RTNLGRP_DCB).
    void other_writer(uint8_t pfc_en) {
        kernel.netdevs["eth0"].pfc_en = pfc_en;
        r->pfc_changed("eth0");
    }
    std::vector<std::string> codes() {
        std::vector<std::string> out;
        for (const auto& [_, problems] : r->failure_problems())
            for (const auto& p : problems)
                out.push_back(p.code + " " + p.severity);
        return out;
    }
};

} // namespace

TEST_CASE("PFC changed by another writer is set back with one SET") {
    Rig rig;
    CHECK(rig.pass() == 1);
    CHECK(rig.kernel.sets == 1);
    CHECK(rig.kernel.netdevs["eth0"].pfc_en == 0x08); // priority 3
    // rdmad's own SET is notified too: the next plan reads it, finds it converged, sets nothing.
    rig.r->pfc_changed("eth0");
    const int gets = rig.kernel.gets;
    CHECK(rig.pass() == 0);
    CHECK(rig.kernel.gets == gets + 1);
    CHECK(rig.kernel.sets == 1);

    rig.other_writer(0x30); // e.g. `dcb pfc set dev eth0 prio-pfc 4:on 5:on 3:off`
    CHECK(rig.pass() == 1);
    // The plan's read, then set_pfc()'s own read-modify-write and read-back: one GET more
    // than the "one before, one after" (left open).
    CHECK(rig.kernel.gets == gets + 4);
    CHECK(rig.kernel.sets == 2);
    CHECK(rig.kernel.netdevs["eth0"].pfc_en == 0x08);
    CHECK(rig.codes().empty());
}

TEST_CASE("without a DCB notification an action already done is not tried again") {
    Rig rig;
    CHECK(rig.pass() == 1);
    rig.kernel.netdevs["eth0"].pfc_en = 0; // changed, but rdmad was not told
    CHECK(rig.pass() == 0);
    CHECK(rig.kernel.sets == 1);
}

TEST_CASE("a netdev set back more than 3 times within a minute is pfc-contested and left alone") {
    Rig rig;
    CHECK(rig.pass() == 1); // the first SET is not a correction
    for (int i = 1; i <= 3; ++i) {
        rig.now += 5'000'000;
        rig.other_writer(0);
        CHECK(rig.pass() == 1);
        CHECK(rig.kernel.sets == 1 + i);
        CHECK(rig.codes().empty());
    }
    rig.now += 5'000'000;
    rig.other_writer(0);
    CHECK(rig.pass() == 1); // tried, refused: no SET
    CHECK(rig.kernel.sets == 4);
    CHECK(rig.kernel.netdevs["eth0"].pfc_en == 0);
    CHECK(rig.codes() == std::vector<std::string>{"pfc-contested warning"});
    const auto text = rig.r->failure_problems().begin()->second.at(0).text;
    CHECK(text.find("eth0 was changed back by another writer more than 3 times within 60 s") !=
          std::string::npos);
    // More changes do not wake it up.
    rig.now += 120'000'000;
    rig.other_writer(0x01);
    CHECK(rig.pass() == 0);
    CHECK(rig.kernel.sets == 4);
    // The admin asks again (Reconcile, Reload, Set*): it is set, and counting starts over.
    rig.r->forget();
    CHECK(rig.codes().empty());
    CHECK(rig.pass() == 1);
    CHECK(rig.kernel.sets == 5);
    CHECK(rig.kernel.netdevs["eth0"].pfc_en == 0x08);
}

TEST_CASE("corrections spread over more than a minute never make a netdev contested") {
    Rig rig;
    CHECK(rig.pass() == 1);
    for (int i = 1; i <= 10; ++i) {
        rig.now += 25'000'000; // 25 s apart: at most 3 within any 60 s
        rig.other_writer(0);
        CHECK(rig.pass() == 1);
    }
    CHECK(rig.kernel.sets == 11);
    CHECK(rig.codes().empty());
}

TEST_CASE("with apply = false a change by another writer is not set back") {
    Rig rig("[daemon]\napply = false\n\n[[rule]]\ndevice = \"mlx5_0\"\npfc_no_drop = [3]\n");
    rig.other_writer(0x10);
    CHECK(rig.pass() == 0);
    CHECK(rig.kernel.sets == 0);
    const Plan plan = rig.r->plan(rig.inv);
    CHECK_FALSE(plan.ports.at(rig.inv.devices.begin()->first).at(1).in_sync);
}
