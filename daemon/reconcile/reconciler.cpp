// SPDX-License-Identifier: MIT
#include "reconcile/reconciler.hpp"

#include "sources/mstconfig.hpp"

#include "config/config_writer.hpp"
#include "config/file_read.hpp"
#include "config/mlx4_conf.hpp"
#include "config/pfc.hpp"
#include "inventory/driver_capabilities.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"
#include "util/sysfs.hpp"

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>
#include <malloc.h>
#include <stdexcept>
#include <sys/stat.h>
#include <ctime>

namespace rdmad {
namespace {

std::string action_key(const Action& a) {
    std::string dscp;
    for (const auto* map : {&a.dscp_add, &a.dscp_remove}) {
        for (const auto& [d, p] : *map)
            dscp += fmt::format("{}:{},", d, p);
        dscp += '/';
    }
    return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", static_cast<int>(a.kind), a.syspath, a.port,
                       a.netdev, a.value, a.mask, a.number, dscp);
}

/// `name` as an fnmatch(3) pattern that matches only itself: '*', '?', '[' and '\\' escaped
/// with a backslash (fnmatch without FNM_NOESCAPE, as desired.cpp calls it).
std::string glob_literal(const std::string& name) {
    std::string out;
    for (const char c : name) {
        if (c == '*' || c == '?' || c == '[' || c == '\\')
            out.push_back('\\');
        out.push_back(c);
    }
    return out;
}

/// What an action is about, for the journal: "mlx4_0 port 2", "mlx5_0 eth2", "modprobe.d".
std::string action_subject(const Action& a) {
    if (is_module_action(a))
        return "host"; // the setting names the module or the file
    if (a.device.empty())
        return "modprobe.d"; // the mlx4_en module options file, host-wide
    if (!a.netdev.empty())
        return a.device + " " + a.netdev;
    return a.port ? fmt::format("{} port {}", a.device, a.port) : a.device;
}

std::string toml_list(const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
        s += fmt::format("{}\"{}\"", i ? ", " : "", v[i]);
    return s + "]";
}

/// The netdevs of each RDMA device (with `names`, of those devices only), by device name: one
/// walk over the links, not one per device.
std::map<std::string, std::vector<LinkState>>
links_by_device(const HostState& inv, const std::set<std::string>* names = nullptr) {
    std::map<std::string, std::vector<LinkState>> out;
    for (const auto& [_, l] : inv.links)
        if (!l.rdma_device.empty() && (!names || names->count(l.rdma_device)))
            out[l.rdma_device].push_back(l);
    return out;
}

/// True when a D-Bus request `r` still asks something (else it is dropped).
bool sets_anything(const Rule& r) {
    return r.require_provider ||
           std::any_of(all_settings().begin(), all_settings().end(),
                       [&](const Setting* s) { return s->sets(r); });
}

} // namespace

namespace {
ReconcilerOptions with_clock(ReconcilerOptions options) {
    if (!options.now_usec)
        options.now_usec = [] {
            struct timespec ts {};
            clock_gettime(CLOCK_MONOTONIC, &ts);
            return uint64_t(ts.tv_sec) * 1'000'000 + uint64_t(ts.tv_nsec) / 1000;
        };
    return options;
}
} // namespace

Reconciler::Reconciler(ReconcilerOptions options, dcb::DcbClient* dcb)
    : options_(with_clock(std::move(options))), dcb_(dcb), guard_(options_.now_usec) {}

std::optional<ConfigError> Reconciler::reload() {
    return take(load(options_));
}

Reconciler::Loaded Reconciler::load(const ReconcilerOptions& options) {
    Loaded l;
    // rdmad's own state file (persisted D-Bus overrides, winning over /etc) is read on its own:
    // a broken /etc file must not keep it from applying, and a persist must never rewrite it
    // from a list that was not read from it.
    const std::string state_path = options.state_dir + "/state.conf";
    FileRead state = read_config_file(state_path, kMaxConfigFileBytes, /*no_follow=*/true);
    l.state_status = state.status;
    if (state.status == FileRead::Status::failed) {
        l.state_error = ConfigError{state_path, 0, 0, state.error};
    } else if (state.status == FileRead::Status::ok) {
        auto parsed = parse_config_text(state.text, state_path);
        if (auto* err = std::get_if<ConfigError>(&parsed)) {
            l.state_error = *err;
        } else {
            l.persisted = std::move(std::get<ConfigFile>(parsed).rules);
            l.state_text = std::move(state.text);
        }
    }
    l.legacy = load_mlx4_conf(options.legacy_mlx4_conf, &l.legacy_warnings);
    l.etc = load_config(options.config_dir + "/rdmad.conf", options.config_dir + "/conf.d");
    return l;
}

std::optional<ConfigError> Reconciler::take(Loaded l) {
    if (l.state_status == FileRead::Status::missing) {
        persisted_.clear();
        state_on_disk_.reset();
    } else if (l.state_status == FileRead::Status::ok && !l.state_error) {
        persisted_ = std::move(l.persisted);
        state_on_disk_ = std::move(l.state_text);
    }
    state_error_ = l.state_error;

    if (auto* err = std::get_if<ConfigError>(&l.etc)) {
        etc_error_ = *err;
    } else {
        etc_error_.reset();
        config_ = std::move(std::get<DesiredConfig>(l.etc));
        legacy_rules_ = std::move(l.legacy);
        legacy_warnings_ = std::move(l.legacy_warnings);
        for (const auto& w : legacy_warnings_)
            log::warning("{}", w.to_string());
    }
    config_error_ = etc_error_ ? etc_error_ : state_error_;
    modules_file_checked_ = false;
    for (const auto* err : {&etc_error_, &state_error_})
        if (*err)
            log::error("{}; keeping the last good desired state", (*err)->to_string());
    forget();
    // glibc keeps the pages freed by the parse and the replaced rules (100,000 rules: ~85 MB)
    // resident; hand them back. A reload is rare (SIGHUP, Reload()); the trim costs about a
    // millisecond, ~70 ms when it gives back those 85 MB (bench/rules.py).
    l = Loaded{};
    ::malloc_trim(0);
    return config_error_;
}

std::vector<std::string> Reconciler::sources() const {
    std::vector<std::string> out;
    if (!legacy_rules_.empty())
        out.push_back(options_.legacy_mlx4_conf);
    out.insert(out.end(), config_.sources.begin(), config_.sources.end());
    if (!persisted_.empty())
        out.push_back(options_.state_dir + "/state.conf");
    // Requests made over D-Bus without persist: highest precedence, gone when rdmad stops.
    if (!runtime_.empty())
        out.push_back("D-Bus (runtime)");
    return out;
}

Rule Reconciler::override_rule(const DeviceState& d) const {
    Rule r;
    r.file = "D-Bus";
    // Match what survives a rename and a re-plug: the PCI function, else the node GUID.
    if (!d.pci_address.empty())
        r.match.pci_address = d.pci_address;
    else if (!d.node_guid.empty())
        r.match.node_guid = d.node_guid;
    else
        r.match.device_glob = glob_literal(d.name); // the name itself, not a pattern
    return r;
}

std::vector<std::string> Reconciler::port_types_with(const HostState& inv, const DeviceState& d,
                                                     uint32_t port, const std::string& type,
                                                     bool with_runtime) const {
    if (port == 0)
        throw std::invalid_argument("ports are numbered from 1");
    const auto by_device = links_by_device(inv);
    const auto links = by_device.find(d.name);
    const DeviceDesired want = resolve(rules(with_runtime), d,
                                       links == by_device.end() ? std::vector<LinkState>{}
                                                                : links->second);
    std::vector<std::string> types = resulting_port_types(d, want.port_type);
    for (const auto& p : d.ports) // neither asked nor readable: what its link layer is
        if (p.number != 0 && types[p.number - 1].empty())
            types[p.number - 1] = p.link_layer == "InfiniBand" ? "ib" : "eth";
    if (types.size() < port)
        types.resize(port);
    for (auto& t : types)
        if (t.empty())
            t = "auto";
    types[port - 1] = type;
    if (driver_capabilities(d.kernel_driver).port_type == PortTypeSwitch::sysfs)
        if (uint32_t bad = invalid_mlx4_port(types))
            throw std::invalid_argument(fmt::format(
                "port {} must be eth while port 1 is eth (mlx4); it would be {}{}", bad,
                types[bad - 1],
                with_runtime ? "" : " with the saved types (save the other port first)"));
    return types;
}

void Reconciler::override_port_type(const HostState& inv, const DeviceState& d, uint32_t port,
                                    const std::string& type, bool persist) {
    Rule r = override_rule(d);
    // Both lists must be valid: the one in force now and, when saved, the one after a restart.
    const auto effective = port_types_with(inv, d, port, type, true);
    r.port_type = persist ? port_types_with(inv, d, port, type, false) : effective;
    add_override(r, persist);
    if (persist)
        // This port's runtime request steps aside; one of another port stays for this run.
        for (auto& rule : runtime_)
            if (rule.match == r.match && rule.port_type && rule.port_type->size() >= port)
                (*rule.port_type)[port - 1] = type;
}

void Reconciler::override_pfc(const DeviceState& d, const std::vector<uint8_t>& priorities,
                              bool persist) {
    Rule r;
    r.pfc_no_drop = priorities;
    override_settings(d, std::move(r), persist);
}

void Reconciler::override_settings(const DeviceState& d, Rule request, bool persist) {
    Rule r = override_rule(d);
    for (const Setting* setting : all_settings())
        setting->merge(request, r);
    add_override(r, persist);
}

void Reconciler::check_state_file_writable() const {
    const std::string path = options_.state_dir + "/state.conf";
    if (state_error_)
        throw std::runtime_error(fmt::format(
            "{}; rdmad does not overwrite a state file it could not read: fix or remove it, "
            "then Reload",
            state_error_->to_string()));
    // The admin may have edited the file since rdmad read it: writing from memory would
    // drop that edit without a word.
    const FileRead now = read_config_file(path, kMaxConfigFileBytes, /*no_follow=*/true);
    const bool same = now.status == FileRead::Status::missing
                          ? !state_on_disk_
                          : now.status == FileRead::Status::ok && state_on_disk_ == now.text;
    if (!same)
        throw std::runtime_error(path + " changed since rdmad read it; Reload (or SIGHUP) "
                                        "first, so that the change is kept");
}

void Reconciler::add_override(const Rule& r, bool persist) {
    if (!persist) {
        merge_rule(runtime_, r);
        forget();
        return;
    }
    check_state_file_writable();
    auto saved = persisted_;
    merge_rule(persisted_, r);
    try {
        write_state_file();
    } catch (...) {
        persisted_ = std::move(saved); // nothing changes when the file cannot be written
        throw;
    }
    // The latest call wins: a runtime setting of the same keys made earlier steps aside.
    for (auto it = runtime_.begin(); it != runtime_.end();) {
        if (it->match == r.match) {
            for (const Setting* setting : all_settings())
                setting->clear_set_by(r, *it);
            if (r.require_provider)
                it->require_provider.reset();
            if (!sets_anything(*it)) {
                it = runtime_.erase(it);
                continue;
            }
        }
        ++it;
    }
    forget();
}

void Reconciler::revert(const HostState& inv, const DeviceState& d, uint32_t port) {
    const Match match = override_rule(d).match;
    // What /etc (and the legacy file) ask of the device: a reverted port takes that.
    DesiredConfig files;
    files.rules = legacy_rules_;
    files.rules.insert(files.rules.end(), config_.rules.begin(), config_.rules.end());
    const auto by_device = links_by_device(inv);
    const auto links = by_device.find(d.name);
    const DeviceDesired etc =
        resolve(files, d, links == by_device.end() ? std::vector<LinkState>{} : links->second);
    // `rules` without the device's D-Bus requests (all, or port `port`'s type); true when one
    // changed.
    const auto drop = [&](std::vector<Rule>& rules) {
        bool changed = false;
        for (auto it = rules.begin(); it != rules.end();) {
            if (!(it->match == match)) {
                ++it;
                continue;
            }
            if (port == 0) {
                it = rules.erase(it);
                changed = true;
                continue;
            }
            if (it->port_type && it->port_type->size() >= port) {
                auto& types = *it->port_type;
                std::string asked = etc.port_type.size() >= port ? etc.port_type[port - 1] : "";
                if (asked.empty()) // nothing in /etc: the port's type now, from its link layer
                    for (const auto& p : d.ports)
                        if (p.number == port)
                            asked = p.link_layer == "InfiniBand" ? "ib" : "eth";
                types[port - 1] = asked.empty() ? "auto" : asked;
                bool as_etc = true; // every entry what /etc asks (or asks nothing of)
                for (size_t i = 0; i < types.size(); ++i)
                    as_etc = as_etc && (i + 1 == port ||
                                        (i < etc.port_type.size() && etc.port_type[i] == types[i]));
                if (as_etc)
                    it->port_type.reset();
                changed = true;
            }
            if (!sets_anything(*it)) {
                it = rules.erase(it);
                continue;
            }
            ++it;
        }
        return changed;
    };
    // A state file rdmad could not read may hold this device's requests: saying they are
    // dropped would be untrue, and rdmad does not rewrite that file (org.rdmad1.Port.Revert:
    // Failed when the state file had an error). Nothing changes.
    if (state_error_)
        check_state_file_writable(); // throws, naming the file's error
    auto saved = persisted_;
    if (drop(persisted_)) {
        try {
            check_state_file_writable();
            write_state_file();
        } catch (...) {
            persisted_ = std::move(saved); // nothing changes when the file cannot be written
            throw;
        }
    }
    drop(runtime_);
    forget();
}

std::vector<Problem> Reconciler::override_problems(const DeviceState& d,
                                                   const std::vector<LinkState>& links) const {
    std::vector<Problem> out;
    if (runtime_.empty() && persisted_.empty())
        return out;
    // The last rule of /etc (or the legacy file) that sets a key, for "file:line".
    const auto etc_rule = [&](auto key) -> const Rule* {
        const Rule* last = nullptr;
        for (const auto* rules : {&legacy_rules_, &config_.rules})
            for (const auto& r : *rules)
                if ((r.*key) && rule_matches(r.match, d, links))
                    last = &r;
        return last;
    };
    // The last D-Bus request that sets a key: this run's win over state.conf's.
    const auto dbus_rule = [&](auto key) -> std::pair<const Rule*, bool> {
        const Rule* last = nullptr;
        bool runtime = false;
        for (const auto* rules : {&persisted_, &runtime_})
            for (const auto& r : *rules)
                if ((r.*key) && rule_matches(r.match, d, links)) {
                    last = &r;
                    runtime = rules == &runtime_;
                }
        return {last, runtime};
    };
    const std::string state_path = options_.state_dir + "/state.conf";
    const auto kept = [&](bool runtime) {
        return runtime ? std::string("for this run of rdmad (until it stops)")
                       : "kept in " + state_path;
    };
    const auto where = [](const Rule& r) {
        return r.line ? fmt::format("{}:{}", r.file, r.line) : r.file;
    };
    const auto join = [](const auto& items) {
        std::vector<std::string> text;
        for (const auto& i : items)
            text.push_back(fmt::format("{}", i));
        return fmt::format("{}", fmt::join(text, ","));
    };
    if (const Rule* e = etc_rule(&Rule::pfc_no_drop)) {
        auto [r, runtime] = dbus_rule(&Rule::pfc_no_drop);
        if (r && *r->pfc_no_drop != *e->pfc_no_drop)
            out.push_back({"dbus-override", "info",
                           fmt::format("PFC no-drop priorities {} set over D-Bus, {}, override "
                                       "{} ({}); 'rdmactl revert {}' drops the setting",
                                       join(*r->pfc_no_drop), kept(runtime), where(*e),
                                       join(*e->pfc_no_drop), d.name)});
    }
    if (const Rule* e = etc_rule(&Rule::port_type)) {
        auto [r, runtime] = dbus_rule(&Rule::port_type);
        if (r && *r->port_type != *e->port_type)
            for (size_t i = 0; i < r->port_type->size(); ++i)
                if (i < e->port_type->size() && (*r->port_type)[i] != (*e->port_type)[i])
                    out.push_back(
                        {"dbus-override", "info",
                         fmt::format("port {} type {} set over D-Bus, {}, overrides {} ({}); "
                                     "'rdmactl revert {} {}' drops the setting",
                                     i + 1, (*r->port_type)[i], kept(runtime), where(*e),
                                     (*e->port_type)[i], d.name, i + 1)});
    }
    return out;
}

void Reconciler::merge_rule(std::vector<Rule>& rules, const Rule& r) {
    // One rule per device: a second setting of the same device updates its rule (the config
    // layer refuses two rules with the same match in one file, state.conf included).
    for (auto& existing : rules)
        if (existing.match == r.match) {
            for (const Setting* setting : all_settings())
                setting->merge(r, existing);
            if (r.require_provider)
                existing.require_provider = r.require_provider;
            return;
        }
    rules.push_back(r);
}

void Reconciler::write_state_file() {
    const std::string text = "# Written by rdmad: settings made over D-Bus with persist = true.\n"
                             "# Same format as rdmad.conf(5); it wins over /etc/rdmad.\n\n" +
                             format_rules(persisted_);
    ::mkdir(options_.state_dir.c_str(), 0755);
    write_file_atomically(options_.state_dir + "/state.conf", text, 0644);
    state_on_disk_ = text;
}

DesiredConfig Reconciler::rules(bool with_runtime) const {
    DesiredConfig all;
    all.apply = config_.apply;
    all.rules = legacy_rules_;
    all.rules.insert(all.rules.end(), config_.rules.begin(), config_.rules.end());
    all.rules.insert(all.rules.end(), persisted_.begin(), persisted_.end());
    if (with_runtime)
        all.rules.insert(all.rules.end(), runtime_.begin(), runtime_.end());
    return all;
}

std::map<std::string, DeviceDesired>
Reconciler::desired(const HostState& inv, std::map<std::string, std::vector<Problem>>* conflicts,
                    const std::set<std::string>* only) const {
    const DesiredConfig all = rules(true);
    DesiredConfig legacy_only;
    legacy_only.rules = legacy_rules_;

    std::map<std::string, DeviceDesired> out;
    std::set<std::string> names; // of the `only` devices: only their links are copied
    if (only)
        for (const auto& syspath : *only)
            if (auto d = inv.devices.find(syspath); d != inv.devices.end())
                names.insert(d->second.name);
    const auto by_device = links_by_device(inv, only ? &names : nullptr);
    const std::vector<LinkState> none;
    for (const auto& [syspath, d] : inv.devices) {
        if (only && !only->count(syspath))
            continue;
        const auto it = by_device.find(d.name);
        const auto& links = it == by_device.end() ? none : it->second;
        DeviceDesired want = resolve(all, d, links);
        if (!want.from.empty() || !want.require_provider ||
            std::any_of(all_settings().begin(), all_settings().end(),
                        [&](const Setting* s) { return s->asks(want); }))
            out[syspath] = want;
        if (conflicts)
            for (auto& p : override_problems(d, links))
                (*conflicts)[syspath].push_back(std::move(p));
        if (conflicts && !legacy_rules_.empty()) {
            DeviceDesired legacy = resolve(legacy_only, d, links);
            if (!legacy.port_type.empty() && legacy.port_type != want.port_type)
                (*conflicts)[syspath].push_back(
                    {"legacy-conflict", "warning",
                     fmt::format("{} asks port types {} but rdmad's desired state is {}; "
                                 "mlx4's modprobe hook applies the legacy file at boot",
                                 options_.legacy_mlx4_conf, toml_list(legacy.port_type),
                                 toml_list(want.port_type))});
        }
    }
    return out;
}

Plan Reconciler::plan(const HostState& inv, const std::set<std::string>* only) {
    std::map<std::string, std::vector<Problem>> conflicts;
    const auto want = desired(inv, &conflicts, only);
    read_firmware_port_types(inv, want);
    std::map<std::string, PfcActual> pfc;
    // DCB state as the inventory has it (sources/pfc_reader.hpp): no DCB read here. Every
    // device with a desired state: the DCB settings (PFC, DSCP) compare with it.
    for (const auto& [syspath, w] : want) {
        for (const auto& port : inv.devices.at(syspath).ports) {
            if (port.netdev.empty() || pfc.count(port.netdev))
                continue;
            pfc[port.netdev] = port.pfc;
        }
    }
    Mlx4ModuleState mlx4;
    if (only) {
        // The mlx4_en module options are host-wide: a plan for some devices (none of them
        // mlx4, the caller sees to it) leaves them alone.
        Plan p = make_plan(inv, want, pfc, mlx4);
        p.problems.erase(""); // host-wide: the full plan's (host_problems())
        p.pfc = std::move(pfc);
        for (auto& [syspath, probs] : conflicts)
            p.problems[syspath].insert(p.problems[syspath].end(), probs.begin(), probs.end());
        return p;
    }
    const bool any_mlx4 = std::any_of(inv.devices.begin(), inv.devices.end(), [](const auto& d) {
        return driver_capabilities(d.second.kernel_driver).host_wide_pfc_option;
    });
    // A rule that asks PFC and does not name another driver may be meant for an mlx4 device
    // that is not matched now; a config error hides rules. Either keeps the file.
    const DesiredConfig all = rules(true);
    mlx4.keep_file =
        etc_error_ || state_error_ ||
        std::any_of(all.rules.begin(), all.rules.end(), [](const Rule& r) {
            return r.pfc_no_drop && (r.match.driver.empty() ||
                                     driver_capabilities(r.match.driver).host_wide_pfc_option);
        });
    // Read the module options only when the plan can use them: an mlx4 device asks PFC (set
    // the file, pending-reload), or the file may be removed. Not on every pass of every host.
    const bool mlx4_pfc = std::any_of(want.begin(), want.end(), [&](const auto& w) {
        return !w.second.pfc_no_drop.empty() &&
               driver_capabilities(inv.devices.at(w.first).kernel_driver).host_wide_pfc_option;
    });
    const bool file = any_mlx4 && (mlx4_pfc || !mlx4.keep_file);
    if ((file || mlx4_pfc) && options_.read_mlx4_module) {
        const Mlx4ModuleActual read = options_.read_mlx4_module(file, mlx4_pfc);
        mlx4.file_pfctx = read.file_pfctx;
        mlx4.loaded_pfctx = read.loaded_pfctx;
    }
    reread_rdma_netns(); // host-wide, like the mlx4_en options: a full plan reads it
    // The host's kernel modules: read when load_modules is on, and once per reload when it is
    // off (rdmad's modules-load.d file may be left from when it was on).
    ModulePlanInput modules;
    modules.load = config_.modules.load;
    modules.modules = config_.modules.modules;
    modules.persist = config_.modules.persist;
    if (options_.read_kernel_modules && (modules.load || !modules_file_checked_)) {
        std::vector<std::string> names = modules.modules;
        for (const auto& [_, link] : inv.links)
            if (!link.rdma_module.empty())
                names.push_back(link.rdma_module);
        modules.actual = options_.read_kernel_modules(names, modules.load);
        modules_file_checked_ = true;
    }
    Plan p = make_plan(inv, want, pfc, mlx4, modules);
    // Host-wide findings (the RDMA netns mode pending, a blacklisted module) are the Manager's.
    if (auto host = p.problems.find(""); host != p.problems.end()) {
        host_problems_ = std::move(host->second);
        p.problems.erase(host);
    } else {
        host_problems_.clear();
    }
    p.pfc = std::move(pfc);
    for (auto& [syspath, probs] : conflicts)
        p.problems[syspath].insert(p.problems[syspath].end(), probs.begin(), probs.end());
    if (modules.actual.read) {
        // A module failure stands while the plan still asks that load (or write); once it
        // does not (the NIC went, load_modules turned off), it goes.
        std::set<std::string> asked;
        for (const auto& a : p.actions)
            asked.insert(action_key(a));
        std::erase_if(failures_, [&](const auto& f) {
            return is_module_action(f.second.action) && !asked.count(f.first);
        });
        // ... and a NIC that comes back (a hotplug, a driver reload) is tried once more.
        const auto module_key = [](const std::string& key) {
            for (auto kind : {Action::Kind::module_load, Action::Kind::modules_load_file,
                              Action::Kind::modules_load_file_remove})
                if (key.rfind(std::to_string(static_cast<int>(kind)) + "|", 0) == 0)
                    return true;
            return false;
        };
        std::erase_if(attempted_,
                      [&](const std::string& key) { return module_key(key) && !asked.count(key); });
    }
    return p;
}

void Reconciler::read_firmware_port_types(const HostState& inv,
                                          const std::map<std::string, DeviceDesired>& want) {
    if (!options_.read_firmware_port_type)
        return;
    // Only where a port type is asked of a ConnectX-4+ physical function the Inventory has no
    // reading of: once at start, add or Reload, not on every pass (the tool takes a second).
    // A VF has no firmware of its own to ask (its card's PF has).
    for (const auto& [syspath, w] : want) {
        const DeviceState& d = inv.devices.at(syspath);
        if (w.port_type.empty() || d.pci_address.empty() || !d.physical_function.empty() ||
            driver_capabilities(d.kernel_driver).port_type != PortTypeSwitch::firmware)
            continue;
        // A reading in hand, not asked again: nothing to run. One asked again is queried
        // (MstconfigJobs runs one query per function at a time).
        if (auto fw = inv.firmware_port_types.find(d.pci_address);
            fw != inv.firmware_port_types.end() && !fw->second.refresh)
            continue;
        options_.read_firmware_port_type(mstconfig_tool(config_.mstconfig), d.pci_address,
                                         card_port_of(d.pci_address));
    }
}

std::vector<Reconciler::Outcome> Reconciler::execute(const Plan& plan) {
    std::vector<Outcome> outcomes;
    if (!config_.apply)
        return outcomes;
    SettingExecContext ctx;
    ctx.dcb = dcb_;
    ctx.modprobe_dir = options_.modprobe_dir;
    ctx.configfs_dir = options_.configfs_dir;
    ctx.modules_load_dir = options_.modules_load_dir;
    // libkmod is opened for a module load only.
    if (options_.kmod && std::any_of(plan.actions.begin(), plan.actions.end(), [](const Action& a) {
            return a.kind == Action::Kind::module_load;
        }))
        ctx.kmod = options_.kmod();
    ctx.mstconfig = mstconfig_tool(config_.mstconfig);
    if (options_.write_firmware_port_type)
        ctx.write_firmware = [this, tool = ctx.mstconfig](const Action& a) {
            options_.write_firmware_port_type(tool, a);
        };
    ctx.guard = &guard_;
    guard_.begin_pass();
    ctx.plan = &plan;
    // A failure stands while the plan still asks its action: once a device of this plan reads
    // in sync, or the read-back after the failure shows why nothing can be done (a named
    // problem of the plan instead, such as a kernel without the file), it goes.
    std::set<std::string> asked;
    for (const auto& a : plan.actions)
        asked.insert(action_key(a));
    std::erase_if(failures_, [&](const auto& f) {
        return plan.desired.count(f.second.action.syspath) && !asked.count(f.first);
    });
    for (const auto& a : plan.actions) {
        const std::string key = action_key(a);
        if (!attempted_.insert(key).second)
            continue;
        Outcome o{a, false, 0, "", std::nullopt};
        setting_for(a).execute(a, ctx, o);
        if (o.deferred)
            continue; // finish() takes its outcome
        record(o);
        outcomes.push_back(std::move(o));
    }
    return outcomes;
}

void Reconciler::finish(const Outcome& o) {
    record(o);
}

void Reconciler::record(const Outcome& o) {
    const Action& a = o.action;
    const std::string key = action_key(a);
    if (o.ok) {
        failures_.erase(key);
        if (a.kind == Action::Kind::module_load &&
            std::find(loaded_modules_.begin(), loaded_modules_.end(), a.value) ==
                loaded_modules_.end())
            loaded_modules_.push_back(a.value);
        log::with(log::Level::info, log::about(a.device, a.netdev, a.pci_address, a.port),
                  "{} {}: {} -> {}", action_subject(a), a.setting,
                  a.from.empty() ? "(none)" : a.from, a.to);
    } else {
        failures_[key] = o;
        log::with(log::Level::warning, log::about(a.device, a.netdev, a.pci_address, a.port),
                  "{} {}: {} -> {} failed: {}", action_subject(a), a.setting,
                  a.from.empty() ? "(none)" : a.from, a.to, o.message);
    }
}

std::map<std::string, std::vector<Problem>> Reconciler::unconfirmed_problems(const Plan& plan) const {
    std::map<std::string, std::vector<Problem>> out;
    for (const auto& a : plan.actions) {
        const std::string key = action_key(a);
        if (a.kind != Action::Kind::mlx4_port_type || !attempted_.count(key) || failures_.count(key))
            continue;
        // Written without an error, re-read, and still not what was asked (the kernel
        // re-creates the device on a real change, which forget()s the attempt).
        out[a.syspath].push_back(
            {"port-type-unconfirmed", "error",
             a.from.empty()
                 ? fmt::format("port {}: wrote \"{}\" to mlx4_port{}, but it cannot be read back",
                               a.port, a.value, a.port)
                 : fmt::format("port {}: wrote \"{}\" to mlx4_port{}, but it reads back \"{}\"",
                               a.port, a.value, a.port, a.from)});
    }
    return out;
}

void Reconciler::forget() {
    attempted_.clear();
    guard_.forget();
    std::erase_if(failures_, [](const auto& f) { return f.second.error == EBUSY; });
}

void Reconciler::pfc_changed(const std::string& netdev) {
    if (guard_.contested(netdev))
        return; // stays stopped until forget()
    std::erase_if(attempted_, [&](const std::string& key) {
        const bool dcb_kind =
            key.rfind(std::to_string(static_cast<int>(Action::Kind::pfc)) + "|", 0) == 0 ||
            key.rfind(std::to_string(static_cast<int>(Action::Kind::dscp_app)) + "|", 0) == 0;
        return dcb_kind && key.find("|" + netdev + "|") != std::string::npos;
    });
}

std::map<std::string, std::vector<Problem>> Reconciler::failure_problems() const {
    std::map<std::string, std::vector<Problem>> out;
    for (const auto& [_, o] : failures_) {
        const std::string code = setting_for(o.action).failure_code(o);
        if (code == "pfc-contested") {
            out[o.action.syspath].push_back({code, "warning", o.message});
            continue;
        }
        out[o.action.syspath].push_back(
            {code, "error", fmt::format("{} {} -> {}: {}", o.action.setting,
                                        o.action.from.empty() ? "(none)" : o.action.from,
                                        o.action.to, o.message)});
    }
    return out;
}

} // namespace rdmad
