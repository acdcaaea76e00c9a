// SPDX-License-Identifier: MIT
//
// rdmactl doctor: every problem rdmad knows, the daemon's own (Manager.Problems, e.g. a bad
// configuration file) and every device's (Device.ProblemDetails: code, severity, text,
// evidence, remedy, port), grouped per object and port, each with its remedy; with -v the
// evidence too. Exit status kExitProblems when one is an error or a warning ("info" ones are
// shown but do not count).
#include "document.hpp"
#include "rdmad_api.hpp"
#include "table.hpp"
#include "terminal.hpp"
#include "verbs.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <tuple>

namespace rdmactl {

namespace {

using nlohmann::json;

/// One problem as doctor prints it and as --json carries it.
json entry(const std::string& object, const std::string& path, const json& p) {
    json evidence = json::array();
    if (p.contains("Evidence") && p["Evidence"].is_array())
        for (const auto& e : p["Evidence"])
            if (e.is_string())
                evidence.push_back(e);
    unsigned port = 0;
    if (p.contains("Port") && p["Port"].is_number_unsigned())
        port = p["Port"].get<unsigned>();
    return {{"object", object},
            {"path", path},
            {"port", port},
            {"code", doc::str(p, "Code")},
            {"severity", doc::str(p, "Severity")},
            {"text", doc::str(p, "Text")},
            {"evidence", evidence},
            {"remedy", p.contains("Remedy") ? doc::str(p, "Remedy") : std::string()}};
}

} // namespace

json doctor_list(const json& doc, const std::string& device) {
    json list = json::array();
    if (device.empty()) {
        for (const auto& p : doc::array(doc, "Problems"))
            list.push_back(entry("rdmad", rdmad::api::kManagerPath, p));
        // A degraded daemon without a problem to show still deserves a line.
        if (doc::str(doc, "State") == "degraded" && doc::array(doc, "Problems").empty())
            list.push_back(entry("rdmad", rdmad::api::kManagerPath,
                                 json{{"Code", "degraded"},
                                      {"Severity", "warning"},
                                      {"Text", "rdmad runs on a partial view of the hardware"}}));
    }
    bool found = device.empty();
    for (const auto* dev : doc::devices(doc)) {
        const std::string name = doc::str(*dev, "Name");
        if (!device.empty() && name != device)
            continue;
        found = true;
        // An rdmad without ProblemDetails has Problems only.
        const bool details = dev->contains("ProblemDetails");
        for (const auto& p : doc::array(*dev, details ? "ProblemDetails" : "Problems"))
            list.push_back(entry(name, doc::str(*dev, "Path"), p));
    }
    if (!found)
        throw Failure("no RDMA device named " + sanitize(device));
    // NICs that can do RDMA but have no RDMA device (Link.RdmaCapable "module-not-loaded"):
    // status lists them, and doctor answers "is it working, and if not, why" for them too
    // (a new user saw "No problems found." beside status's "RDMA capable, load irdma").
    if (device.empty())
        for (const auto* link : doc::links(doc)) {
            if (doc::str(*link, "RdmaCapable") != "module-not-loaded")
                continue;
            const std::string hint = doc::str(*link, "Hint");
            list.push_back(entry(doc::str(*link, "Name"), doc::str(*link, "Path"),
                                 json{{"Code", "rdma-driver-not-loaded"},
                                      {"Severity", "info"},
                                      {"Text", "RDMA capable, but no RDMA device serves it"},
                                      {"Remedy", hint}}));
        }
    return list;
}

int doctor_status(const json& list) {
    for (const auto& p : list) {
        const std::string severity = doc::str(p, "severity");
        if (severity == "error" || severity == "warning")
            return kExitProblems;
    }
    return 0;
}

int verb_doctor(const json& list, const Output& out) {
    std::size_t errors = 0, warnings = 0, infos = 0;
    for (const auto& p : list) {
        const std::string severity = p["severity"].get<std::string>();
        errors += severity == "error";
        warnings += severity == "warning";
        infos += severity != "error" && severity != "warning";
    }
    const int status = doctor_status(list);

    if (out.json) {
        print_json(list);
        return status;
    }
    if (list.empty()) {
        if (out.legend)
            fmt::print("No problems found.\n");
        return status;
    }
    // Grouped by object, then by port (the device's own problems, port 0, first), keeping
    // rdmad's order within a group.
    std::map<std::string, std::size_t> object_order;
    std::vector<std::tuple<std::size_t, unsigned, const json*>> sorted;
    for (const auto& p : list) {
        const auto [it, _] =
            object_order.emplace(p["object"].get<std::string>(), object_order.size());
        sorted.emplace_back(it->second, p["port"].get<unsigned>(), &p);
    }
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
        return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
    });
    std::string object;
    unsigned port = 0;
    bool first = true;
    for (const auto& [_, _port, p] : sorted) {
        const std::string o = (*p)["object"].get<std::string>();
        const unsigned n = (*p)["port"].get<unsigned>();
        const bool new_object = first || o != object;
        if (new_object) {
            if (!first && out.legend)
                fmt::print("\n");
            fmt::print("{}:\n", sanitize(o));
            object = o;
            port = 0;
            first = false;
        }
        if (n != 0 && (new_object || n != port))
            fmt::print("  port {}:\n", n);
        port = n;
        const std::string indent = n != 0 ? "    " : "  ";
        const std::string severity = (*p)["severity"].get<std::string>();
        std::string text = (*p)["text"].get<std::string>();
        // Under "port 1:" a text's own "port 1: " is said already (a new user read
        // "port 1: info: port 1: partition membership ...").
        if (const std::string own = fmt::format("port {}: ", n); n != 0 && text.rfind(own, 0) == 0)
            text.erase(0, own.size());
        fmt::print("{}{}\n", indent,
                   paint(out.color ? severity_color(severity) : nullptr,
                         fmt::format("{}: {} ({})", sanitize(severity), sanitize(text),
                                     sanitize((*p)["code"].get<std::string>()))));
        const std::string remedy = (*p)["remedy"].get<std::string>();
        if (!remedy.empty())
            fmt::print("{}  remedy: {}\n", indent, sanitize(remedy));
        if (out.verbose)
            for (const auto& e : (*p)["evidence"])
                fmt::print("{}  read: {}\n", indent, sanitize(e.get<std::string>()));
    }
    if (out.legend)
        // Info entries are no problems (they leave the exit status 0), as in status's summary.
        fmt::print("\n{} {} ({} {}, {} {}), {} info.\n", errors + warnings,
                   errors + warnings == 1 ? "problem" : "problems", errors,
                   errors == 1 ? "error" : "errors", warnings,
                   warnings == 1 ? "warning" : "warnings", infos);
    return status;
}

} // namespace rdmactl
