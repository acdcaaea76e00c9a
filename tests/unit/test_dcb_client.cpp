// SPDX-License-Identifier: MIT
//
// DcbClient (daemon/actuators/dcb_client.hpp) against a fake kernel that answers like
// net/dcb/dcbnl.c (DOMAIN.md §2.2-2.3), and against a real veth in a throwaway netns. rdmad's
// own encoder and parsers run in both; the fake decodes requests and lays out replies by hand.
#include "actuators/dcb_client.hpp"

#include "fake_dcb_kernel.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <map>
#include <sched.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

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
    REQUIRE(std::system(("ip netns add " + ns).c_str()) == 0);
    struct Cleanup {
        std::string ns;
        ~Cleanup() {
            // Best effort: a namespace left behind is named after the pid and harmless.
            [[maybe_unused]] const int rc = std::system(("ip netns del " + ns).c_str());
        }
    } cleanup{ns};
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
