// SPDX-License-Identifier: MIT
//
// The RDMA-CM defaults of a RoCE port: the RoCE version rdma_cm uses for connections that do not
// choose one, and the ToS byte it puts on them.
// - Config: `rdma_cm_roce_mode = "RoCE v2" | "IB/RoCE v1"`, `rdma_cm_tos = 0-255` (per device:
//   every RoCE port).
// - Actual: configfs `/sys/kernel/config/rdma_cm/<dev>/ports/<n>/default_roce_mode` and
//   `default_roce_tos` (kernel drivers/infiniband/core/cma_configfs.c), read by
//   sources/rdma_cm_reader.hpp into PortState::rdma_cm. The `<dev>` group is made by mkdir;
//   the kernel keeps the values with its device and forgets them whenever the device is
//   re-created (driver reload, firmware reset, VF re-creation): the re-add plans them again.
// - Write: actuators/rdma_cm.hpp (mkdir of the group when absent, one write per differing file,
//   one read-back), then the device is re-read into the Inventory.
// - No configfs, or a kernel without the files: a named problem, never an error loop.
// - Properties: Port.RDMACMRoCEMode, Port.DesiredRDMACMRoCEMode, Port.RDMACMToS,
//   Port.DesiredRDMACMToS, Port.InSync.
#include "reconcile/settings/setting.hpp"

#include "actuators/rdma_cm.hpp"
#include "config/toml_read.hpp"
#include "inventory/property_rows.hpp"
#include "sources/rdma_cm_reader.hpp"

#include <fmt/format.h>

namespace rdmad {
namespace {

constexpr std::string_view kKeys[] = {"rdma_cm_roce_mode", "rdma_cm_tos"};

const Property<PortState> kRows[] = {
    {"RDMACMRoCEMode", "s",
     [](const PortState& a, const PortState& b) {
         return a.rdma_cm.roce_mode == b.rdma_cm.roce_mode;
     },
     [](ValueWriter& w, const PortState& p, const PropertyContext&) {
         rows::put(w, p.rdma_cm.roce_mode);
     }},
    rows::member<&PortState::desired_rdma_cm_roce_mode>("DesiredRDMACMRoCEMode"),
    {"RDMACMToS", "i",
     [](const PortState& a, const PortState& b) { return a.rdma_cm.tos == b.rdma_cm.tos; },
     [](ValueWriter& w, const PortState& p, const PropertyContext&) {
         w.i32(p.rdma_cm.tos ? *p.rdma_cm.tos : -1);
     }},
    rows::member<&PortState::desired_rdma_cm_tos>("DesiredRDMACMToS"),
    rows::internal<&PortState::rdma_cm>("rdma_cm"),
};

class RdmaCmSetting final : public Setting {
  public:
    using Keys = OptionalRuleKeys<&Rule::rdma_cm_roce_mode, &Rule::rdma_cm_tos>;

    std::span<const std::string_view> keys() const override { return kKeys; }

    bool parse(std::string_view key, const ConfigValue& v, Rule& rule,
               ConfigProblems& problems) const override {
        if (key == "rdma_cm_tos") {
            // The IPv4 ToS / IPv6 traffic class byte: DSCP << 2 | ECN (RFC 3168 §5).
            const auto tos = read_integer(v.node, key, 0, 255, problems);
            if (tos)
                rule.rdma_cm_tos = static_cast<uint8_t>(*tos);
            return tos.has_value();
        }
        const auto mode = read_string(v.node, key, problems);
        // The names cma_configfs.c's default_roce_mode takes (ib_cache_gid_parse_type_str():
        // "IB/RoCE v1", "RoCE v2"; "RoCE v1" is not one of them).
        const bool known = mode && (*mode == kRoceModeV2 || *mode == kRoceModeV1);
        if (mode && !known)
            problems.add(v.node.source(), "unknown RoCE mode " + quoted(*mode) +
                                              " (expected \"RoCE v2\" or \"IB/RoCE v1\")");
        if (!known)
            return false;
        rule.rdma_cm_roce_mode = *mode;
        return true;
    }

    void format(const Rule& r, ConfigTableOut& out) const override {
        if (r.rdma_cm_roce_mode)
            out.table.insert("rdma_cm_roce_mode", *r.rdma_cm_roce_mode);
        if (r.rdma_cm_tos)
            out.table.insert("rdma_cm_tos", static_cast<int64_t>(*r.rdma_cm_tos));
    }
    bool sets(const Rule& r) const override { return Keys::sets(r); }
    void merge(const Rule& from, Rule& into) const override { Keys::merge(from, into); }
    void clear_set_by(const Rule& newer, Rule& rule) const override {
        Keys::clear_set_by(newer, rule);
    }
    void resolve(const Rule& r, const std::string& origin, DeviceDesired& want) const override {
        if (r.rdma_cm_roce_mode) {
            want.rdma_cm_roce_mode = *r.rdma_cm_roce_mode;
            want.origin["rdma_cm_roce_mode"] = origin;
        }
        if (r.rdma_cm_tos) {
            want.rdma_cm_tos = r.rdma_cm_tos;
            want.origin["rdma_cm_tos"] = origin;
        }
    }
    bool asks(const DeviceDesired& want) const override {
        return !want.rdma_cm_roce_mode.empty() || want.rdma_cm_tos.has_value();
    }
    std::span<const Property<PortState>> port_rows() const override { return kRows; }

    void plan(SettingPlanContext& ctx) const override;

    bool owns(const Action& a) const override { return a.kind == Action::Kind::rdma_cm; }
    void execute(const Action& a, SettingExecContext& ctx, Outcome& o) const override {
        const RdmaCmWrite w = set_rdma_cm(
            ctx.configfs_dir, a.device, a.port,
            a.value.empty() ? std::nullopt : std::optional<std::string>(a.value),
            a.number < 0 ? std::nullopt : std::optional<uint8_t>(static_cast<uint8_t>(a.number)));
        o.ok = w.ok();
        o.error = w.error;
        o.message = w.message;
    }
};

void RdmaCmSetting::plan(SettingPlanContext& ctx) const {
    const DeviceDesired& want = ctx.want;
    for (const auto& port : ctx.device.ports) {
        if (port.transport != "RoCE")
            continue; // default_roce_mode and default_roce_tos are RoCE's
        PortPlan& pp = ctx.ports[port.number];
        pp.desired_rdma_cm_roce_mode = want.rdma_cm_roce_mode;
        pp.desired_rdma_cm_tos = want.rdma_cm_tos ? *want.rdma_cm_tos : -1;
        const RdmaCmActual& now = port.rdma_cm;
        using S = RdmaCmStatus;
        if (now.status == S::no_configfs || now.status == S::unsupported ||
            now.status == S::failed) {
            pp.in_sync = false;
            Problem p;
            p.port = port.number;
            p.severity = "warning";
            p.evidence = {fmt::format("/sys/kernel/config/rdma_cm/{}/ports/{}: {}", ctx.device.name,
                                      port.number, to_string(now.status))};
            if (now.status == S::no_configfs) {
                p.code = "rdma-cm-no-configfs";
                p.text = fmt::format("port {}: the RDMA-CM defaults cannot be set: configfs is not "
                                     "mounted on /sys/kernel/config",
                                     port.number);
                p.remedy = "systemctl start sys-kernel-config.mount (or mount -t configfs none "
                           "/sys/kernel/config)";
            } else if (now.status == S::unsupported) {
                p.code = "rdma-cm-unsupported";
                p.text =
                    fmt::format("port {}: configfs has no rdma_cm: the RDMA-CM defaults cannot "
                                "be set",
                                port.number);
                p.remedy = "modprobe rdma_cm (a kernel built without "
                           "CONFIG_INFINIBAND_ADDR_TRANS_CONFIGFS has none)";
            } else {
                p.code = "rdma-cm-unreadable";
                p.text = fmt::format("port {}: the RDMA-CM defaults cannot be read: {}",
                                     port.number, now.message);
            }
            ctx.problems.push_back(std::move(p));
            continue;
        }
        // no_group: the values cannot be seen without the group (the kernel keeps them with the
        // device; a tool may have set them and removed its group): the actuator makes the group,
        // reads, and writes only what differs.
        const bool group = now.status == S::ok;
        // The group read, its mode file there and no default_roce_tos (the reader's ENOENT,
        // which leaves error 0; a bad value or another read error sets it): a kernel before
        // 4.11. A ToS asked is a named problem, never a write that fails again at each event.
        const bool no_tos_file = group && !now.tos && now.error == 0;
        if (want.rdma_cm_tos && no_tos_file) {
            pp.in_sync = false;
            Problem p;
            p.port = port.number;
            p.code = "rdma-cm-no-tos";
            p.severity = "warning";
            p.text = fmt::format("port {}: this kernel has no RDMA-CM default ToS "
                                 "(default_roce_tos came with Linux 4.11): rdma_cm_tos = {} "
                                 "cannot be set",
                                 port.number, *want.rdma_cm_tos);
            p.remedy = "a kernel 4.11 or later; until then each application sets its own "
                       "(rdma_set_option() RDMA_OPTION_ID_TOS)";
            p.evidence = {now.message};
            ctx.problems.push_back(std::move(p));
        }
        const bool mode_differs =
            !want.rdma_cm_roce_mode.empty() && (!group || now.roce_mode != want.rdma_cm_roce_mode);
        const bool tos_differs =
            want.rdma_cm_tos && !no_tos_file && (!group || now.tos != want.rdma_cm_tos);
        if (!mode_differs && !tos_differs)
            continue;
        pp.in_sync = false;
        Action a{Action::Kind::rdma_cm,
                 ctx.device.name,
                 ctx.syspath,
                 port.number,
                 "",
                 "",
                 mode_differs ? want.rdma_cm_roce_mode : "",
                 0,
                 mode_differs && tos_differs ? "RDMACM"
                 : mode_differs              ? "RDMACMRoCEMode"
                                             : "RDMACMToS",
                 "",
                 ""};
        a.number = tos_differs ? *want.rdma_cm_tos : -1;
        const auto text = [](const std::string& mode, int32_t tos) {
            std::string s = mode;
            if (tos >= 0)
                s += fmt::format("{}tos {}", s.empty() ? "" : ", ", tos);
            return s;
        };
        a.from = group ? text(mode_differs ? now.roce_mode : "",
                              tos_differs ? (now.tos ? *now.tos : -1) : -1)
                       : "(not readable without its configfs group)";
        a.to = text(a.value, a.number);
        ctx.actions.push_back(std::move(a));
    }
}

} // namespace

const Setting& rdma_cm_setting() {
    static const RdmaCmSetting setting;
    return setting;
}

} // namespace rdmad
