// SPDX-License-Identifier: MIT
#include "tracker.hpp"

#include "rdmad_api.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <tuple>
#include <utility>

namespace rdmad::notify {

namespace {

bool is_error(const Problem& p) {
    return p.severity == "error";
}

bool same_problem(const Problem& a, const Problem& b) {
    return a.code == b.code && a.text == b.text;
}

// "a, b, c, d, e and 95 more"
std::string list_names(const std::vector<std::string>& names) {
    std::string out;
    const size_t shown = std::min(names.size(), kMaxNamesListed);
    for (size_t i = 0; i < shown; ++i) {
        if (i)
            out += ", ";
        out += names[i];
    }
    if (names.size() > shown)
        out += fmt::format(" and {} more", names.size() - shown);
    return out;
}

std::string state_text(const std::string& state) {
    return state.empty() ? "unreadable" : state;
}

std::string pci_text(const DeviceState& d) {
    return d.pci_address.empty() ? std::string() : fmt::format(" (PCI {})", d.pci_address);
}

// The error entries of `now` that `before` does not have.
std::vector<Problem> new_errors(const std::vector<Problem>& before,
                                const std::vector<Problem>& now) {
    std::vector<Problem> out;
    for (const auto& p : now) {
        if (!is_error(p))
            continue;
        const bool known = std::any_of(before.begin(), before.end(), [&](const Problem& b) {
            return is_error(b) && same_problem(b, p);
        });
        const bool listed = std::any_of(out.begin(), out.end(),
                                        [&](const Problem& o) { return same_problem(o, p); });
        if (!known && !listed)
            out.push_back(p);
    }
    return out;
}

size_t count_errors(const std::vector<Problem>& problems) {
    return static_cast<size_t>(std::count_if(problems.begin(), problems.end(), is_error));
}

struct PortChange {
    std::string path;
    const DeviceState* device;
    const PortState* before;
    const PortState* now;
};

struct NewProblem {
    std::string key;
    std::string where; // "mlx5_0", "mlx5_0 port 1", "rdmad"
    Problem problem;
    std::string install = {}; // package_to_offer() of its device, for provider-missing
};

// "a, b": the packages of `packages` that are not "", each once, sorted (the label of one
// action that installs them all).
std::string packages_text(std::vector<std::string> packages) {
    std::erase(packages, std::string());
    std::sort(packages.begin(), packages.end());
    packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
    std::string out;
    for (const auto& p : packages)
        out += (out.empty() ? "" : ", ") + p;
    return out;
}

// "3,4"; "none" when empty.
std::string priorities_text(std::vector<uint8_t> list) {
    std::sort(list.begin(), list.end());
    std::string out;
    for (const uint8_t p : list)
        out += (out.empty() ? "" : ",") + std::to_string(p);
    return out.empty() ? "none" : out;
}

// "26:3,48:6" (rdmactl set-dscp's form); "none" when empty.
std::string dscp_text(const DscpMap& map) {
    std::string out;
    for (const auto& [dscp, prio] : map)
        out += fmt::format("{}{}:{}", out.empty() ? "" : ",", dscp, prio);
    return out.empty() ? "none" : out;
}

std::string known_text(const std::string& value) {
    return value.empty() ? "unknown" : value;
}

// daemon/reconcile/plan.cpp port_type_satisfied(), and link_layer_satisfies() where the port
// has no switch in sysfs.
bool port_type_satisfied(const std::string& want, const PortSettings& s) {
    if (s.port_type.empty())
        return want == "auto" || (want == "eth" && s.link_layer == "Ethernet") ||
               (want == "ib" && s.link_layer == "InfiniBand");
    if (want == s.port_type)
        return true;
    if (want == "auto")
        return s.port_type.rfind("auto", 0) == 0;
    return s.port_type == "auto (" + want + ")";
}

// actuators/dcb_app.cpp plan_dscp_app(): nothing to add and no replaced entry.
bool dscp_satisfied(const DscpMap& want, const DscpMap& now) {
    return std::all_of(want.begin(), want.end(), [&](const auto& w) {
        return std::find(now.begin(), now.end(), w) != now.end() &&
               std::none_of(now.begin(), now.end(), [&](const auto& n) {
                   return n.first == w.first && n.second != w.second;
               });
    });
}

std::string settings_list(const std::vector<Drift>& ds) {
    std::string out;
    for (const auto& d : ds)
        out += (out.empty() ? "" : ", ") + d.label;
    return out;
}

// "trust" -> "Trust"; "DSCP map" as it is.
std::string capitalized(std::string text) {
    if (!text.empty() && text[0] >= 'a' && text[0] <= 'z')
        text[0] = static_cast<char>(text[0] - 'a' + 'A');
    return text;
}

// Whether a setting drifts in `is` that did not in `was`.
bool drifts_more(const PortSettings& was, const PortSettings& is) {
    const auto before = drifts(was);
    const auto now = drifts(is);
    return std::any_of(now.begin(), now.end(), [&](const Drift& d) {
        return std::none_of(before.begin(), before.end(),
                            [&](const Drift& b) { return b.key == d.key; });
    });
}

std::string port_name(const PortChange& c) {
    return fmt::format("{} port {}", c.device->name, c.now->number);
}

// "mlx5_0 port 1, mlx5_1 port 1."
std::string port_names(const std::vector<PortChange>& changes) {
    std::vector<std::string> names;
    for (const auto& c : changes)
        names.push_back(port_name(c));
    return list_names(names) + ".";
}

} // namespace

std::vector<Drift> drifts(const PortSettings& s) {
    std::vector<Drift> out;
    if (!s.desired_port_type.empty() && !port_type_satisfied(s.desired_port_type, s))
        out.push_back({"port_type", "port type",
                       s.port_type.empty() ? known_text(s.link_layer) : s.port_type,
                       s.desired_port_type});
    if (!s.desired_pfc_no_drop.empty() &&
        priorities_text(s.pfc_no_drop) != priorities_text(s.desired_pfc_no_drop))
        out.push_back({"pfc_no_drop", "PFC no-drop", priorities_text(s.pfc_no_drop),
                       priorities_text(s.desired_pfc_no_drop)});
    if (!s.desired_trust.empty() && s.trust != s.desired_trust)
        out.push_back({"trust", "trust", known_text(s.trust), s.desired_trust});
    if (!s.desired_dscp_priority.empty() &&
        !dscp_satisfied(s.desired_dscp_priority, s.dscp_priority))
        out.push_back({"dscp_priority", "DSCP map", dscp_text(s.dscp_priority),
                       dscp_text(s.desired_dscp_priority)});
    if (!s.desired_rdma_cm_roce_mode.empty() && s.rdma_cm_roce_mode != s.desired_rdma_cm_roce_mode)
        out.push_back({"rdma_cm_roce_mode", "RDMA-CM RoCE mode", known_text(s.rdma_cm_roce_mode),
                       s.desired_rdma_cm_roce_mode});
    if (s.desired_rdma_cm_tos >= 0 && s.rdma_cm_tos != s.desired_rdma_cm_tos)
        out.push_back({"rdma_cm_tos", "RDMA-CM ToS",
                       s.rdma_cm_tos < 0 ? "unknown" : std::to_string(s.rdma_cm_tos),
                       std::to_string(s.desired_rdma_cm_tos)});
    return out;
}

std::string package_to_offer(const DeviceState& d, const std::string& mode) {
    const bool missing = std::any_of(d.problems.begin(), d.problems.end(),
                                     [](const Problem& p) { return p.code == "provider-missing"; });
    return mode == "ask" && missing && !d.provider_installed ? d.provider_package : "";
}

Notification install_outcome(const std::string& key, const std::vector<std::string>& packages,
                             const std::string& error_name, const std::string& error_message) {
    if (!error_name.empty())
        return {key,
                "Cannot install verbs providers",
                fmt::format("InstallProviders failed: {}: {}", error_name, error_message),
                2,
                "device.error",
                "dialog-error"};
    if (packages.empty())
        return {key,
                "No verbs provider to install",
                "rdmad finds no missing verbs provider now: nothing is installed.",
                0,
                "device",
                "dialog-information"};
    const std::string list = packages_text(packages);
    return {key,
            fmt::format("Installing {}", list),
            fmt::format("PackageKit is installing {}. The devices' problems show how it ends "
                        "(rdmactl doctor).",
                        list),
            1,
            "device",
            "system-software-install"};
}

bool port_is_active(const std::string& state) {
    return state == "ACTIVE" || state == "ACTIVE_DEFER";
}

Tracker::Tracker(Snapshot initial) : told_(initial), now_(std::move(initial)) {}

void Tracker::crossed(const std::string& path, const std::string& before,
                      const std::string& after) {
    if (port_is_active(before) != port_is_active(after))
        ++crossings_[path];
}

void Tracker::device_added(const std::string& path, DeviceState device) {
    auto& slot = now_.devices[path];
    dirty_ |= !(slot == device);
    slot = std::move(device);
}

void Tracker::port_added(const std::string& path, PortState port) {
    if (auto it = now_.ports.find(path); it != now_.ports.end())
        crossed(path, it->second.state, port.state);
    auto& slot = now_.ports[path];
    dirty_ |= !(slot == port);
    slot = std::move(port);
}

void Tracker::object_removed(const std::string& path) {
    if (now_.devices.erase(path)) {
        dirty_ = true;
        std::erase_if(now_.ports, [&](const auto& kv) { return kv.second.device_path == path; });
    }
    dirty_ |= now_.ports.erase(path) > 0;
}

void Tracker::device_name(const std::string& path, const std::string& name) {
    auto it = now_.devices.find(path);
    if (it == now_.devices.end() || it->second.name == name)
        return;
    it->second.name = name;
    dirty_ = true;
}

void Tracker::port_state(const std::string& path, const std::string& state) {
    auto it = now_.ports.find(path);
    if (it == now_.ports.end() || it->second.state == state)
        return;
    crossed(path, it->second.state, state);
    it->second.state = state;
    dirty_ = true;
}

void Tracker::port_settings(const std::string& path, PortSettings settings) {
    auto it = now_.ports.find(path);
    if (it == now_.ports.end() || it->second.settings == settings)
        return;
    it->second.settings = std::move(settings);
    dirty_ = true;
}

void Tracker::device_origin(const std::string& path, std::map<std::string, std::string> origin) {
    auto it = now_.devices.find(path);
    if (it == now_.devices.end() || it->second.origin == origin)
        return;
    it->second.origin = std::move(origin);
    dirty_ = true;
}

void Tracker::device_problems(const std::string& path, std::vector<Problem> problems) {
    auto it = now_.devices.find(path);
    if (it == now_.devices.end())
        return;
    for (auto& p : problems) {
        if (!p.remedy.empty() || p.port != 0)
            continue;
        for (const auto& old : it->second.problems) {
            if (same_problem(old, p)) {
                p.remedy = old.remedy;
                p.port = old.port;
                break;
            }
        }
    }
    dirty_ |= !(it->second.problems == problems);
    it->second.problems = std::move(problems);
}

void Tracker::manager_problems(std::vector<Problem> problems) {
    dirty_ |= !(now_.manager_problems == problems);
    now_.manager_problems = std::move(problems);
}

void Tracker::device_provider(const std::string& path, bool installed, const std::string& package) {
    auto it = now_.devices.find(path);
    if (it == now_.devices.end() ||
        (it->second.provider_installed == installed && it->second.provider_package == package))
        return;
    it->second.provider_installed = installed;
    it->second.provider_package = package;
    dirty_ = true;
}

void Tracker::install_providers_mode(const std::string& mode) {
    now_.install_providers_mode = mode;
}

void Tracker::resync(Snapshot now) {
    for (const auto& [path, port] : now.ports)
        if (auto it = now_.ports.find(path); it != now_.ports.end())
            crossed(path, it->second.state, port.state);
    dirty_ |= !(now_ == now);
    now_ = std::move(now);
}

std::vector<Notification> Tracker::flush() {
    std::vector<Notification> out;
    dirty_ = false;

    // Devices that went away, and devices that came.
    std::vector<std::pair<std::string, const DeviceState*>> removed, added;
    for (const auto& [path, dev] : told_.devices)
        if (!now_.devices.contains(path))
            removed.emplace_back(path, &dev);
    for (const auto& [path, dev] : now_.devices)
        if (!told_.devices.contains(path))
            added.emplace_back(path, &dev);
    auto by_name = [](const auto& a, const auto& b) {
        return std::tie(a.second->name, a.first) < std::tie(b.second->name, b.first);
    };
    std::sort(removed.begin(), removed.end(), by_name);
    std::sort(added.begin(), added.end(), by_name);

    if (removed.size() == 1) {
        const auto& [path, dev] = removed.front();
        out.push_back({path, fmt::format("RDMA device {} removed", dev->name),
                       fmt::format("{}{} is gone.", dev->name, pci_text(*dev)), 1, "device.removed",
                       "network-wired-disconnected"});
    } else if (!removed.empty()) {
        std::vector<std::string> names;
        for (const auto& r : removed)
            names.push_back(r.second->name);
        out.push_back({"", fmt::format("{} RDMA devices removed", removed.size()),
                       list_names(names), 1, "device.removed", "network-wired-disconnected"});
    }

    if (added.size() == 1) {
        const auto& [path, dev] = added.front();
        size_t ports = 0;
        for (const auto& [ppath, port] : now_.ports)
            ports += port.device_path == path;
        std::string body = fmt::format("{}{}, {} port{}.", dev->name, pci_text(*dev), ports,
                                       ports == 1 ? "" : "s");
        for (const auto& p : dev->problems)
            if (is_error(p))
                body += "\nError: " + p.text;
        out.push_back({path, fmt::format("RDMA device {} added", dev->name), std::move(body),
                       count_errors(dev->problems) ? uint8_t{2} : uint8_t{0}, "device.added",
                       "network-wired", package_to_offer(*dev, now_.install_providers_mode)});
    } else if (!added.empty()) {
        std::vector<std::string> names, packages;
        size_t with_errors = 0;
        for (const auto& a : added) {
            names.push_back(a.second->name);
            with_errors += count_errors(a.second->problems) > 0;
            packages.push_back(package_to_offer(*a.second, now_.install_providers_mode));
        }
        std::string body = list_names(names) + ".";
        if (with_errors)
            body += fmt::format("\n{} of them report errors (rdmactl doctor).", with_errors);
        out.push_back({"", fmt::format("{} RDMA devices added", added.size()), std::move(body),
                       with_errors ? uint8_t{2} : uint8_t{0}, "device.added", "network-wired",
                       packages_text(std::move(packages))});
    }

    // Ports of devices that stayed, going from or to ACTIVE; and leaving the desired state or
    // coming back to it: out of sync is news when InSync went false, or when other settings
    // drift than were told (a drift that InSync already showed is not told again). The ports
    // of added and removed devices are told with their device.
    std::vector<PortChange> down, up, flapped, drifted, synced;
    for (const auto& [path, now] : now_.ports) {
        auto before = told_.ports.find(path);
        auto dev = now_.devices.find(now.device_path);
        if (before == told_.ports.end() || dev == now_.devices.end() ||
            !told_.devices.contains(now.device_path))
            continue;
        const PortSettings &told_settings = before->second.settings, &settings = now.settings;
        if (!settings.in_sync && (told_settings.in_sync || drifts_more(told_settings, settings)))
            drifted.push_back({path, &dev->second, &before->second, &now});
        else if (!told_settings.in_sync && settings.in_sync)
            synced.push_back({path, &dev->second, &before->second, &now});
        const bool was = port_is_active(before->second.state), is = port_is_active(now.state);
        if (was && !is)
            down.push_back({path, &dev->second, &before->second, &now});
        else if (!was && is)
            up.push_back({path, &dev->second, &before->second, &now});
        else if (auto c = crossings_.find(path); c != crossings_.end() && c->second >= 2)
            flapped.push_back({path, &dev->second, &before->second, &now});
    }
    auto by_port = [](const PortChange& a, const PortChange& b) {
        return std::tie(a.device->name, a.now->number, a.path) <
               std::tie(b.device->name, b.now->number, b.path);
    };
    std::sort(down.begin(), down.end(), by_port);
    std::sort(up.begin(), up.end(), by_port);
    std::sort(flapped.begin(), flapped.end(), by_port);
    // Crossings of a port on the same side at both ends come in pairs: down and up again.
    auto flaps = [&](const PortChange& c) { return crossings_.at(c.path) / 2; };
    if (down.size() + up.size() + flapped.size() <= kMaxSingle) {
        for (const auto& c : down)
            out.push_back({c.path, fmt::format("{} port {} is down", c.device->name, c.now->number),
                           fmt::format("Port {} of {}{} is {}, was {}.", c.now->number,
                                       c.device->name, pci_text(*c.device),
                                       state_text(c.now->state), state_text(c.before->state)),
                           2, "network.disconnected", "network-wired-disconnected"});
        for (const auto& c : up)
            out.push_back({c.path, fmt::format("{} port {} is up", c.device->name, c.now->number),
                           fmt::format("Port {} of {}{} is {}, was {}.", c.now->number,
                                       c.device->name, pci_text(*c.device),
                                       state_text(c.now->state), state_text(c.before->state)),
                           0, "network.connected", "network-wired"});
        for (const auto& c : flapped) {
            const uint32_t n = flaps(c);
            out.push_back({c.path,
                           fmt::format("{} port {} flapped {} time{}", c.device->name,
                                       c.now->number, n, n == 1 ? "" : "s"),
                           fmt::format("Port {} of {}{} {} {} time{} and is {} again.",
                                       c.now->number, c.device->name, pci_text(*c.device),
                                       port_is_active(c.now->state) ? "went down" : "came up", n,
                                       n == 1 ? "" : "s", state_text(c.now->state)),
                           2, "network.error", "network-error"});
        }
    } else {
        if (!down.empty())
            out.push_back({"",
                           fmt::format("{} RDMA port{} down", down.size(),
                                       down.size() == 1 ? " is" : "s are"),
                           port_names(down), 2, "network.disconnected",
                           "network-wired-disconnected"});
        if (!up.empty())
            out.push_back(
                {"", fmt::format("{} RDMA port{} up", up.size(), up.size() == 1 ? " is" : "s are"),
                 port_names(up), 0, "network.connected", "network-wired"});
        if (!flapped.empty())
            out.push_back({"",
                           fmt::format("{} RDMA port{} flapped", flapped.size(),
                                       flapped.size() == 1 ? "" : "s"),
                           port_names(flapped), 2, "network.error", "network-error"});
    }

    // Ports whose settings left the desired state, or came back to it (collected above).
    std::sort(drifted.begin(), drifted.end(), by_port);
    std::sort(synced.begin(), synced.end(), by_port);
    if (drifted.size() + synced.size() <= kMaxSingle) {
        for (const auto& c : drifted) {
            const auto ds = drifts(c.now->settings);
            std::string body = fmt::format("Port {} of {}{} is not as desired", c.now->number,
                                           c.device->name, pci_text(*c.device));
            body += ds.empty() ? fmt::format(" (rdmactl show {}).", c.device->name) : ":";
            for (const auto& d : ds) {
                auto origin = c.device->origin.find(d.key);
                body += fmt::format("\n{}: {}, desired {}{}.", capitalized(d.label), d.now, d.want,
                                    origin == c.device->origin.end()
                                        ? std::string()
                                        : fmt::format(" ({})", origin->second));
            }
            out.push_back(
                {c.path + "#sync",
                 ds.empty() ? fmt::format("{} is out of sync", port_name(c))
                            : fmt::format("{} is out of sync: {}", port_name(c), settings_list(ds)),
                 std::move(body), 1, "device", "dialog-warning"});
        }
        for (const auto& c : synced)
            out.push_back({c.path + "#sync", fmt::format("{} is in sync again", port_name(c)),
                           fmt::format("Port {} of {}{} is as desired again.", c.now->number,
                                       c.device->name, pci_text(*c.device)),
                           0, "device", "dialog-information"});
    } else {
        if (!drifted.empty())
            out.push_back({"",
                           fmt::format("{} RDMA port{} out of sync", drifted.size(),
                                       drifted.size() == 1 ? " is" : "s are"),
                           port_names(drifted) + "\nSee rdmactl status.", 1, "device",
                           "dialog-warning"});
        if (!synced.empty())
            out.push_back({"",
                           fmt::format("{} RDMA port{} in sync again", synced.size(),
                                       synced.size() == 1 ? " is" : "s are"),
                           port_names(synced), 0, "device", "dialog-information"});
    }

    // New error-level problems of rdmad and of the devices that stayed.
    std::vector<NewProblem> problems;
    for (const auto& p : new_errors(told_.manager_problems, now_.manager_problems))
        problems.push_back({std::string(api::kManagerPath) + "#" + p.code, "rdmad", p});
    for (const auto& [path, dev] : now_.devices) {
        auto before = told_.devices.find(path);
        if (before == told_.devices.end())
            continue;
        for (const auto& p : new_errors(before->second.problems, dev.problems)) {
            std::string where =
                p.port ? fmt::format("{} port {}", dev.name, p.port) : std::string(dev.name);
            std::string install = p.code == "provider-missing"
                                      ? package_to_offer(dev, now_.install_providers_mode)
                                      : std::string();
            problems.push_back({path + "#" + p.code, std::move(where), p, std::move(install)});
        }
    }
    if (problems.size() <= kMaxSingle) {
        for (const auto& n : problems) {
            std::string body = n.problem.text;
            if (!n.problem.remedy.empty())
                body += "\nRemedy: " + n.problem.remedy;
            out.push_back({n.key, fmt::format("RDMA error on {}: {}", n.where, n.problem.code),
                           std::move(body), 2, "device.error", "dialog-error", n.install});
        }
    } else {
        std::vector<std::string> names, packages;
        for (const auto& n : problems) {
            names.push_back(fmt::format("{}: {}", n.where, n.problem.code));
            packages.push_back(n.install);
        }
        out.push_back({"", fmt::format("{} new RDMA errors", problems.size()),
                       list_names(names) + ".\nSee rdmactl doctor.", 2, "device.error",
                       "dialog-error", packages_text(std::move(packages))});
    }

    told_ = now_;
    crossings_.clear();
    return out;
}

} // namespace rdmad::notify
