// SPDX-License-Identifier: MIT
#include "actuators/vf_guid.hpp"

#include "inventory/attributes.hpp"
#include "sources/vf_guid_reader.hpp"
#include "util/sysfs.hpp"
#include "util/text.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

namespace rdmad {

std::vector<uint8_t> vf_guid_request(const VfGuidRequest& r, uint32_t seq) {
    // ifinfomsg + a list of two IFLA_VF_INFO, each with one struct ifla_vf_guid: far below this.
    std::vector<uint8_t> buf(256);
    nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
    nlh->nlmsg_type = RTM_SETLINK;
    nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    nlh->nlmsg_seq = seq;
    auto* ifi = static_cast<ifinfomsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = r.ifindex;
    nlattr* list = mnl_attr_nest_start(nlh, IFLA_VFINFO_LIST);
    for (const auto& [type, guid] : {std::pair<uint16_t, uint64_t>{IFLA_VF_IB_NODE_GUID, r.node},
                                     std::pair<uint16_t, uint64_t>{IFLA_VF_IB_PORT_GUID, r.port}}) {
        nlattr* info = mnl_attr_nest_start(nlh, IFLA_VF_INFO);
        ifla_vf_guid g{};
        g.vf = r.vf;
        g.guid = guid;
        mnl_attr_put(nlh, type, sizeof g, &g);
        mnl_attr_nest_end(nlh, info);
    }
    mnl_attr_nest_end(nlh, list);
    buf.resize(nlh->nlmsg_len);
    return buf;
}

namespace {

/// The kernel's answer to request `seq`: 0 for the ACK, else the errno (ETIMEDOUT when none
/// came, EPROTO for something that is no answer).
int answer(dcb::NetlinkTransport& t, uint32_t seq) {
    std::vector<uint8_t> buf(MNL_SOCKET_BUFFER_SIZE);
    // The socket is this request's own: the ACK comes first; a data message before it (none is
    // asked) is skipped, a few at most.
    for (int i = 0; i < 8; ++i) {
        const ssize_t n = t.recv(buf);
        if (n < 0)
            return static_cast<int>(-n);
        errno = 0;
        const int rc = mnl_cb_run(buf.data(), static_cast<size_t>(n), seq, t.port_id(), nullptr,
                                  nullptr);
        if (rc == MNL_CB_STOP)
            return 0; // the ACK: NLMSG_ERROR with error 0 (mnl_cb_error())
        if (rc == MNL_CB_ERROR)
            return errno ? errno : EPROTO; // the kernel's -error, or a bad sequence (EPROTO)
    }
    return EPROTO;
}

} // namespace

VfGuidWrite set_vf_guids(dcb::NetlinkTransport& t, const VfGuidRequest& r,
                         const std::string& class_dir) {
    VfGuidWrite w;
    const std::string what =
        fmt::format("RTM_SETLINK {} (ifindex {}) vf {} node_guid {} port_guid {}", r.netdev,
                    r.ifindex, r.vf, guid_text(r.node), guid_text(r.port));
    const auto seq = static_cast<uint32_t>(time(nullptr));
    const std::vector<uint8_t> bytes = vf_guid_request(r, seq);
    const ssize_t sent = t.send(bytes);
    w.error = sent < 0 ? static_cast<int>(-sent) : answer(t, seq);
    if (w.error) {
        w.message = fmt::format("{}: {}", what, std::strerror(w.error));
        return w;
    }
    const std::string dev = class_dir + "/" + r.vf_device;
    // 0 is no GUID (the config refuses it): it stands for "unreadable" here.
    const auto node_text = sysfs::read_text(dev, "node_guid");
    const uint64_t node =
        node_text ? parse_guid_text(trim_attribute(*node_text)).value_or(0) : 0;
    uint64_t port = 0;
    if (const auto gid_text = sysfs::read_text(dev, "ports/1/gids/0"))
        if (const auto gid = parse_gid(*gid_text)) {
            PortState p;
            p.gids.push_back({0, *gid, {}, {}});
            port = port_guid_of(p).value_or(0);
        }
    if (node == r.node && (port == 0 || port == r.port))
        return w;
    w.pending = true;
    w.message = fmt::format(
        "{}: the kernel took them, but {} ({}) reads node_guid {}{}: mlx5 gives a bound VF its "
        "new GUIDs when its driver binds it again, and rdmad does not unbind a VF an application "
        "or a VM may be using; unbind and bind it when it is free (echo {} > "
        "/sys/bus/pci/drivers/mlx5_core/unbind; echo {} > /sys/bus/pci/drivers/mlx5_core/bind)",
        what, r.vf_device, r.vf_pci, node ? guid_text(node) : "(unreadable)",
        port ? fmt::format(" and port GUID {}", guid_text(port)) : "", r.vf_pci, r.vf_pci);
    return w;
}

} // namespace rdmad
