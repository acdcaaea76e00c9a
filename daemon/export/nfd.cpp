// SPDX-License-Identifier: MIT
#include "export/nfd.hpp"

#include <ctime>
#include <fmt/format.h>
#include <map>
#include <set>

namespace rdmad::exports {
namespace {

bool alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

} // namespace

bool valid_label_name(const std::string& name) {
    if (name.empty() || name.size() > 63 || !alnum(name.front()) || !alnum(name.back()))
        return false;
    for (char c : name)
        if (!alnum(c) && c != '-' && c != '_' && c != '.')
            return false;
    return true;
}

bool valid_label_value(const std::string& value) {
    return value.empty() || valid_label_name(value);
}

std::string render_nfd_labels(const HostState& inventory, const ManagerFacts& facts) {
    std::map<std::string, std::string> labels;
    std::map<std::string, size_t> usable = {{"infiniband", 0}, {"roce-v2", 0}, {"iwarp", 0}};
    std::set<uint32_t> gid_indexes;
    bool roce_without_index = false;
    bool providers = true;
    bool in_sync = facts.config_errors == 0;
    for (const auto& [syspath, d] : inventory.devices) {
        providers = providers && d.provider_installed;
        for (const PortState& p : d.ports) {
            in_sync = in_sync && p.in_sync;
            const std::string t = usable_transport(d, p);
            if (t.empty())
                continue;
            ++usable[t];
            if (t == "roce-v2") {
                if (!p.recommended_gid.gid.empty())
                    gid_indexes.insert(p.recommended_gid.index);
                else
                    roce_without_index = true;
            }
        }
    }
    for (const auto& [t, n] : usable) {
        labels["rdmad." + t + ".ports"] = std::to_string(n);
        if (n)
            labels["rdmad." + t] = "true";
    }
    if (!inventory.devices.empty())
        labels["rdmad.providers-installed"] = providers ? "true" : "false";
    labels["rdmad.in-sync"] = in_sync ? "true" : "false";
    if (gid_indexes.size() == 1 && !roce_without_index)
        labels["rdmad.roce-gid-index"] = std::to_string(*gid_indexes.begin());
    std::string out;
    for (const auto& [name, value] : labels)
        out += name + "=" + value + "\n";
    return out;
}

std::string render_nfd(const std::string& labels, int64_t expiry_unix) {
    const std::time_t t = static_cast<std::time_t>(expiry_unix);
    struct tm tm {};
    gmtime_r(&t, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return fmt::format("# Written by rdmad (rdmad.conf(5), [export] nfd_dir); do not edit.\n"
                       "# +expiry-time={}\n{}",
                       when, labels);
}

} // namespace rdmad::exports
