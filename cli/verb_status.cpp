// SPDX-License-Identifier: MIT
//
// rdmactl status: every port of every RDMA device, rdmad's own problems (a bad configuration
// file), the devices' problems, the ports not as desired, and the netdevs whose hardware could
// do RDMA if its driver were loaded.
#include "document.hpp"
#include "table.hpp"
#include "terminal.hpp"
#include "verbs.hpp"

#include <fmt/core.h>

namespace rdmactl {

nlohmann::json status_json(const nlohmann::json& doc) {
    return doc;
}

int verb_status(const std::vector<HostDoc>& docs, const Output& out) {
    // With several hosts, a HOST column first and every line below the table "HOST: ...".
    HostTable table({"DEVICE", "PORT", "TRANSPORT", "STATE", "PHYS", "RATE", "NETDEV", "PROVIDER"},
                    out.fleet);
    table.align_right(1);
    table.paint_column(3, state_color);
    auto prefix = [&](const std::string& host) {
        return out.fleet ? sanitize(host) + ": " : std::string();
    };
    // "<object>: <severity>: <text>": the line takes its severity's colour.
    auto problem_line = [&](const std::string& host, const std::string& object,
                            const std::string& severity, const std::string& text) {
        return paint(out.color ? severity_color(severity) : nullptr,
                     fmt::format("{}{}: {}: {}", prefix(host), sanitize(object), sanitize(severity),
                                 sanitize(text)));
    };
    std::vector<std::string> problems;
    // The summary counts errors and warnings as problems; "info" entries (a D-Bus request
    // overriding a rule, a provider being installed) are shown and counted apart, as doctor
    // counts them (they do not make its exit status 3).
    std::size_t n_infos = 0;
    auto add_problem = [&](const std::string& host, const std::string& object,
                           const std::string& severity, const std::string& text) {
        n_infos += severity != "error" && severity != "warning";
        problems.push_back(problem_line(host, object, severity, text));
    };
    std::vector<std::string> unsynced;
    std::vector<std::string> hints;
    std::size_t n_devices = 0;
    std::size_t n_ports = 0;
    std::size_t n_unsynced = 0;
    for (const auto& [host, doc] : docs) {
        // rdmad's own problems first: while a configuration file is bad, the desired state
        // below is the last good one.
        const std::size_t own_from = problems.size();
        for (const auto& p : doc::array(doc, "Problems"))
            add_problem(host, "rdmad", doc::str(p, "Severity"), doc::str(p, "Text"));
        if (doc::str(doc, "State") == "degraded" && problems.size() == own_from)
            problems.push_back(problem_line(host, "rdmad", "warning",
                                            "degraded, running on a partial view of the hardware"));
        const auto devices = doc::devices(doc);
        n_devices += devices.size();
        for (const auto* dev : devices) {
            const std::string name = doc::str(*dev, "Name");
            const std::string provider = doc::provider_text(*dev);
            const auto ports = doc::ports(*dev);
            // A device without ports still gets a row: status must not hide it.
            if (ports.empty())
                table.add_row(host, {name, "", "", "", "", "", "", provider});
            for (const auto* port : ports) {
                ++n_ports;
                table.add_row(host, {name, std::to_string(doc::integer(*port, "Number")),
                                     doc::transport_text(*port), doc::str(*port, "State"),
                                     doc::str(*port, "PhysicalState"), doc::rate_text(*port),
                                     doc::name_of(doc, doc::str(*port, "Link")), provider});
                // One story per port: where the device's problem already says the port's
                // type, what is asked and the firmware remedy, the sync line does not say it
                // again.
                const std::int64_t number = doc::integer(*port, "Number");
                const bool firmware = doc::has_firmware_port_type_problem(*dev, number);
                if (!doc::boolean(*port, "InSync") && port->contains("InSync"))
                    ++n_unsynced;
                if (std::string sync = doc::sync_text(*port, firmware, dev); !sync.empty())
                    unsynced.push_back(fmt::format("{}{} port {}: {}", prefix(host), sanitize(name),
                                                   number, sanitize(sync)));
            }
            for (const auto& p : doc::array(*dev, "Problems"))
                add_problem(host, name, doc::str(p, "Severity"), doc::str(p, "Text"));
        }
        // Hardware that can do RDMA but has no RDMA device because its driver is not loaded.
        for (const auto* link : doc::links(doc)) {
            if (doc::str(*link, "RdmaCapable") != "module-not-loaded")
                continue;
            const std::string hint = doc::str(*link, "Hint");
            hints.push_back(fmt::format(
                "{}{}: RDMA capable, {}", prefix(host), sanitize(doc::str(*link, "Name")),
                hint.empty() ? std::string("RDMA driver not loaded") : sanitize(hint)));
        }
    }

    if (n_devices == 0) {
        if (out.legend)
            fmt::print("No RDMA devices found{}.\n",
                       out.fleet ? fmt::format(" on {} {}", docs.size(),
                                               docs.size() == 1 ? "host" : "hosts")
                                 : "");
    } else {
        table.print(stdout, out.legend, out.color);
    }
    if (!problems.empty() || !unsynced.empty()) {
        if (n_devices > 0 && out.legend)
            fmt::print("\n");
        for (const auto& p : problems)
            fmt::print("{}\n", p);
        for (const auto& u : unsynced)
            fmt::print("{}\n", u);
    }
    if (!hints.empty()) {
        if (out.legend && (n_devices > 0 || !problems.empty() || !unsynced.empty()))
            fmt::print("\n");
        for (const auto& h : hints)
            fmt::print("{}\n", h);
    }

    if (out.legend && n_devices > 0) {
        auto count = [](size_t n, const char* one, const char* many) {
            return fmt::format("{} {}", n, n == 1 ? one : many);
        };
        fmt::print("\n");
        if (out.fleet)
            fmt::print("{}, ", count(docs.size(), "host", "hosts"));
        fmt::print("{}, {}, {}", count(n_devices, "RDMA device", "RDMA devices"),
                   count(n_ports, "port", "ports"),
                   count(problems.size() - n_infos, "problem", "problems"));
        if (n_infos > 0)
            fmt::print(", {} info", n_infos);
        if (n_unsynced > 0)
            fmt::print(", {} not in sync", count(n_unsynced, "port", "ports"));
        fmt::print(".\n");
    }
    return 0;
}

} // namespace rdmactl
