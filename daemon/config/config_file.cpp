// SPDX-License-Identifier: MIT
#include "config/config_file.hpp"
#include "rdmad_api.hpp"

#include "config/file_read.hpp"
#include "config/toml.hpp"
#include "config/toml_read.hpp"
#include "reconcile/settings/setting.hpp"

#include "inventory/attributes.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace rdmad {

std::string ConfigError::to_string() const {
    if (line <= 0)
        return file + ": " + reason;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + reason;
}

namespace {

/// The most of toml++'s own description of a syntax error that a message keeps (its fixed texts
/// are under 120 bytes; some quote a key of any length).
constexpr size_t kMaxTomlDescription = 256;

/// `[daemon] install_providers` ("never", "ask", "auto") and `provider_package` (package
/// names: letters, digits and the characters Debian, RPM and SUSE names use, space-separated).
void read_install(const toml::node& value, std::string_view key, ConfigFile& out,
                  ConfigProblems& problems) {
    const auto* s = value.as_string();
    if (!s) {
        problems.add(value.source(),
                     std::string(key) + " must be a string, not " + type_name(value));
        return;
    }
    const std::string& v = s->get();
    if (key == "install_providers") {
        if (v == "never")
            out.install_providers = InstallProviders::never;
        else if (v == "ask")
            out.install_providers = InstallProviders::ask;
        else if (v == "auto")
            out.install_providers = InstallProviders::automatic;
        else
            problems.add(value.source(),
                         "install_providers must be \"never\", \"ask\" or \"auto\", not " +
                             quoted(v));
        return;
    }
    // Debian Policy 5.6.1 (lower case, digits, + - ., starting with a letter or digit), RPM
    // and SUSE names (also _ and upper case); 128 bytes is far beyond any real one. Each name
    // starts with a letter or digit, so none reads as an option ("-y", "--allow-downgrades")
    // in the apt/dnf command a problem suggests; "" is the distribution's default, and a value
    // of spaces alone names nothing.
    bool ok = v.size() <= 128 && (v.empty() || v.find_first_not_of(' ') != std::string::npos);
    for (size_t i = 0; ok && i < v.size(); ++i) {
        const auto c = static_cast<unsigned char>(v[i]);
        const bool starts = i == 0 || v[i - 1] == ' ';
        ok = std::isalnum(c) || (!starts && (c == '+' || c == '-' || c == '.' || c == '_')) ||
             c == ' ';
    }
    if (!ok) {
        problems.add(value.source(), "provider_package must be package names (letters, digits, "
                                     "then + - . _) separated by spaces, at most 128 bytes");
        return;
    }
    out.provider_package = v;
}

/// The user-space access modules the doctor names (doctor/modules.hpp): the only names
/// `[daemon] modules` takes.
constexpr std::string_view kAccessModules[] = {"ib_uverbs", "rdma_ucm", "ib_umad", "ib_ipoib"};

/// `[daemon]` load_modules, modules and persist_modules; false when `key` is none of them.
bool read_daemon_modules(const toml::key& key, const toml::node& value, ConfigFile& out,
                         ConfigProblems& problems) {
    if (key.str() == "load_modules") {
        out.load_modules = read_bool(value, "load_modules", problems);
    } else if (key.str() == "persist_modules") {
        out.persist_modules = read_bool(value, "persist_modules", problems);
    } else if (key.str() == "modules") {
        const auto* array = value.as_array();
        if (!array) {
            problems.add(value.source(),
                         "modules must be a list of module names, not " + type_name(value));
            return true;
        }
        std::vector<std::string> names;
        for (const auto& element : *array) {
            const auto* s = element.as_string();
            const bool known = s && std::find(std::begin(kAccessModules), std::end(kAccessModules),
                                              s->get()) != std::end(kAccessModules);
            if (!known) {
                problems.add(element.source(),
                             (s ? "unknown module " + quoted(s->get())
                                : "modules entries must be strings, not " + type_name(element)) +
                                 " (expected \"ib_uverbs\", \"rdma_ucm\", \"ib_umad\" or "
                                 "\"ib_ipoib\")");
                return true;
            }
            if (std::find(names.begin(), names.end(), s->get()) == names.end())
                names.push_back(s->get());
        }
        out.modules = std::move(names);
    } else {
        return false;
    }
    return true;
}

void read_daemon(const toml::node& node, const toml::key& name, ConfigFile& out,
                 ConfigProblems& problems) {
    const auto* table = node.as_table();
    if (!table) {
        problems.add(name.source(), "daemon must be a table ([daemon]), not " + type_name(node));
        return;
    }
    for (auto&& [key, value] : *table) {
        if (key.str() == "apply") {
            out.apply = read_bool(value, "apply", problems);
        } else if (key.str() == "mstconfig") {
            // mstflint's tool, run without a shell (sources/mstconfig.hpp): a path, not a
            // command line.
            const auto* s = value.as_string();
            if (!s || s->get().empty() || s->get().front() != '/')
                problems.add(value.source(), "mstconfig must be the absolute path of the "
                                             "mstconfig program (e.g. \"/usr/bin/mstconfig\")");
            else if (printable_ascii(value, s->get(), "mstconfig", problems))
                out.mstconfig = s->get();
        } else if (key.str() == "rdma_netns_mode") {
            const auto mode = read_string(value, "rdma_netns_mode", problems);
            if (mode && *mode != "shared" && *mode != "exclusive")
                problems.add(value.source(), "unknown RDMA netns mode " + quoted(*mode) +
                                                 " (expected \"shared\" or \"exclusive\")");
            else if (mode)
                out.rdma_netns_mode = *mode;
        } else if (key.str() == "install_providers" || key.str() == "provider_package") {
            read_install(value, key.str(), out, problems);
        } else if (!read_daemon_modules(key, value, out, problems)) {
            problems.add(key.source(), "unknown key " + quoted(key.str()) +
                                           " in [daemon] (expected \"apply\", "
                                           "\"install_providers\", \"load_modules\", "
                                           "\"modules\", \"mstconfig\", \"persist_modules\", "
                                           "\"rdma_netns_mode\" or "
                                           "\"provider_package\")");
        }
    }
}

/// An `[export]` directory: "" (off) or an absolute path of printable ASCII.
std::optional<std::string> read_export_dir(const toml::node& value, std::string_view key,
                                           ConfigProblems& problems) {
    const auto* s = value.as_string();
    if (!s) {
        problems.add(value.source(), std::string(key) +
                                         " must be a string (a directory, or \"\" for off), not " +
                                         type_name(value));
        return std::nullopt;
    }
    if (s->get().empty())
        return std::string();
    if (s->get().front() != '/') {
        problems.add(value.source(), std::string(key) + " must be an absolute directory path");
        return std::nullopt;
    }
    if (!printable_ascii(value, s->get(), key, problems))
        return std::nullopt;
    return s->get();
}

void read_export(const toml::node& node, const toml::key& name, ConfigFile& out,
                 ConfigProblems& problems) {
    const auto* table = node.as_table();
    if (!table) {
        problems.add(name.source(), "export must be a table ([export]), not " + type_name(node));
        return;
    }
    for (auto&& [key, value] : *table) {
        if (key.str() == "prometheus_dir") {
            out.prometheus_dir = read_export_dir(value, "prometheus_dir", problems);
        } else if (key.str() == "nfd_dir") {
            out.nfd_dir = read_export_dir(value, "nfd_dir", problems);
        } else {
            problems.add(key.source(), "unknown key " + quoted(key.str()) +
                                           " in [export] (expected \"prometheus_dir\" or "
                                           "\"nfd_dir\")");
        }
    }
}

void read_dispatcher(const toml::node& node, const toml::key& name, ConfigFile& out,
                     ConfigProblems& problems) {
    const auto* table = node.as_table();
    if (!table) {
        problems.add(name.source(),
                     "dispatcher must be a table ([dispatcher]), not " + type_name(node));
        return;
    }
    for (auto&& [key, value] : *table) {
        if (key.str() == "directories") {
            const auto* array = value.as_array();
            if (!array) {
                problems.add(value.source(), "directories must be a list of absolute directory "
                                             "paths, not " +
                                                 type_name(value));
                continue;
            }
            std::vector<std::string> dirs;
            bool ok = true;
            for (const auto& element : *array) {
                const auto* s = element.as_string();
                if (!s || s->get().empty() || s->get().front() != '/') {
                    problems.add(element.source(),
                                 "directories must list absolute directory paths");
                    ok = false;
                    continue;
                }
                if (!printable_ascii(element, s->get(), "directories", problems)) {
                    ok = false;
                    continue;
                }
                dirs.push_back(s->get());
            }
            if (ok)
                out.dispatcher_directories = std::move(dirs);
        } else if (key.str() == "timeout_sec") {
            const auto* i = value.as_integer();
            if (!i || i->get() < 1 || i->get() > 3600) {
                problems.add(value.source(),
                             "timeout_sec must be a whole number of seconds from 1 to 3600");
                continue;
            }
            out.dispatcher_timeout_sec = static_cast<uint32_t>(i->get());
        } else {
            problems.add(key.source(), "unknown key " + quoted(key.str()) +
                                           " in [dispatcher] (expected \"directories\" or "
                                           "\"timeout_sec\")");
        }
    }
}

/// `[doctor]`: memlock_launchers, the process names (comm) whose locked-memory limit the
/// doctor checks: 1-15 printable ASCII characters each (TASK_COMM_LEN 16 with its NUL,
/// include/linux/sched.h), at most 64.
void read_doctor(const toml::node& node, const toml::key& name, ConfigFile& out,
                 ConfigProblems& problems) {
    const auto* table = node.as_table();
    if (!table) {
        problems.add(name.source(), "doctor must be a table ([doctor]), not " + type_name(node));
        return;
    }
    for (auto&& [key, value] : *table) {
        if (key.str() != "memlock_launchers") {
            problems.add(key.source(), "unknown key " + quoted(key.str()) +
                                           " in [doctor] (expected \"memlock_launchers\")");
            continue;
        }
        const auto* array = value.as_array();
        if (!array) {
            problems.add(value.source(), "memlock_launchers must be a list of process names, not " +
                                             type_name(value));
            continue;
        }
        if (array->size() > 64) {
            problems.add(value.source(), "memlock_launchers lists at most 64 process names");
            continue;
        }
        std::vector<std::string> names;
        bool ok = true;
        for (const auto& element : *array) {
            const auto* s = element.as_string();
            if (!s || s->get().empty() || s->get().size() > 15) {
                problems.add(element.source(), "memlock_launchers entries must be process "
                                               "names of 1 to 15 characters (as in "
                                               "/proc/<pid>/comm)");
                ok = false;
                continue;
            }
            if (!printable_ascii(element, s->get(), "memlock_launchers", problems)) {
                ok = false;
                continue;
            }
            names.push_back(s->get());
        }
        if (ok)
            out.memlock_launchers = std::move(names);
    }
}

/// Reads one [[rule]] table; nullopt when it has a problem (already added).
std::optional<Rule> read_rule(const toml::node& node, const std::string& filename,
                              ConfigProblems& problems) {
    const auto* table = node.as_table();
    if (!table) {
        problems.add(node.source(), "each rule must be a table ([[rule]]), not " + type_name(node));
        return std::nullopt;
    }
    Rule rule;
    rule.file = filename;
    rule.line = std::max(1, static_cast<int>(table->source().begin.line));
    bool ok = true;
    auto keep = [&ok](auto&& value, auto& into) {
        if (value)
            into = std::move(*value);
        else
            ok = false;
    };
    for (auto&& [key, value] : *table) {
        const std::string k(key.str());
        if (k == "pci_address") {
            auto s = read_string(value, k, problems);
            if (s) {
                // Accept upper-case hex (admins copy from lspci -D output in other tools), store
                // the kernel's lower-case pci_name() form.
                std::string lower = *s;
                for (auto& c : lower)
                    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                if (!is_pci_address(lower)) {
                    problems.add(value.source(), "invalid PCI address " + quoted(*s) +
                                                     " (expected domain:bus:slot.function, "
                                                     "e.g. \"0000:0b:00.0\")");
                    s.reset();
                } else {
                    s = lower;
                }
            }
            keep(s, rule.match.pci_address);
        } else if (k == "driver") {
            keep(read_string(value, k, problems), rule.match.driver);
        } else if (k == "node_guid") {
            auto s = read_string(value, k, problems);
            std::optional<std::string> guid;
            if (s && s->find_first_of(" \t\r\n") == std::string::npos)
                guid = parse_guid(*s);
            if (s && !guid)
                problems.add(value.source(), "malformed node GUID " + quoted(*s) +
                                                 " (expected 4 colon-separated groups of hex "
                                                 "digits, e.g. \"0002:c903:0031:78f0\")");
            keep(guid, rule.match.node_guid);
        } else if (k == "device") {
            keep(read_string(value, k, problems), rule.match.device_glob);
        } else if (k == "netdev") {
            keep(read_string(value, k, problems), rule.match.netdev_glob);
        } else if (const Setting* setting = setting_for_key(k)) {
            ok = setting->parse(k, ConfigValue{value}, rule, problems) && ok;
        } else if (k == "require_provider") {
            rule.require_provider = read_bool(value, k, problems);
            ok = ok && rule.require_provider.has_value();
        } else if (k == "min_rate_gbps") {
            // Above the fastest port there is (XDR 4X: 800 Gb/s) with room; 0 asks nothing.
            auto v =
                read_number(value, k, 0, false, 10000, "more than 0 and at most 10000", problems);
            rule.min_rate_gbps = v;
            ok = ok && v.has_value();
        } else if (k == "min_active_ports") {
            std::optional<uint32_t> n;
            if (!value.as_integer())
                problems.add(value.source(),
                             "min_active_ports must be an integer, not " + type_name(value));
            else if (auto v = read_number(value, k, 1, true, 64, "from 1 to 64", problems))
                n = static_cast<uint32_t>(*v);
            rule.min_active_ports = n;
            ok = ok && n.has_value();
        } else {
            std::string expected = "pci_address, driver, node_guid, device, netdev, ";
            for (const Setting* setting : all_settings())
                for (const auto name : setting->keys())
                    expected += std::string(name) + ", ";
            problems.add(key.source(), "unknown key " + quoted(k) + " in [[rule]] (expected " +
                                           expected +
                                           "require_provider, min_rate_gbps or min_active_ports)");
            ok = false;
        }
    }
    for (const Setting* setting : all_settings())
        ok = ok && setting->check(rule, ConfigValue{*table}, problems);
    if (!ok)
        return std::nullopt;
    if (rule.match.empty()) {
        problems.add(table->source(), "rule matches nothing: set at least one of pci_address, "
                                      "driver, node_guid, device or netdev");
        return std::nullopt;
    }
    return rule;
}

/// Text toml++ 3.3 (Debian 12) must not see, found before parsing. Two bugs in it are undefined
/// behaviour on malformed input (assertion failures in debug builds, __builtin_unreachable /
/// __builtin_assume in release builds), both found by tests/fuzz/fuzz_config.cpp:
/// - parse_table_header() calls parse_key() without checking that a key starts there
///   ("[[[rule]]]", "[[=", "[" at the end of a line); fixed upstream in marzer/tomlplusplus
///   PR #301.
/// - is_non_ascii_horizontal_whitespace() (impl/unicode_autogenerated.h) reaches
///   TOML_UNREACHABLE for most code points U+00A1-U+0499 and U+2C8E-U+3087, and the parser
///   asks it about non-ASCII characters outside strings and comments ("dévice = 1").
/// - parse_value() assumes a value does not start with '}' (see below).
/// - Tables nest by recursion (parsing dotted keys, destroying the tree): a header or key of
///   60,000 dotted parts ("[a.a.a...b]", 120 KB) overflows the stack; 30,000 passed. Nested
///   arrays and inline tables stop at the library's own limit (TOML_MAX_NESTED_VALUES, 256).
/// So: table headers must start with a key, keys nest at most kMaxKeyDepth levels, and
/// non-ASCII text is allowed in comments only (every key and value of rdmad.conf is ASCII). That
/// needs a small lexer for strings and comments. It returns the first such error and neutralises
/// every one in `text` (a bad header's '[' becomes '#', a non-ASCII byte 'x'), so that toml++ can
/// still parse the text and tell whether one of its own syntax errors comes earlier. 1-based column
/// of byte `at` of the line starting at `line_start`, counted in code points as toml++ counts them.
int column_of(std::string_view text, size_t line_start, size_t at) {
    int column = 1;
    for (size_t k = line_start; k < at; ++k)
        column += (static_cast<unsigned char>(text[k]) & 0xc0) != 0x80;
    return column;
}

std::string shown_char(std::string_view text, size_t at) {
    if (at >= text.size() || text[at] == '\n')
        return "\\n";
    const char c = text[at];
    if (c == '\r')
        return "\\r";
    if (c == '\t')
        return "\\t";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        return "?";
    return std::string(1, c);
}

/// The header check for a line that starts outside any string; npos when it is fine.
size_t bad_header_at(std::string_view text, size_t line_start) {
    const size_t end = std::min(text.find('\n', line_start), text.size());
    auto blank = [&](size_t i) { return i < end && (text[i] == ' ' || text[i] == '\t'); };
    size_t i = line_start;
    while (blank(i))
        ++i;
    if (i >= end || text[i] != '[')
        return std::string_view::npos;
    ++i;
    const bool spaced = blank(i);
    while (blank(i))
        ++i;
    if (i < end && text[i] == '[' && !spaced) {
        ++i;
        while (blank(i))
            ++i;
    }
    if (i >= end) // at the very end of the text toml++ checks for EOF; before a '\n' it does not
        return end >= text.size() ? std::string_view::npos : i;
    const char c = text[i];
    const bool key_start = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                           (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '"' ||
                           c == '\'' || c == ']';
    // "[ [" is toml++'s own error ("brackets must be contiguous"), raised before any key.
    return key_start || (spaced && c == '[') ? std::string_view::npos : i;
}

/// How deep a key may nest tables: a header's parts, plus the parts of the keys of every inline
/// table or array it is inside. rdmad.conf needs 2 ("rule.port_type"); toml++ recurses once
/// per level (see above), so this also bounds its stack use whatever the file holds.
constexpr int kMaxKeyDepth = 32;

/// Tracks how deep the key being read nests, for the kMaxKeyDepth guard. Fed the characters of
/// the normal state (outside strings and comments) only; the lexer does the rest.
class KeyDepth {
  public:
    /// Levels the key reaches with one more dotted part; called at each '.'.
    int on_dot() { return base() + ++dots_ + 1; }
    void on_equals() {
        pending_ = dots_ + 1;
        dots_ = 0;
    }
    /// A '[' that opens a table header (true) or an array value (false).
    void on_open(bool header) {
        if (header) {
            in_header_ = true;
        } else {
            nest_.push_back(base() + std::max(pending_, 1));
            pending_ = 0;
        }
        dots_ = 0;
    }
    void on_open_inline() { on_open(false); }
    void on_close() {
        if (in_header_) {
            header_ = dots_ + 1;
            in_header_ = false;
        } else if (!nest_.empty()) {
            nest_.pop_back();
        }
        dots_ = 0;
    }
    void on_comma() { dots_ = pending_ = 0; }
    void on_newline() {
        in_header_ = false;
        dots_ = 0;
        if (nest_.empty())
            pending_ = 0;
    }
    /// True when a '[' here opens an array: inside a value, or right after '='.
    bool in_value(char last) const { return !nest_.empty() || last == '='; }

  private:
    int base() const { return in_header_ ? 0 : nest_.empty() ? header_ : nest_.back(); }
    std::vector<int> nest_; // for each open '[' or '{' value: the levels above its contents
    int header_ = 0;        // levels of the last table header
    int dots_ = 0;          // dots in the key being read
    int pending_ = 0;       // levels of the key before the last '='
    bool in_header_ = false;
};

/// A character of a bare value or key (a number, date, boolean): ASCII letters, digits, and
/// "+-.:_".
bool is_token_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.' ||
           c == ':' || c == '_';
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

/// The longest value starting with a digit or sign that is given to toml++ (see
/// neutralise_hazards()): well under its look-ahead history of 128 characters
/// (utf8_buffered_reader::max_history_length, toml++ 3.3 parser.inl).
constexpr size_t kMaxBareValue = 100;

/// toml++'s value terminators (is_value_terminator(), toml++ 3.3 impl/unicode.h): whitespace
/// (tab, space, '\n' to '\r'), ']', '}', ',', '#'. Non-ASCII is replaced before this is asked.
bool is_value_terminator(char c) {
    return c == ' ' || c == '\t' || (c >= '\n' && c <= '\r') || c == ']' || c == '}' || c == ',' ||
           c == '#';
}

std::optional<ConfigError> neutralise_hazards(std::string& text, const std::string& filename) {
    enum class In { normal, comment, basic, literal, ml_basic, ml_literal };
    In in = In::normal;
    int line = 1;
    size_t line_start = 0;
    std::optional<ConfigError> first;
    char last = 0; // the last character outside comments and blanks, in normal state
    KeyDepth depth;
    auto starts = [&](size_t i, std::string_view what) {
        return std::string_view(text).substr(i, 3) == what;
    };
    auto note = [&](size_t at, std::string reason) {
        if (!first)
            first = ConfigError{filename, line, column_of(text, line_start, at), std::move(reason)};
    };
    // TOML allows no NUL anywhere (toml.io v1.0.0: control characters other than tab are not
    // permitted in comments or strings, and nowhere else), and toml++ builds its messages as C
    // strings, so one that quoted it would end there ("saw 'tr").
    const std::string nul = "NUL byte (TOML allows no control character but tab)";
    // At a line start outside strings: a bad header becomes a comment line.
    auto check_header = [&]() {
        if (size_t at = bad_header_at(text, line_start); at != std::string_view::npos) {
            note(at, text[at] == '\0' ? nul
                                       : "Error while parsing table header: expected bare key "
                                         "starting character or string delimiter, saw '" +
                                             shown_char(text, at) + "'");
            text[text.find('[', line_start)] = '#';
        }
    };
    const std::string non_ascii = "non-ASCII character outside a comment (keys and values of "
                                  "rdmad's configuration are ASCII)";
    check_header();
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            line_start = i + 1;
            if (in == In::comment || in == In::basic || in == In::literal)
                in = In::normal; // an unterminated one-line string is toml++'s error to report
            if (in == In::normal) {
                depth.on_newline();
                check_header();
            }
            continue;
        }
        if (c == '\0') {
            note(i, nul);
            text[i] = ' ';
            continue;
        }
        if (static_cast<unsigned char>(c) >= 0x80 && in != In::comment) {
            note(i, non_ascii);
            text[i] = 'x';
            continue;
        }
        switch (in) {
        case In::comment:
            break;
        case In::normal:
            // parse_value() asserts that no value starts with '}' ("[}", "[1,}", toml++ 3.3
            // parser.inl); it is a syntax error either way.
            if (c == '}' && (last == '[' || last == ',')) {
                note(i, "Error while parsing value: expected a value, saw '}'");
                text[i] = '0';
            }
            // A value that starts with a digit or sign is read ahead by toml++ 3.3's
            // parse_value() into a history of 128 characters (max_history_length), and stepped back
            // over; a longer one (underscores do not count as its characters: "1___...___979-05-27
            // 00") makes it step back further than the history, a check in a noexcept function
            // (utf8_buffered_reader::step_back(), parser.inl), which ends rdmad. rdmad.conf's
            // numbers, booleans and dates are short: such a value is cut short here.
            if ((is_digit(c) || c == '+' || c == '-') &&
                (i == 0 || is_value_terminator(text[i - 1]) || text[i - 1] == '=' ||
                 text[i - 1] == '[' || text[i - 1] == '{')) {
                size_t end = i;
                while (end < text.size() && !is_value_terminator(text[end]) &&
                       end - i <= kMaxBareValue)
                    ++end;
                if (end - i > kMaxBareValue) {
                    note(i, "value longer than " + std::to_string(kMaxBareValue) +
                                " characters without a space, comma or bracket");
                    text[i + kMaxBareValue] = ' '; // toml++ reads at most this much of it
                }
            }
            // A value, a space, one digit, then a value terminator ("1979-05-27 0]"): toml++
            // 3.3 reads the space as a date-time's 'T' and asserts that the digit is followed
            // by more of the time (parse_value()'s scan, parser.inl). It is an error in any
            // TOML: after a value only a terminator may follow, and a time needs "HH:MM".
            if (c == ' ' && i > 0 && is_token_char(text[i - 1]) && i + 2 < text.size() &&
                is_digit(text[i + 1]) && is_value_terminator(text[i + 2])) {
                note(i + 1, "Error while parsing value: expected a time (HH:MM:SS) after the "
                            "date and space, saw '" +
                                shown_char(text, i + 1) + "'");
                text[i + 1] = 'x'; // toml++ then reads a date and stops at the 'x'
            }
            switch (c) {
            case '.':
                if (depth.on_dot() > kMaxKeyDepth) {
                    note(i, "key nests tables more than " + std::to_string(kMaxKeyDepth) +
                                " levels deep");
                    text[i] = '_'; // so that toml++ never sees the depth
                }
                break;
            case '=':
                depth.on_equals();
                break;
            case '[':
                depth.on_open(!depth.in_value(last));
                break;
            case '{':
                depth.on_open_inline();
                break;
            case ']':
            case '}':
                depth.on_close();
                break;
            case ',':
                depth.on_comma();
                break;
            }
            if (c != ' ' && c != '\t' && c != '\r' && c != '#')
                last = text[i];
            if (c == '#') {
                in = In::comment;
            } else if (c == '"') {
                in = starts(i, "\"\"\"") ? In::ml_basic : In::basic;
                i += in == In::ml_basic ? 2 : 0;
            } else if (c == '\'') {
                in = starts(i, "'''") ? In::ml_literal : In::literal;
                i += in == In::ml_literal ? 2 : 0;
            }
            break;
        case In::basic:
        case In::ml_basic:
            if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
                ++i; // skip the escaped character (a quote, a backslash)
                if (static_cast<unsigned char>(text[i]) >= 0x80) {
                    note(i, non_ascii);
                    text[i] = 'x';
                } else if (text[i] == '\0') {
                    note(i, nul);
                    text[i] = ' ';
                }
            } else if (in == In::basic && c == '"') {
                in = In::normal;
            } else if (in == In::ml_basic && starts(i, "\"\"\"")) {
                i += 2;
                while (i + 1 < text.size() && text[i + 1] == '"') // """a"""" is 'a"'
                    ++i;
                in = In::normal;
            }
            break;
        case In::literal:
            if (c == '\'')
                in = In::normal;
            break;
        case In::ml_literal:
            if (starts(i, "'''")) {
                i += 2;
                while (i + 1 < text.size() && text[i + 1] == '\'')
                    ++i;
                in = In::normal;
            }
            break;
        }
    }
    return first;
}

/// The fields of `m` as one string that is equal for two matches exactly when they are
/// (each field length-prefixed, so no field's bytes can fake a boundary).
std::string match_key(const Match& m) {
    std::string key;
    for (const std::string* f :
         {&m.pci_address, &m.driver, &m.node_guid, &m.device_glob, &m.netdev_glob}) {
        key += std::to_string(f->size());
        key += ':';
        key += *f;
    }
    return key;
}

// toml++ 3.3's own reader of a text, wrapped to remember the last code point the parser took
// from it. utf8_reader_interface, utf8_reader and do_parse() are toml++'s internals (parser.inl;
// in the header-only build that config/toml.hpp makes, namespace toml::impl); they are named
// only here, and the build stops if another toml++ version comes.
static_assert(TOML_LIB_MAJOR == 3 && TOML_LIB_MINOR == 3,
              "FurthestReader wraps toml++ 3.3's internal reader: check parser.inl again");

/// The parser asks its reader for one code point at a time as it goes on (its history buffer
/// replays what it steps back over without asking again), so the position of the last one
/// handed out is the furthest the parser got.
class FurthestReader final : public toml::impl::utf8_reader_interface {
public:
    FurthestReader(std::string_view text, std::string_view source, toml::source_position& furthest)
        : inner_(text, source), furthest_(furthest) {}

    const toml::source_path_ptr& source_path() const noexcept override {
        return inner_.source_path();
    }

    const toml::impl::utf8_codepoint* read_next() override {
        const toml::impl::utf8_codepoint* cp = inner_.read_next();
        if (cp)
            furthest_ = cp->position;
        return cp;
    }

    bool peek_eof() const override { return inner_.peek_eof(); }

private:
    toml::impl::utf8_reader<std::string_view> inner_;
    toml::source_position& furthest_;
};

/// toml::parse(text, source), and in `furthest` the position of the last code point the parser
/// read. When toml++ fails an internal check (TomlCheckFailed), that code point is the one the
/// check was about or at most kMaxBareValue before it on the same line (a value it read ahead
/// and stepped back over; neutralise_hazards() keeps longer ones away), so its line is the
/// line to report, found in the same single parse. (The line used to be found by parsing
/// prefixes of the text, about log2(lines) parses: 4 s on the event loop for a 1 MiB file.)
toml::table parse_toml(std::string_view text, std::string_view source,
                       toml::source_position& furthest) {
    return toml::impl::do_parse(FurthestReader(text, source, furthest));
}

} // namespace

std::variant<ConfigFile, ConfigError> parse_config_text(std::string_view text,
                                                        const std::string& filename) {
    // read_config_file() stops larger files; this bounds every caller the same way.
    if (text.size() > kMaxConfigFileBytes)
        return ConfigError{filename, 1, 1, "larger than 1 MiB, the most rdmad reads"};
    std::string safe(text);
    const auto hazard = neutralise_hazards(safe, filename);
    toml::table root;
    toml::source_position furthest{1, 1};
    try {
        root = parse_toml(safe, filename, furthest);
    } catch (const TomlCheckFailed& e) {
        ConfigError error{filename, std::max(1, static_cast<int>(furthest.line)), 1,
                          fmt::format("not TOML that rdmad can read: the parser (toml++ 3.3) "
                                      "failed its check \"{}\" in this line",
                                      e.what())};
        if (hazard && hazard->line <= error.line)
            return *hazard;
        return error;
    } catch (const toml::parse_error& e) {
        // toml++'s own text may quote a whole key ("cannot redefine existing table 'k...'"):
        // cut at kMaxTomlDescription bytes, as a quote of rdmad's own is cut.
        ConfigError error{filename, std::max(1, static_cast<int>(e.source().begin.line)),
                          std::max(1, static_cast<int>(e.source().begin.column)),
                          shorten(e.description(), kMaxTomlDescription)};
        if (hazard &&
            std::pair(hazard->line, hazard->column) <= std::pair(error.line, error.column))
            return *hazard;
        return error;
    }
    if (hazard)
        return *hazard;

    ConfigFile out;
    ConfigProblems problems(filename);
    for (auto&& [key, value] : root) {
        if (key.str() == "daemon") {
            read_daemon(value, key, out, problems);
        } else if (key.str() == "export") {
            read_export(value, key, out, problems);
        } else if (key.str() == "dispatcher") {
            read_dispatcher(value, key, out, problems);
        } else if (key.str() == "doctor") {
            read_doctor(value, key, out, problems);
        } else if (key.str() == "rule") {
            const auto* rules = value.as_array();
            if (!rules) {
                problems.add(key.source(),
                             "rule must be an array of tables ([[rule]]), not " + type_name(value));
                continue;
            }
            // Line of the first rule with each match: one lookup a rule (compared with every
            // earlier rule, the 22,793 rules of a 1 MiB file took 4.5 s, 100,000 in conf.d 18.7).
            std::unordered_map<std::string, int> first_with_match;
            first_with_match.reserve(rules->size());
            for (const auto& node : *rules) {
                auto rule = read_rule(node, filename, problems);
                if (!rule)
                    continue;
                // Two rules with one match in one file are a mistake (an edit that left the
                // old rule behind); across files, later files overriding is the point.
                const auto [earlier, fresh] =
                    first_with_match.try_emplace(match_key(rule->match), rule->line);
                if (!fresh)
                    problems.add(node.source(), "rule has the same match as the rule at line " +
                                                    std::to_string(earlier->second) +
                                                    "; merge the two rules");
                out.rules.push_back(std::move(*rule));
            }
        } else if (value.is_table()) {
            problems.add(key.source(),
                         "unknown table [" + shown_token(key.str()) +
                             "] (expected [daemon], [export], [dispatcher], [doctor] or "
                             "[[rule]])");
        } else {
            problems.add(key.source(),
                         "unknown key " + quoted(key.str()) +
                             " (expected the [daemon], [export], [dispatcher] or [doctor] table "
                             "or [[rule]] tables)");
        }
    }
    if (problems.first())
        return *problems.first();
    // toml::table keeps keys sorted, but the array of rules is in file order already.
    return out;
}

void merge_config(DesiredConfig& config, ConfigFile&& file, const std::string& filename) {
    if (file.apply)
        config.apply = *file.apply;
    if (file.mstconfig)
        config.mstconfig = *file.mstconfig;
    if (file.rdma_netns_mode)
        config.rdma_netns_mode = *file.rdma_netns_mode;
    if (file.install_providers)
        config.install_providers = *file.install_providers;
    if (file.provider_package)
        config.provider_package = *file.provider_package;
    if (file.prometheus_dir)
        config.exports.prometheus_dir = *file.prometheus_dir;
    if (file.nfd_dir)
        config.exports.nfd_dir = *file.nfd_dir;
    if (file.dispatcher_directories)
        config.dispatcher.directories = *file.dispatcher_directories;
    if (file.dispatcher_timeout_sec)
        config.dispatcher.timeout_sec = *file.dispatcher_timeout_sec;
    if (file.memlock_launchers)
        config.memlock_launchers = *file.memlock_launchers;
    if (file.load_modules)
        config.modules.load = *file.load_modules;
    if (file.modules)
        config.modules.modules = *file.modules;
    if (file.persist_modules)
        config.modules.persist = *file.persist_modules;
    if (config.rules.empty()) {
        config.rules = std::move(file.rules);
    } else {
        config.rules.insert(config.rules.end(), std::make_move_iterator(file.rules.begin()),
                            std::make_move_iterator(file.rules.end()));
        file.rules.clear();
    }
    config.sources.push_back(filename);
}

std::variant<DesiredConfig, ConfigError> load_config(const std::string& main_path,
                                                     const std::string& dropin_dir) {
    std::vector<std::string> paths{main_path};

    if (DIR* dir = ::opendir(dropin_dir.c_str())) {
        std::vector<std::string> names;
        while (const dirent* entry = ::readdir(dir)) {
            const std::string name = entry->d_name;
            // "*.conf", not hidden files (editors and package managers leave ".x.conf.swp",
            // ".#x.conf"; those do not end in .conf anyway, but ".conf" alone is no drop-in).
            if (name.size() <= 5 || name[0] == '.' || name.compare(name.size() - 5, 5, ".conf"))
                continue;
            struct stat st {};
            const std::string path = dropin_dir + "/" + name;
            if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
                continue;
            names.push_back(name);
        }
        ::closedir(dir);
        std::sort(names.begin(), names.end()); // byte order, like systemd's drop-ins
        for (const auto& name : names)
            paths.push_back(dropin_dir + "/" + name);
    } else if (errno != ENOENT && errno != ENOTDIR) {
        return ConfigError{dropin_dir, 0, 0,
                           std::string("cannot read directory: ") + std::strerror(errno)};
    }

    DesiredConfig config;
    for (const auto& path : paths) {
        const FileRead file = read_config_file(path);
        if (file.status == FileRead::Status::missing)
            continue;
        if (file.status == FileRead::Status::failed)
            return ConfigError{path, 0, 0, file.error};
        auto parsed = parse_config_text(file.text, path);
        if (auto* e = std::get_if<ConfigError>(&parsed))
            return *e;
        merge_config(config, std::move(std::get<ConfigFile>(parsed)), path);
    }
    return config;
}

} // namespace rdmad
