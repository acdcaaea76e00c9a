// SPDX-License-Identifier: MIT
#include "sources/provider_probe.hpp"

#include "util/sysfs.hpp"

#include <fmt/format.h>

namespace rdmad {

bool provider_installed(const ProviderPaths& paths, const std::string& provider) {
    if (provider.empty() || provider.find('/') != std::string::npos)
        return false;
    return sysfs::exists(fmt::format("{}/{}.driver", paths.config_dir, provider)) &&
           sysfs::exists(fmt::format("{}/lib{}-rdmav{}.so", paths.provider_dir, provider,
                                     paths.abi));
}

} // namespace rdmad
