// SPDX-License-Identifier: MIT
//
// Which rdma-core user-space verbs provider an RDMA device needs, and which package of this
// distribution ships it. Source: DOMAIN.md §4.4 (rdma-core providers/*/CMakeLists.txt,
// redhat/rdma-core.spec, debian/control, suse/rdma-core.spec).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rdmad {

/// The provider (the name of its `<name>.driver` file in libibverbs.d) for the kernel driver
/// bound to the RDMA device's parent (`device/driver`), e.g. "mlx5_core" -> "mlx5",
/// "cxgb4" -> "cxgb4", "ice" -> "irdma", "hfi1" -> "hfi1verbs", "rdma_rxe" -> "rxe".
/// "" when rdma-core has no provider for it (enic/usNIC) or the driver is unknown.
std::string provider_for_driver(std::string_view kernel_driver);

/// The distribution family, from /etc/os-release (os-release(5)).
enum class DistroFamily { debian, rhel_legacy, rhel, suse, unknown };

struct OsRelease {
    std::string id;                   ///< ID=
    std::vector<std::string> id_like; ///< ID_LIKE=, split on spaces
    std::string version_id;           ///< VERSION_ID=
};

/// Parse os-release(5) text: KEY=value lines, values optionally in single or double quotes
/// with backslash escapes; comments and malformed lines are skipped.
OsRelease parse_os_release(std::string_view text);

/// Debian/Ubuntu -> debian; RHEL/CentOS/Rocky/Alma/Fedora -> rhel, or rhel_legacy for
/// RHEL/CentOS 7.0-7.3 (before rdma-core); SUSE/openSUSE -> suse.
DistroFamily distro_family(const OsRelease& os);

/// The package(s) to install for `provider` on `family`, space-separated:
/// debian "ibverbs-providers"; rhel "libibverbs"; rhel_legacy the standalone package
/// ("libmlx5", "libcxgb4", ...); suse "libibverbs" plus the shared library package for shared
/// providers ("libibverbs libmlx5-1"); unknown "rdma-core". "" when `provider` is "".
std::string provider_package(std::string_view provider, DistroFamily family);

/// The command an administrator runs to install `packages` (space-separated) on `family`:
/// "apt install ..." (Debian, Ubuntu), "dnf install ..." (RHEL 8+, Fedora), "yum install ..."
/// (RHEL 7), "zypper install ..." (SUSE); for an unknown family, "install ...".
std::string install_command(DistroFamily family, std::string_view packages);

} // namespace rdmad
