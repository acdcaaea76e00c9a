// SPDX-License-Identifier: MIT
//
// The port type of a VPI adapter (`port_type = ["ib", "eth"]`, per port from port 1).
// - Config: each entry "ib", "eth" or "auto" (the values mlx4's mlx4_port<n> takes: kernel
//   drivers/net/ethernet/mellanox/mlx4/main.c set_port_type()).
// - Actual: mlx4 `mlx4_port<n>` (PortState::port_type) where the switch is in sysfs, else the
//   port's link layer (sources/device_reader.cpp).
// - Write: mlx4 `mlx4_port<n>` (actuators/port_type.hpp), verified by re-reading the device
//   (the kernel re-creates it on a real change).
// - ConnectX-4 and later keep the type in firmware (`LINK_TYPE_P<n>`, DOMAIN.md §1.4): actual
//   = the firmware's current and next-boot values (HostState::firmware_port_types, read once
//   per function at start, add or Reload by sources/mstconfig.hpp through the Reconciler).
//   Desired is compared with next boot first: when next boot differs, one write
//   (actuators/mstconfig.hpp `mstconfig -y -d <pci> set LINK_TYPE_P<n>=<1|2|3>`) and one query
//   back; when next boot is what is asked and the current value is not, no write: the port
//   is pending ("reset-pending": a firmware reset or a reboot applies it). rdmad never resets
//   nor reboots, and never writes when next boot already matches, so it cannot loop. No
//   mstconfig ("mstconfig-missing") or a function that refuses it ("mstconfig-failed", with
//   the tool's words) is reported and left alone until the next add or Reload.
// - Properties: Port.PortType, Port.DesiredPortType, Port.NextBootPortType,
//   Port.PendingPortType, Port.InSync (false while a type is pending).
#include "reconcile/settings/setting.hpp"

#include "actuators/mstconfig.hpp"
#include "actuators/port_type.hpp"
#include "config/toml_read.hpp"
#include "inventory/driver_capabilities.hpp"
#include "inventory/property_rows.hpp"
#include "rdmad_api.hpp"
#include "sources/mstconfig.hpp"

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>

namespace rdmad {
namespace {

/// The `set LINK_TYPE_P<n>=<v>` part of the mstconfig remedy for `dev` (card_port_of()).
std::string link_type_setting(const DeviceState& dev, const std::string& type) {
    return fmt::format("LINK_TYPE_P{}={}", card_port_of(dev.pci_address), link_type_number(type));
}

bool link_layer_satisfies(const std::string& desired, const std::string& link_layer) {
    if (desired == "auto")
        return true;
    return (desired == "ib" && link_layer == "InfiniBand") ||
           (desired == "eth" && link_layer == "Ethernet");
}

constexpr std::string_view kKeys[] = {"port_type"};

const Property<PortState> kRows[] = {
    rows::member<&PortState::port_type>("PortType"),
    rows::member<&PortState::desired_port_type>("DesiredPortType"),
    rows::member<&PortState::next_boot_port_type>("NextBootPortType"),
    rows::member<&PortState::pending_port_type>("PendingPortType"),
};

class PortTypeSetting final : public Setting {
  public:
    using Keys = OptionalRuleKeys<&Rule::port_type>;

    std::span<const std::string_view> keys() const override { return kKeys; }

    bool parse(std::string_view, const ConfigValue& v, Rule& rule,
               ConfigProblems& problems) const override {
        const auto* array = read_list(v.node, "port_type", "strings", problems);
        if (!array)
            return false;
        std::vector<std::string> out;
        bool ok = true;
        for (const auto& element : *array) {
            const auto* s = element.as_string();
            if (!s) {
                problems.add(element.source(),
                             "port_type entries must be strings, not " + type_name(element));
                ok = false;
                continue;
            }
            if (!api::valid_port_type(s->get())) {
                problems.add(element.source(), "unknown port type " + quoted(s->get()) +
                                                   " (expected \"ib\", \"eth\" or \"auto\")");
                ok = false;
                continue;
            }
            out.push_back(s->get());
        }
        if (ok)
            rule.port_type = std::move(out);
        return ok;
    }

    void format(const Rule& r, ConfigTableOut& out) const override {
        if (!r.port_type)
            return;
        toml::array a;
        for (const auto& type : *r.port_type)
            a.push_back(type);
        out.table.insert("port_type", std::move(a));
    }
    bool sets(const Rule& r) const override { return Keys::sets(r); }
    void merge(const Rule& from, Rule& into) const override { Keys::merge(from, into); }
    // Port types are positional: Reconciler::override_port_type() updates the asked port only.
    void clear_set_by(const Rule&, Rule&) const override {}
    void resolve(const Rule& r, const std::string& origin, DeviceDesired& want) const override {
        if (!r.port_type)
            return;
        want.port_type = *r.port_type;
        want.origin["port_type"] = origin;
    }
    bool asks(const DeviceDesired& want) const override { return !want.port_type.empty(); }

    void plan(SettingPlanContext& ctx) const override;
    /// A ConnectX-4+ port whose firmware reading `fw` the Inventory holds.
    static void plan_firmware(SettingPlanContext& ctx, const PortState& port,
                              const std::string& type, const FirmwarePortType& fw, PortPlan& pp);

    std::span<const Property<PortState>> port_rows() const override { return kRows; }

    bool owns(const Action& a) const override {
        return a.kind == Action::Kind::mlx4_port_type || a.kind == Action::Kind::firmware_port_type;
    }

    void execute(const Action& a, SettingExecContext& ctx, Outcome& o) const override {
        if (a.kind == Action::Kind::firmware_port_type) {
            execute_firmware(a, ctx, o);
            return;
        }
        // The plan orders a card's writes so that no step is eth/ib (port 2 first when port 1
        // becomes eth); after a failed step the next one could make that pair.
        if (ctx.failed_devices.count(a.syspath)) {
            o.error = ECANCELED;
            o.message = "not written: the write before it on this card failed";
            return;
        }
        WriteResult w = write_mlx4_port_type(a.pci_address, a.port, a.value);
        o.ok = w.ok();
        o.error = w.error;
        o.message = w.ok() ? "" : w.message;
        if (!o.ok)
            ctx.failed_devices.insert(a.syspath);
    }

    static void execute_firmware(const Action& a, SettingExecContext& ctx, Outcome& o) {
        if (ctx.write_firmware) {
            // The set and its one query back run off the loop (the tool may hang for its
            // whole time limit); the read-back goes into the Inventory either way.
            ctx.write_firmware(a);
            o.deferred = true;
            return;
        }
        const WriteResult w = set_firmware_port_type(ctx.mstconfig, a.pci_address,
                                                     static_cast<uint32_t>(a.number), a.value);
        o.ok = w.ok();
        o.error = w.error;
        o.message = w.message;
    }

    std::string failure_code(const Outcome& o) const override {
        if (o.action.kind == Action::Kind::firmware_port_type)
            return "firmware-write-failed";
        if (o.error == EACCES)
            return "port-type-read-only"; // 0444 in SR-IOV mode (DOMAIN.md §7.1)
        if (o.error == ECANCELED)
            return "port-type-skipped"; // after the card's previous write failed
        return o.error == EOPNOTSUPP ? "not-supported" : "apply-failed";
    }
};

void PortTypeSetting::plan_firmware(SettingPlanContext& ctx, const PortState& port,
                                    const std::string& type, const FirmwarePortType& fw,
                                    PortPlan& pp) {
    const DeviceState& dev = ctx.device;
    const std::string param = fmt::format("LINK_TYPE_P{}", fw.card_port);
    Problem p;
    p.port = port.number;
    if (fw.status == FirmwarePortType::Status::querying) {
        // Its query runs: the link layer says what the port is now, until it answers.
        pp.in_sync = pp.in_sync && link_layer_satisfies(type, port.link_layer);
        return;
    }
    if (fw.status != FirmwarePortType::Status::ok) {
        // Not read: the link layer says what the port is now; next boot stays unknown.
        pp.in_sync = pp.in_sync && link_layer_satisfies(type, port.link_layer);
        p.severity = "warning";
        p.evidence = {fw.message};
        // A port that is already what is asked still has an unknown next-boot type: "port 1
        // is Ethernet but eth is asked" said the opposite (found by a new user).
        const std::string now =
            link_layer_satisfies(type, port.link_layer)
                ? fmt::format("port {} is {} as asked ({}), but its type at the next boot is "
                              "unknown",
                              port.number, port.link_layer, type)
                : fmt::format("port {} is {} but {} is asked", port.number, port.link_layer,
                              type);
        if (fw.status == FirmwarePortType::Status::missing) {
            p.code = "mstconfig-missing";
            p.text = fmt::format("{}: on this adapter the port type is the firmware setting {}, "
                                 "and mstconfig cannot be run ({})",
                                 now, param, fw.message);
            p.remedy = fmt::format("apt install mstflint (or set [daemon] mstconfig), then "
                                   "rdmactl reload: rdmad sets {} for the next boot; or by hand: "
                                   "mstconfig -d {} set {}, and reboot",
                                   param, dev.pci_address, link_type_setting(dev, type));
        } else {
            p.code = "mstconfig-failed";
            p.text = fmt::format("{}: mstconfig cannot read {} of {}: {} (left alone until "
                                 "the device is added again or rdmactl reload)",
                                 now, param, dev.pci_address, fw.message);
            // mstflint needs the configuration space past its header, which the kernel gives
            // only to CAP_SYS_ADMIN (drivers/pci/pci-sysfs.c, pci_read_config()): the unit
            // withholds it unless the drop-in of rdmad.conf(5) gives it.
            // The message starts with the command run (sources/mstconfig.hpp).
            p.remedy = "run the mstconfig command above as root to see the tool's error; if it "
                       "works there, give rdmad.service CAP_SYS_ADMIN (the drop-in in "
                       "rdmad.conf(5)), then systemctl restart rdmad (a reload keeps the "
                       "service's capabilities)";
        }
        ctx.problems.push_back(std::move(p));
        return;
    }
    pp.firmware_port_type = fw.current == "auto" ? (port.link_layer == "Ethernet"     ? "auto (eth)"
                                                    : port.link_layer == "InfiniBand" ? "auto (ib)"
                                                                                      : "auto")
                                                 : fw.current;
    pp.next_boot_port_type = fw.next_boot;
    if (fw.next_boot != type && fw.refresh) {
        // Compare before writing: never from a reading that is being read again.
        pp.in_sync = false;
        return;
    }
    if (fw.next_boot != type) {
        // One write; the query back makes next boot what is asked, then it is pending.
        pp.in_sync = false;
        Action a{Action::Kind::firmware_port_type,
                 dev.name,
                 ctx.syspath,
                 port.number,
                 dev.pci_address,
                 "",
                 type,
                 0,
                 "PortType",
                 fw.next_boot + " (next boot)",
                 type + " (next boot)"};
        a.number = static_cast<int32_t>(fw.card_port);
        ctx.actions.push_back(std::move(a));
        return;
    }
    if (fw.current == type)
        return; // in sync
    pp.in_sync = false;
    pp.pending_port_type = type;
    p.code = "reset-pending";
    p.severity = "warning";
    p.text = fmt::format("port {}: the firmware takes {} ({}) at its next boot, now {}: takes "
                         "effect after a firmware reset or reboot",
                         port.number, type, param, fw.current);
    p.remedy = fmt::format("mstfwreset -d {} reset, or reboot", dev.pci_address);
    p.evidence = {fmt::format("mstconfig -e -d {} query {}: current {}, next boot {}",
                              dev.pci_address, param, fw.current, fw.next_boot)};
    ctx.problems.push_back(std::move(p));
}

void PortTypeSetting::plan(SettingPlanContext& ctx) const {
    const DeviceState& dev = ctx.device;
    const DeviceDesired& want = ctx.want;
    auto& problems = ctx.problems;
    auto& ports = ctx.ports;
    const PortTypeSwitch where = driver_capabilities(dev.kernel_driver).port_type;
    // mlx4 (a switch in sysfs) checks the pair the card would end up with: a port nothing is
    // asked of keeps its type (mlx4-setup.sh skips a dual-port card whose line names port 1
    // only; rdmad writes it when the result is a valid pair).
    const std::vector<std::string> resulting = resulting_port_types(dev, want.port_type);
    if (where == PortTypeSwitch::sysfs && invalid_mlx4_port(resulting)) {
        for (const auto& port : dev.ports)
            if (port.number >= 1 && port.number <= want.port_type.size()) {
                PortPlan& pp = ports[port.number];
                pp.desired_port_type = want.port_type[port.number - 1];
                pp.in_sync =
                    pp.in_sync && port_type_satisfied(pp.desired_port_type, port.port_type);
            }
        problems.push_back(
            {"port-type-invalid", "error",
             fmt::format("port 2 must be eth while port 1 is eth (mlx4), but it would be {}: "
                         "port types left as they are",
                         resulting.size() >= 2 && !resulting[1].empty() ? resulting[1]
                                                                        : "unknown")});
        return;
    }
    std::vector<Action> writes;
    for (const auto& port : dev.ports) {
        if (port.number == 0 || port.number > want.port_type.size())
            continue;
        const std::string& type = want.port_type[port.number - 1];
        PortPlan& pp = ports[port.number];
        pp.desired_port_type = type;
        if (where == PortTypeSwitch::sysfs) {
            if (port_type_satisfied(type, port.port_type))
                continue;
            pp.in_sync = false;
            writes.push_back({Action::Kind::mlx4_port_type, dev.name, ctx.syspath, port.number,
                              dev.pci_address, "", type, 0, "PortType", port.port_type, type});
            continue;
        }
        if (where == PortTypeSwitch::firmware && dev.physical_function.empty())
            if (auto fw = ctx.host.firmware_port_types.find(dev.pci_address);
                fw != ctx.host.firmware_port_types.end()) {
                plan_firmware(ctx, port, type, fw->second, pp);
                continue;
            }
        if (link_layer_satisfies(type, port.link_layer))
            continue;
        pp.in_sync = false;
        if (where != PortTypeSwitch::firmware) {
            problems.push_back(
                {"port-type-unsupported", "warning",
                 fmt::format("port {} is {} but {} is asked: {} has no port type "
                             "switch",
                             port.number, port.link_layer, type,
                             dev.kernel_driver.empty() ? dev.name : dev.kernel_driver.str())});
        } else if (!dev.physical_function.empty()) {
            problems.push_back(
                {"port-type-firmware", "warning",
                 fmt::format("port {} is {} but {} is asked: this is an SR-IOV virtual function; "
                             "the port type is a firmware setting of the card, made on its "
                             "physical function {} with mstconfig",
                             port.number, port.link_layer, type, dev.physical_function)});
        } else {
            problems.push_back(
                {"port-type-firmware", "warning",
                 fmt::format("port {} is {} but {} is asked: on this adapter the port type is a "
                             "firmware setting; run mstconfig -d {} set {} and reboot",
                             port.number, port.link_layer, type, dev.pci_address,
                             link_type_setting(dev, type))});
        }
        problems.back().port = port.number;
    }
    // Port 2 first when port 1 becomes Ethernet, so no step is eth/ib.
    const bool port1_eth = !want.port_type.empty() && want.port_type[0] == "eth";
    std::stable_sort(writes.begin(), writes.end(), [&](const Action& a, const Action& b) {
        return port1_eth ? a.port > b.port : a.port < b.port;
    });
    for (auto& w : writes)
        ctx.actions.push_back(std::move(w));
}

} // namespace

const Setting& port_type_setting() {
    static const PortTypeSetting setting;
    return setting;
}

} // namespace rdmad
