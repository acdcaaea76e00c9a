// SPDX-License-Identifier: MIT
#include "export/prometheus.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <string_view>
#include <utility>
#include <vector>

namespace rdmad::exports {
namespace {

/// Append `key="value"` (the value escaped) to a label list, with a comma when not first.
void append_label(std::string& out, const char* key, std::string_view value) {
    if (!out.empty())
        out += ',';
    out += key;
    out += "=\"";
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    out += '"';
}

/// The text between the braces of a sample, from (name, value) pairs.
std::string labels(std::initializer_list<std::pair<const char*, std::string_view>> pairs) {
    std::string out;
    for (const auto& [k, v] : pairs)
        append_label(out, k, v);
    return out;
}

/// `base` and one more label.
std::string with(const std::string& base, const char* key, std::string_view value) {
    std::string out = base;
    append_label(out, key, value);
    return out;
}

/// The families of rdmad.prom, in the order the file has them (render_prometheus()).
enum FamilyId : size_t {
    kState,
    kConfigErrors,
    kLastReconcile,
    kDeviceInfo,
    kProviderInstalled,
    kProblems,
    kSriovNumVfs,
    kSriovTotalVfs,
    kDesiredSriovNumVfs,
    kPortInfo,
    kInSync,
    kPortType,
    kDesiredType,
    kNextBootType,
    kTypePending,
    kPfcStatus,
    kNoDrop,
    kDesiredNoDrop,
    kTrust,
    kDesiredTrust,
    kDscpPriority,
    kDesiredDscpPriority,
    kRdmaCmRoceMode,
    kDesiredRdmaCmRoceMode,
    kRdmaCmTos,
    kDesiredRdmaCmTos,
    kRoceVersion,
    kRoutable,
    kGidIndex,
    kRdmaCapable,
};
static_assert(kRdmaCapable + 1 == kFamilyCount, "kFamilyCount counts the families");

struct FamilyInfo {
    const char* name;
    const char* help;
};

constexpr FamilyInfo kFamilies[kFamilyCount] = {
    {"rdmad_state", "rdmad's state (org.rdmad1.Manager State): 1 for the current one."},
    {"rdmad_config_errors",
     "Configuration files rdmad cannot use; it keeps their last good rules."},
    {"rdmad_last_reconcile_timestamp_seconds",
     "Unix time of rdmad's last pass that left no action failed and no configuration error."},
    {"rdmad_device_info", "RDMA device: kernel driver, rdma-core provider and node type."},
    {"rdmad_device_provider_installed",
     "Whether the RDMA device's rdma-core provider is installed (libibverbs drops the device "
     "without it)."},
    {"rdmad_device_problems", "Problems rdmad finds on the RDMA device, by code and severity."},
    {"rdmad_device_sriov_numvfs",
     "SR-IOV VFs the device's PCI function has enabled (sysfs sriov_numvfs), on an SR-IOV PF."},
    {"rdmad_device_sriov_totalvfs",
     "Most SR-IOV VFs the device's PCI function can enable (sysfs sriov_totalvfs)."},
    {"rdmad_device_desired_sriov_numvfs", "SR-IOV VF count the desired state asks of the PF."},
    {"rdmad_port_info", "RDMA port: link layer, transport and netdev."},
    {"rdmad_port_in_sync",
     "Whether the port's actual state equals the desired state (1 when nothing is asked)."},
    {"rdmad_port_type",
     "VPI port type mode set on the port (mlx4 sysfs, ConnectX-4+ firmware current): 1 for the "
     "current."},
    {"rdmad_port_desired_type",
     "Port type mode the desired state asks of the port: 1 for the one asked."},
    {"rdmad_port_next_boot_type",
     "ConnectX-4+ port type mode the firmware takes at its next reset or boot (mstconfig Next "
     "Boot), where a port type is asked: 1 for that one."},
    {"rdmad_port_type_pending",
     "Whether the port type asked waits for a firmware reset or reboot (ConnectX-4+): 1 when "
     "pending."},
    {"rdmad_port_pfc_status",
     "Whether the PFC state of the port's netdev could be read over DCB netlink: 1 for the "
     "current status."},
    {"rdmad_port_pfc_no_drop",
     "PFC no-drop (lossless) 802.1p priorities of the port's netdev: 1 when on."},
    {"rdmad_port_desired_pfc_no_drop",
     "PFC no-drop priorities the desired state asks of the port: 1 when asked on."},
    {"rdmad_port_trust",
     "What the port's netdev classifies packets by (its DCB APP table: dscp while it has a DSCP "
     "entry): 1 for the current."},
    {"rdmad_port_desired_trust", "Trust the desired state asks of the port: 1 for the one asked."},
    {"rdmad_port_dscp_priority",
     "802.1p priority each DSCP maps to in the DSCP entries of the port's netdev APP table."},
    {"rdmad_port_desired_dscp_priority",
     "802.1p priority the desired state asks each DSCP to map to."},
    {"rdmad_port_rdma_cm_roce_mode",
     "RoCE version rdma_cm uses on the port by default (configfs default_roce_mode): 1 for the "
     "current."},
    {"rdmad_port_desired_rdma_cm_roce_mode",
     "RDMA-CM default RoCE version the desired state asks of the port: 1 for the one asked."},
    {"rdmad_port_rdma_cm_tos", "ToS byte rdma_cm sets by default on the port (default_roce_tos)."},
    {"rdmad_port_desired_rdma_cm_tos", "RDMA-CM default ToS byte the desired state asks."},
    {"rdmad_port_roce_version", "RoCE versions the port's GID table offers: 1 when offered."},
    {"rdmad_port_roce_v2_routable_gid",
     "Whether the RoCE port has a routable RoCE v2 GID (not link-local)."},
    {"rdmad_port_recommended_roce_gid_index",
     "GID index to give RoCE applications (NCCL_IB_GID_INDEX): the port's RecommendedGID (RoCE "
     "v2 IPv4, then RoCE v2 IPv6, then RoCE v1)."},
    {"rdmad_netdev_rdma_capable", "Whether the netdev can do RDMA here: 1 for its state."},
};

/// Stands, at the start of a kept sample, for `{` and the object's first label: the first
/// label of the object's first sample (first_label()). A kept sample otherwise starts with `{`
/// (labels) or ` ` (none), so the mark cannot be mistaken for a sample's own text.
constexpr char kObjectLabel = '\x01';

/// The first label of the first sample of `text` (`device="mlx5_0"`), "" when that sample has
/// none. Label values are escaped (append_label()): a quote inside one follows a backslash.
std::string_view first_label(std::string_view text) {
    if (text.empty() || text.front() != '{')
        return {};
    const size_t open = text.find("=\"");
    if (open == std::string_view::npos)
        return {};
    for (size_t i = open + 2; i < text.size() && text[i] != '\n'; ++i) {
        if (text[i] == '\\')
            ++i;
        else if (text[i] == '"')
            return text.substr(1, i); // after `{`, up to and with the closing quote
    }
    return {};
}

/// Writes one object's samples family by family into scratch buffers (kept between objects,
/// so rendering allocates only when a buffer grows), then packs them into a Fragments. Each
/// sample is written without its family's name, which assemble_prometheus() puts back.
class Sampler {
  public:
    Sampler() {
        for (auto& b : buffers_)
            b.clear();
    }
    void add(FamilyId f, std::string_view labels, double value) {
        std::string& text = buffers_[f];
        if (!labels.empty()) {
            text += '{';
            text += labels;
            text += '}';
        }
        // The shortest text that reads back as `value` (1, 0, 1764590400.5), no exponent for
        // the integers and Unix times written here.
        char buf[32];
        buf[0] = ' ';
        const auto r = std::to_chars(buf + 1, buf + sizeof buf - 1, value);
        *r.ptr = '\n';
        text.append(buf, static_cast<size_t>(r.ptr + 1 - buf));
    }
    /// A state set: one series per state, 1 for `current`.
    void states(FamilyId f, const std::string& base, const char* key,
                std::initializer_list<const char*> all, const std::string& current) {
        for (const char* s : all)
            add(f, with(base, key, s), current == s ? 1 : 0);
    }
    /// Every sample but the object's first that starts with the first's first label (the
    /// device or netdev: `{device="mlx5_0",port="1",...`) keeps kObjectLabel in its place:
    /// at 1,024 devices that label was about 0.35 MB of the kept text.
    void pack(PrometheusFragments& out) const {
        size_t size = 0;
        for (const auto& b : buffers_)
            size += b.size();
        out.text.clear();
        out.text.reserve(size);
        std::string_view base; // the first label of the object's first sample
        bool first = true;
        for (size_t f = 0; f < kFamilyCount; ++f) {
            out.start[f] = static_cast<uint32_t>(out.text.size());
            std::string_view text = buffers_[f];
            while (!text.empty()) {
                const size_t newline = text.find('\n'); // every sample ends with one
                const size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
                const std::string_view sample = text.substr(0, end);
                text.remove_prefix(end);
                const size_t after = base.size() + 1;
                if (first) {
                    first = false;
                    base = first_label(sample);
                    out.text += sample;
                } else if (!base.empty() && sample.size() > after && sample.front() == '{' &&
                           sample.compare(1, base.size(), base) == 0 &&
                           (sample[after] == ',' || sample[after] == '}')) {
                    out.text += kObjectLabel;
                    out.text += sample.substr(after);
                } else {
                    out.text += sample;
                }
            }
        }
        out.start[kFamilyCount] = static_cast<uint32_t>(out.text.size());
    }

  private:
    // One set per thread: render_prometheus() may be called from tests' threads.
    static thread_local std::array<std::string, kFamilyCount> buffers_;
};

thread_local std::array<std::string, kFamilyCount> Sampler::buffers_;

std::vector<const DeviceState*> by_name(const HostState& inventory) {
    std::vector<const DeviceState*> out;
    out.reserve(inventory.devices.size());
    for (const auto& [syspath, d] : inventory.devices)
        out.push_back(&d);
    std::sort(out.begin(), out.end(), [](const DeviceState* a, const DeviceState* b) {
        return std::tie(a->name, a->syspath) < std::tie(b->name, b->syspath);
    });
    return out;
}

/// mlx4 `mlx4_port<n>` ("ib", "eth", "auto (ib)", "auto (eth)") as the mode a rule sets.
std::string port_type_mode(const std::string& port_type) {
    return port_type.rfind("auto", 0) == 0 ? "auto" : port_type;
}

const char* pfc_status(PfcActual::Status s) {
    switch (s) {
    case PfcActual::Status::ok:
        return "ok";
    case PfcActual::Status::not_supported:
        return "not_supported";
    case PfcActual::Status::failed:
        return "failed";
    case PfcActual::Status::unknown:
        break;
    }
    return "unknown";
}

/// One sample per DSCP entry, its value the priority: `{...,dscp="26"} 3`.
void dscp_map(Sampler& s, FamilyId f, const std::string& port, const DscpMap& map) {
    for (const auto& [dscp, prio] : map)
        s.add(f, with(port, "dscp", std::to_string(dscp)), prio);
}

void priorities(Sampler& s, FamilyId f, const std::string& port,
                const std::vector<uint8_t>& no_drop) {
    static const char* const names[8] = {"0", "1", "2", "3", "4", "5", "6", "7"};
    for (uint8_t p = 0; p < 8; ++p)
        s.add(f, with(port, "priority", names[p]),
              std::find(no_drop.begin(), no_drop.end(), p) != no_drop.end() ? 1 : 0);
}

std::string_view family_text(const PrometheusFragments& f, size_t family) {
    return std::string_view(f.text).substr(f.start[family], f.start[family + 1] - f.start[family]);
}

} // namespace

std::string escape_label_value(const std::string& value) {
    std::string out;
    append_label(out, "", value);
    return out.substr(2, out.size() - 3); // without `="` and `"`
}

void render_manager(const ManagerFacts& facts, PrometheusFragments& out) {
    Sampler s;
    s.states(kState, {}, "state", {"starting", "running", "degraded"}, facts.state);
    s.add(kConfigErrors, {}, static_cast<double>(facts.config_errors));
    if (facts.last_reconcile_usec)
        s.add(kLastReconcile, {}, static_cast<double>(*facts.last_reconcile_usec / 1000) / 1000.0);
    s.pack(out);
}

void render_device(const DeviceState& d, PrometheusFragments& out) {
    Sampler s;
    const std::string dev = labels({{"device", d.name}});
    s.add(kDeviceInfo,
          labels({{"device", d.name},
                  {"kernel_driver", d.kernel_driver},
                  {"provider", d.provider},
                  {"node_type", d.node_type}}),
          1);
    s.add(kProviderInstalled, dev, d.provider_installed ? 1 : 0);
    std::vector<std::pair<std::string_view, std::string_view>> codes;
    codes.reserve(d.problems.size());
    for (const Problem& p : d.problems)
        codes.emplace_back(p.code, p.severity);
    std::sort(codes.begin(), codes.end());
    for (size_t i = 0; i < codes.size();) {
        size_t j = i;
        while (j < codes.size() && codes[j] == codes[i])
            ++j;
        s.add(kProblems, with(with(dev, "code", codes[i].first), "severity", codes[i].second),
              static_cast<double>(j - i));
        i = j;
    }
    if (d.sriov.numvfs)
        s.add(kSriovNumVfs, dev, *d.sriov.numvfs);
    if (d.sriov.totalvfs)
        s.add(kSriovTotalVfs, dev, *d.sriov.totalvfs);
    if (d.desired_sriov_numvfs >= 0)
        s.add(kDesiredSriovNumVfs, dev, d.desired_sriov_numvfs);
    for (const PortState& p : d.ports) {
        const std::string port = with(dev, "port", std::to_string(p.number));
        s.add(kPortInfo,
              with(with(with(port, "link_layer", p.link_layer), "transport", p.transport), "netdev",
                   p.netdev),
              1);
        s.add(kInSync, port, p.in_sync ? 1 : 0);
        if (!p.port_type.empty())
            s.states(kPortType, port, "type", {"ib", "eth", "auto"}, port_type_mode(p.port_type));
        if (!p.desired_port_type.empty())
            s.states(kDesiredType, port, "type", {"ib", "eth", "auto"}, p.desired_port_type);
        if (!p.next_boot_port_type.empty())
            s.states(kNextBootType, port, "type", {"ib", "eth", "auto"}, p.next_boot_port_type);
        if (!p.next_boot_port_type.empty() || !p.pending_port_type.empty())
            s.add(kTypePending, port, p.pending_port_type.empty() ? 0 : 1);
        if (p.link_layer == "Ethernet") {
            s.states(kPfcStatus, port, "status", {"ok", "not_supported", "failed", "unknown"},
                     pfc_status(p.pfc.status));
            if (p.pfc.status == PfcActual::Status::ok)
                priorities(s, kNoDrop, port, p.pfc.priorities);
        }
        if (!p.desired_pfc_no_drop.empty())
            priorities(s, kDesiredNoDrop, port, p.desired_pfc_no_drop);
        if (p.pfc.status == PfcActual::Status::ok && !p.pfc.trust.empty()) {
            s.states(kTrust, port, "trust", {"dscp", "pcp"}, p.pfc.trust);
            dscp_map(s, kDscpPriority, port, p.pfc.dscp_map);
        }
        if (!p.desired_trust.empty())
            s.states(kDesiredTrust, port, "trust", {"dscp", "pcp"}, p.desired_trust);
        dscp_map(s, kDesiredDscpPriority, port, p.desired_dscp_priority);
        if (!p.rdma_cm.roce_mode.empty())
            s.states(kRdmaCmRoceMode, port, "mode", {"RoCE v2", "IB/RoCE v1"}, p.rdma_cm.roce_mode);
        if (!p.desired_rdma_cm_roce_mode.empty())
            s.states(kDesiredRdmaCmRoceMode, port, "mode", {"RoCE v2", "IB/RoCE v1"},
                     p.desired_rdma_cm_roce_mode);
        if (p.rdma_cm.tos)
            s.add(kRdmaCmTos, port, *p.rdma_cm.tos);
        if (p.desired_rdma_cm_tos >= 0)
            s.add(kDesiredRdmaCmTos, port, p.desired_rdma_cm_tos);
        if (p.transport == "RoCE") {
            for (const char* v : {"v1", "v2"})
                s.add(kRoceVersion, with(port, "version", v),
                      std::find(p.roce_versions.begin(), p.roce_versions.end(), v) !=
                              p.roce_versions.end()
                          ? 1
                          : 0);
            s.add(kRoutable, port, has_routable_roce_v2_gid(p) ? 1 : 0);
            if (!p.recommended_gid.gid.empty())
                s.add(kGidIndex, port, p.recommended_gid.index);
        }
    }
    s.pack(out);
}

void render_link(const LinkState& l, PrometheusFragments& out) {
    Sampler s;
    s.states(kRdmaCapable, labels({{"device", l.name}}), "state",
             {"yes", "no", "module-not-loaded", "unknown"}, l.rdma_capable);
    s.pack(out);
}

/// Append the samples of `text` (one family's, each line without the family's name) with the
/// name `name` put back before each.
/// `text`'s samples with the family's `name` and the object's first label (`base`,
/// first_label() of the object's text) put back.
void append_samples(std::string& out, std::string_view name, std::string_view text,
                    std::string_view base) {
    while (!text.empty()) {
        const size_t newline = text.find('\n'); // every sample ends with one
        const size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
        out += name;
        if (text.front() == kObjectLabel) {
            out += '{';
            out += base;
            out += text.substr(1, end - 1);
        } else {
            out += text.substr(0, end);
        }
        text.remove_prefix(end);
    }
}

/// Bytes of the samples of `text` once append_samples() has put the name and `base` back (at
/// most: a kObjectLabel inside a label value counts too).
size_t samples_size(std::string_view name, std::string_view text, std::string_view base) {
    return text.size() +
           name.size() * static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) +
           base.size() * static_cast<size_t>(std::count(text.begin(), text.end(), kObjectLabel));
}

/// rdmad.prom from the Manager's samples and every object's, in `objects`' order, into `out`.
/// With `flush`, `out` is handed to it and emptied whenever it holds kFlushBytes or more, and
/// at the end: the file goes out in pieces, never whole in memory.
constexpr size_t kFlushBytes = 64 * 1024;

void assemble_prometheus(const PrometheusFragments& manager,
                         const std::vector<const PrometheusFragments*>& objects, std::string& out,
                         const std::function<void(std::string_view)>* flush) {
    const std::string_view manager_base = first_label(manager.text);
    std::vector<std::string_view> bases;
    bases.reserve(objects.size());
    for (const auto* o : objects)
        bases.push_back(first_label(o->text));
    auto spill = [&] {
        if (flush && out.size() >= kFlushBytes) {
            (*flush)(out);
            out.clear();
        }
    };
    for (size_t f = 0; f < kFamilyCount; ++f) {
        // A family without samples is left out: a HELP alone would announce a metric that is
        // not there.
        bool any = !family_text(manager, f).empty();
        for (size_t i = 0; !any && i < objects.size(); ++i)
            any = !family_text(*objects[i], f).empty();
        if (!any)
            continue;
        out += "# HELP ";
        out += kFamilies[f].name;
        out += ' ';
        out += kFamilies[f].help;
        out += "\n# TYPE ";
        out += kFamilies[f].name;
        out += " gauge\n";
        append_samples(out, kFamilies[f].name, family_text(manager, f), manager_base);
        for (size_t i = 0; i < objects.size(); ++i) {
            append_samples(out, kFamilies[f].name, family_text(*objects[i], f), bases[i]);
            spill();
        }
    }
    if (flush && !out.empty()) {
        (*flush)(out);
        out.clear();
    }
}

std::string assemble_prometheus(const PrometheusFragments& manager,
                                const std::vector<const PrometheusFragments*>& objects) {
    size_t size = 0;
    for (size_t f = 0; f < kFamilyCount; ++f) {
        const std::string_view name = kFamilies[f].name;
        size += 2 * name.size() + std::strlen(kFamilies[f].help) + 24 +
                samples_size(name, family_text(manager, f), first_label(manager.text));
        for (const PrometheusFragments* o : objects)
            size += samples_size(name, family_text(*o, f), first_label(o->text));
    }
    std::string out;
    out.reserve(size);
    assemble_prometheus(manager, objects, out, nullptr);
    return out;
}

std::string render_prometheus(const HostState& inventory, const ManagerFacts& facts) {
    PrometheusFragments manager;
    render_manager(facts, manager);
    std::vector<PrometheusFragments> rendered(inventory.devices.size() + inventory.links.size());
    std::vector<const PrometheusFragments*> order;
    order.reserve(rendered.size());
    size_t i = 0;
    for (const DeviceState* d : by_name(inventory)) {
        render_device(*d, rendered[i]);
        order.push_back(&rendered[i++]);
    }
    std::vector<const LinkState*> links;
    for (const auto& [index, l] : inventory.links)
        links.push_back(&l);
    std::sort(links.begin(), links.end(), [](const LinkState* a, const LinkState* b) {
        return std::tie(a->name, a->index) < std::tie(b->name, b->index);
    });
    for (const LinkState* l : links) {
        render_link(*l, rendered[i]);
        order.push_back(&rendered[i++]);
    }
    return assemble_prometheus(manager, order);
}

// ---- PrometheusRenderer ----------------------------------------------------------------

void PrometheusRenderer::changed(const ChangeSet& changes) {
    if (all_stale_)
        return;
    for (const auto* ids : {&changes.devices_added, &changes.devices_removed})
        stale_devices_.insert(ids->begin(), ids->end());
    // The order is by name: sorted again when an object comes, goes or is renamed.
    for (const auto& [id, properties] : changes.devices_changed) {
        stale_devices_.insert(id);
        if (properties.count("Name"))
            order_stale_ = true;
    }
    for (const auto& [key, _] : changes.ports_changed)
        stale_devices_.insert(key.first);
    // A netdev's samples are its Name and RdmaCapable (render_link()), rendered at each write.
    if (!changes.links_added.empty() || !changes.links_removed.empty())
        order_stale_ = text_changed_ = true;
    for (const auto& [index, properties] : changes.links_changed) {
        if (properties.count("Name"))
            order_stale_ = text_changed_ = true;
        if (properties.count("RdmaCapable"))
            text_changed_ = true;
    }
}

void PrometheusRenderer::render_device_entry(const std::string& id, const Inventory& inventory) {
    const std::string& syspath = inventory.syspath_of(id);
    const DeviceState* d = syspath.empty() ? nullptr : inventory.device(syspath);
    if (!d) {
        if (devices_.erase(id))
            order_stale_ = text_changed_ = true;
        return;
    }
    auto [entry, fresh] = devices_.try_emplace(id);
    if (fresh)
        order_stale_ = true;
    PrometheusFragments next;
    render_device(*d, next);
    keep(entry->second, std::move(next));
    ++objects_rendered_;
}

void PrometheusRenderer::update(const Inventory& inventory, const ManagerFacts& facts) {
    if (all_stale_) {
        all_stale_ = false;
        devices_.clear();
        for (const auto& [syspath, d] : inventory.state().devices)
            render_device_entry(inventory.id_of(syspath), inventory);
        order_stale_ = text_changed_ = true;
    } else {
        for (const std::string& id : stale_devices_)
            render_device_entry(id, inventory);
    }
    stale_devices_.clear();
    if (order_stale_) {
        order_stale_ = false;
        if (sort_order(inventory))
            text_changed_ = true;
    }
    PrometheusFragments manager;
    render_manager(facts, manager);
    keep(manager_, std::move(manager));
    if (text_changed_) {
        text_changed_ = false;
        ++generation_;
    }
}

std::vector<PrometheusFragments>
PrometheusRenderer::render_links(const Inventory& inventory) const {
    std::vector<PrometheusFragments> links;
    links.reserve(link_order_.size());
    for (const int32_t index : link_order_)
        if (const LinkState* l = inventory.link(index))
            render_link(*l, links.emplace_back());
    return links;
}

std::vector<const PrometheusFragments*>
PrometheusRenderer::objects(const std::vector<PrometheusFragments>& links) const {
    std::vector<const PrometheusFragments*> all;
    all.reserve(order_.size() + links.size());
    all.insert(all.end(), order_.begin(), order_.end());
    for (const PrometheusFragments& l : links)
        all.push_back(&l);
    return all;
}

void PrometheusRenderer::write(const Inventory& inventory,
                               const std::function<void(std::string_view)>& out) const {
    const std::vector<PrometheusFragments> links = render_links(inventory);
    std::string piece;
    piece.reserve(kFlushBytes + 4096);
    assemble_prometheus(manager_, objects(links), piece, &out);
}

std::string PrometheusRenderer::render(const Inventory& inventory, const ManagerFacts& facts) {
    update(inventory, facts);
    return assemble_prometheus(manager_, objects(render_links(inventory)));
}

bool PrometheusRenderer::sort_order(const Inventory& inventory) {
    struct Keyed {
        const std::string* name;
        const std::string* syspath;
        const PrometheusFragments* text;
    };
    std::vector<Keyed> devices;
    devices.reserve(devices_.size());
    for (const auto& [id, text] : devices_) {
        const std::string& syspath = inventory.syspath_of(id);
        if (const DeviceState* d = inventory.device(syspath))
            devices.push_back({&d->name, &syspath, &text});
    }
    std::sort(devices.begin(), devices.end(), [](const Keyed& a, const Keyed& b) {
        return std::tie(*a.name, *a.syspath) < std::tie(*b.name, *b.syspath);
    });
    std::vector<const LinkState*> links;
    links.reserve(inventory.state().links.size());
    for (const auto& [index, l] : inventory.state().links)
        links.push_back(&l);
    std::sort(links.begin(), links.end(), [](const LinkState* a, const LinkState* b) {
        return std::tie(a->name, a->index) < std::tie(b->name, b->index);
    });
    std::vector<const PrometheusFragments*> order;
    order.reserve(devices.size());
    for (const Keyed& k : devices)
        order.push_back(k.text);
    std::vector<int32_t> link_order;
    link_order.reserve(links.size());
    for (const LinkState* l : links)
        link_order.push_back(l->index);
    if (order == order_ && link_order == link_order_)
        return false;
    order_ = std::move(order);
    link_order_ = std::move(link_order);
    return true;
}

void PrometheusRenderer::keep(PrometheusFragments& slot, PrometheusFragments&& next) {
    if (next.text == slot.text && next.start == slot.start)
        return;
    // Rendered by appending: the slack of its growth is not kept per object.
    next.text.shrink_to_fit();
    slot = std::move(next);
    text_changed_ = true;
}

} // namespace rdmad::exports
