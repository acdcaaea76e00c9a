// SPDX-License-Identifier: MIT
//
// vf_guids (reconcile/settings/vf_guids.cpp; its key is in test_settings.cpp): GUID text in
// the forms `ip link` (iproute2 get_guid()) and sysfs node_guid (node_guid_show(),
// "%04x:%04x:%04x:%04x") write it, the compare and plan from Inventory values, and the
// actuator's RTM_SETLINK request (include/uapi/linux/if_link.h) and its answer over a fake
// transport.
#include "actuators/vf_guid.hpp"
#include "config/desired.hpp"
#include "reconcile/plan.hpp"
#include "sources/vf_guid_reader.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

using namespace rdmad;

namespace {

const std::string kPfPath = "/sys/devices/pci0000:0b/0000:0b:00.0/0000:0c:00.0/infiniband/mlx5_0";

/// mlx5_0 as an InfiniBand PF with IPoIB netdev ib0 (ifindex 1008) and `numvfs` VFs.
DeviceState pf(uint32_t numvfs, bool ipoib = true) {
    DeviceState d;
    d.name = "mlx5_0";
    d.syspath = kPfPath;
    d.pci_address = "0000:0c:00.0";
    d.kernel_driver = "mlx5_core";
    d.sriov.numvfs = numvfs;
    d.sriov.totalvfs = 16;
    PortState p;
    p.number = 1;
    p.link_layer = "InfiniBand";
    p.transport = "InfiniBand";
    if (ipoib) {
        p.netdev = "ib0";
        p.link_index = 1008;
    }
    d.ports.push_back(p);
    return d;
}

/// VF `n` of mlx5_0 (mlx5_1<n>, 0000:0c:00.<n+1>) reading `node` and, in GID 0, `port`.
DeviceState vf(uint32_t n, const std::string& node, const std::string& port) {
    DeviceState d;
    d.name = "mlx5_1" + std::to_string(n);
    d.pci_address = "0000:0c:00." + std::to_string(n + 1);
    d.syspath = "/sys/devices/pci0000:0b/0000:0b:00.0/" + d.pci_address + "/infiniband/" + d.name;
    d.kernel_driver = "mlx5_core";
    d.physical_function = "0000:0c:00.0";
    d.vf_index = static_cast<int32_t>(n);
    d.node_guid = node;
    PortState p;
    p.number = 1;
    p.link_layer = "InfiniBand";
    p.transport = "InfiniBand";
    p.gids.push_back({0, *Gid::parse("fe80:0000:0000:0000:" + port), {}, {}});
    d.ports.push_back(p);
    return d;
}

Plan plan_of(const std::vector<DeviceState>& devices, const DeviceDesired& want) {
    HostState host;
    for (const auto& d : devices)
        host.devices[d.syspath] = d;
    return make_plan(host, {{kPfPath, want}}, {}, {});
}

DeviceDesired range(uint64_t node, uint64_t port) {
    DeviceDesired want;
    want.vf_guids = VfGuids{{}, VfGuid{0, node, port}};
    return want;
}

} // namespace

TEST_CASE("a GUID reads as ip link and as sysfs node_guid write it, nothing else") {
    CHECK(parse_guid_text("00:11:22:33:44:55:66:77") == 0x0011223344556677u);
    CHECK(parse_guid_text("0011:2233:4455:6677") == 0x0011223344556677u);
    CHECK(parse_guid_text("0002:C903:0031:78F0") == 0x0002c903003178f0u);
    CHECK(parse_guid_text("ff:ff:ff:ff:ff:ff:ff:ff") == UINT64_MAX);
    CHECK(parse_guid_text("0:11:22:33:44:55:66:77") == std::nullopt); // get_guid(): 23 chars
    CHECK(parse_guid_text("2:c903:31:78f0") == std::nullopt);
    CHECK(parse_guid_text("00:11:22:33:44:55:66") == std::nullopt);
    CHECK(parse_guid_text("0011:2233:4455:6677\n") == std::nullopt);
    CHECK(parse_guid_text("0011-2233-4455-6677") == std::nullopt);
    CHECK(parse_guid_text("00:11:22:33:44:55:66:7g") == std::nullopt);
    CHECK(guid_text(0x0011223344556677u) == "0011:2233:4455:6677");
    CHECK(guid_text(1) == "0000:0000:0000:0001");
}

TEST_CASE("only a VF whose GUIDs differ is written, on the PF's IPoIB netdev") {
    const Plan plan = plan_of({pf(2), vf(0, "0011:2233:4455:6600", "0011:2233:4455:6700"),
                               vf(1, "0000:0000:0000:0101", "0011:2233:4455:6701")},
                              range(0x0011223344556600u, 0x0011223344556700u));
    REQUIRE(plan.actions.size() == 1);
    const Action& a = plan.actions[0];
    CHECK(a.kind == Action::Kind::vf_guids);
    CHECK(a.device == "mlx5_11");
    CHECK(a.syspath == kPfPath);
    CHECK(a.pci_address == "0000:0c:00.2");
    CHECK(a.netdev == "ib0");
    CHECK(a.ifindex == 1008);
    CHECK(a.number == 1);
    CHECK(a.value == "0011:2233:4455:6601 0011:2233:4455:6701");
    CHECK(a.setting == "DesiredVFGUIDs");
    CHECK(a.from == "vf 1: 0000:0000:0000:0101 0011:2233:4455:6701");
    CHECK(a.to == "vf 1: 0011:2233:4455:6601 0011:2233:4455:6701");
    CHECK_FALSE(plan.ports.at(kPfPath).at(1).in_sync);
}

TEST_CASE("VFs that hold their GUIDs plan nothing; a list leaves VFs it does not name alone") {
    const DeviceState vf0 = vf(0, "0011:2233:4455:6600", "0011:2233:4455:6700");
    const DeviceState vf1 = vf(1, "0000:0000:0000:0101", "0000:0000:0000:0201");
    CHECK(plan_of({pf(2), vf0}, range(0x0011223344556600u, 0x0011223344556700u)).actions.empty());
    DeviceDesired list;
    list.vf_guids = VfGuids{{{0, 0x0011223344556600u, 0x0011223344556700u}}, std::nullopt};
    const Plan plan = plan_of({pf(2), vf0, vf1}, list);
    CHECK(plan.actions.empty());
    CHECK((!plan.problems.count(kPfPath) || plan.problems.at(kPfPath).empty()));
}

TEST_CASE("a PF without an IPoIB netdev is vf-guid-no-ipoib, and nothing is written") {
    const Plan plan = plan_of({pf(1, false), vf(0, "0000:0000:0000:0100", "0000:0000:0000:0200")},
                              range(0x0011223344556600u, 0x0011223344556700u));
    CHECK(plan.actions.empty());
    REQUIRE(plan.problems.at(kPfPath).size() == 1);
    CHECK(plan.problems.at(kPfPath)[0].code == "vf-guid-no-ipoib");
    CHECK(plan.problems.at(kPfPath)[0].severity == "warning");
}

TEST_CASE("a RoCE PF asked vf_guids is vf-guid-not-infiniband, without a modprobe remedy") {
    DeviceState roce = pf(1, false);
    roce.ports[0].link_layer = "Ethernet";
    roce.ports[0].transport = "RoCE";
    roce.ports[0].netdev = "enp12s0f0np0";
    roce.ports[0].link_index = 7;
    const Plan plan = plan_of({roce, vf(0, "0000:0000:0000:0100", "0000:0000:0000:0200")},
                              range(0x0011223344556600u, 0x0011223344556700u));
    CHECK(plan.actions.empty());
    REQUIRE(plan.problems.at(kPfPath).size() == 1);
    const Problem& p = plan.problems.at(kPfPath)[0];
    CHECK(p.code == "vf-guid-not-infiniband");
    CHECK(p.severity == "warning");
    CHECK(p.text == "VF GUIDs cannot be set: vf_guids applies to InfiniBand PFs; mlx5_0 port 1 "
                    "is Ethernet");
    REQUIRE(p.evidence.size() == 1);
    CHECK(p.evidence[0] == kPfPath + "/ports/1/link_layer = Ethernet");
    CHECK(p.remedy.find("modprobe") == std::string::npos);
    CHECK(p.remedy.find("ib_ipoib") == std::string::npos);
}

namespace {

/// The kernel's side of one RTM_SETLINK: keeps the request, answers netlink_ack() with `error`.
struct AckingKernel final : dcb::NetlinkTransport {
    explicit AckingKernel(int error) : error_(error) {}
    ssize_t send(std::span<const uint8_t> bytes) override {
        sent.assign(bytes.begin(), bytes.end());
        return static_cast<ssize_t>(bytes.size());
    }
    ssize_t recv(std::span<uint8_t> buffer) override {
        nlmsghdr request;
        std::memcpy(&request, sent.data(), sizeof request);
        nlmsghdr h{};
        h.nlmsg_len = NLMSG_HDRLEN + sizeof(nlmsgerr);
        h.nlmsg_type = NLMSG_ERROR;
        h.nlmsg_flags = NLM_F_CAPPED;
        h.nlmsg_seq = request.nlmsg_seq;
        nlmsgerr e{};
        e.error = -error_;
        e.msg = request;
        std::memcpy(buffer.data(), &h, sizeof h);
        std::memcpy(buffer.data() + NLMSG_HDRLEN, &e, sizeof e);
        return h.nlmsg_len;
    }
    uint32_t port_id() const override { return 4242; }
    std::vector<uint8_t> sent;

  private:
    int error_;
};

VfGuidRequest request() {
    VfGuidRequest r;
    r.ifindex = 1008;
    r.netdev = "ib0";
    r.vf = 3;
    r.node = 0x0011223344556603u;
    r.port = 0x0011223344556703u;
    r.vf_pci = "0000:0c:00.4";
    r.vf_device = "mlx5_13";
    return r;
}

} // namespace

TEST_CASE("the request is RTM_SETLINK on the PF's ifindex, ACK asked, one IFLA_VF_INFO a GUID") {
    const std::vector<uint8_t> m = vf_guid_request(request(), 7);
    nlmsghdr h;
    std::memcpy(&h, m.data(), sizeof h);
    CHECK(h.nlmsg_len == m.size());
    CHECK(h.nlmsg_type == RTM_SETLINK);
    CHECK(h.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK));
    CHECK(h.nlmsg_seq == 7u);
    ifinfomsg ifi;
    std::memcpy(&ifi, m.data() + NLMSG_HDRLEN, sizeof ifi);
    CHECK(ifi.ifi_family == AF_UNSPEC);
    CHECK(ifi.ifi_index == 1008);
    // IFLA_VFINFO_LIST { IFLA_VF_INFO { IFLA_VF_IB_NODE_GUID }, IFLA_VF_INFO {
    // IFLA_VF_IB_PORT_GUID } }, struct ifla_vf_guid each (4-byte aligned nlattrs).
    size_t at = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof ifi);
    nlattr list;
    std::memcpy(&list, m.data() + at, sizeof list);
    CHECK((list.nla_type & NLA_TYPE_MASK) == IFLA_VFINFO_LIST);
    const size_t info_len = NLA_HDRLEN + NLA_HDRLEN + sizeof(ifla_vf_guid);
    CHECK(list.nla_len == NLA_HDRLEN + 2 * info_len);
    at += NLA_HDRLEN;
    for (const auto& [type, guid] : {std::pair<int, uint64_t>{IFLA_VF_IB_NODE_GUID, 0x0011223344556603u},
                                     std::pair<int, uint64_t>{IFLA_VF_IB_PORT_GUID, 0x0011223344556703u}}) {
        nlattr info, g;
        std::memcpy(&info, m.data() + at, sizeof info);
        CHECK((info.nla_type & NLA_TYPE_MASK) == IFLA_VF_INFO);
        CHECK(info.nla_len == info_len);
        std::memcpy(&g, m.data() + at + NLA_HDRLEN, sizeof g);
        CHECK(g.nla_type == type);
        CHECK(g.nla_len == NLA_HDRLEN + sizeof(ifla_vf_guid));
        ifla_vf_guid v;
        std::memcpy(&v, m.data() + at + 2 * NLA_HDRLEN, sizeof v);
        CHECK(v.vf == 3u);
        CHECK(v.guid == guid);
        at += info_len;
    }
    CHECK(at == m.size());
}

TEST_CASE("a refusal is the kernel's errno with its text; an ACK is read back from the VF") {
    test::TempDir dir;
    const std::string dev = "mlx5_13/";
    AckingKernel refusing(EOPNOTSUPP);
    const VfGuidWrite no = set_vf_guids(refusing, request(), dir.path.string());
    CHECK(no.error == EOPNOTSUPP);
    CHECK_FALSE(no.pending);
    CHECK(no.message == "RTM_SETLINK ib0 (ifindex 1008) vf 3 node_guid 0011:2233:4455:6603 "
                        "port_guid 0011:2233:4455:6703: Operation not supported");

    // Taken, and the VF reads them: ok.
    dir.write(dev + "node_guid", "0011:2233:4455:6603\n");
    dir.write(dev + "ports/1/gids/0", "fe80:0000:0000:0000:0011:2233:4455:6703\n");
    AckingKernel taking(0);
    CHECK(set_vf_guids(taking, request(), dir.path.string()).ok());

    // Taken, and the VF (bound, mlx5) reads its old port GUID: pending, naming the rebind.
    dir.write(dev + "ports/1/gids/0", "fe80:0000:0000:0000:0000:0000:0000:0203\n");
    const VfGuidWrite later = set_vf_guids(taking, request(), dir.path.string());
    CHECK(later.error == 0);
    CHECK(later.pending);
    CHECK(later.message.find("mlx5_13 (0000:0c:00.4) reads node_guid 0011:2233:4455:6603 and "
                             "port GUID 0000:0000:0000:0203") != std::string::npos);
    CHECK(later.message.find("echo 0000:0c:00.4 > /sys/bus/pci/drivers/mlx5_core/bind") !=
          std::string::npos);
}
