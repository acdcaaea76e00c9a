// SPDX-License-Identifier: MIT
#include "bus/describe.hpp"

#include "inventory/problems.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace rdmad {
namespace {

/// Appends compact JSON (RFC 8259) to one string: no document tree, no copies. At 1,024
/// devices the document is 1.5 MB; a DOM of it cost about 10 times that in allocations.
class JsonWriter {
  public:
    explicit JsonWriter(std::string& out) : out_(out) {}

    void begin_object() { open('{'); }
    void end_object() { close('}'); }
    void begin_array() { open('['); }
    void end_array() { close(']'); }

    /// The key of the next member of the object being written.
    void key(std::string_view k) {
        separate();
        string_value(k);
        out_ += ':';
        after_key_ = true;
    }

    void value(std::string_view s) {
        separate();
        string_value(s);
    }
    void value(const std::string& s) { value(std::string_view(s)); }
    void value(const char* s) { value(std::string_view(s)); }
    void value(bool b) {
        separate();
        out_ += b ? "true" : "false";
    }
    template <typename T>
    requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)void value(T n) {
        separate();
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<int64_t>(n));
        out_.append(buf, r.ptr);
    }
    /// As nlohmann::json prints a double: shortest round-trip digits, ".0" when integral,
    /// null when not finite (JSON has no NaN or infinity).
    void value(double d) {
        separate();
        if (!std::isfinite(d)) {
            out_ += "null";
            return;
        }
        char buf[32];
        const auto r = std::to_chars(buf, buf + sizeof(buf), d);
        const std::string_view digits(buf, static_cast<size_t>(r.ptr - buf));
        out_ += digits;
        if (digits.find_first_of(".e") == std::string_view::npos)
            out_ += ".0";
    }

    /// A value already written as JSON (a stored object), as the next value.
    void raw(std::string_view json) {
        separate();
        out_ += json;
    }

    template <typename T> void array(const std::vector<T>& items) {
        begin_array();
        for (const auto& item : items)
            value(item);
        end_array();
    }

    template <typename T> void member(std::string_view k, const T& v) {
        key(k);
        if constexpr (requires { v.begin(); } && !std::is_convertible_v<T, std::string_view>)
            array(v);
        else
            value(v);
    }

  private:
    void open(char c) {
        separate();
        out_ += c;
        first_ = true;
    }
    void close(char c) {
        out_ += c;
        first_ = false;
    }
    /// The comma before every value but the first of its container and one after a key.
    void separate() {
        if (after_key_)
            after_key_ = false;
        else if (!first_)
            out_ += ',';
        first_ = false;
    }

    /// `s` quoted and escaped: '"', '\\' and control characters escaped (\n, \t, ... or
    /// \u00XX), every byte that is not part of valid UTF-8 replaced by U+FFFD (sysfs text
    /// is untrusted; the bus model has made it valid already, this keeps Describe() valid
    /// JSON whatever reaches it).
    void string_value(std::string_view s) {
        out_ += '"';
        size_t i = 0;
        while (i < s.size()) {
            // The run of bytes that need nothing goes in with one append.
            size_t plain = i;
            while (plain < s.size() && is_plain(static_cast<unsigned char>(s[plain])))
                ++plain;
            out_.append(s.data() + i, plain - i);
            i = plain;
            if (i == s.size())
                break;
            const auto c = static_cast<unsigned char>(s[i]);
            if (c >= 0x80) {
                const size_t n = utf8_length(s.substr(i));
                if (n == 0) {
                    out_ += "\xEF\xBF\xBD";
                    ++i;
                } else {
                    out_.append(s.data() + i, n);
                    i += n;
                }
                continue;
            }
            escape(c);
            ++i;
        }
        out_ += '"';
    }

    /// Printable ASCII other than '"' and '\\'.
    static bool is_plain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

    void escape(unsigned char c) {
        switch (c) {
        case '"':
            out_ += "\\\"";
            break;
        case '\\':
            out_ += "\\\\";
            break;
        case '\b':
            out_ += "\\b";
            break;
        case '\f':
            out_ += "\\f";
            break;
        case '\n':
            out_ += "\\n";
            break;
        case '\r':
            out_ += "\\r";
            break;
        case '\t':
            out_ += "\\t";
            break;
        default: {
            static constexpr char hex[] = "0123456789abcdef";
            const char u[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
            out_.append(u, sizeof(u));
        }
        }
    }

    /// Bytes of the valid UTF-8 sequence that `s` starts with (its first byte is >= 0x80),
    /// 0 when it is not one: no overlong forms, no surrogates, nothing past U+10FFFF
    /// (RFC 3629 section 4).
    static size_t utf8_length(std::string_view s) {
        const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
        const auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
        const unsigned char c = b(0);
        if (c >= 0xC2 && c <= 0xDF)
            return cont(1) ? 2 : 0;
        if (c >= 0xE0 && c <= 0xEF) {
            if (!cont(1) || !cont(2))
                return 0;
            if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F))
                return 0;
            return 3;
        }
        if (c >= 0xF0 && c <= 0xF4) {
            if (!cont(1) || !cont(2) || !cont(3))
                return 0;
            if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F))
                return 0;
            return 4;
        }
        return 0;
    }

    std::string& out_;
    bool first_ = true;
    bool after_key_ = false;
};

void problems_json(JsonWriter& w, const std::vector<Problem>& problems) {
    w.begin_array();
    for (const auto& p : problems) {
        w.begin_object();
        w.member("Code", p.code);
        w.member("Severity", p.severity);
        w.member("Text", p.text);
        w.end_object();
    }
    w.end_array();
}

/// Device.ProblemDetails: every problem with its evidence, remedy and port.
void problem_details_json(JsonWriter& w, const std::vector<Problem>& problems) {
    w.begin_array();
    for (const auto& p : problems) {
        w.begin_object();
        w.member("Code", p.code);
        w.member("Severity", p.severity);
        w.member("Text", p.text);
        w.member("Evidence", p.evidence);
        w.member("Remedy", p.remedy);
        w.member("Port", p.port);
        w.end_object();
    }
    w.end_array();
}

void port_json(JsonWriter& w, const PortView& v) {
    const PortState& p = v.state;
    w.begin_object();
    w.member("Path", v.path);
    w.member("Number", p.number);
    w.member("State", p.state);
    w.member("PhysicalState", p.phys_state);
    w.member("LinkLayer", p.link_layer);
    w.member("Transport", p.transport);
    w.member("RoCEVersions", p.roce_versions);
    w.member("RateGbps", p.rate_gbps);
    w.member("Rate", p.rate);
    w.member("LID", p.lid);
    w.member("SMLID", p.sm_lid);
    w.key("GIDs");
    w.begin_array();
    for (const auto& g : p.gids) {
        w.begin_object();
        w.member("Index", g.index);
        w.member("GID", g.gid);
        w.member("Type", g.type);
        w.member("Netdev", g.netdev);
        w.end_object();
    }
    w.end_array();
    w.member("Link", v.link_path);
    w.member("PortType", p.port_type);
    w.member("DesiredPortType", p.desired_port_type);
    w.member("PFCNoDrop", p.pfc_no_drop);
    w.member("DesiredPFCNoDrop", p.desired_pfc_no_drop);
    w.member("InSync", p.in_sync);
    w.member("NetdevMTU", p.netdev_mtu);
    w.member("ActiveMTU", p.active_mtu);
    w.key("RecommendedGID");
    w.begin_object();
    w.member("Index", p.recommended_gid.index);
    w.member("GID", p.recommended_gid.gid);
    w.member("Type", p.recommended_gid.type);
    w.member("Netdev", p.recommended_gid.netdev);
    w.member("IP", p.recommended_gid.ip);
    w.end_object();
    w.end_object();
}

void device_json(JsonWriter& w, const DeviceView& v) {
    const DeviceState& d = v.state;
    w.begin_object();
    w.member("Path", v.path);
    w.member("Name", d.name);
    w.member("NodeType", d.node_type);
    w.member("NodeGUID", d.node_guid);
    w.member("SysImageGUID", d.sys_image_guid);
    w.member("FirmwareVersion", d.firmware_version);
    w.member("HCAType", d.hca_type);
    w.member("BoardID", d.board_id);
    w.member("NodeDescription", d.node_description);
    w.member("PCIAddress", d.pci_address);
    w.member("KernelDriver", d.kernel_driver);
    w.member("Provider", d.provider);
    w.member("ProviderInstalled", d.provider_installed);
    w.member("ProviderPackage", d.provider_package);
    w.member("VerbsDevice", d.verbs_device);
    w.member("PhysicalFunction", v.pf_path);
    w.key("Ports");
    w.begin_array();
    for (const auto& p : v.ports)
        port_json(w, p);
    w.end_array();
    w.member("Links", v.link_paths);
    w.key("Problems");
    std::vector<Problem> serious;
    for (const auto& p : d.problems)
        if (in_problems_property(p))
            serious.push_back(p);
    problems_json(w, serious);
    w.key("ProblemDetails");
    problem_details_json(w, d.problems);
    w.end_object();
}

void link_json(JsonWriter& w, const LinkView& v) {
    const LinkState& l = v.state;
    w.begin_object();
    w.member("Path", v.path);
    w.member("Name", l.name);
    w.member("Index", l.index);
    w.member("PCIAddress", l.pci_address);
    w.member("Driver", l.driver);
    w.member("OperState", l.operstate);
    w.member("RdmaCapable", l.rdma_capable);
    w.member("RdmaDevice", v.device_path);
    w.member("Hint", l.hint);
    w.end_object();
}

/// The Manager's members and the opening of "Devices"; the caller writes the devices, then
/// calls links_part(), writes the links and calls end_document().
void begin_document(JsonWriter& w, const std::string& version, const std::string& state,
                    const std::vector<std::string>& sources, const std::vector<Problem>& problems) {
    w.begin_object();
    w.member("Version", version);
    w.member("State", state);
    w.member("DesiredStateSource", sources);
    w.key("Problems");
    problems_json(w, problems);
    w.key("Devices");
    w.begin_array();
}

void links_part(JsonWriter& w) {
    w.end_array();
    w.key("Links");
    w.begin_array();
}

void end_document(JsonWriter& w) {
    w.end_array();
    w.end_object();
}

template <typename View, void (*Write)(JsonWriter&, const View&)>
std::string render_one(const View& v) {
    std::string out;
    JsonWriter w(out);
    Write(w, v);
    return out;
}

} // namespace

std::string describe_json(const BusModel& model, const std::string& version,
                          const std::string& state, const std::vector<std::string>& sources,
                          const std::vector<Problem>& problems) {
    std::string out;
    // About 2.5 KB per RDMA device with one port, 4 GIDs and two problem details, 220 bytes
    // per netdev: one allocation in the common case.
    out.reserve(512 + model.devices.size() * 2560 + model.links.size() * 256);
    JsonWriter w(out);
    begin_document(w, version, state, sources, problems);
    for (const DeviceView* d : model.devices_by_name())
        device_json(w, *d);
    links_part(w);
    for (const auto& [_, l] : model.links)
        link_json(w, l);
    end_document(w);
    return out;
}

void DescribeRenderer::put(const DeviceView& device) {
    std::string text = render_one<DeviceView, device_json>(device);
    ++objects_rendered_;
    auto [it, added] = devices_.try_emplace(device.path);
    bytes_ = bytes_ - it->second.size() + text.size();
    it->second = std::move(text);
}

void DescribeRenderer::drop_device(const std::string& path) {
    if (auto it = devices_.find(path); it != devices_.end()) {
        bytes_ -= it->second.size();
        devices_.erase(it);
    }
}

void DescribeRenderer::put(const LinkView& link) {
    std::string text = render_one<LinkView, link_json>(link);
    ++objects_rendered_;
    auto [it, added] = links_.try_emplace(link.state.index);
    bytes_ = bytes_ - it->second.size() + text.size();
    it->second = std::move(text);
}

void DescribeRenderer::drop_link(int32_t ifindex) {
    if (auto it = links_.find(ifindex); it != links_.end()) {
        bytes_ -= it->second.size();
        links_.erase(it);
    }
}

std::string DescribeRenderer::render(const BusModel& model, const std::string& version,
                                     const std::string& state,
                                     const std::vector<std::string>& sources,
                                     const std::vector<Problem>& problems) const {
    std::string out;
    // The stored objects, a comma each, and the Manager's members: one allocation.
    out.reserve(1024 + bytes_ + devices_.size() + links_.size() + problems.size() * 256);
    JsonWriter w(out);
    begin_document(w, version, state, sources, problems);
    for (const DeviceView* d : model.devices_by_name()) {
        if (auto it = devices_.find(d->path); it != devices_.end()) {
            w.raw(it->second);
        } else {
            ++objects_rendered_;
            device_json(w, *d);
        }
    }
    links_part(w);
    for (const auto& [index, l] : model.links) {
        if (auto it = links_.find(index); it != links_.end()) {
            w.raw(it->second);
        } else {
            ++objects_rendered_;
            link_json(w, l);
        }
    }
    end_document(w);
    return out;
}

} // namespace rdmad
