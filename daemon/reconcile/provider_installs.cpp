// SPDX-License-Identifier: MIT
#include "reconcile/provider_installs.hpp"

#include "util/log.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <sstream>

namespace rdmad {
namespace {

constexpr const char* kInstalling = "provider-installing";
constexpr const char* kFailed = "provider-install-failed";
constexpr const char* kMissing = "packagekit-missing";

/// "libibverbs libmlx5-1" -> {"libibverbs", "libmlx5-1"}.
std::vector<std::string> split_names(const std::string& packages) {
    std::vector<std::string> names;
    std::istringstream in(packages);
    for (std::string name; in >> name;)
        names.push_back(name);
    return names;
}

} // namespace

bool ProviderInstalls::is_install_problem(const Problem& p) {
    return p.code == kInstalling || p.code == kFailed || p.code == kMissing;
}

bool ProviderInstalls::provider_missing(const DeviceState& d) {
    return !d.provider_package.empty() &&
           std::any_of(d.problems.begin(), d.problems.end(),
                       [](const Problem& p) { return p.code == "provider-missing"; });
}

void ProviderInstalls::start(const std::string& package) {
    attempts_[package] = Attempt{};
    log::info("installing {} through PackageKit (a verbs provider is missing)", package);
    client_.install(
        split_names(package),
        [this, package](const packagekit::Outcome& o) {
            Attempt& a = attempts_[package];
            switch (o.kind) {
            case packagekit::Outcome::Kind::installed:
                a.state = Attempt::State::installed;
                break;
            case packagekit::Outcome::Kind::missing:
                a.state = Attempt::State::missing;
                break;
            case packagekit::Outcome::Kind::failed:
                a.state = Attempt::State::failed;
                break;
            }
            a.error = o.error;
            a.percent.reset();
            ended_(package);
        },
        [this, package](uint32_t percent) {
            Attempt& a = attempts_[package];
            // A new tenth, or the end: enough for a person watching, and a bounded number of
            // passes however often PackageKit announces.
            if (a.state != Attempt::State::running ||
                (a.percent && *a.percent / 10 == percent / 10 && percent != 100))
                return;
            a.percent = percent;
            if (progressed_)
                progressed_(package);
        });
}

bool ProviderInstalls::offer(const DeviceState& d) {
    if (mode_ != InstallProviders::automatic || !provider_missing(d) ||
        attempts_.count(d.provider_package))
        return false;
    start(d.provider_package);
    return true;
}

std::vector<std::string> ProviderInstalls::install(const std::vector<const DeviceState*>& devices) {
    std::set<std::string> installing;
    for (const DeviceState* d : devices) {
        if (!provider_missing(*d))
            continue;
        auto it = attempts_.find(d->provider_package);
        if (it == attempts_.end() || it->second.state != Attempt::State::running)
            start(d->provider_package);
        installing.insert(d->provider_package);
    }
    return {installing.begin(), installing.end()};
}

std::vector<std::string>
ProviderInstalls::missing_packages(const std::vector<const DeviceState*>& devices) {
    std::set<std::string> packages;
    for (const DeviceState* d : devices)
        if (provider_missing(*d))
            packages.insert(d->provider_package);
    return {packages.begin(), packages.end()};
}

void ProviderInstalls::forget() {
    // A running install stays: one per package at a time.
    std::erase_if(attempts_,
                  [](const auto& kv) { return kv.second.state != Attempt::State::running; });
}

std::vector<Problem> ProviderInstalls::problems(const DeviceState& d, DistroFamily family) const {
    if (!provider_missing(d))
        return {};
    auto it = attempts_.find(d.provider_package);
    if (it == attempts_.end())
        return {};
    const Attempt& a = it->second;
    const std::string& package = d.provider_package;
    const std::string command = install_command(family, package);
    switch (a.state) {
    case Attempt::State::running:
        return {
            {kInstalling,
             "info",
             fmt::format("PackageKit is installing {} for verbs provider {}{}", package, d.provider,
                         a.percent ? fmt::format(" ({}% done)", *a.percent) : std::string()),
             {},
             ""}};
    case Attempt::State::missing:
        return {{kMissing,
                 "warning",
                 fmt::format("PackageKit is not on the system bus, so rdmad cannot install {} "
                             "({}): run {}",
                             package, a.error, command),
                 {},
                 command}};
    case Attempt::State::failed:
        return {
            {kFailed,
             "error",
             fmt::format("PackageKit could not install {}: {}; run {}", package, a.error, command),
             {},
             command}};
    case Attempt::State::installed:
        return {{kFailed,
                 "error",
                 fmt::format("PackageKit installed {}, but verbs provider {} is still missing; "
                             "run {}",
                             package, d.provider, command),
                 {fmt::format("/etc/libibverbs.d/{}.driver = absent", d.provider)},
                 command}};
    }
    return {};
}

} // namespace rdmad
