// SPDX-License-Identifier: MIT
//
// The port type of a VPI adapter (`port_type = ["ib", "eth"]`, per port from port 1).
// - Config: each entry "ib", "eth" or "auto" (the values mlx4's mlx4_port<n> takes: kernel
//   drivers/net/ethernet/mellanox/mlx4/main.c set_port_type()).
// - Actual: mlx4 `mlx4_port<n>` (PortState::port_type) where the switch is in sysfs, else the
//   port's link layer (sources/device_reader.cpp).
// - Write: mlx4 only, `mlx4_port<n>` (actuators/port_type.hpp), verified by re-reading the
//   device (the kernel re-creates it on a real change). ConnectX-4 and later keep the type in
//   firmware: reported with the mstconfig remedy.
// - Properties: Port.PortType, Port.DesiredPortType, Port.InSync.
#include "reconcile/settings/setting.hpp"

#include "actuators/port_type.hpp"
#include "config/toml_read.hpp"
#include "inventory/driver_capabilities.hpp"
#include "inventory/property_rows.hpp"
#include "rdmad_api.hpp"

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>

namespace rdmad {
namespace {

// mlxconfig LINK_TYPE_P<n>: 1 InfiniBand, 2 Ethernet, 3 VPI (auto). Source: NVIDIA MFT
// documentation of mlxconfig/mstconfig (Debian package mstflint).
std::string link_type_value(const std::string& port_type) {
    if (port_type == "ib")
        return "1";
    if (port_type == "eth")
        return "2";
    return "3";
}

/// The `set LINK_TYPE_P<n>=<v>` part of the mstconfig remedy for port `port` of `dev`. The
/// setting is per card and <n> is the card's physical port (DOMAIN.md §1.4: `mlxconfig -d <dev>
/// set LINK_TYPE_P1=<n> [LINK_TYPE_P2=<n>]`); a ConnectX-4+ PCI function drives one port, so
/// function 0 is P1 and function 1 is P2.
std::string link_type_setting(const DeviceState& dev, uint32_t port, const std::string& type) {
    uint32_t card_port = port;
    const auto dot = dev.pci_address.rfind('.');
    if (dot != std::string::npos && dev.pci_address.size() == dot + 2) {
        const char fn = dev.pci_address[dot + 1];
        if (fn == '0' || fn == '1')
            card_port = static_cast<uint32_t>(fn - '0') + 1;
    }
    return fmt::format("LINK_TYPE_P{}={}", card_port, link_type_value(type));
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

    std::span<const Property<PortState>> port_rows() const override { return kRows; }

    bool owns(const Action& a) const override { return a.kind == Action::Kind::mlx4_port_type; }

    void execute(const Action& a, SettingExecContext& ctx, Outcome& o) const override {
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

    std::string failure_code(const Outcome& o) const override {
        if (o.error == EACCES)
            return "port-type-read-only"; // 0444 in SR-IOV mode (DOMAIN.md §7.1)
        if (o.error == ECANCELED)
            return "port-type-skipped"; // after the card's previous write failed
        return o.error == EOPNOTSUPP ? "not-supported" : "apply-failed";
    }
};

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
                             link_type_setting(dev, port.number, type))});
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
