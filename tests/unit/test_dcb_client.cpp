// SPDX-License-Identifier: MIT
//
// DcbClient (daemon/actuators/dcb_client.hpp) against a fake kernel that answers like
// net/dcb/dcbnl.c (DOMAIN.md §2.2-2.3), and against a real veth in a throwaway netns. rdmad's
// own encoder and parsers run in both; the fake decodes requests and lays out replies by hand.
#include "actuators/dcb_client.hpp"

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

namespace {

/// A netdev as the fake kernel models it.
struct FakeNetdev {
    bool dcbnl_ops = true;   ///< false: EOPNOTSUPP (veth, virtio_net, ...)
    bool ieee_getpfc = true; ///< false: IEEE_GET reply without DCB_ATTR_IEEE_PFC
    bool ieee_setpfc = true; ///< false: SET silently ignored, status 0 (CEE-only driver)
    int setpfc_errno = 0;    ///< non-zero: the driver refuses, status byte = -errno
    bool getdcbx = true;
    uint8_t dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
    uint8_t pfc_cap = 8;
    uint8_t pfc_en = 0;
    uint16_t delay = 0;
};

/// Appends netlink structures the way the kernel lays them out (4-byte aligned).
struct Out {
    Bytes b;
    void raw(const void* p, size_t n) {
        auto c = static_cast<const uint8_t*>(p);
        b.insert(b.end(), c, c + n);
        b.resize((b.size() + 3) & ~size_t{3}, 0);
    }
    void attr(uint16_t type, const void* p, size_t n) {
        struct nlattr a {
            static_cast<uint16_t>(4 + n), type
        };
        raw(&a, 4);
        raw(p, n);
    }
};

class FakeKernel final : public NetlinkTransport {
  public:
    static constexpr uint32_t port = 4242;
    std::map<std::string, FakeNetdev> netdevs;
    std::deque<Bytes> queue;    ///< datagrams waiting to be received
    std::deque<Bytes> scripted; ///< the answers to the next request, when `script` is set
    bool script = false;
    int gets = 0, sets = 0, dcbx_gets = 0, dels = 0;

    ssize_t send(std::span<const uint8_t> req) override {
        if (req.size() < 24)
            return -EINVAL;
        uint16_t type;
        uint32_t seq;
        std::memcpy(&type, req.data() + 4, 2);
        std::memcpy(&seq, req.data() + 8, 4);
        uint8_t cmd = req[17];
        if (script) {
            queue.insert(queue.end(), scripted.begin(), scripted.end());
            scripted.clear();
            return static_cast<ssize_t>(req.size());
        }
        // DCB_ATTR_IFNAME is the first attribute, at offset 20.
        uint16_t ifl;
        std::memcpy(&ifl, req.data() + 20, 2);
        std::string ifname(reinterpret_cast<const char*>(req.data() + 24),
                           strnlen(reinterpret_cast<const char*>(req.data() + 24), ifl - 4));
        auto it = netdevs.find(ifname);
        if (it == netdevs.end()) {
            ack(seq, type, -ENODEV);
            return static_cast<ssize_t>(req.size());
        }
        FakeNetdev& dev = it->second;
        if (cmd == DCB_CMD_IEEE_DEL)
            ++dels;
        if (!dev.dcbnl_ops) {
            ack(seq, type, -EOPNOTSUPP);
            return static_cast<ssize_t>(req.size());
        }
        if (type == RTM_GETDCB && cmd == DCB_CMD_IEEE_GET) {
            ++gets;
            Out o = reply_header(RTM_GETDCB, DCB_CMD_IEEE_GET);
            o.attr(DCB_ATTR_IFNAME, ifname.c_str(), ifname.size() + 1);
            Out nest;
            if (dev.ieee_getpfc) {
                struct ieee_pfc pfc {};
                pfc.pfc_cap = dev.pfc_cap;
                pfc.pfc_en = dev.pfc_en;
                pfc.delay = dev.delay;
                pfc.requests[3] = 17; // counters move on their own
                nest.attr(DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
            }
            o.attr(DCB_ATTR_IEEE, nest.b.data(), nest.b.size());
            if (dev.getdcbx)
                o.attr(DCB_ATTR_DCBX, &dev.dcbx, 1);
            finish(o, seq);
            ack(seq, type, 0);
        } else if (type == RTM_SETDCB && cmd == DCB_CMD_IEEE_SET) {
            ++sets;
            int err = 0;
            // The IEEE nest follows IFNAME; the PFC attribute is the first inside it.
            size_t nest = 20 + ((ifl + 3u) & ~3u);
            if (req.size() < nest + 8 + 136)
                err = -ERANGE;
            else if (dev.ieee_setpfc && dev.setpfc_errno)
                err = -dev.setpfc_errno;
            else if (dev.ieee_setpfc)
                dev.pfc_en = req[nest + 8 + 1];
            if (err == -ERANGE) {
                ack(seq, type, err);
                return static_cast<ssize_t>(req.size());
            }
            Out o = reply_header(RTM_SETDCB, DCB_CMD_IEEE_SET);
            auto status = static_cast<uint8_t>(static_cast<int8_t>(err));
            o.attr(DCB_ATTR_IEEE, &status, 1);
            finish(o, seq);
            ack(seq, type, 0);
        } else if (type == RTM_GETDCB && cmd == DCB_CMD_GDCBX) {
            ++dcbx_gets;
            if (!dev.getdcbx) {
                ack(seq, type, -EOPNOTSUPP);
                return static_cast<ssize_t>(req.size());
            }
            Out o = reply_header(RTM_GETDCB, DCB_CMD_GDCBX);
            o.attr(DCB_ATTR_DCBX, &dev.dcbx, 1);
            finish(o, seq);
            ack(seq, type, 0);
        } else {
            ack(seq, type, -EOPNOTSUPP);
        }
        return static_cast<ssize_t>(req.size());
    }

    ssize_t recv(std::span<uint8_t> buffer) override {
        if (queue.empty())
            return -ETIMEDOUT;
        Bytes d = std::move(queue.front());
        queue.pop_front();
        if (d.size() > buffer.size())
            return -ENOSPC;
        if (!d.empty()) // memcpy from an empty vector's null data() is UB (UBSan)
            std::memcpy(buffer.data(), d.data(), d.size());
        return static_cast<ssize_t>(d.size());
    }

    uint32_t port_id() const override { return port; }

  private:
    static Out reply_header(uint16_t type, uint8_t cmd) {
        Out o;
        struct nlmsghdr h {};
        h.nlmsg_type = type;
        o.raw(&h, sizeof h);
        struct dcbmsg d {};
        d.dcb_family = AF_UNSPEC;
        d.cmd = cmd;
        o.raw(&d, sizeof d);
        return o;
    }
    void finish(Out& o, uint32_t seq) {
        auto h = reinterpret_cast<struct nlmsghdr*>(o.b.data());
        h->nlmsg_len = static_cast<uint32_t>(o.b.size());
        h->nlmsg_seq = seq;
        h->nlmsg_pid = port;
        queue.push_back(std::move(o.b));
    }
    // The ACK is its own datagram, capped (NLM_F_CAPPED), as netlink_ack() sends it.
    void ack(uint32_t seq, uint16_t type, int error) {
        Out o;
        struct nlmsghdr h {};
        h.nlmsg_len = NLMSG_HDRLEN + sizeof(struct nlmsgerr);
        h.nlmsg_type = NLMSG_ERROR;
        h.nlmsg_flags = NLM_F_CAPPED;
        h.nlmsg_seq = seq;
        h.nlmsg_pid = port;
        o.raw(&h, sizeof h);
        struct nlmsgerr e {};
        e.error = error;
        e.msg.nlmsg_type = type;
        e.msg.nlmsg_seq = seq;
        o.raw(&e, sizeof e);
        queue.push_back(std::move(o.b));
    }
};

} // namespace

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

TEST_CASE("EOPNOTSUPP (no dcbnl_ops) is not_supported, for get, set and dcbx, and nothing set") {
    FakeKernel k;
    k.netdevs["veth0"].dcbnl_ops = false;
    DcbClient c(k);
    CHECK(c.get_pfc("veth0").status == Status::not_supported);
    DcbResult s = c.set_pfc("veth0", 0x08);
    CHECK(s.status == Status::not_supported);
    CHECK(s.error == EOPNOTSUPP);
    CHECK_THAT(s.message, Catch::Contains("no DCB on this netdev"));
    CHECK(c.get_dcbx("veth0").status == Status::not_supported);
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

TEST_CASE("get_dcbx reads the DCBX flags; a driver without getdcbx is not_supported") {
    FakeKernel k;
    k.netdevs["mlx0"].dcbx = DCB_CAP_DCBX_VER_IEEE;
    k.netdevs["nodcbx0"].getdcbx = false;
    DcbClient c(k);
    DcbResult r = c.get_dcbx("mlx0");
    REQUIRE(r.ok());
    CHECK(r.dcbx == uint8_t{DCB_CAP_DCBX_VER_IEEE});
    CHECK(c.get_dcbx("nodcbx0").status == Status::not_supported);
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
        ~Cleanup() { (void)std::system(("ip netns del " + ns).c_str()); }
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
    CHECK(c.get_dcbx("rdmatest0").status == Status::not_supported);
    // A name that does not exist in that netns: ENODEV, from the same socket.
    DcbResult none = c.get_pfc("nosuchdev0");
    CHECK(none.status == Status::failed);
    CHECK(none.error == ENODEV);
}
