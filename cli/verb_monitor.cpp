// SPDX-License-Identifier: MIT
//
// rdmactl monitor: one line per change rdmad signals, until SIGINT or SIGTERM.
//
// Match rules on the client's own connection (no proxy objects, no event loop thread): the
// ObjectManager's InterfacesAdded / InterfacesRemoved at /org/rdmad1, PropertiesChanged on every
// path below it, and the bus's NameOwnerChanged for org.rdmad1. The connection is driven here
// with poll() on its fd and a signalfd. PropertiesChanged carries only new values: the old ones
// come from a copy of every object's properties, seeded by Describe() (again whenever rdmad
// comes back) and updated by every signal. Values are kept in the Describe() shape (GIDs and
// Problems as objects), so --json prints old and new alike.
#include "document.hpp"
#include "rdmad_api.hpp"
#include "stop_signals.hpp"
#include "table.hpp"
#include "verbs.hpp"

#include <fmt/format.h>
#include <sdbus-c++/sdbus-c++.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <poll.h>
#include <string>
#include <string_view>
#include <sys/signalfd.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace rdmactl {

namespace {

using nlohmann::json;

using rdmad::api::kBusName;
using rdmad::api::kInterfacePrefix;
constexpr const char* kRoot = rdmad::api::kManagerPath;
/// "/port/": what stands between a device's path and its port number.
const std::string kPortInfix = std::string("/") + rdmad::api::kPortElement + "/";

// ---- Reading any D-Bus value into JSON ----------------------------------------------------

bool at_end(const sdbus::Message& m) {
    std::string type, contents;
    m.peekType(type, contents);
    return type.empty() || type[0] == '\0';
}

template <typename T> json read_basic(sdbus::Message& m) {
    T v{};
    m >> v;
    return v;
}

// One complete value at the read position: variants unwrapped, arrays and structs as JSON
// arrays, dictionaries as objects (keys as text). Throws sdbus::Error on malformed messages.
json read_value(sdbus::Message& m) {
    std::string type, contents;
    m.peekType(type, contents);
    const char t = type.empty() ? '\0' : type[0];
    switch (t) {
    case 's':
        return read_basic<std::string>(m);
    case 'o': {
        sdbus::ObjectPath p;
        m >> p;
        return std::string(p);
    }
    case 'g': {
        sdbus::Signature g;
        m >> g;
        return std::string(g);
    }
    case 'b':
        return read_basic<bool>(m);
    case 'y':
        return read_basic<std::uint8_t>(m);
    case 'n':
        return read_basic<std::int16_t>(m);
    case 'q':
        return read_basic<std::uint16_t>(m);
    case 'i':
        return read_basic<std::int32_t>(m);
    case 'u':
        return read_basic<std::uint32_t>(m);
    case 'x':
        return read_basic<std::int64_t>(m);
    case 't':
        return read_basic<std::uint64_t>(m);
    case 'd':
        return read_basic<double>(m);
    case 'h': {
        sdbus::UnixFd fd;
        m >> fd;
        return nullptr;
    }
    case 'v': {
        m.enterVariant(contents);
        json v = read_value(m);
        m.exitVariant();
        return v;
    }
    case 'r': {
        m.enterStruct(contents);
        json v = json::array();
        while (!at_end(m))
            v.push_back(read_value(m));
        m.exitStruct();
        return v;
    }
    case 'a': {
        m.enterContainer(contents);
        const bool dict = !contents.empty() && contents[0] == '{';
        json v = dict ? json::object() : json::array();
        while (!at_end(m)) {
            if (dict) {
                std::string et, ec;
                m.peekType(et, ec);
                m.enterDictEntry(ec);
                json key = read_value(m);
                json value = read_value(m);
                m.exitDictEntry();
                v[key.is_string() ? key.get<std::string>() : key.dump()] = std::move(value);
            } else {
                v.push_back(read_value(m));
            }
        }
        m.exitContainer();
        return v;
    }
    default:
        throw sdbus::Error("org.freedesktop.DBus.Error.InvalidSignature",
                           fmt::format("unexpected D-Bus type '{}'", sanitize(type)));
    }
}

// Reads an a{sv} as (name, value) pairs in the order sent.
std::vector<std::pair<std::string, json>> read_properties(sdbus::Message& m) {
    std::vector<std::pair<std::string, json>> out;
    m.enterContainer("{sv}");
    while (!at_end(m)) {
        m.enterDictEntry("sv");
        std::string name;
        m >> name;
        json value = read_value(m);
        m.exitDictEntry();
        out.emplace_back(std::move(name), std::move(value));
    }
    m.exitContainer();
    return out;
}

// ---- Properties in the Describe() shape ---------------------------------------------------

// Struct members of the struct-array properties, in D-Bus order (Describe() names them).
const std::vector<std::string>* struct_fields(std::string_view property) {
    static const std::vector<std::string> gids{"Index", "GID", "Type", "Netdev"};
    static const std::vector<std::string> problems{"Code", "Severity", "Text"};
    static const std::vector<std::string> details{"Code",     "Severity", "Text",
                                                  "Evidence", "Remedy",   "Port"};
    // As Describe() names them (org.rdmad1(5)).
    static const std::vector<std::string> origin{"Key", "Origin"};
    static const std::vector<std::string> dscp{"DSCP", "Priority"};
    static const std::vector<std::string> vf_guids{"VF", "NodeGUID", "PortGUID"};
    if (property == "GIDs")
        return &gids;
    if (property == "Problems")
        return &problems;
    if (property == "ProblemDetails")
        return &details;
    if (property == "DesiredOrigin")
        return &origin;
    if (property == "DSCPPriority" || property == "DesiredDSCPPriority")
        return &dscp;
    if (property == "DesiredVFGUIDs")
        return &vf_guids;
    return nullptr;
}

// A D-Bus value as Describe() has it: the structs of struct_fields() become named objects.
json normalize(std::string_view property, json value) {
    if (property == "RecommendedGID" && value.is_array() && value.size() == 5) {
        static const std::vector<std::string> gid{"Index", "GID", "Type", "Netdev", "IP"};
        json obj = json::object();
        for (std::size_t i = 0; i < gid.size(); ++i)
            obj[gid[i]] = std::move(value[i]);
        return obj;
    }
    const auto* fields = struct_fields(property);
    if (!fields || !value.is_array())
        return value;
    for (auto& element : value) {
        if (!element.is_array() || element.size() != fields->size())
            continue;
        json obj = json::object();
        for (std::size_t i = 0; i < fields->size(); ++i)
            obj[(*fields)[i]] = std::move(element[i]);
        element = std::move(obj);
    }
    return value;
}

// Properties of type "o" / "ao": printed by the name of the object they point to.
bool is_reference(std::string_view property) {
    return property == "PhysicalFunction" || property == "Link" || property == "RdmaDevice" ||
           property == "Links" || property == "Ports";
}

// ---- The objects ---------------------------------------------------------------------------

enum class Kind { Daemon, Device, Port, Link, Other };

const char* kind_name(Kind k) {
    switch (k) {
    case Kind::Daemon:
        return "daemon";
    case Kind::Device:
        return "device";
    case Kind::Port:
        return "port";
    case Kind::Link:
        return "link";
    case Kind::Other:
        break;
    }
    return "object";
}

Kind kind_of_interface(std::string_view iface) {
    if (iface == rdmad::api::kManagerInterface)
        return Kind::Daemon;
    if (iface == rdmad::api::kDeviceInterface)
        return Kind::Device;
    if (iface == rdmad::api::kPortInterface)
        return Kind::Port;
    if (iface == rdmad::api::kLinkInterface)
        return Kind::Link;
    return Kind::Other;
}

Kind kind_of_path(std::string_view path) {
    if (path == kRoot)
        return Kind::Daemon;
    auto under = [&](const char* prefix) {
        const std::string_view p(prefix);
        return path.size() > p.size() && path.substr(0, p.size()) == p && path[p.size()] == '/';
    };
    if (path.find(kPortInfix) != std::string_view::npos)
        return Kind::Port;
    if (under(rdmad::api::kDevicePrefix))
        return Kind::Device;
    if (under(rdmad::api::kLinkPrefix))
        return Kind::Link;
    return Kind::Other;
}

struct Object {
    Kind kind = Kind::Other;
    json props = json::object();
};

class Monitor {
  public:
    Monitor(Client& client, const Output& out) : client_(client), json_(out.json) {}

    int run();

  private:
    void subscribe();
    void seed(const json& doc);
    void describe_again();

    void on_interfaces_added(sdbus::Message& m);
    void on_interfaces_removed(sdbus::Message& m);
    void on_properties_changed(sdbus::Message& m);
    void on_name_owner_changed(sdbus::Message& m);

    Object& object_at(const std::string& path, Kind hint);
    void apply(const std::string& path, Object& obj,
               const std::vector<std::pair<std::string, json>>& changed);

    std::string label(const std::string& path) const;
    std::string name_of(const std::string& path) const;
    std::string text(std::string_view property, const json& v) const;

    void emit_line(const std::string& line);
    void emit_json(const nlohmann::ordered_json& event);

    Client& client_;
    bool json_;
    std::vector<sdbus::Slot> slots_;
    std::map<std::string, Object> objects_;
    // Device and link names seen last, kept after removal: a port removed after its device
    // (or a line about a vanished object) still has a name.
    std::map<std::string, std::string> last_names_;
    bool describe_pending_ = false;
};

// ---- Output --------------------------------------------------------------------------------

void Monitor::emit_line(const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
        throw Failure("cannot write to standard output");
}

void Monitor::emit_json(const nlohmann::ordered_json& event) {
    emit_line(terminal_safe_json(
        event.dump(-1, ' ', true, nlohmann::ordered_json::error_handler_t::replace)));
}

std::string Monitor::name_of(const std::string& path) const {
    if (auto it = objects_.find(path); it != objects_.end()) {
        std::string name = doc::str(it->second.props, "Name");
        if (!name.empty())
            return name;
    }
    if (auto it = last_names_.find(path); it != last_names_.end())
        return it->second;
    return {};
}

// "daemon", "mlx5_0", "ens1f0np0", "mlx5_0 port 1"; the path when nothing better is known.
std::string Monitor::label(const std::string& path) const {
    const auto it = objects_.find(path);
    const Kind kind = it != objects_.end() ? it->second.kind : kind_of_path(path);
    switch (kind) {
    case Kind::Daemon:
        return "daemon";
    case Kind::Device:
    case Kind::Link: {
        std::string name = name_of(path);
        return name.empty() ? path : name;
    }
    case Kind::Port: {
        const auto slash = path.rfind(kPortInfix);
        if (slash == std::string::npos)
            return path;
        std::string device = name_of(path.substr(0, slash));
        std::int64_t number =
            it != objects_.end() ? doc::integer(it->second.props, "Number", -1) : -1;
        std::string n =
            number >= 0 ? std::to_string(number) : path.substr(slash + kPortInfix.size());
        return device.empty() ? path : device + " port " + n;
    }
    case Kind::Other:
        break;
    }
    return path;
}

// A value on one line: strings as they are ("" when empty), arrays "[a, b]", structs
// "(a, b, c)", object paths by the name of their object.
std::string Monitor::text(std::string_view property, const json& v) const {
    if (v.is_null())
        return "(unknown)";
    if (v.is_string()) {
        std::string s = v.get<std::string>();
        if (is_reference(property) && !s.empty() && s != "/")
            return sanitize(label(s));
        return s.empty() ? std::string("\"\"") : sanitize(s);
    }
    if (v.is_boolean())
        return v.get<bool>() ? "yes" : "no";
    if (v.is_number_float())
        return fmt::format("{:g}", v.get<double>());
    if (v.is_number())
        return v.dump();
    if (v.is_array()) {
        std::vector<std::string> items;
        for (const auto& e : v)
            items.push_back(text(property, e));
        return fmt::format("[{}]", fmt::join(items, ", "));
    }
    if (v.is_object() && (property == "Problems" || property == "ProblemDetails"))
        return sanitize(doc::problem_text(v)); // as show has it: no evidence, no remedy
    if (v.is_object()) {
        std::vector<std::string> items;
        if (const auto* fields = struct_fields(property)) {
            for (const auto& f : *fields)
                items.push_back(text({}, v.contains(f) ? v.at(f) : json()));
        } else {
            for (const auto& [key, value] : v.items())
                items.push_back(text({}, value));
        }
        return fmt::format("({})", fmt::join(items, ", "));
    }
    return sanitize(v.dump(-1, ' ', false, json::error_handler_t::replace));
}

// ---- The model -----------------------------------------------------------------------------

void Monitor::seed(const json& doc) {
    objects_.clear();
    Object daemon{Kind::Daemon, json::object()};
    if (doc.is_object())
        for (const auto& [key, value] : doc.items())
            if (key != "Devices" && key != "Links")
                daemon.props[key] = value;
    objects_[kRoot] = std::move(daemon);

    auto add = [&](const json& item, Kind kind) {
        const std::string path = doc::str(item, "Path");
        if (path.empty() || path == "/")
            return;
        Object obj{kind, json::object()};
        for (const auto& [key, value] : item.items())
            if (key != "Path")
                obj.props[key] = value;
        if (kind == Kind::Device) {
            // Describe() nests the ports; on the bus, Ports is their paths.
            json paths = json::array();
            for (const auto& port : doc::array(item, "Ports")) {
                paths.push_back(doc::str(port, "Path"));
                Object p{Kind::Port, json::object()};
                for (const auto& [key, value] : port.items())
                    if (key != "Path")
                        p.props[key] = value;
                const std::string port_path = doc::str(port, "Path");
                if (!port_path.empty())
                    objects_[port_path] = std::move(p);
            }
            obj.props["Ports"] = std::move(paths);
        }
        if (kind != Kind::Port)
            last_names_[path] = doc::str(obj.props, "Name");
        objects_[path] = std::move(obj);
    };
    for (const auto& d : doc::array(doc, "Devices"))
        add(d, Kind::Device);
    for (const auto& l : doc::array(doc, "Links"))
        add(l, Kind::Link);
}

Object& Monitor::object_at(const std::string& path, Kind hint) {
    auto it = objects_.find(path);
    if (it == objects_.end()) {
        it = objects_
                 .emplace(path,
                          Object{hint != Kind::Other ? hint : kind_of_path(path), json::object()})
                 .first;
    } else if (it->second.kind == Kind::Other && hint != Kind::Other) {
        it->second.kind = hint;
    }
    return it->second;
}

// New values of `obj`'s properties: a line for a rename, one per other changed property.
// Values equal to the known ones print nothing (Describe() may already have had them).
void Monitor::apply(const std::string& path, Object& obj,
                    const std::vector<std::pair<std::string, json>>& changed) {
    const bool named = obj.kind == Kind::Device || obj.kind == Kind::Link;
    if (named) {
        for (const auto& [name, raw] : changed) {
            if (name != "Name" || !raw.is_string())
                continue;
            const std::string before = name_of(path);
            const std::string after = raw.get<std::string>();
            obj.props["Name"] = after;
            last_names_[path] = after;
            if (before == after)
                continue;
            if (json_)
                emit_json({{"event", "renamed"},
                           {"path", path},
                           {"kind", kind_name(obj.kind)},
                           {"old", before},
                           {"new", after}});
            else
                emit_line(fmt::format("renamed {} {} -> {}", kind_name(obj.kind),
                                      before.empty() ? std::string("\"\"") : sanitize(before),
                                      sanitize(after)));
        }
    }
    // ProblemDetails holds every problem of Problems, with more: the human lines give it alone.
    const bool details = std::any_of(changed.begin(), changed.end(),
                                     [](const auto& c) { return c.first == "ProblemDetails"; });
    for (const auto& [name, raw] : changed) {
        if (named && name == "Name" && raw.is_string())
            continue;
        json value = normalize(name, raw);
        const json old = obj.props.contains(name) ? obj.props.at(name) : json();
        if (old == value)
            continue;
        obj.props[name] = value;
        if (!json_ && (name == "Problems" || name == "ProblemDetails")) {
            if (name == "Problems" && details)
                continue;
            // One line per problem that came or went ("+" or "-"), as show prints them: the
            // whole lists before and after made lines of kilobytes (found by a new user).
            auto texts = [this, &name](const json& list) {
                std::vector<std::string> out;
                for (const auto& p : list.is_array() ? list : json::array())
                    out.push_back(text(name, p));
                return out;
            };
            const auto before = texts(old), after = texts(value);
            auto in = [](const std::vector<std::string>& v, const std::string& t) {
                return std::find(v.begin(), v.end(), t) != v.end();
            };
            for (const auto& t : before)
                if (!in(after, t))
                    emit_line(fmt::format("{}: {} - {}", sanitize(label(path)),
                                          sanitize(name), t));
            for (const auto& t : after)
                if (!in(before, t))
                    emit_line(fmt::format("{}: {} + {}", sanitize(label(path)),
                                          sanitize(name), t));
            continue;
        }
        if (json_)
            emit_json({{"event", "changed"},
                       {"path", path},
                       {"kind", kind_name(obj.kind)},
                       {"object", label(path)},
                       {"property", name},
                       {"old", old},
                       {"new", value}});
        else
            emit_line(fmt::format("{}: {} {} -> {}", sanitize(label(path)), sanitize(name),
                                  text(name, old), text(name, value)));
    }
}

// ---- Signals -------------------------------------------------------------------------------

// InterfacesAdded(o, a{sa{sv}})
void Monitor::on_interfaces_added(sdbus::Message& m) {
    sdbus::ObjectPath p;
    m >> p;
    const std::string path = p;
    Kind kind = Kind::Other;
    std::vector<std::string> interfaces;
    std::vector<std::pair<std::string, json>> props;
    m.enterContainer("{sa{sv}}");
    while (!at_end(m)) {
        m.enterDictEntry("sa{sv}");
        std::string iface;
        m >> iface;
        auto iface_props = read_properties(m);
        m.exitDictEntry();
        if (iface.rfind("org.freedesktop.DBus.", 0) == 0)
            continue; // Properties, Introspectable, Peer: every object has them
        if (Kind k = kind_of_interface(iface); k != Kind::Other)
            kind = k;
        interfaces.push_back(iface);
        for (auto& prop : iface_props)
            props.push_back(std::move(prop));
    }
    m.exitContainer();
    if (interfaces.empty())
        return;

    if (objects_.count(path)) {
        // Known already (e.g. from Describe()): print what differs.
        apply(path, object_at(path, kind), props);
        return;
    }
    Object& obj = object_at(path, kind);
    for (auto& [name, value] : props)
        obj.props[name] = normalize(name, std::move(value));
    if (obj.kind == Kind::Device || obj.kind == Kind::Link)
        last_names_[path] = doc::str(obj.props, "Name");

    const std::string what = label(path);
    if (json_) {
        emit_json({{"event", "added"},
                   {"path", path},
                   {"kind", kind_name(obj.kind)},
                   {"object", what},
                   {"interfaces", interfaces}});
    } else if (obj.kind == Kind::Port) {
        emit_line(fmt::format("added {} ({})", sanitize(what), sanitize(path)));
    } else {
        emit_line(
            fmt::format("added {} {} ({})", kind_name(obj.kind), sanitize(what), sanitize(path)));
    }
}

// InterfacesRemoved(o, as)
void Monitor::on_interfaces_removed(sdbus::Message& m) {
    sdbus::ObjectPath p;
    std::vector<std::string> removed;
    m >> p >> removed;
    const std::string path = p;
    Kind kind = Kind::Other;
    std::vector<std::string> interfaces;
    for (const auto& iface : removed) {
        if (iface.rfind("org.freedesktop.DBus.", 0) == 0)
            continue;
        if (Kind k = kind_of_interface(iface); k != Kind::Other)
            kind = k;
        interfaces.push_back(iface);
    }
    if (interfaces.empty())
        return;
    const auto it = objects_.find(path);
    if (it != objects_.end() && kind == Kind::Other)
        kind = it->second.kind;
    if (kind == Kind::Other)
        kind = kind_of_path(path);
    const std::string what = label(path); // before the object is gone
    if (it != objects_.end())
        objects_.erase(it);

    if (json_) {
        emit_json({{"event", "removed"},
                   {"path", path},
                   {"kind", kind_name(kind)},
                   {"object", what},
                   {"interfaces", interfaces}});
    } else if (kind == Kind::Port) {
        emit_line(fmt::format("removed {}", sanitize(what)));
    } else {
        emit_line(fmt::format("removed {} {}", kind_name(kind), sanitize(what)));
    }
}

// PropertiesChanged(s, a{sv}, as)
void Monitor::on_properties_changed(sdbus::Message& m) {
    const std::string path = m.getPath();
    std::string iface;
    m >> iface;
    if (iface.rfind(kInterfacePrefix, 0) != 0)
        return;
    auto changed = read_properties(m);
    std::vector<std::string> invalidated;
    m >> invalidated;
    // Invalidated properties come without a value (rdmad sends values; a newer one might not).
    for (const auto& name : invalidated)
        changed.emplace_back(name, json());
    apply(path, object_at(path, kind_of_interface(iface)), changed);
}

// NameOwnerChanged(s name, s old_owner, s new_owner), for org.rdmad1 only.
void Monitor::on_name_owner_changed(sdbus::Message& m) {
    std::string name, old_owner, new_owner;
    m >> name >> old_owner >> new_owner;
    if (name != kBusName)
        return;
    if (!old_owner.empty()) {
        objects_.clear();
        describe_pending_ = false;
        if (json_)
            emit_json({{"event", "daemon-stopped"}});
        else
            emit_line("rdmad stopped");
    }
    if (!new_owner.empty()) {
        if (json_)
            emit_json({{"event", "daemon-started"}});
        else
            emit_line("rdmad started");
        // Describe() right after this message, before any signal of the new owner.
        describe_pending_ = true;
    }
}

void Monitor::describe_again() {
    describe_pending_ = false;
    try {
        seed(client_.describe());
    } catch (const Failure& e) {
        // Gone again, or not answering: the next NameOwnerChanged tells.
        std::fprintf(stderr, "rdmactl: %s\n", sanitize(e.what()).c_str());
    }
}

void Monitor::subscribe() {
    auto& bus = client_.connection();
    const std::string sender = fmt::format("type='signal',sender='{}',", kBusName);
    auto guarded = [this](void (Monitor::*handler)(sdbus::Message&)) {
        return [this, handler](sdbus::Message& m) {
            try {
                (this->*handler)(m);
            } catch (const sdbus::Error& e) {
                // A malformed signal: say so and go on.
                std::fprintf(stderr, "rdmactl: ignoring a malformed %s signal: %s\n",
                             sanitize(m.getMemberName()).c_str(), sanitize(e.getMessage()).c_str());
            }
        };
    };
    slots_.push_back(bus.addMatch(
        sender + fmt::format("path='{}',interface='org.freedesktop.DBus.ObjectManager',"
                             "member='InterfacesAdded'",
                             kRoot),
        guarded(&Monitor::on_interfaces_added)));
    slots_.push_back(bus.addMatch(
        sender + fmt::format("path='{}',interface='org.freedesktop.DBus.ObjectManager',"
                             "member='InterfacesRemoved'",
                             kRoot),
        guarded(&Monitor::on_interfaces_removed)));
    slots_.push_back(bus.addMatch(
        sender + fmt::format("path_namespace='{}',interface='org.freedesktop.DBus.Properties',"
                             "member='PropertiesChanged'",
                             kRoot),
        guarded(&Monitor::on_properties_changed)));
    slots_.push_back(
        bus.addMatch(rdmad::api::kNameOwnerChangedMatch, guarded(&Monitor::on_name_owner_changed)));
}

int Monitor::run() {
    rdmad::StopSignals stop;
    auto& bus = client_.connection();
    try {
        // Subscribe first, then Describe(): no change falls between the two.
        subscribe();
    } catch (const sdbus::Error& e) {
        throw Failure(error_message(e));
    }
    seed(client_.describe()); // rdmad not running: Failure, exit status 1

    for (;;) {
        try {
            // Everything already read (also replies' neighbours queued during Describe()).
            while (bus.processPendingRequest())
                if (describe_pending_)
                    describe_again();
            if (describe_pending_)
                describe_again();
            const auto poll_data = bus.getEventLoopPollData();
            pollfd fds[2] = {{poll_data.fd, poll_data.events, 0}, {stop.fd(), POLLIN, 0}};
            if (poll(fds, 2, poll_data.getPollTimeout()) < 0) {
                if (errno == EINTR)
                    continue;
                throw Failure(fmt::format("poll failed: {}", std::strerror(errno)));
            }
            if (fds[1].revents & POLLIN) {
                stop.consume();
                return 0;
            }
        } catch (const sdbus::Error& e) {
            throw Failure(error_message(e));
        }
    }
}

} // namespace

int verb_monitor(Client& client, const Output& out) {
    Monitor monitor(client, out);
    return monitor.run();
}

} // namespace rdmactl
