// SPDX-License-Identifier: MIT
//
// The node and port GUIDs of the SR-IOV VFs of an InfiniBand PF, so that the subnet manager's
// partitions (and whatever else keys on a GUID) stay bound to the same VFs when they are
// re-created (Red Hat rdma-core's /etc/rdma/sriov-vfs and rdma-set-sriov-vf did this at boot).
// - Config: in a `[[rule]]` matching the PF, a range
//     vf_guids = { node = "00:11:22:33:44:55:66:00", port = "00:11:22:33:44:55:67:00" }
//   (VF n gets node + n and port + n: every VF the PF has, up to the rule's sriov_numvfs when
//   it sets one, else up to 65535 VFs, none past ff:ff:ff:ff:ff:ff:ff:ff), or a list
//     vf_guids = [ { vf = 0, node = "..", port = ".." }, ... ]
//   GUIDs as `ip link` writes them (iproute2 get_guid(): "00:11:22:33:44:55:66:77") or as sysfs
//   `node_guid` prints them ("0011:2233:4455:6677"); zero is no GUID.
// - Actual: each VF's RDMA device: its `node_guid` (DeviceState::node_guid) and the interface
//   ID of its port 1's GID 0 (the port GUID, sources/vf_guid_reader.hpp), and which VF of its
//   PF it is (DeviceState::vf_index, from the PF's `virtfn<n>` links).
// - Write: actuators/vf_guid.hpp (RTM_SETLINK on the PF's IPoIB netdev, ACK asked, the VF's
//   GUIDs read back), for each VF whose node or port GUID differs (none is written that reads
//   what is asked); then the VF's device is re-read into the Inventory. Applied whenever a VF's
//   device comes (after rdmad's sriov_numvfs write, after a driver reload re-creates them).
// - mlx5 takes the GUIDs into the firmware's vport context at once but gives them to a VF's
//   RDMA device only when the VF's driver binds it: a VF that is bound reads its old GUIDs
//   until then. rdmad never unbinds a VF (an application or a VM may be using it): such a VF is
//   vf-guid-pending, naming the rebind as the admin's remedy, tried again once per add or
//   Reload (a rebind re-adds the VF's device, which then reads the GUIDs and is in sync). A
//   refusal (EOPNOTSUPP: no IPoIB netdev, a driver without VF GUIDs) is vf-guid-failed with
//   the kernel's text, likewise once per add or Reload.
// - Properties: Device.DesiredVFGUIDs on the PF, Device.VFIndex on each VF (whose NodeGUID and
//   port 1 GID 0 are the actual GUIDs); every port of the PF is out of sync (Port.InSync)
//   while a VF's GUIDs differ.
#include "reconcile/settings/setting.hpp"

#include "actuators/vf_guid.hpp"
#include "config/toml_read.hpp"
#include "inventory/property_rows.hpp"
#include "sources/vf_guid_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>
#include <sstream>
#include <tuple>

namespace rdmad {
namespace {

constexpr std::string_view kKeys[] = {"vf_guids"};
constexpr uint32_t kMostVfs = 65535; // sriov_numvfs is a u16 (drivers/pci/iov.c)

const Property<DeviceState> kRows[] = {
    rows::member<&DeviceState::vf_index>("VFIndex"),
    {"DesiredVFGUIDs", "a(uss)",
     [](const DeviceState& a, const DeviceState& b) {
         return a.desired_vf_guids == b.desired_vf_guids;
     },
     [](ValueWriter& w, const DeviceState& d, const PropertyContext&) {
         w.begin_array("(uss)");
         for (const VfGuid& g : d.desired_vf_guids) {
             w.begin_struct("uss");
             w.field("VF");
             w.u32(g.vf);
             w.field("NodeGUID");
             rows::put(w, guid_text(g.node));
             w.field("PortGUID");
             rows::put(w, guid_text(g.port));
             w.end_struct();
         }
         w.end_array();
     }},
};

/// A GUID string of `table` at `key` ("node", "port"); a problem at it when absent or bad.
std::optional<uint64_t> read_guid(const toml::table& table, std::string_view key,
                                  ConfigProblems& problems) {
    const toml::node* v = table.get(key);
    if (!v) {
        problems.add(table.source(), fmt::format("vf_guids: {{ ... }} needs a {} GUID", key));
        return std::nullopt;
    }
    const auto text = read_string(*v, fmt::format("vf_guids {}", key), problems);
    if (!text)
        return std::nullopt;
    const auto guid = parse_guid_text(*text);
    if (!guid) {
        problems.add(v->source(),
                     fmt::format("vf_guids {} must be a GUID as ip link or node_guid writes it "
                                 "(\"00:11:22:33:44:55:66:77\" or \"0011:2233:4455:6677\"), not {}",
                                 key, quoted(*text)));
        return std::nullopt;
    }
    if (*guid == 0) {
        problems.add(v->source(), fmt::format("vf_guids {} must not be zero (no GUID)", key));
        return std::nullopt;
    }
    return guid;
}

/// False (a problem at the key) when `table` has a key other than `allowed`.
bool only_keys(const toml::table& table, std::initializer_list<std::string_view> allowed,
               std::string_view expected, ConfigProblems& problems) {
    for (auto&& [k, _] : table)
        if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end()) {
            problems.add(k.source(), fmt::format("unknown key {} in vf_guids (expected {})",
                                                 quoted(k.str()), expected));
            return false;
        }
    return true;
}

class VfGuidsSetting final : public Setting {
  public:
    using Keys = OptionalRuleKeys<&Rule::vf_guids>;

    std::span<const std::string_view> keys() const override { return kKeys; }

    bool parse(std::string_view key, const ConfigValue& v, Rule& rule,
               ConfigProblems& problems) const override {
        VfGuids out;
        if (const auto* t = v.node.as_table()) {
            if (!only_keys(*t, {"node", "port"}, "node, port", problems))
                return false;
            const auto node = read_guid(*t, "node", problems);
            const auto port = node ? read_guid(*t, "port", problems) : std::nullopt;
            if (!port)
                return false;
            out.base = VfGuid{0, *node, *port};
        } else if (const auto* list = read_list(v.node, key, "tables { vf, node, port }",
                                                problems)) {
            std::map<uint32_t, int> line_of; // VF -> the line of its entry
            // A GUID names one node (one port) in the whole subnet (IBA): GUID -> its VF.
            std::map<uint64_t, uint32_t> vf_of_node, vf_of_port;
            for (const auto& e : *list) {
                const auto* t = e.as_table();
                if (!t) {
                    problems.add(e.source(), fmt::format("vf_guids entries must be tables {{ vf = "
                                                         "N, node = \"..\", port = \"..\" }}, not {}",
                                                         type_name(e)));
                    return false;
                }
                if (!only_keys(*t, {"vf", "node", "port"}, "vf, node, port", problems))
                    return false;
                const toml::node* vf_node = t->get("vf");
                if (!vf_node) {
                    problems.add(t->source(), "vf_guids: { ... } needs the vf it is for");
                    return false;
                }
                // A VF index is below sriov_numvfs, a u16.
                const auto vf = read_integer(*vf_node, "vf", 0, kMostVfs - 1, problems);
                if (!vf)
                    return false;
                const auto n = static_cast<uint32_t>(*vf);
                const int line = static_cast<int>(vf_node->source().begin.line);
                if (const auto [it, fresh] = line_of.emplace(n, line); !fresh) {
                    problems.add(vf_node->source(),
                                 fmt::format("vf_guids: VF {} is listed twice (first on line {})",
                                             n, it->second));
                    return false;
                }
                const std::optional<uint64_t> node = read_guid(*t, "node", problems);
                if (!node)
                    return false;
                const std::optional<uint64_t> port = read_guid(*t, "port", problems);
                if (!port)
                    return false;
                for (const auto& [what, guid, seen] : {std::tuple{"node", *node, &vf_of_node},
                                                       std::tuple{"port", *port, &vf_of_port}})
                    if (const auto [it, fresh] = seen->emplace(guid, n); !fresh) {
                        problems.add(t->get(what)->source(),
                                     fmt::format("vf_guids: {} GUID {} of VF {} is VF {}'s too "
                                                 "(line {})",
                                                 what, guid_text(guid), n, it->second,
                                                 line_of.at(it->second)));
                        return false;
                    }
                out.list.push_back({n, *node, *port});
            }
            std::sort(out.list.begin(), out.list.end(),
                      [](const VfGuid& a, const VfGuid& b) { return a.vf < b.vf; });
        } else {
            return false; // read_list() said what it is
        }
        rule.vf_guids = std::move(out);
        return true;
    }
    bool check(const Rule& rule, const ConfigValue& table,
               ConfigProblems& problems) const override {
        if (!rule.vf_guids || !rule.vf_guids->base)
            return true;
        // The last VF the rule can ask: below its own sriov_numvfs, else below 65535.
        const uint32_t vfs = rule.sriov_numvfs.value_or(kMostVfs);
        if (vfs == 0 || rule.vf_guids->of(vfs - 1))
            return true;
        const auto* t = table.node.as_table();
        const toml::node* at = t ? t->get("vf_guids") : nullptr;
        problems.add(at ? at->source() : table.node.source(),
                     fmt::format("vf_guids: the range passes ff:ff:ff:ff:ff:ff:ff:ff before VF {} "
                                 "(the last of {}{}); start it lower",
                                 vfs - 1, vfs, rule.sriov_numvfs ? " asked by sriov_numvfs" : " a PF can have"));
        return false;
    }
    void format(const Rule& r, ConfigTableOut& out) const override {
        if (!r.vf_guids)
            return;
        const auto entry = [](const VfGuid& g, bool with_vf) {
            toml::table t;
            if (with_vf)
                t.insert("vf", static_cast<int64_t>(g.vf));
            t.insert("node", guid_text(g.node));
            t.insert("port", guid_text(g.port));
            t.is_inline(true);
            return t;
        };
        if (r.vf_guids->base) {
            out.table.insert("vf_guids", entry(*r.vf_guids->base, false));
            return;
        }
        toml::array list;
        for (const VfGuid& g : r.vf_guids->list)
            list.push_back(entry(g, true));
        out.table.insert("vf_guids", std::move(list));
    }
    bool sets(const Rule& r) const override { return Keys::sets(r); }
    void merge(const Rule& from, Rule& into) const override { Keys::merge(from, into); }
    void clear_set_by(const Rule& newer, Rule& rule) const override {
        Keys::clear_set_by(newer, rule);
    }
    void resolve(const Rule& r, const std::string& origin, DeviceDesired& want) const override {
        if (r.vf_guids) {
            want.vf_guids = r.vf_guids;
            want.origin["vf_guids"] = origin;
        }
    }
    bool asks(const DeviceDesired& want) const override { return want.vf_guids.has_value(); }
    std::span<const Property<DeviceState>> device_rows() const override { return kRows; }
    void show(const DeviceDesired* want, DeviceState& d) const override {
        d.desired_vf_guids.clear();
        // A VF is matched by a driver rule too, but has no VFs of its own: nothing is asked.
        if (!want || !want->vf_guids || !d.physical_function.empty())
            return;
        if (!want->vf_guids->base) {
            d.desired_vf_guids = want->vf_guids->list;
            return;
        }
        for (uint32_t vf = 0; vf < d.sriov.numvfs.value_or(0); ++vf)
            if (const auto g = want->vf_guids->of(vf))
                d.desired_vf_guids.push_back(*g);
    }

    void plan(SettingPlanContext& ctx) const override;

    bool owns(const Action& a) const override { return a.kind == Action::Kind::vf_guids; }
    void execute(const Action& a, SettingExecContext& ctx, Outcome& o) const override {
        VfGuidRequest r;
        r.ifindex = a.ifindex;
        r.netdev = a.netdev;
        r.vf = static_cast<uint32_t>(a.number);
        std::istringstream guids(a.value);
        std::string node, port;
        guids >> node >> port;
        r.node = parse_guid_text(node).value_or(0);
        r.port = parse_guid_text(port).value_or(0);
        r.vf_pci = a.pci_address;
        r.vf_device = a.device;
        VfGuidWrite w;
        if (ctx.unanswered_ifindexes.count(r.ifindex)) {
            w.error = ETIMEDOUT;
            w.message = fmt::format("RTM_SETLINK {} (ifindex {}) vf {} node_guid {} port_guid {}: "
                                    "not sent, an earlier request on {} got no answer",
                                    r.netdev, r.ifindex, r.vf, guid_text(r.node), guid_text(r.port),
                                    r.netdev);
        } else {
            try {
                dcb::MnlTransport transport;
                w = set_vf_guids(transport, r);
            } catch (const std::system_error& e) {
                w.error = e.code().value();
                w.message = e.what();
            }
            if (w.error == ETIMEDOUT)
                ctx.unanswered_ifindexes.insert(r.ifindex);
        }
        o.ok = w.ok();
        o.error = w.error;
        o.message = w.message;
    }
    std::string failure_code(const Outcome& o) const override {
        return o.error == 0 ? "vf-guid-pending" : "vf-guid-failed";
    }
};

void VfGuidsSetting::plan(SettingPlanContext& ctx) const {
    const DeviceState& d = ctx.device;
    if (!ctx.want.vf_guids || !d.physical_function.empty() || d.pci_address.empty())
        return; // nothing asked, or a VF (a rule by driver matches the VFs too)
    const VfGuids& want = *ctx.want.vf_guids;
    // The PF's IPoIB netdev: the kernel takes VF GUIDs on an InfiniBand netdev only
    // (handle_vf_guid(): EOPNOTSUPP for another dev->type).
    const PortState* ipoib = nullptr;
    for (const auto& port : d.ports)
        if (port.link_layer == "InfiniBand" && port.link_index > 0 && !port.netdev.empty()) {
            ipoib = &port;
            break;
        }
    const auto out_of_sync = [&] {
        for (const auto& port : d.ports)
            ctx.ports[port.number].in_sync = false;
    };
    for (const auto& [syspath, vf] : ctx.host.devices) {
        if (vf.physical_function != d.pci_address || vf.vf_index < 0)
            continue;
        const auto g = want.of(static_cast<uint32_t>(vf.vf_index));
        if (!g)
            continue;
        const auto node = parse_guid_text(vf.node_guid);
        // The port GUID as GID 0 shows it; a VF without one is compared by its node GUID.
        const auto port = vf.ports.empty() ? std::nullopt : port_guid_of(vf.ports.front());
        const bool has_port = port.has_value();
        const uint64_t port_now = port.value_or(0);
        if (node == g->node && (!has_port || port_now == g->port))
            continue; // compared before writing: this VF has its GUIDs
        out_of_sync();
        if (!ipoib && !d.ports.empty() && d.ports.front().link_layer == "Ethernet") {
            // A RoCE PF: no IPoIB module makes it take VF GUIDs (its VFs take their MAC).
            const PortState& eth = d.ports.front();
            ctx.problems.push_back(
                {"vf-guid-not-infiniband",
                 "warning",
                 fmt::format("VF GUIDs cannot be set: vf_guids applies to InfiniBand PFs; {} "
                             "port {} is Ethernet",
                             d.name, eth.number),
                 {fmt::format("{}/ports/{}/link_layer = Ethernet", d.syspath, eth.number)},
                 "remove vf_guids from the rule that matches this device"});
            return;
        }
        if (!ipoib) {
            ctx.problems.push_back(
                {"vf-guid-no-ipoib", "warning",
                 fmt::format("VF GUIDs cannot be set: {} has no InfiniBand port with an IPoIB "
                             "netdev, the kernel takes them on one only",
                             d.name),
                 {fmt::format("{} node_guid = {}", vf.name, vf.node_guid)},
                 "load ib_ipoib (modprobe ib_ipoib), or remove vf_guids from the rule"});
            return;
        }
        const std::string from =
            fmt::format("{} {}", vf.node_guid.empty() ? "(none)" : vf.node_guid,
                        has_port ? guid_text(port_now) : "(none)");
        const std::string to = fmt::format("{} {}", guid_text(g->node), guid_text(g->port));
        Action a{Action::Kind::vf_guids, vf.name, ctx.syspath, 0, vf.pci_address, ipoib->netdev,
                 to, 0, "DesiredVFGUIDs", fmt::format("vf {}: {}", g->vf, from),
                 fmt::format("vf {}: {}", g->vf, to)};
        a.number = static_cast<int32_t>(g->vf);
        a.ifindex = ipoib->link_index;
        ctx.actions.push_back(std::move(a));
    }
}

} // namespace

const Setting& vf_guids_setting() {
    static const VfGuidsSetting setting;
    return setting;
}

} // namespace rdmad
