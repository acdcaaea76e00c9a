// SPDX-License-Identifier: MIT
#include "config/config_writer.hpp"

#include "config/toml.hpp"
#include "config/toml_read.hpp"
#include "reconcile/settings/setting.hpp"

#include <sstream>
#include <stdexcept>

namespace rdmad {
namespace {

void put_string(toml::table& t, std::string_view key, const std::string& value) {
    if (value.empty())
        return;
    for (const char c : value)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            throw std::invalid_argument(std::string(key) + " \"" + value +
                                        "\" is not printable ASCII; rdmad.conf(5) cannot hold it");
    t.insert(key, value);
}

} // namespace

std::string format_rules(const std::vector<Rule>& rules) {
    toml::array tables;
    for (const auto& r : rules) {
        toml::table t;
        put_string(t, "pci_address", r.match.pci_address);
        put_string(t, "driver", r.match.driver);
        put_string(t, "node_guid", r.match.node_guid);
        put_string(t, "device", r.match.device_glob);
        put_string(t, "netdev", r.match.netdev_glob);
        ConfigTableOut out{t};
        for (const Setting* setting : all_settings())
            setting->format(r, out);
        if (r.require_provider)
            t.insert("require_provider", *r.require_provider);
        if (r.min_rate_gbps)
            t.insert("min_rate_gbps", *r.min_rate_gbps);
        if (r.min_active_ports)
            t.insert("min_active_ports", static_cast<int64_t>(*r.min_active_ports));
        tables.push_back(std::move(t));
    }
    if (tables.empty())
        return "";
    const toml::table root{{"rule", std::move(tables)}};
    // Basic (double-quoted) strings, no indentation: the style of rdmad.conf(5)'s examples.
    const auto flags = toml::toml_formatter::default_flags &
                       ~toml::format_flags::allow_literal_strings &
                       ~toml::format_flags::indentation;
    std::ostringstream out;
    out << toml::toml_formatter(root, flags) << "\n";
    return out.str();
}

} // namespace rdmad
