// SPDX-License-Identifier: MIT
//
// The SR-IOV VF count of a PF.
// - Config: `sriov_numvfs = 0-65535` (per device; a rule that also matches VFs leaves them
//   alone: only a PF has the files).
// - Actual: `sriov_numvfs` and `sriov_totalvfs` of the device's PCI function, read by
//   sources/sriov_reader.hpp into DeviceState::sriov.
// - Write: actuators/sriov.hpp (a non-zero count changes through 0, as the kernel requires;
//   each write read back), then the device is re-read into the Inventory. Applied at start and
//   whenever the PF's RDMA device comes back (a driver reload disables the VFs: the re-add finds
//   0 and asks again); the VFs' devices then arrive as a burst of uevents.
// - A count above sriov_totalvfs, or a function without SR-IOV: a named problem, no write. A
//   failed write (EBUSY, ENOMEM, ...) is sriov-numvfs-failed with the errno text, tried once per
//   add or Reload, never in a loop.
// - Properties: Device.SRIOVNumVFs, Device.SRIOVTotalVFs, Device.DesiredSRIOVNumVFs; every port
//   of the PF is out of sync (Port.InSync) while the count differs.
#include "reconcile/settings/setting.hpp"

#include "actuators/sriov.hpp"
#include "config/toml_read.hpp"
#include "inventory/property_rows.hpp"

#include <fmt/format.h>

namespace rdmad {
namespace {

constexpr std::string_view kKeys[] = {"sriov_numvfs"};

/// A count of SriovActual as a `u` property: 0 when unknown (not a PF).
template <std::optional<uint32_t> SriovActual::*M>
Property<DeviceState> count_row(const char* name) {
    return {name, "u",
            [](const DeviceState& a, const DeviceState& b) { return a.sriov.*M == b.sriov.*M; },
            [](ValueWriter& w, const DeviceState& d, const PropertyContext&) {
                w.u32((d.sriov.*M).value_or(0));
            }};
}

const Property<DeviceState> kRows[] = {
    count_row<&SriovActual::numvfs>("SRIOVNumVFs"),
    count_row<&SriovActual::totalvfs>("SRIOVTotalVFs"),
    rows::member<&DeviceState::desired_sriov_numvfs>("DesiredSRIOVNumVFs"),
};

class SriovNumVfsSetting final : public Setting {
  public:
    using Keys = OptionalRuleKeys<&Rule::sriov_numvfs>;

    std::span<const std::string_view> keys() const override { return kKeys; }

    bool parse(std::string_view key, const ConfigValue& v, Rule& rule,
               ConfigProblems& problems) const override {
        // sriov_numvfs_store() takes a u16 (drivers/pci/iov.c kstrtou16()).
        const auto n = read_integer(v.node, key, 0, 65535, problems);
        if (n)
            rule.sriov_numvfs = static_cast<uint32_t>(*n);
        return n.has_value();
    }
    void format(const Rule& r, ConfigTableOut& out) const override {
        if (r.sriov_numvfs)
            out.table.insert("sriov_numvfs", static_cast<int64_t>(*r.sriov_numvfs));
    }
    bool sets(const Rule& r) const override { return Keys::sets(r); }
    void merge(const Rule& from, Rule& into) const override { Keys::merge(from, into); }
    void clear_set_by(const Rule& newer, Rule& rule) const override {
        Keys::clear_set_by(newer, rule);
    }
    void resolve(const Rule& r, const std::string& origin, DeviceDesired& want) const override {
        if (r.sriov_numvfs) {
            want.sriov_numvfs = r.sriov_numvfs;
            want.origin["sriov_numvfs"] = origin;
        }
    }
    bool asks(const DeviceDesired& want) const override { return want.sriov_numvfs.has_value(); }
    std::span<const Property<DeviceState>> device_rows() const override { return kRows; }
    void show(const DeviceDesired* want, DeviceState& d) const override {
        // A VF is matched by a driver rule too, but has no VFs of its own: nothing is asked of it.
        d.desired_sriov_numvfs = want && want->sriov_numvfs && d.physical_function.empty()
                                     ? static_cast<int32_t>(*want->sriov_numvfs)
                                     : -1;
    }

    void plan(SettingPlanContext& ctx) const override;

    bool owns(const Action& a) const override { return a.kind == Action::Kind::sriov_numvfs; }
    void execute(const Action& a, SettingExecContext&, Outcome& o) const override {
        const SriovWrite w = set_sriov_numvfs(a.pci_address, static_cast<uint32_t>(a.number));
        o.ok = w.ok();
        o.error = w.error;
        o.message = w.message;
    }
    std::string failure_code(const Outcome&) const override { return "sriov-numvfs-failed"; }
};

void SriovNumVfsSetting::plan(SettingPlanContext& ctx) const {
    const DeviceState& d = ctx.device;
    if (!ctx.want.sriov_numvfs || !d.physical_function.empty())
        return; // nothing asked, or a VF (a rule by driver matches the VFs too)
    const uint32_t want = *ctx.want.sriov_numvfs;
    const SriovActual& now = d.sriov;
    const auto out_of_sync = [&] {
        for (const auto& port : d.ports) {
            ctx.ports[port.number].in_sync = false;
        }
    };
    const std::string dir =
        d.pci_address.empty() ? d.name : fmt::format("{}/{}", kPciDevicesDir, d.pci_address);
    // A named problem instead of a write: the port or ports out of sync, nothing to retry.
    const auto refuse = [&](const char* code, const char* severity, std::string text,
                            std::string remedy, std::string evidence) {
        out_of_sync();
        Problem p{code, severity, std::move(text), {std::move(evidence)}, std::move(remedy)};
        ctx.problems.push_back(std::move(p));
    };
    if (!now.totalvfs || !now.numvfs)
        return refuse("sriov-unsupported", "warning",
                      fmt::format("sriov_numvfs = {} cannot be set: {} has no SR-IOV (no readable "
                                  "sriov_totalvfs and sriov_numvfs)",
                                  want, d.pci_address.empty() ? d.name : d.pci_address),
                      "enable SR-IOV in the firmware (mlxconfig/mstconfig set SRIOV_EN=1 "
                      "NUM_OF_VFS=N) and the BIOS, or remove sriov_numvfs from the rule",
                      dir + "/" +
                          (now.unreadable.empty() ? "sriov_totalvfs = (absent)" : now.unreadable));
    if (want > *now.totalvfs)
        return refuse("sriov-numvfs-too-many", "error",
                      fmt::format("sriov_numvfs = {} is more than the {} VFs this function can "
                                  "have (sriov_totalvfs): nothing is written",
                                  want, *now.totalvfs),
                      fmt::format("ask at most {} VFs, or raise the firmware's NUM_OF_VFS "
                                  "(mlxconfig/mstconfig) and reset the card",
                                  *now.totalvfs),
                      fmt::format("{}/sriov_totalvfs = {}", dir, *now.totalvfs));
    if (*now.numvfs == want)
        return;
    out_of_sync();
    Action a{Action::Kind::sriov_numvfs,
             d.name,
             ctx.syspath,
             0,
             d.pci_address,
             "",
             "",
             0,
             "SRIOVNumVFs",
             std::to_string(*now.numvfs),
             std::to_string(want)};
    a.number = static_cast<int32_t>(want);
    ctx.actions.push_back(std::move(a));
}

} // namespace

const Setting& sriov_numvfs_setting() {
    static const SriovNumVfsSetting setting;
    return setting;
}

} // namespace rdmad
