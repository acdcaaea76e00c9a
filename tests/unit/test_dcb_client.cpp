// SPDX-License-Identifier: MIT
//
// DcbClient (daemon/actuators/dcb_client.hpp) and the DSCP APP planning it uses
// (daemon/actuators/dcb_app.hpp) against a fake kernel that answers like
// net/dcb/dcbnl.c (DOMAIN.md §2.2-2.3), and against a real veth in a throwaway netns. rdmad's
// own encoder and parsers run in both; the fake decodes requests and lays out replies by hand.
#include "actuators/dcb_client.hpp"

#include "fake_dcb_kernel.hpp"
#include "kill_cleanup.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <map>
#include <optional>
#include <sched.h>
#include <string>
#include <sys/socket.h>
#include <tuple>
#include <unistd.h>
#include <utility>
#include <vector>

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

using namespace rdmad::dcb;
using Status = DcbResult::Status;

using rdmad::test::FakeKernel;

TEST_CASE("get_pfc reads pfc_cap, the mask and the DCBX mode") {
    FakeKernel k;
    k.netdevs["eth0"].pfc_en = 0x08;
    DcbClient c(k);
    DcbResult r = c.get_pfc("eth0");
    REQUIRE(r.status == Status::ok);
    CHECK(r.state.pfc_cap == 8);
    CHECK(r.state.pfc_en == 0x08);
    CHECK(r.state.requests[3] == 17);
    CHECK(r.dcbx == uint8_t{0x09});
}

TEST_CASE("set_pfc applies the mask and reads it back") {
    FakeKernel k;
    k.netdevs["eth0"];
    DcbClient c(k);
    DcbResult r = c.set_pfc("eth0", 0x18);
    INFO(r.message);
    REQUIRE(r.status == Status::ok);
    CHECK(r.state.pfc_en == 0x18);
    CHECK(k.sets == 1);
    CHECK(k.gets == 2); // before and after
    CHECK(k.netdevs["eth0"].pfc_en == 0x18);
}

TEST_CASE("two passes, zero sets: the mask already there is not set again") {
    FakeKernel k;
    k.netdevs["eth0"].pfc_en = 0x18;
    DcbClient c(k);
    for (int pass = 0; pass < 2; ++pass) {
        DcbResult r = c.set_pfc("eth0", 0x18);
        REQUIRE(r.status == Status::ok);
        CHECK(r.state.pfc_en == 0x18);
    }
    CHECK(k.sets == 0);
    CHECK(k.gets == 2);
    CHECK(k.dels == 0);
}

TEST_CASE("a first pass sets, a second pass finds it done: one set in all") {
    FakeKernel k;
    k.netdevs["eth0"];
    DcbClient c(k);
    CHECK(c.set_pfc("eth0", 0x08).ok());
    CHECK(c.set_pfc("eth0", 0x08).ok());
    CHECK(k.sets == 1);
    CHECK(k.dels == 0);
}

TEST_CASE("a driver that refuses the SET (status byte -EINVAL, netlink 0) is driver_error") {
    FakeKernel k;
    k.netdevs["ice0"].setpfc_errno = EINVAL; // ice with its firmware LLDP agent on
    DcbClient c(k);
    DcbResult r = c.set_pfc("ice0", 0x08);
    INFO(r.message);
    CHECK(r.status == Status::driver_error);
    CHECK(r.error == EINVAL);
    CHECK(r.state.pfc_en == 0); // what it was
    CHECK(k.sets == 1);
}

TEST_CASE("a driver that silently ignores the PFC attribute is not_applied, not ok") {
    FakeKernel k;
    k.netdevs["cee0"].ieee_setpfc = false;
    k.netdevs["cee0"].pfc_en = 0x01;
    DcbClient c(k);
    DcbResult r = c.set_pfc("cee0", 0x08);
    INFO(r.message);
    CHECK(r.status == Status::not_applied);
    CHECK(r.state.pfc_en == 0x01); // the read-back keeps the old mask
    CHECK(k.sets == 1);
    CHECK(k.gets == 2);
}

TEST_CASE("EOPNOTSUPP (no dcbnl_ops) is not_supported, for get and set, and nothing set") {
    FakeKernel k;
    k.netdevs["veth0"].dcbnl_ops = false;
    DcbClient c(k);
    CHECK(c.get_pfc("veth0").status == Status::not_supported);
    DcbResult s = c.set_pfc("veth0", 0x08);
    CHECK(s.status == Status::not_supported);
    CHECK(s.error == EOPNOTSUPP);
    CHECK_THAT(s.message, Catch::Contains("no DCB on this netdev"));
    CHECK(k.sets == 0);
}

TEST_CASE("an IEEE_GET reply without DCB_ATTR_IEEE_PFC is not_supported and no SET is sent") {
    FakeKernel k;
    k.netdevs["cee0"].ieee_getpfc = false;
    DcbClient c(k);
    DcbResult g = c.get_pfc("cee0");
    CHECK(g.status == Status::not_supported);
    CHECK(g.error == ENODATA);
    CHECK(g.dcbx == uint8_t{0x09});
    CHECK(c.set_pfc("cee0", 0x08).status == Status::not_supported);
    CHECK(k.sets == 0);
}

TEST_CASE("a netdev the kernel does not know is failed with ENODEV") {
    FakeKernel k;
    DcbClient c(k);
    DcbResult r = c.get_pfc("nosuch0");
    CHECK(r.status == Status::failed);
    CHECK(r.error == ENODEV);
}

TEST_CASE("truncated and garbage replies are failed, never a crash") {
    FakeKernel good;
    good.netdevs["eth0"].pfc_en = 0x08;
    DcbClient probe(good, 100);
    REQUIRE(probe.get_pfc("eth0").ok());
    // good.queue is empty again; rebuild the two datagrams for seq 100 to mutilate them.
    good.send(build_ieee_get("eth0", 100, 0));
    Bytes reply = good.queue[0], ack = good.queue[1];

    auto run = [](std::deque<Bytes> answers) {
        FakeKernel k;
        k.scripted = std::move(answers);
        k.script = true;
        DcbClient c(k, 100);
        return c.get_pfc("eth0");
    };
    SECTION("reply cut inside struct ieee_pfc") {
        Bytes cut(reply.begin(), reply.end() - 20);
        DcbResult r = run({cut, ack});
        CHECK(r.status == Status::failed);
        CHECK(!r.message.empty());
    }
    SECTION("every prefix of the reply") {
        for (size_t n = 0; n < reply.size(); ++n) {
            DcbResult r = run({Bytes(reply.begin(), reply.begin() + static_cast<long>(n)), ack});
            CHECK(r.status == Status::failed);
        }
    }
    SECTION("garbage") {
        Bytes junk(64, 0xff);
        CHECK(run({junk}).status == Status::failed);
        CHECK(run({Bytes{1, 2, 3}}).status == Status::failed);
    }
    SECTION("an ACK cut short") {
        Bytes cut = ack;
        cut.resize(20);
        uint32_t len = 20;
        std::memcpy(cut.data(), &len, 4);
        CHECK(run({reply, cut}).status == Status::failed);
    }
    SECTION("no answer at all") {
        DcbResult r = run({});
        CHECK(r.status == Status::failed);
        CHECK(r.error == ETIMEDOUT);
    }
    SECTION("a reply but no ACK") {
        CHECK(run({reply}).status == Status::failed);
    }
    SECTION("a stale answer to an earlier request is skipped") {
        Bytes stale = ack;
        uint32_t old = 7;
        std::memcpy(stale.data() + 8, &old, 4);
        DcbResult r = run({stale, reply, ack});
        CHECK(r.status == Status::ok);
        CHECK(r.state.pfc_en == 0x08);
    }
    SECTION("a reply for another DCB command") {
        Bytes other = reply;
        other[17] = DCB_CMD_GDCBX;
        CHECK(run({other, ack}).status == Status::failed);
    }
}

TEST_CASE("a malformed SET reply (status byte missing) is failed, not ok") {
    FakeKernel k;
    k.netdevs["eth0"];
    // The GETs go to the fake kernel; the SET is answered by: RTM_SETDCB with no attribute + ACK.
    Bytes setreply = {20,   0, 0, 0, RTM_SETDCB,       0, 0, 0, 3, 0, 0, 0, 0x92,
                      0x10, 0, 0, 0, DCB_CMD_IEEE_SET, 0, 0};
    Bytes ackb(36, 0);
    uint32_t len = 36, seq = 3;
    std::memcpy(ackb.data(), &len, 4);
    ackb[4] = NLMSG_ERROR;
    std::memcpy(ackb.data() + 8, &seq, 4);
    // seq 2: the GET of set_pfc; seq 3: its SET
    struct Hybrid final : NetlinkTransport {
        FakeKernel& k;
        Bytes setreply, ackb;
        explicit Hybrid(FakeKernel& k, Bytes s, Bytes a) : k(k), setreply(s), ackb(a) {}
        ssize_t send(std::span<const uint8_t> req) override {
            if (req[4] == RTM_SETDCB) {
                k.queue.push_back(setreply);
                k.queue.push_back(ackb);
                return static_cast<ssize_t>(req.size());
            }
            return k.send(req);
        }
        ssize_t recv(std::span<uint8_t> b) override { return k.recv(b); }
        uint32_t port_id() const override { return 0; }
    } h(k, setreply, ackb);
    DcbClient c2(h, 2);
    DcbResult r = c2.set_pfc("eth0", 0x08);
    INFO(r.message);
    CHECK(r.status == Status::failed);
    CHECK(k.netdevs["eth0"].pfc_en == 0);
}

TEST_CASE("a veth in a fresh netns: the real kernel says EOPNOTSUPP and rdmad says not_supported") {
    // Needs root and `ip netns`; failing to set up is a failure, not a skip.
    std::string ns = "rdmad-dcbtest-" + std::to_string(getpid());
    // Deleted at the end, and also when a signal ends the test (../kill_cleanup.hpp): asked
    // for before it exists, so that no moment leaves it behind.
    struct Cleanup {
        std::string ns;
        std::string del = "ip netns del " + ns + " 2>/dev/null";
        explicit Cleanup(std::string n) : ns(std::move(n)) { kill_cleanup::run_when_killed(del); }
        ~Cleanup() {
            [[maybe_unused]] const int rc = std::system(del.c_str());
            kill_cleanup::forget_command(del);
        }
    } cleanup{ns};
    REQUIRE(std::system(("ip netns add " + ns).c_str()) == 0);
    REQUIRE(std::system(
                ("ip -n " + ns + " link add rdmatest0 type veth peer name rdmatest1").c_str()) ==
            0);

    // A netlink socket belongs to the netns it was created in: enter it, open, come back.
    int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    REQUIRE(home >= 0);
    int target = open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(target >= 0);
    REQUIRE(setns(target, CLONE_NEWNET) == 0);
    std::unique_ptr<MnlTransport> transport;
    try {
        transport = std::make_unique<MnlTransport>();
    } catch (...) {
    }
    REQUIRE(setns(home, CLONE_NEWNET) == 0);
    close(target);
    close(home);
    REQUIRE(transport);

    DcbClient c(*transport, 1);
    DcbResult g = c.get_pfc("rdmatest0");
    INFO(g.message);
    CHECK(g.status == Status::not_supported);
    CHECK(g.error == EOPNOTSUPP);
    DcbResult s = c.set_pfc("rdmatest0", 0x18);
    CHECK(s.status == Status::not_supported);
    // A name that does not exist in that netns: ENODEV, from the same socket.
    DcbResult none = c.get_pfc("nosuchdev0");
    CHECK(none.status == Status::failed);
    CHECK(none.error == ENODEV);
}

// ---- DSCP entries of the IEEE APP table (settings `trust` and `dscp_priority`) ------------

namespace {

constexpr uint8_t dscp_sel = IEEE_8021QAZ_APP_SEL_DSCP;

/// The DSCP entry DSCP `dscp` -> priority `prio`.
AppEntry dscp(uint16_t code, uint8_t prio) {
    return AppEntry{dscp_sel, prio, code};
}

using rdmad::test::AppRequest;

AppRequest set_req(std::vector<AppEntry> e) {
    return AppRequest{DCB_CMD_IEEE_SET, std::move(e)};
}
AppRequest del_req(std::vector<AppEntry> e) {
    return AppRequest{DCB_CMD_IEEE_DEL, std::move(e)};
}

/// The DSCP entries of a table, sorted, as the inventory keeps them.
std::vector<AppEntry> dscp_only(const std::vector<AppEntry>& table) {
    std::vector<AppEntry> out;
    for (const auto& e : table)
        if (e.selector == dscp_sel)
            out.push_back(e);
    std::sort(out.begin(), out.end(), [](const AppEntry& a, const AppEntry& b) {
        return std::tie(a.protocol, a.priority) < std::tie(b.protocol, b.priority);
    });
    return out;
}

DscpAppGoal goal(std::map<int, int> map, bool exclusive = false,
                 std::optional<Trust> trust = std::nullopt) {
    return DscpAppGoal{std::move(map), exclusive, trust};
}

} // namespace

TEST_CASE("plan: a replaced DSCP mapping is an add and a delete; DSCPs not asked and other "
          "selectors are left alone",
          "[dcb][app]") {
    const AppEntry fcoe{IEEE_8021QAZ_APP_SEL_ETHERTYPE, 3, 0x8906};
    const std::vector<AppEntry> table = {dscp(26, 0), dscp(10, 1), fcoe};
    auto p = plan_dscp_app(table, goal({{26, 3}}));
    REQUIRE(p.ok());
    CHECK(p.value->add == std::vector<AppEntry>{dscp(26, 3)});
    CHECK(p.value->remove == std::vector<AppEntry>{dscp(26, 0)});
}

TEST_CASE("plan: what is already there is planned as nothing, exclusive or not", "[dcb][app]") {
    const std::vector<AppEntry> table = {dscp(48, 6), dscp(26, 3)};
    for (bool exclusive : {false, true}) {
        auto p = plan_dscp_app(table, goal({{26, 3}, {48, 6}}, exclusive));
        REQUIRE(p.ok());
        CHECK(p.value->empty());
    }
    auto t = plan_dscp_app(table, goal({{26, 3}, {48, 6}}, true, Trust::dscp));
    REQUIRE(t.ok());
    CHECK(t.value->empty());
}

TEST_CASE("plan: exclusive deletes the DSCPs not asked before the replaced ones, and a second "
          "priority of an asked DSCP",
          "[dcb][app]") {
    // dcb_ieee_setapp() keeps 26:1 and 26:3 side by side; only 26:3 is asked.
    const std::vector<AppEntry> table = {dscp(48, 6), dscp(26, 1), dscp(10, 1), dscp(26, 3),
                                         dscp(12, 0)};
    auto p = plan_dscp_app(table, goal({{26, 3}, {48, 0}}, true));
    REQUIRE(p.ok());
    CHECK(p.value->add == std::vector<AppEntry>{dscp(48, 0)});
    CHECK(p.value->remove ==
          std::vector<AppEntry>{dscp(10, 1), dscp(12, 0), dscp(26, 1), dscp(48, 6)});
    // Not exclusive: 10 and 12 stay.
    auto q = plan_dscp_app(table, goal({{26, 3}, {48, 0}}));
    REQUIRE(q.ok());
    CHECK(q.value->remove == std::vector<AppEntry>{dscp(26, 1), dscp(48, 6)});
}

TEST_CASE("plan: trust pcp deletes every DSCP entry and nothing else", "[dcb][app]") {
    const AppEntry default_prio{IEEE_8021QAZ_APP_SEL_ETHERTYPE, 5, 0}; // dcb app default-prio 5
    const std::vector<AppEntry> table = {dscp(26, 3), default_prio, dscp(10, 1)};
    auto p = plan_dscp_app(table, goal({}, false, Trust::pcp));
    REQUIRE(p.ok());
    CHECK(p.value->add.empty());
    CHECK(p.value->remove == std::vector<AppEntry>{dscp(10, 1), dscp(26, 3)});
    const std::vector<AppEntry> pcp_port = {default_prio};
    auto done = plan_dscp_app(pcp_port, goal({}, false, Trust::pcp));
    REQUIRE(done.ok());
    CHECK(done.value->empty());
}

TEST_CASE("plan: trust dscp without a map installs mlnx_qos's default map (DSCP d -> priority "
          "d >> 3) on a port with no DSCP entry, and nothing on one that has any",
          "[dcb][app]") {
    auto p = plan_dscp_app({}, goal({}, false, Trust::dscp));
    REQUIRE(p.ok());
    REQUIRE(p.value->add.size() == 64);
    CHECK(p.value->add == default_dscp_map());
    CHECK(p.value->add[0] == dscp(0, 0));
    CHECK(p.value->add[8] == dscp(8, 1));   // CS1
    CHECK(p.value->add[26] == dscp(26, 3)); // AF31
    CHECK(p.value->add[46] == dscp(46, 5)); // EF
    CHECK(p.value->add[48] == dscp(48, 6)); // CS6
    CHECK(p.value->add[63] == dscp(63, 7));
    CHECK(p.value->remove.empty());

    const std::vector<AppEntry> trusting = {dscp(26, 4)}; // someone else's map: kept
    auto q = plan_dscp_app(trusting, goal({}, true, Trust::dscp));
    REQUIRE(q.ok());
    CHECK(q.value->empty());
}

TEST_CASE("plan: trust dscp with a map is that map, not the default one", "[dcb][app]") {
    auto p = plan_dscp_app({}, goal({{26, 3}}, false, Trust::dscp));
    REQUIRE(p.ok());
    CHECK(p.value->add == std::vector<AppEntry>{dscp(26, 3)});
}

TEST_CASE("plan: a DSCP outside 0-63, a priority outside 0-7, and trust pcp with a map are "
          "refused with the reason",
          "[dcb][app]") {
    auto big = plan_dscp_app({}, goal({{64, 1}}));
    CHECK(!big.ok());
    CHECK_THAT(big.error, Catch::Contains("DSCP 64"));
    CHECK(!plan_dscp_app({}, goal({{-1, 1}})).ok());
    auto prio = plan_dscp_app({}, goal({{26, 8}}));
    CHECK(!prio.ok());
    CHECK_THAT(prio.error, Catch::Contains("priority 8 for DSCP 26"));
    CHECK(!plan_dscp_app({}, goal({{26, -1}})).ok());
    auto pcp = plan_dscp_app({}, goal({{26, 3}}, false, Trust::pcp));
    CHECK(!pcp.ok());
    CHECK_THAT(pcp.error, Catch::Contains("pcp"));
    CHECK(plan_dscp_app({}, goal({{0, 0}, {63, 7}})).ok());
}

TEST_CASE("the fake kernel sees a port leave DSCP trust when its last DSCP entry is deleted "
          "(what set_dscp_app must never do on the way)",
          "[dcb][app]") {
    FakeKernel k;
    k.netdevs["mlx0"].mlx5_app = true;
    k.netdevs["mlx0"].app = {dscp(26, 0)};
    // Delete first, add after: the order set_dscp_app avoids.
    const std::vector<AppEntry> old = {dscp(26, 0)}, now = {dscp(26, 3)};
    k.send(build_ieee_del_app("mlx0", old, 1, 0));
    k.send(build_ieee_set_app("mlx0", now, 2, 0));
    CHECK(k.netdevs["mlx0"].to_pcp_trust == 1);
    CHECK(k.netdevs["mlx0"].app == now);
}

TEST_CASE("a replaced DSCP mapping is added before the old one is deleted, so the port never "
          "leaves DSCP trust",
          "[dcb][app]") {
    for (bool mlx5 : {false, true}) {
        INFO((mlx5 ? "mlx5 setapp/delapp" : "dcb_ieee_setapp/delapp"));
        FakeKernel k;
        k.netdevs["eth0"].mlx5_app = mlx5;
        k.netdevs["eth0"].app = {dscp(26, 0)}; // the port's only DSCP entry
        k.netdevs["eth0"].pfc_en = 0x08;
        DcbClient c(k);
        DcbResult r = c.set_dscp_app("eth0", goal({{26, 3}}));
        INFO(r.message);
        REQUIRE(r.status == Status::ok);
        CHECK(k.app_requests ==
              std::vector<AppRequest>{set_req({dscp(26, 3)}), del_req({dscp(26, 0)})});
        CHECK(k.netdevs["eth0"].to_pcp_trust == 0);
        CHECK(k.netdevs["eth0"].app == std::vector<AppEntry>{dscp(26, 3)});
        REQUIRE(r.app);
        CHECK(*r.app == std::vector<AppEntry>{dscp(26, 3)}); // the read-back, for the inventory
        CHECK(r.state.pfc_en == 0x08);                       // its PFC state came with it
        CHECK(k.gets == 2);                                  // the table, then the read-back
    }
}

TEST_CASE("on mlx5 the ENOENT of an already replaced entry does not keep an unwanted entry "
          "from being deleted",
          "[dcb][app]") {
    // mlx5's setapp removes 26:0 and 48:0 itself; deleting them then fails with ENOENT, and
    // the kernel stops the DEL there. 10:1 must have gone before.
    FakeKernel k;
    k.netdevs["mlx0"].mlx5_app = true;
    k.netdevs["mlx0"].app = {dscp(26, 0), dscp(48, 0), dscp(10, 1)};
    DcbClient c(k);
    DcbResult r = c.set_dscp_app("mlx0", goal({{26, 3}, {48, 6}}, true), k.netdevs["mlx0"].app);
    INFO(r.message);
    REQUIRE(r.status == Status::ok);
    CHECK(k.app_requests ==
          std::vector<AppRequest>{set_req({dscp(26, 3), dscp(48, 6)}),
                                  del_req({dscp(10, 1), dscp(26, 0), dscp(48, 0)})});
    CHECK(dscp_only(k.netdevs["mlx0"].app) == std::vector<AppEntry>{dscp(26, 3), dscp(48, 6)});
    CHECK(k.netdevs["mlx0"].to_pcp_trust == 0);
    CHECK(k.gets == 1); // the table was known: only the read-back
}

TEST_CASE("two passes, zero APP requests: DSCP entries already as asked are not set again",
          "[dcb][app]") {
    FakeKernel k;
    k.netdevs["eth0"].app = {dscp(26, 3), dscp(48, 6)};
    DcbClient c(k);
    for (int pass = 0; pass < 2; ++pass) {
        DcbResult r = c.set_dscp_app("eth0", goal({{26, 3}, {48, 6}}, true, Trust::dscp));
        INFO(r.message);
        REQUIRE(r.status == Status::ok);
        REQUIRE(r.app); // read by this call
        CHECK(dscp_only(*r.app) == std::vector<AppEntry>{dscp(26, 3), dscp(48, 6)});
    }
    CHECK(k.gets == 2);
    CHECK(k.sets == 0);
    CHECK(k.dels == 0);
    // Known from the inventory: not even a read.
    DcbResult known = c.set_dscp_app("eth0", goal({{26, 3}}), k.netdevs["eth0"].app);
    CHECK(known.status == Status::ok);
    CHECK(!known.app);
    CHECK(k.gets == 2);
}

TEST_CASE("entries of other selectors and DSCPs not asked survive a non-exclusive change",
          "[dcb][app]") {
    const AppEntry fcoe{IEEE_8021QAZ_APP_SEL_ETHERTYPE, 3, 0x8906};
    FakeKernel k;
    k.netdevs["eth0"].app = {fcoe, dscp(10, 1)};
    DcbClient c(k);
    DcbResult r = c.set_dscp_app("eth0", goal({{26, 3}}));
    INFO(r.message);
    REQUIRE(r.status == Status::ok);
    CHECK(k.app_requests == std::vector<AppRequest>{set_req({dscp(26, 3)})});
    CHECK(k.dels == 0);
    CHECK(k.netdevs["eth0"].app == std::vector<AppEntry>{fcoe, dscp(10, 1), dscp(26, 3)});
}

TEST_CASE("trust pcp deletes every DSCP entry in one DEL, and the port trusts PCP after",
          "[dcb][app]") {
    FakeKernel k;
    k.netdevs["mlx0"].mlx5_app = true;
    k.netdevs["mlx0"].app = default_dscp_map(); // mlx5 in DSCP trust lists all 64 (init_app)
    DcbClient c(k);
    DcbResult r = c.set_dscp_app("mlx0", goal({}, false, Trust::pcp));
    INFO(r.message);
    REQUIRE(r.status == Status::ok);
    CHECK(k.app_requests == std::vector<AppRequest>{del_req(default_dscp_map())});
    CHECK(k.sets == 0);
    CHECK(k.netdevs["mlx0"].app.empty());
    CHECK(k.netdevs["mlx0"].to_pcp_trust == 1); // asked for
    REQUIRE(r.app);
    CHECK(r.app->empty());
}

TEST_CASE("trust dscp on a PCP port installs the 64-entry default map in one SET", "[dcb][app]") {
    FakeKernel k;
    k.netdevs["mlx0"].mlx5_app = true;
    DcbClient c(k);
    DcbResult r = c.set_dscp_app("mlx0", goal({}, false, Trust::dscp));
    INFO(r.message);
    REQUIRE(r.status == Status::ok);
    CHECK(k.app_requests == std::vector<AppRequest>{set_req(default_dscp_map())});
    REQUIRE(r.app);
    CHECK(dscp_only(*r.app) == default_dscp_map());
}

TEST_CASE("a driver that silently ignores APP entries is not_applied, not ok", "[dcb][app]") {
    FakeKernel k;
    k.netdevs["eth0"].ignore_app = true;
    k.netdevs["eth0"].app = {dscp(26, 0)};
    DcbClient c(k);
    DcbResult r = c.set_dscp_app("eth0", goal({{26, 3}}));
    INFO(r.message);
    CHECK(r.status == Status::not_applied);
    CHECK(r.error == 0);
    REQUIRE(r.app);
    CHECK(*r.app == std::vector<AppEntry>{dscp(26, 0)}); // the read-back as it is
    CHECK_THAT(r.message, Catch::Contains("26:0"));
    CHECK(k.gets == 2);
}

TEST_CASE("a driver that refuses the SET is driver_error, and the entries it was to replace are "
          "not deleted",
          "[dcb][app]") {
    FakeKernel k;
    k.netdevs["mlx0"].mlx5_app = true;
    k.netdevs["mlx0"].setapp_errno = EOPNOTSUPP; // mlx5 without DSCP support (status byte)
    k.netdevs["mlx0"].app = {dscp(26, 0)};
    DcbClient c(k);
    DcbResult r = c.set_dscp_app("mlx0", goal({{26, 3}}));
    INFO(r.message);
    CHECK(r.status == Status::driver_error);
    CHECK(r.error == EOPNOTSUPP);
    CHECK(k.app_requests == std::vector<AppRequest>{set_req({dscp(26, 3)})});
    CHECK(k.dels == 0);
    CHECK(k.netdevs["mlx0"].app == std::vector<AppEntry>{dscp(26, 0)});
    REQUIRE(r.app);
    CHECK(*r.app == std::vector<AppEntry>{dscp(26, 0)});
    CHECK_THAT(r.message, Catch::Contains("no entry was deleted"));
}

TEST_CASE("a stale table that misses an entry: the kernel's EEXIST is ok when the read-back is "
          "right",
          "[dcb][app]") {
    FakeKernel k;
    k.netdevs["eth0"].app = {dscp(26, 3)};
    DcbClient c(k);
    // The inventory had not seen 26:3 yet.
    DcbResult r = c.set_dscp_app("eth0", goal({{26, 3}}), std::vector<AppEntry>{});
    INFO(r.message);
    CHECK(r.status == Status::ok);
    CHECK(k.app_requests == std::vector<AppRequest>{set_req({dscp(26, 3)})});
    CHECK(k.netdevs["eth0"].app == std::vector<AppEntry>{dscp(26, 3)}); // not added twice
}

TEST_CASE("a stale table that names the wrong old mapping: the DEL's ENOENT with the read-back "
          "still wrong is driver_error",
          "[dcb][app]") {
    FakeKernel k;
    k.netdevs["eth0"].app = {dscp(26, 1)};
    DcbClient c(k);
    DcbResult r = c.set_dscp_app("eth0", goal({{26, 3}}), std::vector<AppEntry>{dscp(26, 0)});
    INFO(r.message);
    CHECK(r.status == Status::driver_error);
    CHECK(r.error == ENOENT);
    REQUIRE(r.app);
    CHECK(dscp_only(*r.app) == std::vector<AppEntry>{dscp(26, 1), dscp(26, 3)});
    // The next pass, planned from this read-back, finishes it.
    DcbResult again = c.set_dscp_app("eth0", goal({{26, 3}}), *r.app);
    INFO(again.message);
    CHECK(again.status == Status::ok);
    CHECK(k.netdevs["eth0"].app == std::vector<AppEntry>{dscp(26, 3)});
}

TEST_CASE("set_dscp_app: no DCB is not_supported, a bad goal or name is failed, nothing sent",
          "[dcb][app]") {
    FakeKernel k;
    k.netdevs["veth0"].dcbnl_ops = false;
    k.netdevs["eth0"];
    DcbClient c(k);
    DcbResult v = c.set_dscp_app("veth0", goal({{26, 3}}));
    CHECK(v.status == Status::not_supported);
    CHECK(v.error == EOPNOTSUPP);
    // Known table: the SET itself meets EOPNOTSUPP.
    DcbResult vk = c.set_dscp_app("veth0", goal({{26, 3}}), std::vector<AppEntry>{});
    CHECK(vk.status == Status::not_supported);
    CHECK(k.sets == 0); // the fake counts only what reached a netdev with dcbnl_ops

    const int gets = k.gets;
    DcbResult bad = c.set_dscp_app("eth0", goal({{26, 9}}));
    CHECK(bad.status == Status::failed);
    CHECK(bad.error == EINVAL);
    CHECK_THAT(bad.message, Catch::Contains("priority 9"));
    CHECK(c.set_dscp_app("a-sixteen-chars!", goal({{26, 3}})).error == EINVAL);
    CHECK(k.gets == gets);
    CHECK(k.app_requests.empty());
    CHECK(c.set_dscp_app("nosuch0", goal({{26, 3}})).error == ENODEV);
}
