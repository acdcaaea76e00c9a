// SPDX-License-Identifier: MIT
//
// rdmactl doctor: every problem rdmad knows, the daemon's own (Manager.Problems, e.g. a bad
// configuration file) and every device's, each with the remedy its text names, grouped per
// object. Exit status kExitProblems when one is an error or a warning.
#include "document.hpp"
#include "table.hpp"
#include "terminal.hpp"
#include "verbs.hpp"

#include <fmt/format.h>

namespace rdmactl {

namespace {

using nlohmann::json;

struct Group {
    std::string object; // "rdmad", "mlx4_0"
    std::string path;
    const json* problems;
};

} // namespace

int verb_doctor(Client& client, const Output& out) {
    const json doc = client.describe();
    std::vector<Group> groups{{"rdmad", "/org/rdmad1", &doc::array(doc, "Problems")}};
    for (const auto* dev : doc::devices(doc))
        groups.push_back(
            {doc::str(*dev, "Name"), doc::str(*dev, "Path"), &doc::array(*dev, "Problems")});

    std::size_t total = 0, errors = 0, warnings = 0;
    json list = json::array();
    for (const auto& g : groups)
        for (const auto& p : *g.problems) {
            const std::string severity = doc::str(p, "Severity");
            ++total;
            errors += severity == "error";
            warnings += severity == "warning";
            list.push_back({{"object", g.object},
                            {"path", g.path},
                            {"code", doc::str(p, "Code")},
                            {"severity", severity},
                            {"text", doc::str(p, "Text")}});
        }
    // A degraded daemon without a problem to show still deserves a line.
    const std::string state = doc::str(doc, "State");
    if (state == "degraded" && doc::array(doc, "Problems").empty()) {
        ++total;
        ++warnings;
        list.insert(list.begin(), json{{"object", "rdmad"},
                                       {"path", "/org/rdmad1"},
                                       {"code", "degraded"},
                                       {"severity", "warning"},
                                       {"text", "rdmad runs on a partial view of the hardware"}});
    }
    const int status = errors + warnings > 0 ? kExitProblems : 0;

    if (out.json) {
        print_json(list);
        return status;
    }
    if (total == 0) {
        if (out.legend)
            fmt::print("No problems found.\n");
        return status;
    }
    std::string current;
    bool first = true;
    for (const auto& p : list) {
        const std::string object = p["object"].get<std::string>();
        if (first || object != current) {
            if (!first && out.legend)
                fmt::print("\n");
            fmt::print("{}:\n", sanitize(object));
            current = object;
            first = false;
        }
        const std::string severity = p["severity"].get<std::string>();
        fmt::print("  {}\n", paint(out.color ? severity_color(severity) : nullptr,
                                   fmt::format("{}: {} ({})", sanitize(severity),
                                               sanitize(p["text"].get<std::string>()),
                                               sanitize(p["code"].get<std::string>()))));
    }
    if (out.legend)
        fmt::print("\n{} {}: {} {}, {} {}.\n", total, total == 1 ? "problem" : "problems", errors,
                   errors == 1 ? "error" : "errors", warnings,
                   warnings == 1 ? "warning" : "warnings");
    return status;
}

} // namespace rdmactl
