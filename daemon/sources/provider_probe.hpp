// SPDX-License-Identifier: MIT
//
// Whether an rdma-core verbs provider is installed, the way libibverbs looks for it
// (rdma-core libibverbs/dynamic_driver.c): `<config_dir>/<name>.driver` is read by
// read_config(), then `<provider_dir>/lib<name>-rdmav<abi>.so` is dlopen()ed.
#pragma once

#include <string>

namespace rdmad {

struct ProviderPaths {
    std::string config_dir;   ///< IBV_CONFIG_DIR, "/etc/libibverbs.d"
    std::string provider_dir; ///< VERBS_PROVIDER_DIR, "<libdir>/libibverbs"
    int abi = 0;              ///< IBVERBS_PABI_VERSION of the installed rdma-core
};

/// True when both the `.driver` file and the provider library with the installed ABI suffix
/// exist (a provider built for another rdma-core release is not loaded by libibverbs).
bool provider_installed(const ProviderPaths& paths, const std::string& provider);

} // namespace rdmad
