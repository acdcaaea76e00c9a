// SPDX-License-Identifier: MIT
#include "export/prometheus.hpp"

#include <algorithm>
#include <charconv>
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

/// One metric family: its HELP and TYPE lines, then its samples, kept together as the format
/// requires. Label lists are rendered once per object and reused for its samples: at 1,024
/// devices the file has some 16,000 samples.
class Family {
  public:
    Family(const char* name, const char* help) : name_(name) {
        text_ = fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
    }
    void add(std::string_view labels, double value) {
        text_ += name_;
        if (!labels.empty()) {
            text_ += '{';
            text_ += labels;
            text_ += '}';
        }
        // The shortest text that reads back as `value` (1, 0, 1764590400.5), no exponent for
        // the integers and Unix times written here.
        char buf[32];
        buf[0] = ' ';
        const auto r = std::to_chars(buf + 1, buf + sizeof buf - 1, value);
        *r.ptr = '\n';
        text_.append(buf, static_cast<size_t>(r.ptr + 1 - buf));
        ++samples_;
    }
    /// A state set: one series per state, 1 for `current`.
    void states(const std::string& base, const char* key, std::initializer_list<const char*> all,
                const std::string& current) {
        for (const char* s : all)
            add(with(base, key, s), current == s ? 1 : 0);
    }
    /// The family's text; nothing when it has no samples (a HELP without samples would
    /// announce a metric that is not there).
    void append_to(std::string& out) const {
        if (samples_)
            out += text_;
    }

  private:
    const char* name_;
    std::string text_;
    size_t samples_ = 0;
};

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

void priorities(Family& f, const std::string& port, const std::vector<uint8_t>& no_drop) {
    static const char* const names[8] = {"0", "1", "2", "3", "4", "5", "6", "7"};
    for (uint8_t p = 0; p < 8; ++p)
        f.add(with(port, "priority", names[p]),
              std::find(no_drop.begin(), no_drop.end(), p) != no_drop.end() ? 1 : 0);
}

} // namespace

std::string escape_label_value(const std::string& value) {
    std::string out;
    append_label(out, "", value);
    return out.substr(2, out.size() - 3); // without `="` and `"`
}

std::string render_prometheus(const HostState& inventory, const ManagerFacts& facts) {
    Family state("rdmad_state", "rdmad's state (org.rdmad1.Manager State): 1 for the current one.");
    Family config_errors("rdmad_config_errors",
                         "Configuration files rdmad cannot use; it keeps their last good rules.");
    Family last_reconcile("rdmad_last_reconcile_timestamp_seconds",
                          "Unix time of rdmad's last pass that left no action failed and no "
                          "configuration error.");
    Family device_info("rdmad_device_info",
                       "RDMA device: kernel driver, rdma-core provider and node type.");
    Family provider_installed("rdmad_device_provider_installed",
                              "Whether the RDMA device's rdma-core provider is installed "
                              "(libibverbs drops the device without it).");
    Family problems("rdmad_device_problems",
                    "Problems rdmad finds on the RDMA device, by code and severity.");
    Family port_info("rdmad_port_info", "RDMA port: link layer, transport and netdev.");
    Family in_sync("rdmad_port_in_sync",
                   "Whether the port's actual state equals the desired state (1 when nothing "
                   "is asked).");
    Family port_type("rdmad_port_type", "mlx4 port type mode set on the port: 1 for the current.");
    Family desired_type("rdmad_port_desired_type",
                        "Port type mode the desired state asks of the port: 1 for the one asked.");
    Family pfc_status_f("rdmad_port_pfc_status",
                        "Whether the PFC state of the port's netdev could be read over DCB "
                        "netlink: 1 for the current status.");
    Family no_drop("rdmad_port_pfc_no_drop",
                   "PFC no-drop (lossless) 802.1p priorities of the port's netdev: 1 when on.");
    Family desired_no_drop("rdmad_port_desired_pfc_no_drop",
                           "PFC no-drop priorities the desired state asks of the port: 1 when "
                           "asked on.");
    Family roce_version("rdmad_port_roce_version",
                        "RoCE versions the port's GID table offers: 1 when offered.");
    Family routable("rdmad_port_roce_v2_routable_gid",
                    "Whether the RoCE port has a routable RoCE v2 GID (not link-local).");
    Family gid_index("rdmad_port_recommended_roce_gid_index",
                     "GID index to give RoCE applications (NCCL_IB_GID_INDEX): the port's "
                     "RecommendedGID (RoCE v2 IPv4, then RoCE v2 IPv6, then RoCE v1).");
    Family rdma_capable("rdmad_netdev_rdma_capable",
                        "Whether the netdev can do RDMA here: 1 for its state.");

    state.states({}, "state", {"starting", "running", "degraded"}, facts.state);
    config_errors.add({}, static_cast<double>(facts.config_errors));
    if (facts.last_reconcile_usec)
        last_reconcile.add({}, static_cast<double>(*facts.last_reconcile_usec / 1000) / 1000.0);

    for (const DeviceState* d : by_name(inventory)) {
        const std::string dev = labels({{"device", d->name}});
        device_info.add(labels({{"device", d->name},
                                {"kernel_driver", d->kernel_driver},
                                {"provider", d->provider},
                                {"node_type", d->node_type}}),
                        1);
        provider_installed.add(dev, d->provider_installed ? 1 : 0);
        std::vector<std::pair<std::string, std::string>> codes;
        for (const Problem& p : d->problems)
            codes.emplace_back(p.code, p.severity);
        std::sort(codes.begin(), codes.end());
        for (size_t i = 0; i < codes.size();) {
            size_t j = i;
            while (j < codes.size() && codes[j] == codes[i])
                ++j;
            problems.add(with(with(dev, "code", codes[i].first), "severity", codes[i].second),
                         static_cast<double>(j - i));
            i = j;
        }
        for (const PortState& p : d->ports) {
            const std::string port = with(dev, "port", std::to_string(p.number));
            port_info.add(
                with(with(with(port, "link_layer", p.link_layer), "transport", p.transport),
                     "netdev", p.netdev),
                1);
            in_sync.add(port, p.in_sync ? 1 : 0);
            if (!p.port_type.empty())
                port_type.states(port, "type", {"ib", "eth", "auto"}, port_type_mode(p.port_type));
            if (!p.desired_port_type.empty())
                desired_type.states(port, "type", {"ib", "eth", "auto"}, p.desired_port_type);
            if (p.link_layer == "Ethernet") {
                pfc_status_f.states(port, "status", {"ok", "not_supported", "failed", "unknown"},
                                    pfc_status(p.pfc.status));
                if (p.pfc.status == PfcActual::Status::ok)
                    priorities(no_drop, port, p.pfc.priorities);
            }
            if (!p.desired_pfc_no_drop.empty())
                priorities(desired_no_drop, port, p.desired_pfc_no_drop);
            if (p.transport == "RoCE") {
                for (const char* v : {"v1", "v2"})
                    roce_version.add(with(port, "version", v),
                                     std::find(p.roce_versions.begin(), p.roce_versions.end(), v) !=
                                             p.roce_versions.end()
                                         ? 1
                                         : 0);
                routable.add(port, has_routable_roce_v2_gid(p) ? 1 : 0);
                if (!p.recommended_gid.gid.empty())
                    gid_index.add(port, p.recommended_gid.index);
            }
        }
    }

    std::vector<const LinkState*> links;
    for (const auto& [index, l] : inventory.links)
        links.push_back(&l);
    std::sort(links.begin(), links.end(), [](const LinkState* a, const LinkState* b) {
        return std::tie(a->name, a->index) < std::tie(b->name, b->index);
    });
    for (const LinkState* l : links)
        rdma_capable.states(labels({{"device", l->name}}), "state",
                            {"yes", "no", "module-not-loaded", "unknown"}, l->rdma_capable);

    std::string out;
    for (const Family* f :
         {&state, &config_errors, &last_reconcile, &device_info, &provider_installed, &problems,
          &port_info, &in_sync, &port_type, &desired_type, &pfc_status_f, &no_drop,
          &desired_no_drop, &roce_version, &routable, &gid_index, &rdma_capable})
        f->append_to(out);
    return out;
}

} // namespace rdmad::exports
