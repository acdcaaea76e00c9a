// SPDX-License-Identifier: MIT
#include "sources/mstconfig.hpp"

#include "util/run_tool.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace rdmad {
namespace {

enum class Column { default_value, current, next_boot };

/// The columns a "Configurations:" header names, in order; nullopt when it names something else.
std::optional<std::vector<Column>> header_columns(const std::vector<std::string_view>& t) {
    std::vector<Column> cols;
    for (size_t i = 1; i < t.size(); ++i) {
        if (t[i] == "Default")
            cols.push_back(Column::default_value);
        else if (t[i] == "Current")
            cols.push_back(Column::current);
        else if (t[i] == "Next" && i + 1 < t.size() && t[i + 1] == "Boot") {
            cols.push_back(Column::next_boot);
            ++i;
        } else
            return std::nullopt; // "Next Boot  New" (a set's table) and anything else
    }
    if (cols.empty())
        return std::nullopt;
    return cols;
}

/// The stderr of a failed run as one line for a problem: its "-E-" lines when there are,
/// else its first line; at most 300 bytes.
std::string error_text(const std::string& err) {
    std::string out;
    size_t at = 0;
    std::string first;
    while (at < err.size()) {
        size_t end = err.find('\n', at);
        if (end == std::string::npos)
            end = err.size();
        std::string_view line(err.data() + at, end - at);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.remove_suffix(1);
        if (first.empty() && !line.empty())
            first = std::string(line);
        if (line.rfind("-E-", 0) == 0)
            out += (out.empty() ? "" : " ") + std::string(line);
        at = end + 1;
    }
    if (out.empty())
        out = first;
    if (out.size() > 300)
        out = out.substr(0, 300) + "...";
    return out;
}

} // namespace

std::optional<std::vector<MstconfigRow>> parse_mstconfig_query(std::string_view text) {
    std::optional<std::vector<Column>> columns;
    std::vector<MstconfigRow> rows;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view line = text.substr(at, end - at);
        at = end + 1;
        auto t = blank_separated(line);
        if (t.empty())
            continue;
        if (t[0] == "Configurations:") {
            columns = header_columns(t);
            continue;
        }
        if (!columns)
            continue;
        if (t[0] == "*")
            t.erase(t.begin());
        // name + one token per column; other lines ("The '*' shows ...") are not rows
        if (t.size() != columns->size() + 1)
            continue;
        const std::string_view name = t[0];
        const bool is_name = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
            return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '[' ||
                   c == ']' || c == '.';
        });
        if (!is_name)
            continue;
        MstconfigRow row;
        row.name = std::string(name);
        for (size_t i = 0; i < columns->size(); ++i) {
            std::string v(t[i + 1]);
            switch ((*columns)[i]) {
            case Column::default_value:
                row.default_value = std::move(v);
                break;
            case Column::current:
                row.current = std::move(v);
                break;
            case Column::next_boot:
                row.next_boot = std::move(v);
                break;
            }
        }
        rows.push_back(std::move(row));
    }
    if (!columns)
        return std::nullopt;
    return rows;
}

std::optional<std::string> link_type_name(std::string_view v) {
    if (v == "IB(1)" || v == "1")
        return "ib";
    if (v == "ETH(2)" || v == "2")
        return "eth";
    if (v == "VPI(3)" || v == "3")
        return "auto";
    return std::nullopt;
}

int link_type_number(std::string_view port_type) {
    if (port_type == "ib")
        return 1;
    if (port_type == "eth")
        return 2;
    return 3;
}

uint32_t card_port_of(std::string_view pci) {
    const auto dot = pci.rfind('.');
    if (dot != std::string_view::npos && pci.size() == dot + 2) {
        const char fn = pci[dot + 1];
        if (fn == '0' || fn == '1')
            return static_cast<uint32_t>(fn - '0') + 1;
    }
    return 1;
}

FirmwarePortType firmware_port_type_from(std::string_view out, uint32_t card_port) {
    FirmwarePortType fw;
    fw.card_port = card_port;
    const std::string param = fmt::format("LINK_TYPE_P{}", card_port);
    const auto rows = parse_mstconfig_query(out);
    if (!rows) {
        fw.message = "mstconfig printed no \"Configurations:\" table";
        return fw;
    }
    for (const auto& row : *rows) {
        if (row.name != param)
            continue;
        const auto current = link_type_name(row.current);
        const auto next = link_type_name(row.next_boot);
        if (!current || !next) {
            fw.message = fmt::format("mstconfig shows {} as current \"{}\", next boot \"{}\"",
                                     param, row.current, row.next_boot);
            return fw;
        }
        fw.status = FirmwarePortType::Status::ok;
        fw.current = *current;
        fw.next_boot = *next;
        return fw;
    }
    fw.message = fmt::format("mstconfig shows no {} (not a VPI adapter)", param);
    return fw;
}

std::string mstconfig_tool(const std::string& configured) {
    return configured.empty() ? std::string("mstconfig") : configured;
}

std::vector<std::string> mstconfig_query_argv(const std::string& tool, const std::string& pci,
                                              uint32_t card_port) {
    return {tool, "-e", "-d", pci, "query", fmt::format("LINK_TYPE_P{}", card_port)};
}

FirmwarePortType query_firmware_port_type(const std::string& tool, const std::string& pci,
                                          uint32_t card_port, std::chrono::milliseconds timeout) {
    return firmware_port_type_of(run_tool(mstconfig_query_argv(tool, pci, card_port), timeout),
                                 tool, pci, card_port, timeout);
}

FirmwarePortType firmware_port_type_of(const ToolRun& run, const std::string& tool,
                                       const std::string& pci, uint32_t card_port,
                                       std::chrono::milliseconds timeout) {
    FirmwarePortType fw;
    fw.card_port = card_port;
    // A failure's message starts with the exact command, so that the admin can run it to see
    // the tool's error (tool paths and PCI addresses have no blanks to quote).
    const auto argv = mstconfig_query_argv(tool, pci, card_port);
    const std::string command = fmt::format("{}", fmt::join(argv, " "));
    if (run.spawn_error == ENOENT || run.spawn_error == EACCES) {
        fw.status = FirmwarePortType::Status::missing;
        fw.message = fmt::format("{}: {}", tool, std::strerror(run.spawn_error));
        return fw;
    }
    if (run.spawn_error != 0) {
        fw.message = fmt::format("{}: {}", command, std::strerror(run.spawn_error));
        return fw;
    }
    if (run.timed_out) {
        fw.message =
            fmt::format("{} did not answer within {} s (killed)", command, timeout.count() / 1000);
        return fw;
    }
    if (run.exit_status != 0) {
        const std::string text = error_text(run.err.empty() ? run.out : run.err);
        fw.message = run.exit_status < 0
                         ? fmt::format("{} was killed by a signal", command)
                         : fmt::format("{} exited with {}{}{}", command, run.exit_status,
                                       text.empty() ? "" : ": ", text);
        return fw;
    }
    fw = firmware_port_type_from(run.out, card_port);
    if (fw.status != FirmwarePortType::Status::ok)
        fw.message = command + ": " + fw.message;
    return fw;
}

} // namespace rdmad
