// SPDX-License-Identifier: MIT
#include "export/prometheus.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

namespace rdmad::exports {
namespace {

/// Append `key="value"` (the value escaped). A value with a byte above 0x7f goes through
/// valid_utf8() first: label values are UTF-8, and node-exporter's parser refuses the whole
/// file over one that is not (prometheus/common expfmt/text_parse.go, startLabelValue()),
/// while a netdev name may hold any byte but '/', ':', whitespace and NUL (net/core/dev.c
/// dev_valid_name()).
void append_label(std::string& out, const char* key, std::string_view value) {
    out += key;
    out += "=\"";
    // Nearly every value is ASCII and needs no escape: copied whole.
    const auto special = std::find_if(value.begin(), value.end(), [](char c) {
        return c == '\\' || c == '"' || c == '\n' || static_cast<unsigned char>(c) >= 0x80;
    });
    if (special == value.end()) {
        out += value;
        out += '"';
        return;
    }
    std::string valid;
    if (std::any_of(special, value.end(),
                    [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
        valid = valid_utf8(value);
        value = valid;
    }
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

/// Extra labels of a sample, after its object's: (name, value) pairs.
using Labels = std::initializer_list<std::pair<const char*, std::string_view>>;

/// The families of rdmad.prom, in the order the file has them (render_prometheus()).
enum FamilyId : size_t {
    kState,
    kConfigErrors,
    kLastReconcile,
    kManagerProblems,
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
    {"rdmad_problems",
     "Problems of the host and of rdmad itself (org.rdmad1.Manager Problems: configuration, "
     "host-wide actions that failed, the exports), by code and severity."},
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

/// Pieces of rdmad.prom go out once they hold this much (write_prometheus()).
constexpr size_t kFlushBytes = 64 * 1024;

/// Writes the samples of one family at a time into `out` (begin() chooses it; the render
/// functions ask family() and build only its labels), the family's HELP and TYPE before its
/// first sample: a family without samples is left out, as a HELP alone would announce a
/// metric that is not there.
class Sampler {
  public:
    explicit Sampler(std::string& out) : out_(out) {}
    void begin(FamilyId f) {
        family_ = f;
        header_ = false;
    }
    FamilyId family() const { return family_; }
    /// A sample of family `f`: `base` (the object's labels, `device="mlx5_0",port="1"`,
    /// or "") and `extra`, then `value`.
    void add(FamilyId f, std::string_view base, Labels extra, double value) {
        if (f != family_)
            return;
        const std::string_view name = kFamilies[f].name;
        if (!header_) {
            header_ = true;
            out_ += "# HELP ";
            out_ += name;
            out_ += ' ';
            out_ += kFamilies[f].help;
            out_ += "\n# TYPE ";
            out_ += name;
            out_ += " gauge\n";
        }
        out_ += name;
        if (!base.empty() || extra.size()) {
            out_ += '{';
            out_ += base;
            bool comma = !base.empty();
            for (const auto& [key, v] : extra) {
                if (comma)
                    out_ += ',';
                comma = true;
                append_label(out_, key, v);
            }
            out_ += '}';
        }
        // The shortest text that reads back as `value` (1, 0, 1764590400.5), no exponent for
        // the integers and Unix times written here.
        // An integer below 100,000 (nearly every value: 0/1, counts, priorities) prints the
        // same as an integer, at a fraction of the cost: its fixed form has at most 5
        // characters, the exponent form at least 5 ("1e+04"), and a tie goes to the fixed one.
        char buf[32];
        buf[0] = ' ';
        const bool small = value > -100'000 && value < 100'000; // then the cast is defined
        const auto r =
            small && static_cast<int32_t>(value) == value
                ? std::to_chars(buf + 1, buf + sizeof buf - 1, static_cast<int32_t>(value))
                : std::to_chars(buf + 1, buf + sizeof buf - 1, value);
        *r.ptr = '\n';
        out_.append(buf, static_cast<size_t>(r.ptr + 1 - buf));
    }
    void add(FamilyId f, std::string_view base, double value) { add(f, base, {}, value); }
    /// A state set: one series per state, 1 for `current`.
    void states(FamilyId f, std::string_view base, const char* key,
                std::initializer_list<const char*> all, const std::string& current) {
        if (f != family_)
            return;
        for (const char* s : all)
            add(f, base, {{key, s}}, current == s ? 1 : 0);
    }
    /// The labels of an object (`device="mlx5_0"`) and of its port, kept between objects
    /// so that building them allocates only when they grow.
    std::string& device_label() { return device_; }
    std::string& port_label() { return port_; }

  private:
    std::string& out_;
    FamilyId family_ = kState;
    bool header_ = false;
    std::string device_, port_;
};

/// The values of `objects` (devices by syspath, netdevs by ifindex) sorted by name, then by
/// `tie` (the syspath, the ifindex): the order of rdmad.prom's series.
template <typename Map, typename Tie>
std::vector<const typename Map::mapped_type*> by_name(const Map& objects, Tie tie) {
    using T = typename Map::mapped_type;
    std::vector<const T*> out;
    out.reserve(objects.size());
    for (const auto& [key, o] : objects)
        out.push_back(&o);
    std::sort(out.begin(), out.end(), [tie](const T* a, const T* b) {
        return std::tie(a->name, a->*tie) < std::tie(b->name, b->*tie);
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
        s.add(f, port, {{"dscp", std::to_string(dscp)}}, prio);
}

void priorities(Sampler& s, FamilyId f, const std::string& port,
                const std::vector<uint8_t>& no_drop) {
    static const char* const names[8] = {"0", "1", "2", "3", "4", "5", "6", "7"};
    for (uint8_t p = 0; p < 8; ++p)
        s.add(f, port, {{"priority", names[p]}},
              std::find(no_drop.begin(), no_drop.end(), p) != no_drop.end() ? 1 : 0);
}

} // namespace

std::string escape_label_value(const std::string& value) {
    std::string out;
    append_label(out, "", value);
    return out.substr(2, out.size() - 3); // without `="` and `"`
}

namespace {

/// One sample of family `f` per (code, severity) of `problems`: how many problems have it.
void add_problem_counts(FamilyId f, std::string_view base, const std::vector<Problem>& problems,
                        Sampler& s) {
    std::vector<std::pair<std::string_view, std::string_view>> codes;
    codes.reserve(problems.size());
    for (const Problem& p : problems)
        codes.emplace_back(p.code, p.severity);
    std::sort(codes.begin(), codes.end());
    for (size_t i = 0; i < codes.size();) {
        size_t j = i;
        while (j < codes.size() && codes[j] == codes[i])
            ++j;
        s.add(f, base, {{"code", codes[i].first}, {"severity", codes[i].second}},
              static_cast<double>(j - i));
        i = j;
    }
}

void render_manager(const ManagerFacts& facts, Sampler& s) {
    s.states(kState, {}, "state", {"starting", "running", "degraded"}, facts.state);
    s.add(kConfigErrors, {}, static_cast<double>(facts.config_errors));
    add_problem_counts(kManagerProblems, {}, facts.problems, s);
    if (facts.last_reconcile_usec)
        s.add(kLastReconcile, {}, static_cast<double>(*facts.last_reconcile_usec / 1000) / 1000.0);
}

/// The samples of port `p` of the family s.family(); `dev()` gives the device's label. The
/// labels are built on first use: most families have no sample for most ports.
template <typename DeviceLabel>
void render_port(const PortState& p, const DeviceLabel& dev, Sampler& s) {
    bool built = false;
    auto port = [&]() -> const std::string& {
        std::string& label = s.port_label();
        if (!built) {
            built = true;
            label = dev();
            label += ',';
            char number[16];
            const auto n = std::to_chars(number, number + sizeof number, p.number);
            append_label(label, "port",
                         std::string_view(number, static_cast<size_t>(n.ptr - number)));
        }
        return label;
    };
    switch (s.family()) {
    case kPortInfo:
        s.add(kPortInfo, port(),
              {{"link_layer", p.link_layer}, {"transport", p.transport}, {"netdev", p.netdev}}, 1);
        break;
    case kInSync:
        s.add(kInSync, port(), p.in_sync ? 1 : 0);
        break;
    case kPortType:
        if (!p.port_type.empty())
            s.states(kPortType, port(), "type", {"ib", "eth", "auto"}, port_type_mode(p.port_type));
        break;
    case kDesiredType:
        if (!p.desired_port_type.empty())
            s.states(kDesiredType, port(), "type", {"ib", "eth", "auto"}, p.desired_port_type);
        break;
    case kNextBootType:
        if (!p.next_boot_port_type.empty())
            s.states(kNextBootType, port(), "type", {"ib", "eth", "auto"}, p.next_boot_port_type);
        break;
    case kTypePending:
        if (!p.next_boot_port_type.empty() || !p.pending_port_type.empty())
            s.add(kTypePending, port(), p.pending_port_type.empty() ? 0 : 1);
        break;
    case kPfcStatus:
        if (p.link_layer == "Ethernet")
            s.states(kPfcStatus, port(), "status", {"ok", "not_supported", "failed", "unknown"},
                     pfc_status(p.pfc.status));
        break;
    case kNoDrop:
        if (p.link_layer == "Ethernet" && p.pfc.status == PfcActual::Status::ok)
            priorities(s, kNoDrop, port(), p.pfc.priorities);
        break;
    case kDesiredNoDrop:
        if (!p.desired_pfc_no_drop.empty())
            priorities(s, kDesiredNoDrop, port(), p.desired_pfc_no_drop);
        break;
    case kTrust:
        if (p.pfc.status == PfcActual::Status::ok && !p.pfc.trust.empty())
            s.states(kTrust, port(), "trust", {"dscp", "pcp"}, p.pfc.trust);
        break;
    case kDscpPriority:
        if (p.pfc.status == PfcActual::Status::ok && !p.pfc.trust.empty())
            dscp_map(s, kDscpPriority, port(), p.pfc.dscp_map);
        break;
    case kDesiredTrust:
        if (!p.desired_trust.empty())
            s.states(kDesiredTrust, port(), "trust", {"dscp", "pcp"}, p.desired_trust);
        break;
    case kDesiredDscpPriority:
        if (!p.desired_dscp_priority.empty())
            dscp_map(s, kDesiredDscpPriority, port(), p.desired_dscp_priority);
        break;
    case kRdmaCmRoceMode:
        if (!p.rdma_cm.roce_mode.empty())
            s.states(kRdmaCmRoceMode, port(), "mode", {"RoCE v2", "IB/RoCE v1"},
                     p.rdma_cm.roce_mode);
        break;
    case kDesiredRdmaCmRoceMode:
        if (!p.desired_rdma_cm_roce_mode.empty())
            s.states(kDesiredRdmaCmRoceMode, port(), "mode", {"RoCE v2", "IB/RoCE v1"},
                     p.desired_rdma_cm_roce_mode);
        break;
    case kRdmaCmTos:
        if (p.rdma_cm.tos)
            s.add(kRdmaCmTos, port(), *p.rdma_cm.tos);
        break;
    case kDesiredRdmaCmTos:
        if (p.desired_rdma_cm_tos >= 0)
            s.add(kDesiredRdmaCmTos, port(), p.desired_rdma_cm_tos);
        break;
    case kRoceVersion:
        if (p.transport == "RoCE")
            for (const char* v : {"v1", "v2"})
                s.add(kRoceVersion, port(), {{"version", v}},
                      std::find(p.roce_versions.begin(), p.roce_versions.end(), v) !=
                              p.roce_versions.end()
                          ? 1
                          : 0);
        break;
    case kRoutable:
        if (p.transport == "RoCE")
            s.add(kRoutable, port(), has_routable_roce_v2_gid(p) ? 1 : 0);
        break;
    case kGidIndex:
        if (p.transport == "RoCE" && !p.recommended_gid.gid.empty())
            s.add(kGidIndex, port(), p.recommended_gid.index);
        break;
    default:
        break;
    }
}

/// The samples of device `d` and its ports of the family s.family().
void render_device(const DeviceState& d, Sampler& s) {
    bool built = false;
    auto dev = [&]() -> const std::string& {
        std::string& label = s.device_label();
        if (!built) {
            built = true;
            label.clear();
            append_label(label, "device", d.name);
        }
        return label;
    };
    switch (s.family()) {
    case kDeviceInfo:
        s.add(kDeviceInfo, dev(),
              {{"kernel_driver", d.kernel_driver},
               {"provider", d.provider},
               {"node_type", d.node_type}},
              1);
        return;
    case kProviderInstalled:
        s.add(kProviderInstalled, dev(), d.provider_installed ? 1 : 0);
        return;
    case kProblems:
        add_problem_counts(kProblems, dev(), d.problems, s);
        return;
    case kSriovNumVfs:
        if (d.sriov.numvfs)
            s.add(kSriovNumVfs, dev(), *d.sriov.numvfs);
        return;
    case kSriovTotalVfs:
        if (d.sriov.totalvfs)
            s.add(kSriovTotalVfs, dev(), *d.sriov.totalvfs);
        return;
    case kDesiredSriovNumVfs:
        if (d.desired_sriov_numvfs >= 0)
            s.add(kDesiredSriovNumVfs, dev(), d.desired_sriov_numvfs);
        return;
    default:
        break;
    }
    for (const PortState& p : d.ports)
        render_port(p, dev, s);
}

void render_link(const LinkState& l, Sampler& s) {
    std::string& dev = s.device_label();
    dev.clear();
    append_label(dev, "device", l.name);
    s.states(kRdmaCapable, dev, "state", {"yes", "no", "module-not-loaded", "unknown"},
             l.rdma_capable);
}

// The change-set names (inventory/properties.cpp and the settings' rows) of what
// render_device(), render_port() and render_link() read. "syspath" and a netdev's index
// break ties in the name order; "Ports" is a port come or gone.
constexpr std::string_view kDeviceShown[] = {
    "Name",        "syspath",           "NodeType",           "KernelDriver",
    "Provider",    "ProviderInstalled", "Problems",           "ProblemDetails",
    "SRIOVNumVFs", "SRIOVTotalVFs",     "DesiredSRIOVNumVFs", "Ports",
};
constexpr std::string_view kPortShown[] = {
    "Number",
    "LinkLayer",
    "Transport",
    "netdev",
    "InSync",
    "PortType",
    "DesiredPortType",
    "NextBootPortType",
    "PendingPortType",
    "pfc",
    "Trust",
    "DSCPPriority",
    "DesiredPFCNoDrop",
    "DesiredTrust",
    "DesiredDSCPPriority",
    "rdma_cm",
    "RDMACMRoCEMode",
    "DesiredRDMACMRoCEMode",
    "RDMACMToS",
    "DesiredRDMACMToS",
    "RoCEVersions",
    "GIDs",
    "RecommendedGID",
};
constexpr std::string_view kLinkShown[] = {"Name", "RdmaCapable"};

template <size_t N> bool listed(const std::string_view (&names)[N], std::string_view name) {
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

template <typename Key, size_t N>
bool names_any(const std::map<Key, std::set<std::string>>& changed,
               const std::string_view (&shown)[N]) {
    for (const auto& [key, properties] : changed)
        for (const std::string& p : properties)
            if (listed(shown, p))
                return true;
    return false;
}

} // namespace

struct PrometheusStream::Walk {
    Walk(const HostState& inventory, const ManagerFacts& f)
        : facts(f), devices(by_name(inventory.devices, &DeviceState::syspath)),
          links(by_name(inventory.links, &LinkState::index)), sampler(piece) {
        piece.reserve(kFlushBytes + 4096);
    }
    const ManagerFacts facts;
    const std::vector<const DeviceState*> devices;
    const std::vector<const LinkState*> links;
    std::string piece;
    Sampler sampler;
    size_t family = 0;  ///< the family being written
    size_t object = 0;  ///< its next object (devices or links)
    bool begun = false; ///< the sampler is on `family`
};

PrometheusStream::PrometheusStream(const HostState& inventory, const ManagerFacts& facts)
    : walk_(std::make_unique<Walk>(inventory, facts)) {}

PrometheusStream::~PrometheusStream() = default;

std::string_view PrometheusStream::next() {
    // Family by family, each family's samples object by object (the Manager, the devices,
    // the netdevs, in that order), until the piece holds kFlushBytes.
    Walk& w = *walk_;
    w.piece.clear();
    while (w.family < kFamilyCount && w.piece.size() < kFlushBytes) {
        if (!w.begun) {
            w.sampler.begin(static_cast<FamilyId>(w.family));
            w.begun = true;
            w.object = 0;
        }
        if (w.family < kDeviceInfo) {
            render_manager(w.facts, w.sampler);
        } else if (w.family < kRdmaCapable) {
            while (w.object < w.devices.size() && w.piece.size() < kFlushBytes)
                render_device(*w.devices[w.object++], w.sampler);
            if (w.object < w.devices.size())
                break; // the piece is full: this family goes on in the next
        } else {
            while (w.object < w.links.size() && w.piece.size() < kFlushBytes)
                render_link(*w.links[w.object++], w.sampler);
            if (w.object < w.links.size())
                break;
        }
        ++w.family;
        w.begun = false;
    }
    return w.piece;
}

bool PrometheusStream::done() const {
    return walk_->family >= kFamilyCount;
}

void write_prometheus(const HostState& inventory, const ManagerFacts& facts,
                      const std::function<void(std::string_view)>& out) {
    PrometheusStream stream(inventory, facts);
    for (std::string_view piece = stream.next(); !piece.empty(); piece = stream.next())
        out(piece);
}

std::string render_prometheus(const HostState& inventory, const ManagerFacts& facts) {
    std::string out;
    write_prometheus(inventory, facts, [&out](std::string_view piece) { out += piece; });
    return out;
}

// ---- PrometheusRenderer ----------------------------------------------------------------

void PrometheusRenderer::changed(const ChangeSet& changes) {
    if (text_changed_)
        return;
    // Every device and netdev has samples: one come or gone changes the text.
    text_changed_ = !changes.devices_added.empty() || !changes.devices_removed.empty() ||
                    !changes.links_added.empty() || !changes.links_removed.empty() ||
                    names_any(changes.devices_changed, kDeviceShown) ||
                    names_any(changes.ports_changed, kPortShown) ||
                    names_any(changes.links_changed, kLinkShown);
}

void PrometheusRenderer::update(const Inventory&, const ManagerFacts& facts) {
    if (text_changed_ || !(facts == facts_))
        ++generation_;
    text_changed_ = false;
    facts_ = facts;
}

void PrometheusRenderer::write(const Inventory& inventory,
                               const std::function<void(std::string_view)>& out) const {
    write_prometheus(inventory.state(), facts_, out);
}

PrometheusStream PrometheusRenderer::stream(const Inventory& inventory) const {
    return PrometheusStream(inventory.state(), facts_);
}

std::string PrometheusRenderer::render(const Inventory& inventory, const ManagerFacts& facts) {
    update(inventory, facts);
    return render_prometheus(inventory.state(), facts_);
}

} // namespace rdmad::exports
