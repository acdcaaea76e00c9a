// SPDX-License-Identifier: MIT
//
// PFC set back after another writer changed it (daemon/reconcile/reconciler.hpp
// pfc_changed(), execute()): the PFC source (sources/pfc_reader.hpp) reads a netdev once, takes
// DCB notifications and rdmad's verified read-backs; a correction is one SET and one read-back.
// A netdev changed back more than kMaxPfcCorrections times within kPfcContestUsec is left alone
// and reported as pfc-contested. The DCB answers come from a fake kernel laid out like
// net/dcb/dcbnl.c (fake_dcb_kernel.hpp).
#include "reconcile/contest_guard.hpp"
#include "reconcile/reconciler.hpp"
#include "sources/pfc_reader.hpp"

#include "fake_dcb_kernel.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace rdmad;
using rdmad::test::FakeKernel;
namespace fs = std::filesystem;

namespace {

struct Rig : rdmad::test::TempDir {
    FakeKernel kernel;
    dcb::DcbClient client{kernel};
    PfcReader reader{&client}; // the PFC source, as the scanner holds it
    uint64_t now = 1'000'000;
    HostState inv;
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
        r = std::make_unique<Reconciler>(o, &client);
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
        reader.refresh({"eth0"}); // the netdev serves a RoCE port: read once
        sync();
    }

    /// The inventory's port as the source has it.
    void sync() {
        auto& port = inv.devices.begin()->second.ports[0];
        port.pfc = reader.get("eth0");
    }
    /// One pass as the daemon makes it: plan from the inventory, run, take the read-backs.
    size_t pass() {
        sync();
        const Plan plan = r->plan(inv);
        const auto outcomes = r->execute(plan);
        for (const auto& o : outcomes)
            if (o.read_back)
                reader.update(o.action.netdev, *o.read_back);
        sync();
        return outcomes.size();
    }
    /// What the kernel multicasts on RTNLGRP_DCB after a SET on eth0 (dcbnl_ieee_fill()).
    dcb::DcbNotification notification() {
        dcb::DcbNotification n;
        n.cmd = DCB_CMD_IEEE_SET;
        n.ifname = "eth0";
        n.pfc = dcb::PfcState{};
        n.pfc->pfc_cap = kernel.netdevs["eth0"].pfc_cap;
        n.pfc->pfc_en = kernel.netdevs["eth0"].pfc_en;
        n.dcbx = kernel.netdevs["eth0"].dcbx;
        return n;
    }
    /// Another process sets eth0's PFC, and the kernel tells rdmad (RTNLGRP_DCB).
    void other_writer(uint8_t pfc_en) {
        kernel.netdevs["eth0"].pfc_en = pfc_en;
        if (reader.note(notification()))
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

TEST_CASE("PFC changed by another writer is set back with one SET and one read-back") {
    Rig rig;
    CHECK(rig.kernel.gets == 1); // the source's first read
    CHECK(rig.pass() == 1);
    CHECK(rig.kernel.sets == 1);
    CHECK(rig.kernel.gets == 2); // the read-back only: the plan used the inventory's state
    CHECK(rig.kernel.netdevs["eth0"].pfc_en == 0x08); // priority 3
    CHECK(rig.inv.devices.begin()->second.ports[0].pfc.priorities == std::vector<uint8_t>{3});
    // rdmad's own SET is notified too: the same state as read back, so nothing to do.
    CHECK_FALSE(rig.reader.note(rig.notification()));
    CHECK(rig.pass() == 0);
    CHECK(rig.kernel.gets == 2);
    CHECK(rig.kernel.sets == 1);

    rig.other_writer(0x30); // e.g. `dcb pfc set dev eth0 prio-pfc 4:on 5:on 3:off`
    CHECK(rig.reader.get("eth0").priorities == std::vector<uint8_t>{4, 5}); // from the notice
    CHECK(rig.pass() == 1);
    // The notification carried the state: no GET before the SET, one after.
    CHECK(rig.kernel.gets == 3);
    CHECK(rig.kernel.sets == 2);
    CHECK(rig.kernel.netdevs["eth0"].pfc_en == 0x08);
    // The SET kept what IEEE_GET read of the rest of struct ieee_pfc (read-modify-write).
    CHECK(rig.kernel.netdevs["eth0"].pfc_cap == 8);
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

TEST_CASE("two DCB writes to one netdev in one pass are one correction") {
    // A re-add under lossless-roce writes PFC and then the APP table to the same netdev in
    // one pass: another writer changed it once, not twice.
    uint64_t now = 0;
    ContestGuard guard([&] { return now; });
    guard.begin_pass();
    CHECK(guard.may_write("eth0")); // PFC: the first write is no correction
    guard.written("eth0");
    CHECK(guard.may_write("eth0")); // APP, same pass
    guard.written("eth0");
    for (size_t i = 1; i <= kMaxPfcCorrections; ++i) {
        now += 5'000'000;
        guard.begin_pass();
        CHECK(guard.may_write("eth0"));
        guard.written("eth0");
        CHECK(guard.may_write("eth0"));
        guard.written("eth0");
        CHECK_FALSE(guard.contested("eth0"));
    }
    now += 5'000'000;
    guard.begin_pass();
    CHECK_FALSE(guard.may_write("eth0")); // the 4th correction within a minute
    CHECK(guard.contested("eth0"));
}
