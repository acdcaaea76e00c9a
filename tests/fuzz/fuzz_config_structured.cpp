// SPDX-License-Identifier: MIT
//
// libFuzzer target, structure-aware: the fuzz bytes choose a syntactically valid rdmad.conf(5)
// document (TOML v1.0.0, https://toml.io/en/v1.0.0) instead of being the text, so that the
// loader's semantic checks (daemon/config/config_file.cpp read_rule() and friends) are reached
// as often as the TOML lexer: [daemon] and [[rule]] tables (or an inline array of rules), every
// match key and setting with right and wrong values and types, quoted and bare keys, escapes
// and odd bytes in strings, integers in every TOML base, long strings, deep table headers and
// dotted keys (the kMaxKeyDepth guard), duplicate keys and rules, comments with any byte.
// The generator knows what it wrote, which gives an oracle: a document it built from valid
// parts only must parse to exactly the rules it put in (match values normalised as the
// loader documents: PCI address and node GUID in the kernel's lower-case form, priorities
// sorted), each at the line of its header; a document with a part it knows to be wrong must
// be refused with a positioned error; and an accepted document written back by format_rules()
// must read back the same (what state.conf relies on).
#include "config/config_file.hpp"
#include "config/config_writer.hpp"
#include "fuzz_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fuzzer/FuzzedDataProvider.h>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace {

/// What a generated part does to the document's fate.
enum class Fate { valid, invalid, unknown };

class Generator {
  public:
    explicit Generator(FuzzedDataProvider& in) : in_(in) {}

    void document() {
        const bool inline_rules = in_.ConsumeBool() && in_.ConsumeBool();
        const int parts = in_.ConsumeIntegralInRange(0, 12);
        if (in_.ConsumeBool())
            root_keys();
        if (inline_rules) {
            inline_rule_array();
        }
        for (int i = 0; i < parts && in_.remaining_bytes() > 0; ++i) {
            switch (in_.ConsumeIntegralInRange(0, 9)) {
            case 0:
                daemon_table();
                break;
            case 1:
                deep_header();
                break;
            case 2:
                comment();
                break;
            case 3:
                blank();
                break;
            default:
                if (inline_rules)
                    comment();
                else
                    rule_table();
                break;
            }
        }
    }

    const std::string& text() const { return out_; }
    Fate fate() const { return fate_; }
    const std::vector<rdmad::Rule>& rules() const { return rules_; }
    std::optional<bool> apply() const { return apply_; }

  private:
    void mark(Fate f) {
        if (f == Fate::invalid)
            fate_ = Fate::invalid;
        else if (f == Fate::unknown && fate_ == Fate::valid)
            fate_ = Fate::unknown;
    }
    int line() const { return 1 + static_cast<int>(std::count(out_.begin(), out_.end(), '\n')); }
    void newline() { out_ += in_.ConsumeBool() ? "\n" : in_.ConsumeBool() ? "\r\n" : "  \n"; }
    std::string space() {
        switch (in_.ConsumeIntegralInRange(0, 3)) {
        case 0:
            return "";
        case 1:
            return " ";
        case 2:
            return "\t";
        default:
            return "   ";
        }
    }

    /// A key as TOML spells it: bare, "basic" or 'literal'; all name the same key.
    std::string key(const std::string& name) {
        switch (in_.ConsumeIntegralInRange(0, 5)) {
        case 0:
            return "\"" + name + "\"";
        case 1:
            return "'" + name + "'";
        default:
            return name;
        }
    }

    std::string hex_digits(size_t n, bool mixed_case) {
        static const char lower[] = "0123456789abcdef";
        static const char upper[] = "0123456789ABCDEF";
        std::string s;
        for (size_t i = 0; i < n; ++i) {
            const auto d = in_.ConsumeIntegralInRange(0, 15);
            s.push_back(mixed_case && in_.ConsumeBool() ? upper[d] : lower[d]);
        }
        return s;
    }

    static std::string lower(std::string s) {
        for (auto& c : s)
            if (c >= 'A' && c <= 'Z')
                c = static_cast<char>(c - 'A' + 'a');
        return s;
    }

    /// A TOML basic string holding `raw`: '"' and '\' escaped, other bytes as they are.
    static std::string basic(const std::string& raw) {
        std::string s = "\"";
        for (char c : raw) {
            if (c == '"' || c == '\\')
                s.push_back('\\');
            s.push_back(c);
        }
        return s + "\"";
    }

    /// A string value: its TOML text, and the string it holds when that is printable ASCII
    /// (what read_string() accepts); fate invalid when the loader must refuse it.
    struct Str {
        std::string toml;
        std::string value;
        Fate fate = Fate::valid;
    };

    Str string_value(size_t max_len) {
        Str s;
        const auto kind = in_.ConsumeIntegralInRange(0, 7);
        if (kind == 0) { // long, printable
            const size_t n = in_.ConsumeIntegralInRange<size_t>(1, 4096);
            const char c = static_cast<char>(in_.ConsumeIntegralInRange(0x21, 0x7e));
            s.value.assign(n, c);
            s.toml = basic(s.value);
            return s;
        }
        if (kind == 1) { // literal string, no escapes
            std::string raw = in_.ConsumeRandomLengthString(max_len);
            std::string v;
            for (char c : raw)
                if (c >= 0x20 && c < 0x7f && c != '\'')
                    v.push_back(c);
            s.value = v;
            s.toml = "'" + v + "'";
            s.fate = v.empty() ? Fate::invalid : Fate::valid;
            return s;
        }
        if (kind == 2) { // one escape among printable text
            std::string before = printable(in_.ConsumeRandomLengthString(16));
            std::string after = printable(in_.ConsumeRandomLengthString(16));
            std::string esc;
            char held = 0; // the character the escape stands for
            switch (in_.ConsumeIntegralInRange(0, 5)) {
            case 0:
                esc = "\\\"";
                held = '"';
                break;
            case 1:
                esc = "\\\\";
                held = '\\';
                break;
            case 2: { // \uXXXX, a code point below 0x80 or a two-byte one
                const unsigned cp = in_.ConsumeIntegralInRange<unsigned>(0, 0x7ff);
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04X", cp);
                esc = buf;
                if (cp >= 0x20 && cp < 0x7f)
                    held = static_cast<char>(cp);
                break;
            }
            case 3:
                esc = "\\t";
                break;
            case 4:
                esc = "\\u0000";
                break;
            default:
                esc = "\\x41"; // not a TOML escape: a syntax error
                break;
            }
            s.toml =
                basic(before).substr(0, basic(before).size() - 1) + esc + basic(after).substr(1);
            s.value = before + std::string(held ? 1 : 0, held) + after;
            s.fate = held ? Fate::valid : Fate::invalid;
            return s;
        }
        if (kind == 3) { // any bytes but newline: the loader refuses non-printable ones
            std::string raw = in_.ConsumeRandomLengthString(max_len);
            raw.erase(std::remove(raw.begin(), raw.end(), '\n'), raw.end());
            s.toml = basic(raw);
            s.value = raw;
            s.fate = Fate::valid;
            for (unsigned char c : raw)
                if (c < 0x20 || c >= 0x7f)
                    s.fate = Fate::invalid;
            if (raw.empty())
                s.fate = Fate::invalid;
            return s;
        }
        if (kind == 4) { // empty
            s.toml = in_.ConsumeBool() ? "\"\"" : "''";
            s.fate = Fate::invalid;
            return s;
        }
        s.value = printable(in_.ConsumeRandomLengthString(max_len));
        if (s.value.empty())
            s.value = "x";
        s.toml = basic(s.value);
        return s;
    }

    static std::string printable(const std::string& raw) {
        std::string v;
        for (char c : raw)
            if (c >= 0x20 && c < 0x7f)
                v.push_back(c);
        return v;
    }

    /// A value of a type other than a string (or a string where one is not wanted).
    std::string other_value() {
        switch (in_.ConsumeIntegralInRange(0, 6)) {
        case 0:
            return std::to_string(in_.ConsumeIntegral<int32_t>());
        case 1:
            return in_.ConsumeBool() ? "true" : "false";
        case 2:
            return "1.5";
        case 3:
            return "1979-05-27T07:32:00Z";
        case 4:
            return "{ a = 1 }";
        case 5:
            return "[]";
        default:
            return "\"text\"";
        }
    }

    std::string integer(int64_t v) {
        if (v >= 0) {
            switch (in_.ConsumeIntegralInRange(0, 4)) {
            case 0: {
                char buf[32];
                std::snprintf(buf, sizeof buf, "0x%llX", static_cast<unsigned long long>(v));
                return buf;
            }
            case 1: {
                char buf[32];
                std::snprintf(buf, sizeof buf, "0o%llo", static_cast<unsigned long long>(v));
                return buf;
            }
            case 2:
                return "+" + std::to_string(v);
            default:
                break;
            }
        }
        return std::to_string(v);
    }

    void root_keys() {
        // Dotted keys at the root, before any header: daemon.apply, or an unknown key.
        if (in_.ConsumeBool()) {
            const bool b = in_.ConsumeBool();
            out_ += key("daemon") + "." + key("apply") + space() + "=" + space() +
                    (b ? "true" : "false");
            apply_ = b;
            daemon_defined_ = true;
        } else {
            out_ += key("unknown") + " = 1";
            mark(Fate::invalid);
        }
        newline();
    }

    void daemon_table() {
        out_ += "[" + space() + key("daemon") + space() + "]";
        newline();
        if (daemon_defined_)
            mark(Fate::invalid); // a table defined twice
        daemon_defined_ = true;
        const int keys = in_.ConsumeIntegralInRange(0, 2);
        std::set<std::string> seen;
        for (int i = 0; i < keys; ++i) {
            const bool known = in_.ConsumeIntegralInRange(0, 3) != 0;
            const std::string name = known ? "apply" : "restart";
            if (!seen.insert(name).second)
                mark(Fate::invalid);
            if (!known) {
                out_ += key(name) + " = true";
                mark(Fate::invalid);
            } else if (in_.ConsumeIntegralInRange(0, 3) != 0) {
                const bool b = in_.ConsumeBool();
                out_ += key(name) + space() + "=" + space() + (b ? "true" : "false");
                apply_ = b;
            } else {
                out_ += key(name) + " = " + other_value();
                if (out_.substr(out_.size() - 4) != "true" &&
                    out_.substr(out_.size() - 5) != "false")
                    mark(Fate::invalid);
                else
                    mark(Fate::unknown);
            }
            newline();
        }
    }

    void deep_header() {
        // "[a.a.a...]": toml++ recurses once per level; rdmad's guard stops at kMaxKeyDepth (32).
        const int depth = in_.ConsumeIntegralInRange(1, 80);
        std::string h = "[";
        for (int i = 0; i < depth; ++i)
            h += (i ? "." : "") + key("t" + std::to_string(i % 3));
        out_ += h + "]";
        newline();
        mark(Fate::invalid); // an unknown table at any depth
        if (in_.ConsumeBool()) {
            out_ += "k = 1";
            newline();
        }
    }

    void comment() {
        std::string c = in_.ConsumeRandomLengthString(200);
        c.erase(std::remove(c.begin(), c.end(), '\n'), c.end());
        out_ += space() + "#" + c;
        // TOML forbids control characters but tab in comments, and toml++ checks UTF-8.
        bool plain = true;
        for (unsigned char ch : c)
            if ((ch < 0x20 && ch != '\t') || ch >= 0x7f)
                plain = false;
        mark(plain ? Fate::valid : Fate::unknown);
        newline();
    }

    void blank() {
        out_ += space();
        newline();
    }

    struct RuleText {
        std::vector<std::string> assignments; // "key = value"
        rdmad::Rule rule;
        Fate fate = Fate::valid;
    };

    /// The keys of one rule and what they must give.
    RuleText rule_body(bool in_inline_table) {
        RuleText r;
        std::set<std::string> seen;
        const int keys = in_.ConsumeIntegralInRange(0, 6);
        auto add = [&](const std::string& name, const std::string& value, Fate f) {
            if (!seen.insert(name).second)
                f = Fate::invalid; // TOML: a key defined twice
            if (f == Fate::invalid)
                r.fate = Fate::invalid;
            else if (f == Fate::unknown && r.fate == Fate::valid)
                r.fate = Fate::unknown;
            const std::string eq = in_inline_table ? " = " : space() + "=" + space();
            r.assignments.push_back(key(name) + eq + value);
        };
        for (int i = 0; i < keys; ++i) {
            switch (in_.ConsumeIntegralInRange(0, 10)) {
            case 0: { // pci_address: valid in either case, or broken
                std::string domain = hex_digits(4, true);
                std::string a = domain + ":" + hex_digits(2, true) + ":" +
                                std::string(1, in_.ConsumeBool() ? '0' : '1') +
                                hex_digits(1, true) + "." +
                                std::to_string(in_.ConsumeIntegralInRange(0, 7));
                Fate f = Fate::valid;
                switch (in_.ConsumeIntegralInRange(0, 5)) {
                case 0:
                    a[10] = '2'; // slot above 0x1f
                    f = Fate::invalid;
                    break;
                case 1:
                    a.back() = '8'; // function above 7
                    f = Fate::invalid;
                    break;
                case 2:
                    a = a.substr(5); // no domain
                    f = Fate::invalid;
                    break;
                default:
                    break;
                }
                if (f == Fate::valid)
                    r.rule.match.pci_address = lower(a);
                add("pci_address", basic(a), f);
                break;
            }
            case 1: { // node_guid: 4 groups of 1-4 hex digits, normalised
                std::string g, want;
                for (int k = 0; k < 4; ++k) {
                    const std::string group =
                        hex_digits(in_.ConsumeIntegralInRange<size_t>(1, 4), true);
                    g += (k ? ":" : "") + group;
                    want += (k ? ":" : "") + std::string(4 - group.size(), '0') + lower(group);
                }
                Fate f = Fate::valid;
                if (in_.ConsumeIntegralInRange(0, 4) == 0) {
                    g += ":0"; // a fifth group
                    f = Fate::invalid;
                } else {
                    r.rule.match.node_guid = want;
                }
                add("node_guid", basic(g), f);
                break;
            }
            case 2:
            case 3:
            case 4: { // driver, device, netdev: any string
                static const char* const names[] = {"driver", "device", "netdev"};
                const int which = in_.ConsumeIntegralInRange(0, 2);
                if (in_.ConsumeIntegralInRange(0, 7) == 0) {
                    add(names[which], other_value(), Fate::unknown);
                    break;
                }
                Str s = string_value(64);
                if (s.fate == Fate::valid)
                    (which == 0   ? r.rule.match.driver
                     : which == 1 ? r.rule.match.device_glob
                                  : r.rule.match.netdev_glob) = s.value;
                add(names[which], s.toml, s.fate);
                break;
            }
            case 5: { // port_type
                const int n = in_.ConsumeIntegralInRange(0, 4);
                std::string v = "[";
                std::vector<std::string> types;
                Fate f = n ? Fate::valid : Fate::invalid;
                for (int k = 0; k < n; ++k) {
                    static const char* const known[] = {"ib", "eth", "auto"};
                    std::string t;
                    switch (in_.ConsumeIntegralInRange(0, 7)) {
                    case 0:
                        v += std::string(k ? ", " : "") + "\"IB\"";
                        f = Fate::invalid;
                        continue;
                    case 1:
                        v += std::string(k ? ", " : "") + "2";
                        f = Fate::invalid;
                        continue;
                    default:
                        t = known[in_.ConsumeIntegralInRange(0, 2)];
                    }
                    types.push_back(t);
                    v += (k ? "," + space() : "") + basic(t);
                }
                v += in_.ConsumeBool() && n ? ",]" : "]"; // TOML allows a trailing comma
                if (f == Fate::valid)
                    r.rule.port_type = types;
                add("port_type", v, f);
                break;
            }
            case 6: { // pfc_no_drop
                const int n = in_.ConsumeIntegralInRange(0, 9);
                std::string v = "[";
                std::set<int64_t> prios;
                Fate f = n ? Fate::valid : Fate::invalid;
                for (int k = 0; k < n; ++k) {
                    const int64_t p = in_.ConsumeIntegralInRange(0, 5) == 0
                                          ? in_.ConsumeIntegral<int64_t>()
                                          : in_.ConsumeIntegralInRange<int64_t>(0, 8);
                    if (p < 0 || p > 7 || !prios.insert(p).second)
                        f = Fate::invalid;
                    v += (k ? "," + space() : "") + integer(p);
                }
                v += "]";
                if (f == Fate::valid)
                    r.rule.pfc_no_drop = std::vector<uint8_t>(prios.begin(), prios.end());
                add("pfc_no_drop", v, f);
                break;
            }
            case 7: { // require_provider
                if (in_.ConsumeIntegralInRange(0, 4) == 0) {
                    add("require_provider", basic("yes"), Fate::invalid);
                    break;
                }
                const bool b = in_.ConsumeBool();
                r.rule.require_provider = b;
                add("require_provider", b ? "true" : "false", Fate::valid);
                break;
            }
            case 8: { // dotted key, up to past kMaxKeyDepth levels: never a rule key
                const int depth = in_.ConsumeIntegralInRange(2, 40);
                std::string k = "port_type";
                for (int d = 1; d < depth; ++d)
                    k += ".x";
                r.assignments.push_back(k + " = 1");
                r.fate = Fate::invalid;
                break;
            }
            case 9: // a key rdmad does not know
                add(in_.ConsumeBool() ? "name" : "Port_Type", "\"x\"", Fate::invalid);
                break;
            default: // a known match key with a value of another type
                add("pci_address", other_value(), Fate::unknown);
                if (r.fate == Fate::unknown)
                    r.fate = Fate::invalid; // never a string holding a PCI address here
                break;
            }
        }
        return r;
    }

    void finish_rule(RuleText& r, int line) {
        if (r.fate == Fate::valid && r.rule.match.empty())
            r.fate = Fate::invalid; // a rule must match something
        // Two rules with one match in one file are refused; known only when both matches are
        // (a value of unknown fate may have added a match key the model does not hold).
        if (r.fate == Fate::valid)
            for (size_t i = 0; i < rules_.size(); ++i)
                if (rule_fates_[i] == Fate::valid && rules_[i].match == r.rule.match)
                    r.fate = Fate::invalid;
        r.rule.line = line;
        mark(r.fate);
        rules_.push_back(r.rule);
        rule_fates_.push_back(r.fate);
    }

    void rule_table() {
        const int at = line();
        out_ += "[[" + space() + key("rule") + space() + "]]";
        newline();
        RuleText r = rule_body(false);
        for (const auto& a : r.assignments) {
            out_ += space() + a;
            newline();
        }
        finish_rule(r, at);
    }

    void inline_rule_array() {
        out_ += key("rule") + " = [";
        const int n = in_.ConsumeIntegralInRange(0, 4);
        if (n == 0)
            mark(Fate::valid); // "rule = []": no rules
        for (int i = 0; i < n; ++i) {
            if (in_.ConsumeBool())
                newline();
            const int at = line();
            RuleText r = rule_body(true);
            std::string t = "{";
            for (size_t k = 0; k < r.assignments.size(); ++k)
                t += (k ? ", " : " ") + r.assignments[k];
            out_ += t + " },";
            finish_rule(r, at);
        }
        out_ += "]";
        newline();
    }

    FuzzedDataProvider& in_;
    std::string out_;
    Fate fate_ = Fate::valid;
    std::vector<rdmad::Rule> rules_;
    std::vector<Fate> rule_fates_; // of each of rules_
    std::optional<bool> apply_;
    bool daemon_defined_ = false;
};

bool same_settings(const rdmad::Rule& a, const rdmad::Rule& b) {
    return a.match == b.match && a.port_type == b.port_type && a.pfc_no_drop == b.pfc_no_drop &&
           a.require_provider == b.require_provider;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FuzzedDataProvider in(data, size);
    Generator gen(in);
    gen.document();
    try {
        const auto parsed = rdmad::parse_config_text(gen.text(), "gen.conf");
        if (const auto* e = std::get_if<rdmad::ConfigError>(&parsed)) {
            check(e->line >= 1 && e->column >= 1 && !e->reason.empty(), "errors are positioned");
            if (gen.fate() == Fate::valid) {
                std::fprintf(stderr, "refused: %s\n", e->to_string().c_str());
                check(false, "a document of valid parts is accepted");
            }
            return 0;
        }
        check(gen.fate() != Fate::invalid, "a document with an invalid part is refused");
        const auto& file = std::get<rdmad::ConfigFile>(parsed);
        if (gen.fate() == Fate::valid) {
            check(file.apply == gen.apply(), "[daemon] apply is what was written");
            check(file.rules.size() == gen.rules().size(), "every rule written is read");
            for (size_t i = 0; i < file.rules.size(); ++i) {
                check(same_settings(file.rules[i], gen.rules()[i]), "each rule reads as written");
                check(file.rules[i].line == gen.rules()[i].line, "each rule has its line");
                check(file.rules[i].file == "gen.conf", "each rule has its file");
            }
        }
        const auto again = rdmad::parse_config_text(rdmad::format_rules(file.rules), "w.conf");
        const auto* back = std::get_if<rdmad::ConfigFile>(&again);
        check(back && back->rules.size() == file.rules.size(), "written rules read back");
        for (size_t i = 0; i < file.rules.size(); ++i)
            check(same_settings(back->rules[i], file.rules[i]), "written rules read the same");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "exception: %s\n", e.what());
        std::abort();
    }
    return 0;
}
