// SPDX-License-Identifier: MIT
#include "inventory/properties.hpp"

#include "inventory/inventory.hpp"
#include "inventory/object_path.hpp"
#include "inventory/problems.hpp"
#include "inventory/property_rows.hpp"
#include "reconcile/settings/setting.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace rdmad {
namespace {

using rows::internal;
using rows::member;
using rows::same_member;

// ---- values -------------------------------------------------------------------------------

bool printable_ascii(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

/// Outside text that a message shows (a problem's text, remedy, evidence): message_text().
void write_message(ValueWriter& w, const std::string& s) {
    if (printable_ascii(s) && s.size() <= kMaxMessageBytes)
        w.string(s);
    else
        w.string(message_text(s));
}

// ---- references ---------------------------------------------------------------------------

void write_problems(ValueWriter& w, const DeviceState& d, const PropertyContext&) {
    write_problem_summaries(w, d.problems);
}

/// The members a GID table entry and the recommended GID share, as fields of their struct.
void write_gid_fields(ValueWriter& w, uint32_t index, const std::string& gid,
                      const std::string& type, const std::string& netdev) {
    w.field("Index");
    w.u32(index);
    w.field("GID");
    write_line(w, gid);
    w.field("Type");
    write_line(w, type);
    w.field("Netdev");
    write_line(w, netdev);
}

bool same_problems(const DeviceState& a, const DeviceState& b) {
    std::vector<const Problem*> x, y;
    for (const auto& p : a.problems)
        if (in_problems_property(p))
            x.push_back(&p);
    for (const auto& p : b.problems)
        if (in_problems_property(p))
            y.push_back(&p);
    return std::equal(x.begin(), x.end(), y.begin(), y.end(),
                      [](const Problem* p, const Problem* q) { return *p == *q; });
}

void write_problem_details(ValueWriter& w, const DeviceState& d, const PropertyContext&) {
    w.begin_array("(sssassu)");
    for (const auto& p : d.problems) {
        w.begin_struct("sssassu");
        w.field("Code");
        w.string(valid_utf8(p.code));
        w.field("Severity");
        w.string(valid_utf8(p.severity));
        w.field("Text");
        write_message(w, p.text);
        w.field("Evidence");
        w.begin_array("s");
        for (const auto& e : p.evidence)
            write_message(w, e);
        w.end_array();
        w.field("Remedy");
        write_message(w, p.remedy);
        w.field("Port");
        w.u32(p.port);
        w.end_struct();
    }
    w.end_array();
}

const Property<DeviceState> kDevice[] = {
    member<&DeviceState::name>("Name"),
    member<&DeviceState::node_type>("NodeType"),
    member<&DeviceState::node_guid>("NodeGUID"),
    member<&DeviceState::sys_image_guid>("SysImageGUID"),
    member<&DeviceState::firmware_version>("FirmwareVersion"),
    member<&DeviceState::hca_type>("HCAType"),
    member<&DeviceState::board_id>("BoardID"),
    member<&DeviceState::node_description>("NodeDescription"),
    member<&DeviceState::pci_address>("PCIAddress"),
    member<&DeviceState::kernel_driver>("KernelDriver"),
    member<&DeviceState::provider>("Provider"),
    member<&DeviceState::provider_installed>("ProviderInstalled"),
    member<&DeviceState::provider_package>("ProviderPackage"),
    member<&DeviceState::verbs_device>("VerbsDevice"),
    // The PF's device object (DeviceState::pf_id, which the Inventory resolves).
    {"PhysicalFunction", "o", &same_member<&DeviceState::pf_id>,
     [](ValueWriter& w, const DeviceState& d, const PropertyContext&) {
         w.object_path(d.pf_id.empty() ? "/" : device_path(d.pf_id));
     }},
    // The port numbers: a port that comes or goes retracts and announces the device.
    {"Ports", "ao",
     [](const DeviceState& a, const DeviceState& b) {
         return std::equal(a.ports.begin(), a.ports.end(), b.ports.begin(), b.ports.end(),
                           [](const PortState& p, const PortState& q) { return p.number == q.number; });
     },
     [](ValueWriter& w, const DeviceState& d, const PropertyContext& c) {
         const std::string& id = c.inventory.id_of(d.syspath);
         w.begin_array("o");
         for (const auto& p : d.ports)
             w.object_path(port_path(id, p.number));
         w.end_array();
     },
     false, true},
    // The netdevs this device serves (DeviceState::link_indexes: each link's rdma_device says so).
    {"Links", "ao", &same_member<&DeviceState::link_indexes>,
     [](ValueWriter& w, const DeviceState& d, const PropertyContext&) {
         w.begin_array("o");
         for (const int32_t index : d.link_indexes)
             w.object_path(link_path(index));
         w.end_array();
     }},
    {"Problems", "a(sss)", &same_problems, &write_problems},
    {"ProblemDetails", "a(sssassu)", &same_member<&DeviceState::problems>, &write_problem_details},
    // (setting key, where its value comes from): rdmactl show, Cockpit.
    {"DesiredOrigin", "a(ss)", &same_member<&DeviceState::desired_origin>,
     [](ValueWriter& w, const DeviceState& d, const PropertyContext&) {
         w.begin_array("(ss)");
         for (const auto& [key, origin] : d.desired_origin) {
             w.begin_struct("ss");
             w.field("Key");
             write_line(w, key);
             w.field("Origin");
             write_line(w, origin);
             w.end_struct();
         }
         w.end_array();
     }},
    internal<&DeviceState::physical_function>("physical_function"),
    internal<&DeviceState::pcie_path>("pcie_path"),
    internal<&DeviceState::syspath>("syspath"),
    internal<&DeviceState::parent_netdev>("parent_netdev"),
};

const Property<PortState> kPort[] = {
    member<&PortState::number>("Number", true),
    member<&PortState::state>("State"),
    member<&PortState::phys_state>("PhysicalState"),
    member<&PortState::link_layer>("LinkLayer"),
    member<&PortState::transport>("Transport"),
    member<&PortState::roce_versions>("RoCEVersions"),
    member<&PortState::rate_gbps>("RateGbps"),
    member<&PortState::rate>("Rate"),
    member<&PortState::lid>("LID"),
    member<&PortState::sm_lid>("SMLID"),
    {"GIDs", "a(usss)", &same_member<&PortState::gids>,
     [](ValueWriter& w, const PortState& p, const PropertyContext&) {
         w.begin_array("(usss)");
         for (const auto& g : p.gids) {
             w.begin_struct("usss");
             write_gid_fields(w, g.index, g.gid.text(), g.type, g.netdev);
             w.end_struct();
         }
         w.end_array();
     }},
    // The netdev object of the port's netdev (PortState::link_index, resolved from its name).
    {"Link", "o", &same_member<&PortState::link_index>,
     [](ValueWriter& w, const PortState& p, const PropertyContext&) {
         w.object_path(p.link_index ? link_path(p.link_index) : "/");
     }},
    // Every setting's actual and desired values are its own rows (Setting::port_rows()).
    member<&PortState::in_sync>("InSync"),
    member<&PortState::netdev_mtu>("NetdevMTU"),
    member<&PortState::active_mtu>("ActiveMTU"),
    {"RecommendedGID", "(ussss)", &same_member<&PortState::recommended_gid>,
     [](ValueWriter& w, const PortState& p, const PropertyContext&) {
         const RecommendedGid& g = p.recommended_gid;
         w.begin_struct("ussss");
         write_gid_fields(w, g.index, g.gid.text(), g.type, g.netdev);
         w.field("IP");
         write_line(w, g.ip);
         w.end_struct();
     }},
    internal<&PortState::netdev>("netdev"),
    internal<&PortState::pfc>("pfc"),
    internal<&PortState::pkey0>("pkey0"),
};

const Property<LinkState> kLink[] = {
    member<&LinkState::name>("Name"),
    member<&LinkState::index>("Index", true),
    member<&LinkState::pci_address>("PCIAddress"),
    member<&LinkState::driver>("Driver"),
    member<&LinkState::operstate>("OperState"),
    member<&LinkState::rdma_capable>("RdmaCapable"),
    // The device object of the RDMA device serving this netdev (LinkState::rdma_device_id).
    {"RdmaDevice", "o", &same_member<&LinkState::rdma_device_id>,
     [](ValueWriter& w, const LinkState& l, const PropertyContext&) {
         w.object_path(l.rdma_device_id.empty() ? "/" : device_path(l.rdma_device_id));
     }},
    member<&LinkState::hint>("Hint"),
    internal<&LinkState::rdma_device>("rdma_device"),
    internal<&LinkState::kind>("kind"),
    internal<&LinkState::lower_ifindex>("lower_ifindex"),
    internal<&LinkState::syspath>("syspath"),
    internal<&LinkState::master>("master"),
    internal<&LinkState::dev_port>("dev_port"),
    internal<&LinkState::type>("type"),
    internal<&LinkState::carrier>("carrier"),
    internal<&LinkState::flags>("flags"),
    internal<&LinkState::mtu>("mtu"),
};

} // namespace

void write_problem_summaries(ValueWriter& w, const std::vector<Problem>& problems) {
    w.begin_array("(sss)");
    for (const auto& p : problems) {
        if (!in_problems_property(p))
            continue;
        w.begin_struct("sss");
        w.field("Code");
        w.string(valid_utf8(p.code));
        w.field("Severity");
        w.string(valid_utf8(p.severity));
        w.field("Text");
        write_message(w, p.text);
        w.end_struct();
    }
    w.end_array();
}

namespace {
/// `base`, then the rows each setting (reconcile/settings/) gives through `rows`, in the
/// registry's order.
template <typename State, size_t N>
std::vector<Property<State>> with_setting_rows(const Property<State> (&base)[N],
                                               std::span<const Property<State>> (Setting::*rows)()
                                                   const) {
    std::vector<Property<State>> out(std::begin(base), std::end(base));
    for (const Setting* setting : all_settings())
        for (const auto& row : (setting->*rows)())
            out.push_back(row);
    return out;
}
} // namespace

PropertyTable<DeviceState> device_properties() {
    static const auto table = with_setting_rows(kDevice, &Setting::device_rows);
    return table;
}
PropertyTable<PortState> port_properties() {
    static const auto table = with_setting_rows(kPort, &Setting::port_rows);
    return table;
}
PropertyTable<LinkState> link_properties() { return kLink; }

} // namespace rdmad
