// SPDX-License-Identifier: MIT
//
// rtnetlink multicasts (sources/rtnl_message.hpp) and the PFC source (sources/pfc_reader.hpp).
// Datagrams are laid out by hand as the kernel sends them: RTM_NEWLINK with struct ifinfomsg
// (uapi linux/rtnetlink.h), DCB notifications as net/dcb/dcbnl.c dcbnl_notify() /
// dcbnl_ieee_fill() build them.
#include "sources/pfc_reader.hpp"
#include "sources/rtnl_message.hpp"

#include "fake_dcb_kernel.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <linux/dcbnl.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace rdmad;
using rdmad::test::Out;

namespace {

void header(Out& o, uint16_t type, uint32_t len_override = 0) {
    struct nlmsghdr h {};
    h.nlmsg_type = type;
    h.nlmsg_len = len_override;
    o.raw(&h, sizeof h);
}
void finish(Out& o, size_t at) {
    auto len = static_cast<uint32_t>(o.b.size() - at);
    std::memcpy(o.b.data() + at, &len, sizeof len);
}
void newlink(Out& o, int32_t ifindex, uint16_t type = RTM_NEWLINK) {
    const size_t at = o.b.size();
    header(o, type);
    struct ifinfomsg ifi {};
    ifi.ifi_index = ifindex;
    o.raw(&ifi, sizeof ifi);
    finish(o, at);
}
/// dcbnl_notify() with dcbnl_ieee_fill(): IFNAME, IEEE { IEEE_PFC }, DCBX.
void dcb_notice(Out& o, const char* ifname, uint8_t pfc_en, uint8_t cmd = DCB_CMD_IEEE_SET,
                bool with_pfc = true) {
    const size_t at = o.b.size();
    header(o, RTM_SETDCB);
    struct dcbmsg d {};
    d.cmd = cmd;
    o.raw(&d, sizeof d);
    o.attr(DCB_ATTR_IFNAME, ifname, std::strlen(ifname) + 1);
    if (with_pfc) {
        Out nested;
        struct ieee_pfc pfc {};
        pfc.pfc_cap = 8;
        pfc.pfc_en = pfc_en;
        pfc.delay = 7;
        nested.attr(DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
        o.attr(DCB_ATTR_IEEE | NLA_F_NESTED, nested.b.data(), nested.b.size());
    }
    const uint8_t dcbx = DCB_CAP_DCBX_LLD_MANAGED | DCB_CAP_DCBX_VER_IEEE;
    o.attr(DCB_ATTR_DCBX, &dcbx, 1);
    finish(o, at);
}

} // namespace

TEST_CASE("rtnl: link and DCB notifications of one datagram, in order") {
    Out o;
    newlink(o, 7);
    dcb_notice(o, "ens1f0np0", 0x18);
    newlink(o, 9, RTM_DELLINK);
    const RtnlNotices n = parse_rtnl_datagram(o.b);
    CHECK(n.links == std::vector<int32_t>{7, 9});
    REQUIRE(n.dcb.size() == 1);
    CHECK(n.dcb[0].ifname == "ens1f0np0");
    CHECK(n.dcb[0].cmd == DCB_CMD_IEEE_SET);
    REQUIRE(n.dcb[0].pfc);
    CHECK(n.dcb[0].pfc->pfc_en == 0x18);
    CHECK(n.dcb[0].pfc->pfc_cap == 8);
    CHECK(n.dcb[0].pfc->delay == 7);
    CHECK(n.dcb[0].dcbx == uint8_t(DCB_CAP_DCBX_LLD_MANAGED | DCB_CAP_DCBX_VER_IEEE));
    CHECK(n.malformed == 0);
}

/// rtmsg_ifa() (net/ipv4/devinet.c): RTM_NEWADDR/RTM_DELADDR with struct ifaddrmsg.
void address(Out& o, uint32_t ifindex, uint16_t type = RTM_NEWADDR, uint8_t family = AF_INET) {
    const size_t at = o.b.size();
    header(o, type);
    struct ifaddrmsg ifa {};
    ifa.ifa_family = family;
    ifa.ifa_prefixlen = 24;
    ifa.ifa_index = ifindex;
    o.raw(&ifa, sizeof ifa);
    finish(o, at);
}

TEST_CASE("rtnl: address notifications name their netdev; ifindex 0 or past INT32_MAX refused") {
    Out o;
    address(o, 7);
    address(o, 8, RTM_DELADDR, AF_INET6);
    newlink(o, 9);
    address(o, 0);
    address(o, 0x80000000u);
    const RtnlNotices n = parse_rtnl_datagram(o.b);
    CHECK(n.addresses == std::vector<int32_t>{7, 8});
    CHECK(n.links == std::vector<int32_t>{9});
    CHECK(n.malformed == 2);
    Out shortmsg;
    header(shortmsg, RTM_NEWADDR, sizeof(nlmsghdr) + 4);
    shortmsg.raw("abcd", 4);
    CHECK(parse_rtnl_datagram(shortmsg.b).malformed == 1);
}

TEST_CASE("rtnl: a CEE notification names the netdev without PFC state") {
    Out o;
    dcb_notice(o, "eth2", 0, DCB_CMD_SET_ALL, false);
    const RtnlNotices n = parse_rtnl_datagram(o.b);
    REQUIRE(n.dcb.size() == 1);
    CHECK(n.dcb[0].ifname == "eth2");
    CHECK_FALSE(n.dcb[0].pfc);
}

TEST_CASE("rtnl: a length of 2 GiB or more is refused, not walked (libmnl casts it to int)") {
    Out o;
    newlink(o, 3);
    const size_t at = o.b.size();
    header(o, RTM_NEWLINK, 0x80000010u);
    (void)at;
    const RtnlNotices n = parse_rtnl_datagram(o.b);
    CHECK(n.malformed == 1);
    CHECK(n.links.empty()); // the datagram is refused as a whole
}

TEST_CASE("rtnl: short and odd messages are counted and skipped") {
    Out o;
    {
        const size_t at = o.b.size();
        header(o, RTM_NEWLINK); // no struct ifinfomsg
        finish(o, at);
    }
    newlink(o, 0);  // no ifindex 0
    newlink(o, -4); // nor a negative one
    {
        const size_t at = o.b.size();
        header(o, RTM_SETDCB);
        struct dcbmsg d {};
        d.cmd = DCB_CMD_IEEE_SET;
        o.raw(&d, sizeof d); // no IFNAME
        finish(o, at);
    }
    dcb_notice(o, "way-too-long-ifname", 1); // longer than IFNAMSIZ - 1
    newlink(o, 12);
    const RtnlNotices n = parse_rtnl_datagram(o.b);
    CHECK(n.links == std::vector<int32_t>{12});
    CHECK(n.dcb.empty());
    CHECK(n.malformed == 5);
    CHECK(parse_rtnl_datagram({}).malformed == 1);
}

TEST_CASE("PfcReader: one read per netdev; notifications and read-backs need none") {
    rdmad::test::FakeKernel kernel;
    kernel.netdevs["eth0"].pfc_en = 0x08;
    kernel.netdevs["veth0"].dcbnl_ops = false;
    dcb::DcbClient client(kernel);
    PfcReader reader(&client);
    auto changed = reader.refresh({"eth0", "veth0"});
    CHECK(changed == std::set<std::string>{"eth0", "veth0"});
    CHECK(kernel.gets == 1); // the fake counts the GETs a dcbnl_ops netdev answers (eth0)
    CHECK(reader.get("eth0").status == PfcActual::Status::ok);
    CHECK(reader.get("eth0").priorities == std::vector<uint8_t>{3});
    CHECK(reader.get("eth0").pfc_cap == 8);
    CHECK(reader.get("veth0").status == PfcActual::Status::not_supported);
    CHECK(reader.get("eth9").status == PfcActual::Status::unknown);
    CHECK(reader.refresh({"eth0", "veth0"}).empty());
    CHECK(kernel.gets == 1);

    Out o;
    dcb_notice(o, "eth0", 0x30);
    auto n = parse_rtnl_datagram(o.b);
    REQUIRE(n.dcb.size() == 1);
    CHECK(reader.note(n.dcb[0]));
    CHECK(reader.get("eth0").priorities == std::vector<uint8_t>{4, 5});
    CHECK(reader.get("eth0").willing == true); // LLD-managed, not host: the switch may set it
    CHECK_FALSE(reader.note(n.dcb[0]));        // the same again: no change
    CHECK(kernel.gets == 1);

    dcb::DcbNotification cee;
    cee.ifname = "eth0";
    CHECK(reader.note(cee)); // without state: read at the next refresh_noted()
    CHECK(reader.noted());
    CHECK(reader.refresh_noted() == std::set<std::string>{"eth0"}); // kernel still says 0x08
    CHECK(kernel.gets == 2);
    CHECK(reader.get("eth0").priorities == std::vector<uint8_t>{3});

    dcb::DcbNotification other;
    other.ifname = "eth7"; // serves no RDMA port
    CHECK_FALSE(reader.note(other));

    dcb::DcbResult back;
    back.status = dcb::DcbResult::Status::ok;
    back.state.pfc_cap = 8;
    back.state.pfc_en = 0x01;
    CHECK(reader.update("eth0", back));
    CHECK(reader.get("eth0").priorities == std::vector<uint8_t>{0});

    CHECK(reader.refresh({"veth0"}).empty()); // eth0 serves no port now: forgotten
    CHECK(reader.get("eth0").status == PfcActual::Status::unknown);
}

TEST_CASE("PfcReader: the APP table's DSCP entries and trust, kept current without reads",
          "[dcb][app]") {
    rdmad::test::FakeKernel kernel;
    kernel.netdevs["eth0"].pfc_en = 0x08;
    // dcb app add dev eth0 dscp-prio 46:5 26:3 ethtype-prio 0x8906:3 (FCoE, not a DSCP)
    kernel.netdevs["eth0"].app = {{IEEE_8021QAZ_APP_SEL_DSCP, 5, 46},
                                  {IEEE_8021QAZ_APP_SEL_DSCP, 3, 26},
                                  {IEEE_8021QAZ_APP_SEL_ETHERTYPE, 3, 0x8906}};
    kernel.netdevs["eth1"].pfc_en = 0x08; // no APP entry: PCP trust
    dcb::DcbClient client(kernel);
    PfcReader reader(&client);
    reader.refresh({"eth0", "eth1"});
    CHECK(kernel.gets == 2);
    using Map = std::vector<std::pair<uint8_t, uint8_t>>;
    CHECK(reader.get("eth0").trust == "dscp");
    CHECK(reader.get("eth0").dscp_map == Map{{26, 3}, {46, 5}}); // sorted by DSCP
    CHECK(reader.get("eth1").trust == "pcp");
    CHECK(reader.get("eth1").dscp_map.empty());

    // dcb app del dev eth0 dscp-prio 46:5: the kernel's notification carries the table.
    Out o;
    const size_t at = o.b.size();
    header(o, RTM_SETDCB);
    struct dcbmsg d {};
    d.cmd = DCB_CMD_IEEE_SET;
    o.raw(&d, sizeof d);
    o.attr(DCB_ATTR_IFNAME, "eth0", 5);
    Out nested, table;
    struct ieee_pfc pfc {};
    pfc.pfc_cap = 8;
    pfc.pfc_en = 0x08;
    nested.attr(DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
    struct dcb_app app {
        IEEE_8021QAZ_APP_SEL_DSCP, 3, 26
    };
    table.attr(DCB_ATTR_IEEE_APP, &app, sizeof app);
    nested.attr(DCB_ATTR_IEEE_APP_TABLE, table.b.data(), table.b.size());
    o.attr(DCB_ATTR_IEEE | NLA_F_NESTED, nested.b.data(), nested.b.size());
    const uint8_t dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
    o.attr(DCB_ATTR_DCBX, &dcbx, 1);
    finish(o, at);
    auto n = parse_rtnl_datagram(o.b);
    REQUIRE(n.dcb.size() == 1);
    CHECK(reader.note(n.dcb[0]));
    CHECK(reader.get("eth0").dscp_map == Map{{26, 3}});
    CHECK_FALSE(reader.note(n.dcb[0])); // the same again: no change
    CHECK(kernel.gets == 2);

    // A notification without an APP table, and rdmad's own SET that had nothing to do (no
    // read): the DSCP facts stay as they were.
    Out bare;
    dcb_notice(bare, "eth0", 0x18);
    auto b = parse_rtnl_datagram(bare.b);
    REQUIRE(b.dcb.size() == 1);
    CHECK(!b.dcb[0].app);
    CHECK(reader.note(b.dcb[0]));
    CHECK(reader.get("eth0").priorities == std::vector<uint8_t>{3, 4});
    CHECK(reader.get("eth0").dscp_map == Map{{26, 3}});
    CHECK(reader.get("eth0").trust == "dscp");
    dcb::PfcState known;
    known.pfc_cap = 8;
    known.pfc_en = 0x18;
    auto same = client.set_pfc("eth0", 0x18, known);
    REQUIRE(same.ok());
    CHECK(!same.app);
    (void)reader.update("eth0", same); // (it carries no DCBX either: `willing` may change)
    CHECK(reader.get("eth0").dscp_map == Map{{26, 3}});
    CHECK(kernel.gets == 2);

    // A SET's read-back is an IEEE_GET: it brings the table the kernel has (still 46 and 26).
    auto set = client.set_pfc("eth0", 0x08, known);
    REQUIRE(set.ok());
    REQUIRE(set.app);
    CHECK(reader.update("eth0", set));
    CHECK(reader.get("eth0").priorities == std::vector<uint8_t>{3});
    CHECK(reader.get("eth0").dscp_map == Map{{26, 3}, {46, 5}});
}

TEST_CASE("PfcReader without a netlink socket reads every netdev as failed") {
    PfcReader reader(nullptr);
    reader.refresh({"eth0"});
    CHECK(reader.get("eth0").status == PfcActual::Status::failed);
    CHECK(reader.get("eth0").message == "no netlink socket");
}

TEST_CASE("lldpad_running: its pid file names a process called lldpad") {
    rdmad::test::TempDir dir("rdmad-lldpad");
    const std::string run = dir.path.string();
    CHECK_FALSE(lldpad_running(run)); // no pid file
    std::ofstream(dir.path / "lldpad.pid") << getpid() << "\n";
    CHECK_FALSE(lldpad_running(run)); // a stale pid file: this process is not lldpad
    std::ofstream(dir.path / "lldpad.pid") << "garbage\n";
    CHECK_FALSE(lldpad_running(run));
    // A process whose comm is "lldpad": /bin/sleep under that name.
    const auto exe = dir.path / "lldpad";
    std::filesystem::copy_file("/bin/sleep", exe);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        execl(exe.c_str(), "lldpad", "10", static_cast<char*>(nullptr));
        _exit(127);
    }
    std::ofstream(dir.path / "lldpad.pid") << child << "\n";
    bool seen = false;
    for (int i = 0; i < 200 && !seen; ++i) { // until the exec has happened
        seen = lldpad_running(run);
        if (!seen)
            usleep(5000);
    }
    CHECK(seen);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
}
