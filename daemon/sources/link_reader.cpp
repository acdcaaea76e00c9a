// SPDX-License-Identifier: MIT
#include "sources/link_reader.hpp"

#include "inventory/attributes.hpp"
#include "sources/device_paths.hpp"
#include "util/sysfs.hpp"

#include <charconv>

namespace rdmad {
namespace {

std::optional<int32_t> to_ifindex(std::string_view text) {
    text = trim_attribute(text);
    int32_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || v <= 0)
        return std::nullopt;
    return v;
}

std::optional<uint32_t> to_unsigned(std::string_view text) {
    text = trim_attribute(text);
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size())
        return std::nullopt;
    return v;
}

std::optional<int64_t> to_hex(std::string_view text) {
    text = trim_attribute(text);
    if (text.size() < 3 || text.substr(0, 2) != "0x")
        return std::nullopt;
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), v, 16);
    if (ec != std::errc() || p != text.data() + text.size())
        return std::nullopt;
    return v;
}

} // namespace

std::optional<LinkState> read_link(const std::string& syspath, PciReads& pci) {
    LinkState link;
    link.syspath = syspath;
    link.name = device_paths::sysname(syspath);
    std::optional<int32_t> index;
    if (auto t = sysfs::read_text(link.syspath, "ifindex"))
        index = to_ifindex(*t);
    if (!index)
        if (auto p = device_paths::uevent_property(syspath, "IFINDEX"))
            index = to_ifindex(*p);
    if (!index)
        return std::nullopt;
    link.index = *index;
    link.pci_address = pci.function_of(syspath).address;
    link.driver = sysfs::link_basename(link.syspath, "device/driver");
    if (auto t = sysfs::read_text(link.syspath, "operstate"))
        link.operstate = std::string(trim_attribute(*t));
    link.master = sysfs::link_basename(link.syspath, "master");
    // DEVTYPE=vlan|bond|vxlan|... (SET_NETDEV_DEVTYPE(), include/linux/netdevice.h); absent for
    // a physical port. The GID choice trusts VLANs and bonds, not overlays (doctor/gid_choice).
    if (auto t = device_paths::uevent_property(syspath, "DEVTYPE"))
        link.kind = *t;
    // `iflink`: the ifindex of the netdev a VLAN, macvlan or ipvlan sits on, its own for a
    // physical port (net/core/net-sysfs.c iflink_show(), "%d": dev_get_iflink()).
    if (auto t = sysfs::read_text(link.syspath, "iflink"))
        if (auto lower = to_ifindex(*t); lower && *lower != link.index)
            link.lower_ifindex = *lower;
    if (auto t = sysfs::read_text(link.syspath, "dev_port"))
        link.dev_port = to_unsigned(*t).value_or(0);
    if (auto t = sysfs::read_text(link.syspath, "type"))
        link.type = to_unsigned(*t).value_or(1);
    // `carrier` fails with EINVAL while the netdev is administratively down
    // (net/core/net-sysfs.c carrier_show); `flags` is "0x%x" and `mtu` "%d" (same file).
    if (auto t = sysfs::read_text(link.syspath, "carrier"))
        link.carrier = std::string(trim_attribute(*t));
    if (auto t = sysfs::read_text(link.syspath, "flags"))
        link.flags = to_hex(*t).value_or(-1);
    if (auto t = sysfs::read_text(link.syspath, "mtu"))
        link.mtu = to_unsigned(*t).value_or(0);
    return link;
}

AuxDevice read_aux_device(const std::string& syspath, PciReads& pci) {
    AuxDevice aux;
    const std::string& sp = syspath;
    aux.name = device_paths::sysname(syspath);
    aux.pci_address = pci.function_of(syspath).address;
    aux.driver = sysfs::link_basename(sp, "driver");
    if (auto t = sysfs::read_text(sp, "modalias"))
        aux.modalias = std::string(trim_attribute(*t));
    else if (auto m = device_paths::uevent_property(sp, "MODALIAS"))
        aux.modalias = std::move(*m);
    return aux;
}

} // namespace rdmad
