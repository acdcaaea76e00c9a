// SPDX-License-Identifier: MIT
#include "config/mlx4_conf.hpp"
#include "rdmad_api.hpp"

#include "config/file_read.hpp"
#include "inventory/attributes.hpp"
#include "util/text.hpp"

namespace rdmad {

namespace {

struct Field {
    std::string_view text;
    int column; // 1-based
};

// rdma.mlx4-setup.sh reads each line with `read device port1 port2`: fields are separated by
// IFS whitespace (space, tab).
std::vector<Field> split_fields(std::string_view line) {
    std::vector<Field> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            ++i;
        const size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            ++i;
        if (i > start)
            out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
    }
    return out;
}

bool is_port_type(std::string_view t) {
    // The file's header comment: "each type one of auto, ib, eth" (redhat/rdma.mlx4.conf).
    return api::valid_port_type(t);
}

} // namespace

std::vector<Rule> parse_mlx4_conf(std::string_view text, const std::string& filename,
                                  std::vector<ConfigError>* warnings) {
    std::vector<Rule> rules;
    size_t skipped = 0; // warnings past kMaxMlx4Warnings, summed up at the end
    auto warn = [&](int line, int column, std::string reason) {
        if (!warnings)
            return;
        if (warnings->size() < kMaxMlx4Warnings)
            warnings->push_back({filename, line, column, std::move(reason)});
        else
            ++skipped;
    };
    int number = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        ++number;
        const size_t end = text.find('\n', pos);
        const std::string_view line =
            text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        pos = end == std::string_view::npos ? text.size() : end + 1;

        const auto fields = split_fields(line);
        // No comment syntax as such: mlx4-setup.sh skips a "#..." line only because it is not a
        // directory under /sys/bus/pci/drivers/mlx4_core (DOMAIN.md §1.1). We skip it on purpose.
        if (fields.empty() || fields[0].text[0] == '#')
            continue;
        const Field& pci = fields[0];
        if (!is_pci_address(pci.text)) {
            // The script looks the field up as a directory name, so only the kernel's full
            // lower-case "DDDD:BB:DD.F" form ever worked.
            warn(number, pci.column,
                 "\"" + shown_token(pci.text) +
                     "\" is not a PCI address in the full form \"0000:0b:00.0\"; line skipped");
            continue;
        }
        if (fields.size() < 2) {
            warn(number, pci.column + static_cast<int>(pci.text.size()),
                 "no port type after the PCI address; line skipped");
            continue;
        }
        if (fields.size() > 3) {
            // `read device port1 port2` would put "eth extra" into port2, which mlx4_port2
            // refuses.
            warn(number, fields[3].column,
                 "more than two port types (one line per card: <pci> <port1> [port2]); "
                 "line skipped");
            continue;
        }
        bool ok = true;
        for (size_t i = 1; i < fields.size() && ok; ++i)
            if (!is_port_type(fields[i].text)) {
                warn(number, fields[i].column,
                     "unknown port type \"" + shown_token(fields[i].text) +
                         "\" (expected auto, ib or eth); line skipped");
                ok = false;
            }
        if (!ok)
            continue;
        if (fields.size() == 3 && fields[1].text == "eth" && fields[2].text != "eth") {
            // mlx4-setup.sh: "In order for port1 to be eth, port2 to must also be eth" and it
            // changes nothing on that card; older kernels refuse eth/ib too (DOMAIN.md §1.2-1.3).
            warn(number, fields[2].column,
                 "port 1 eth needs port 2 eth (mlx4-setup.sh refuses this line); line skipped");
            continue;
        }
        Rule rule;
        rule.file = filename;
        rule.line = number;
        rule.match.pci_address = std::string(pci.text);
        rule.port_type.emplace();
        for (size_t i = 1; i < fields.size(); ++i)
            rule.port_type->emplace_back(fields[i].text);
        rules.push_back(std::move(rule));
    }
    if (skipped)
        warnings->push_back({filename, 0, 0,
                             std::to_string(skipped) + " more invalid lines skipped"});
    return rules;
}

std::vector<Rule> load_mlx4_conf(const std::string& path, std::vector<ConfigError>* warnings) {
    const FileRead file = read_config_file(path);
    if (file.status == FileRead::Status::failed && warnings)
        warnings->push_back({path, 0, 0, file.error});
    if (file.status != FileRead::Status::ok)
        return {};
    return parse_mlx4_conf(file.text, path, warnings);
}

} // namespace rdmad
