// SPDX-License-Identifier: MIT
#include "bus/describe.hpp"

#include "inventory/object_path.hpp"
#include "inventory/problems.hpp"
#include "inventory/properties.hpp"

#include <algorithm>
#include <set>
#include <tuple>

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

/// The property tables' values as JSON: structs become objects keyed by their field names.
class JsonValues final : public ValueWriter {
  public:
    explicit JsonValues(JsonWriter& w) : w_(w) {}
    void string(const std::string& s) override { w_.value(s); }
    void object_path(const std::string& path) override { w_.value(path); }
    void boolean(bool b) override { w_.value(b); }
    void byte(uint8_t n) override { w_.value(n); }
    void u16(uint16_t n) override { w_.value(n); }
    void i32(int32_t n) override { w_.value(n); }
    void u32(uint32_t n) override { w_.value(n); }
    void f64(double d) override { w_.value(d); }
    void begin_array(const char*) override { w_.begin_array(); }
    void end_array() override { w_.end_array(); }
    void begin_struct(const char*) override { w_.begin_object(); }
    void field(const char* name) override { w_.key(name); }
    void end_struct() override { w_.end_object(); }

  private:
    JsonWriter& w_;
};

/// {"Path": ..., then every exported row of `table` by its D-Bus name}.
template <typename State, typename Embed>
void object_json(JsonWriter& w, const std::string& path, PropertyTable<State> table,
                 const State& s, const PropertyContext& c, Embed embed_ports) {
    JsonValues values(w);
    w.begin_object();
    w.member("Path", path);
    for (const auto& row : table) {
        if (!row.exported())
            continue;
        w.key(row.name);
        if (row.embeds_ports)
            embed_ports();
        else
            row.write(values, s, c);
    }
    w.end_object();
}

void device_json(JsonWriter& w, const Inventory& inv, const std::string& id, const DeviceState& d) {
    const PropertyContext c{inv, &d};
    object_json(w, device_path(id), device_properties(), d, c, [&] {
        w.begin_array();
        for (const auto& p : d.ports)
            object_json(w, port_path(id, p.number), port_properties(), p, c, [] {});
        w.end_array();
    });
}

void link_json(JsonWriter& w, const Inventory& inv, const LinkState& l) {
    object_json(w, link_path(l.index), link_properties(), l, PropertyContext{inv}, [] {});
}

/// The Manager's members and the opening of "Devices"; the caller writes the devices, then
/// calls links_part(), writes the links and calls end_document().
void begin_document(JsonWriter& w, const Inventory& inv, const ManagerState& m) {
    JsonValues values(w);
    w.begin_object();
    for (const auto& row : manager_properties()) {
        w.key(row.name);
        row.write(values, m, PropertyContext{inv});
    }
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

/// The devices of `inv` as (name, id), sorted by name (bytes) as ListDevices() gives them.
std::vector<std::pair<const DeviceState*, const std::string*>> by_name(const Inventory& inv) {
    std::vector<std::pair<const DeviceState*, const std::string*>> out;
    out.reserve(inv.state().devices.size());
    for (const auto& [syspath, d] : inv.state().devices)
        out.emplace_back(&d, &inv.id_of(syspath));
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return std::tie(a.first->name, a.first->syspath) < std::tie(b.first->name, b.first->syspath);
    });
    return out;
}

} // namespace

std::vector<std::pair<const DeviceState*, const std::string*>> devices_by_name(const Inventory& inv) {
    return by_name(inv);
}

std::string describe_json(const Inventory& inv, const ManagerState& manager) {
    std::string out;
    // About 2.5 KB per RDMA device with one port, 4 GIDs and two problem details, 220 bytes
    // per netdev: one allocation in the common case.
    out.reserve(512 + inv.state().devices.size() * 2560 + inv.state().links.size() * 256);
    JsonWriter w(out);
    begin_document(w, inv, manager);
    for (const auto& [d, id] : by_name(inv))
        device_json(w, inv, *id, *d);
    links_part(w);
    for (const auto& [_, l] : inv.state().links)
        link_json(w, inv, l);
    end_document(w);
    return out;
}

void DescribeRenderer::changed(const Inventory&, const ChangeSet& changes) {
    // Forgotten, not measured: a change set's signals go out first (Objects::apply()), and
    // measure() renders what is missing once the loop is idle, or the next Describe() does.
    auto forget_device = [&](const std::string& id) {
        devices_.erase(id);
        stale_devices_.insert(id);
    };
    auto forget_link = [&](int32_t index) {
        links_.erase(index);
        stale_links_.insert(index);
    };
    for (const auto& id : changes.devices_removed)
        forget_device(id);
    for (const auto& id : changes.devices_added)
        forget_device(id);
    for (const auto& [id, _] : changes.devices_changed)
        forget_device(id);
    for (const auto& [key, _] : changes.ports_changed)
        forget_device(key.first);
    for (const int32_t index : changes.links_removed)
        forget_link(index);
    for (const int32_t index : changes.links_added)
        forget_link(index);
    for (const auto& [index, _] : changes.links_changed)
        forget_link(index);
}

size_t DescribeRenderer::measure(const Inventory& inv) {
    std::string text; // one scratch text for every object measured here
    size_t measured = 0;
    for (const auto& id : stale_devices_) {
        const std::string& syspath = inv.syspath_of(id);
        const DeviceState* d = syspath.empty() ? nullptr : inv.device(syspath);
        if (!d) // gone since
            continue;
        ++objects_rendered_;
        ++measured;
        text.clear();
        JsonWriter w(text);
        device_json(w, inv, id, *d);
        devices_.emplace(id, text.size());
    }
    stale_devices_.clear();
    for (const int32_t index : stale_links_) {
        const LinkState* l = inv.link(index);
        if (!l)
            continue;
        ++objects_rendered_;
        ++measured;
        text.clear();
        JsonWriter w(text);
        link_json(w, inv, *l);
        links_.emplace(index, text.size());
    }
    stale_links_.clear();
    return measured;
}

namespace {

constexpr std::string_view kLinksOpen = "],\"Links\":[";
constexpr std::string_view kDocumentClose = "]}";

} // namespace

size_t DescribeRenderer::size(const Inventory& inv, const ManagerState& manager) const {
    std::string text;
    {
        JsonWriter w(text);
        begin_document(w, inv, manager);
    }
    size_t bytes = text.size() + kLinksOpen.size() + kDocumentClose.size();
    const auto& devices = inv.state().devices;
    const auto& links = inv.state().links;
    // The commas between the objects of each array.
    bytes += (devices.empty() ? 0 : devices.size() - 1) + (links.empty() ? 0 : links.size() - 1);
    for (const auto& [syspath, d] : devices) {
        const std::string& id = inv.id_of(syspath);
        if (auto it = devices_.find(id); it != devices_.end()) {
            bytes += it->second;
            continue;
        }
        ++objects_rendered_;
        text.clear();
        JsonWriter w(text);
        device_json(w, inv, id, d);
        bytes += text.size();
    }
    for (const auto& [index, l] : links) {
        if (auto it = links_.find(index); it != links_.end()) {
            bytes += it->second;
            continue;
        }
        ++objects_rendered_;
        text.clear();
        JsonWriter w(text);
        link_json(w, inv, l);
        bytes += text.size();
    }
    return bytes;
}

void DescribeRenderer::pieces(const Inventory& inv, const ManagerState& manager,
                              std::string& scratch, PieceSink sink) const {
    auto out = [&](std::string_view piece) { sink.call(sink.context, piece); };
    // The Manager's members and "Devices" opened, as describe_json() writes them (JsonWriter's
    // state matters only inside one text: each object is whole).
    scratch.clear();
    {
        JsonWriter w(scratch);
        begin_document(w, inv, manager);
    }
    out(scratch);
    bool first = true;
    for (const auto& [d, id] : by_name(inv)) {
        if (!first)
            out(",");
        first = false;
        ++objects_rendered_;
        scratch.clear();
        JsonWriter w(scratch);
        device_json(w, inv, *id, *d);
        out(scratch);
    }
    out(kLinksOpen);
    first = true;
    for (const auto& [_, l] : inv.state().links) {
        if (!first)
            out(",");
        first = false;
        ++objects_rendered_;
        scratch.clear();
        JsonWriter w(scratch);
        link_json(w, inv, l);
        out(scratch);
    }
    out(kDocumentClose);
}

std::string DescribeRenderer::render(const Inventory& inv, const ManagerState& manager) const {
    std::string out;
    out.reserve(size(inv, manager));
    write(inv, manager, [&](std::string_view piece) { out += piece; });
    return out;
}

} // namespace rdmad
