// SPDX-License-Identifier: MIT
#include "inventory/provider.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace rdmad {
namespace {

// kernel driver of the RDMA device's parent -> rdma-core provider (.driver name).
// Source: DOMAIN.md §4.4 and §5; rdma-core providers/*/CMakeLists.txt.
constexpr std::array<std::pair<std::string_view, std::string_view>, 21> kProviders{{
    {"mlx4_core", "mlx4"},
    {"mlx5_core", "mlx5"},
    {"cxgb4", "cxgb4"},
    {"ice", "irdma"},  // E810, aux ice.iwarp / ice.roce
    {"i40e", "irdma"}, // X722, aux i40e.iwarp; the i40iw provider was removed in rdma-core v37
    {"bnxt_en", "bnxt_re"},
    {"qede", "qedr"},
    {"qed", "qedr"},
    {"be2net", "ocrdma"},
    {"hns3", "hns"},
    {"hns", "hns"},
    {"efa", "efa"},
    {"erdma", "erdma"},
    {"hfi1", "hfi1verbs"},
    {"ib_qib", "ipathverbs"},
    {"ib_mthca", "mthca"},
    {"vmw_pvrdma", "vmw_pvrdma"}, // provider .name "pvrdma", .driver file "vmw_pvrdma"
    {"mana", "mana"},
    {"ionic", "ionic"},
    {"rdma_rxe", "rxe"},
    {"siw", "siw"},
}};

// RHEL 7.0-7.3 standalone packages (names from rdma-core's Obsoletes:, DOMAIN.md §4.4).
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kRhelLegacy{{
    {"mlx4", "libmlx4"},
    {"mlx5", "libmlx5"},
    {"cxgb4", "libcxgb4"},
    {"ocrdma", "libocrdma"},
    {"hfi1verbs", "libhfi1"},
    {"ipathverbs", "libipathverbs"},
    {"mthca", "libmthca"},
    {"rxe", "librxe"},
    {"irdma", "libi40iw"},
    {"cxgb3", "libcxgb3"},
}};

// SUSE ships the shared providers' .so.1 in their own packages (suse/rdma-core.spec).
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kSuseShared{{
    {"mlx4", "libmlx4-1"},
    {"mlx5", "libmlx5-1"},
    {"efa", "libefa1"},
    {"hns", "libhns1"},
    {"mana", "libmana1"},
    {"ionic", "libionic1"},
}};

template <typename Table>
std::string_view lookup(const Table& table, std::string_view key) {
    for (const auto& [k, v] : table)
        if (k == key)
            return v;
    return {};
}

std::string unquote(std::string_view v) {
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
        const char q = v.front();
        v = v.substr(1, v.size() - 2);
        std::string out;
        for (size_t i = 0; i < v.size(); ++i) {
            if (q == '"' && v[i] == '\\' && i + 1 < v.size())
                ++i;
            out += v[i];
        }
        return out;
    }
    return std::string(v);
}

bool has(const OsRelease& os, std::string_view name) {
    return os.id == name || std::find(os.id_like.begin(), os.id_like.end(), name) != os.id_like.end();
}

} // namespace

std::string provider_for_driver(std::string_view kernel_driver) {
    return std::string(lookup(kProviders, kernel_driver));
}

OsRelease parse_os_release(std::string_view text) {
    OsRelease os;
    while (!text.empty()) {
        auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
            line.remove_suffix(1);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        if (line.empty() || line.front() == '#')
            continue;
        auto eq = line.find('=');
        if (eq == std::string_view::npos || eq == 0)
            continue;
        std::string_view key = line.substr(0, eq);
        std::string value = unquote(line.substr(eq + 1));
        if (key == "ID") {
            os.id = value;
        } else if (key == "VERSION_ID") {
            os.version_id = value;
        } else if (key == "ID_LIKE") {
            os.id_like.clear();
            size_t pos = 0;
            while (pos < value.size()) {
                auto sp = value.find(' ', pos);
                if (sp == std::string::npos)
                    sp = value.size();
                if (sp > pos)
                    os.id_like.push_back(value.substr(pos, sp - pos));
                pos = sp + 1;
            }
        }
    }
    return os;
}

DistroFamily distro_family(const OsRelease& os) {
    if (has(os, "debian") || has(os, "ubuntu"))
        return DistroFamily::debian;
    if (has(os, "suse") || has(os, "opensuse") || os.id.rfind("opensuse", 0) == 0 || os.id == "sles")
        return DistroFamily::suse;
    if (has(os, "rhel") || has(os, "fedora") || has(os, "centos")) {
        // rdma-core replaced the standalone provider packages in RHEL 7.4.
        if (os.id != "fedora" && os.version_id.rfind("7.", 0) == 0) {
            // VERSION_ID "7.<minor>": at most 3 digits are looked at, so no overflow.
            int minor = 0, digits = 0;
            for (char c : os.version_id.substr(2)) {
                if (c < '0' || c > '9' || ++digits > 3)
                    break;
                minor = minor * 10 + (c - '0');
            }
            if (digits >= 1 && digits <= 3 && minor <= 3)
                return DistroFamily::rhel_legacy;
        }
        return DistroFamily::rhel;
    }
    return DistroFamily::unknown;
}

std::string provider_package(std::string_view provider, DistroFamily family) {
    if (provider.empty())
        return {};
    switch (family) {
    case DistroFamily::debian:
        return "ibverbs-providers";
    case DistroFamily::rhel:
        return "libibverbs";
    case DistroFamily::rhel_legacy: {
        auto legacy = lookup(kRhelLegacy, provider);
        return legacy.empty() ? std::string("libibverbs") : std::string(legacy);
    }
    case DistroFamily::suse: {
        auto shared = lookup(kSuseShared, provider);
        return shared.empty() ? std::string("libibverbs") : "libibverbs " + std::string(shared);
    }
    case DistroFamily::unknown:
        break;
    }
    return "rdma-core";
}

std::string install_command(DistroFamily family, std::string_view packages) {
    const char* tool = "install";
    switch (family) {
    case DistroFamily::debian:
        tool = "apt install";
        break;
    case DistroFamily::rhel:
        tool = "dnf install";
        break;
    case DistroFamily::rhel_legacy:
        tool = "yum install";
        break;
    case DistroFamily::suse:
        tool = "zypper install";
        break;
    case DistroFamily::unknown:
        break;
    }
    return std::string(tool) + " " + std::string(packages);
}

} // namespace rdmad
