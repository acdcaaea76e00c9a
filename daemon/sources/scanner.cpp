// SPDX-License-Identifier: MIT
#include "sources/scanner.hpp"

#include "inventory/attributes.hpp"
#include "inventory/problems.hpp"
#include "sources/device_paths.hpp"
#include "sources/device_reader.hpp"
#include "sources/host_reader.hpp"
#include "sources/link_reader.hpp"
#include "sources/memlock_reader.hpp"
#include "util/log.hpp"
#include "util/parallel_reads.hpp"
#include "util/sysfs.hpp"

#include <algorithm>
#include <limits>

namespace rdmad {

namespace {

/// Where read_host() looks: the module directory libkmod is given (--module-dir).
HostPaths host_paths(const ScanOptions& options) {
    HostPaths paths;
    paths.module_dir = options.kmod.module_dir;
    return paths;
}

// A device or netdev read right after "add" may miss attributes the driver has not created
// yet; it is read again this many times before it is taken as it is.
constexpr int kMaxRetries = 5;

bool looks_incomplete(const DeviceState& d) {
    return d.node_type.empty() || d.ports.empty();
}

} // namespace

Scanner::Scanner(ScanOptions options, const Inventory& inventory)
    : options_(std::move(options)), inventory_(inventory), udev_(udev::make_context()),
      modules_(options_.kmod) {
    auto text = sysfs::read_text(options_.os_release_path, "");
    if (!text && options_.os_release_path == "/etc/os-release")
        text = sysfs::read_text("/usr/lib/os-release", "");
    if (text)
        family_ = distro_family(parse_os_release(*text));
}

bool Scanner::full_scan() {
    pci_reads_.clear();
    pfc_ports_.clear(); // points at known_'s keys; derive_into() fills it again
    known_.clear();
    pending_.clear();
    link_at_.clear(); // points at links_'s syspaths
    links_.clear();
    link_named_.clear();
    link_names_.clear();
    device_named_.clear();
    devices_on_netdev_.clear();
    devices_at_pci_.clear();
    dirty_devices_.clear();
    dirty_own_.clear();
    dirty_links_.clear();
    incomplete_.clear();
    // The whole host, with nothing else to do until READY=1 (and units ordered after rdmad
    // waiting): on as many threads as parallel_read_workers() gives.
    read_devices_at(device_paths::subsystem_devices("infiniband"));
    read_links_at(device_paths::subsystem_devices("net"));
    read_verbs();
    read_aux();
    dirty_verbs_ = false;
    host_ = read_host(host_paths(options_));
    host_.memlock = read_memlock(memlock_launchers_);
    pci_reads_.clear();
    // The pass of a full scan derives everything (ScanChanges{}: full); the next refresh() is
    // only what is noted after it. Left set, the first uevent after start-up derived all of a
    // 1,024-device host again (2,049 objects compared, 28 ms), as a hostile helper saw.
    structural_ = false;
    return !incomplete_.empty();
}

void Scanner::reread_memlock(const std::vector<std::string>& launchers) {
    memlock_launchers_ = launchers;
    host_.memlock = read_memlock(memlock_launchers_);
    structural_ = true; // every device's doctor findings read it
}

void Scanner::read_device_at(const std::string& syspath, bool own_only) {
    if (!sysfs::exists(syspath)) {
        keep_device_read(syspath, std::nullopt);
        return;
    }
    // A read held here is what was read; the Inventory's copy is that, derived.
    const DeviceState* before = own_only ? device_read(syspath) : nullptr;
    keep_device_read(syspath, !before ? read_device(syspath, pci_reads_)
                              : pending_.count(syspath)
                                  ? reread_device_own(*before, pci_reads_)
                                  : reread_device_own(as_read(*before), pci_reads_));
}

void Scanner::read_devices_at(const std::vector<std::string>& syspaths) {
    const unsigned workers = parallel_read_workers(syspaths.size());
    if (!workers) {
        for (const auto& syspath : syspaths)
            read_device_at(syspath);
        return;
    }
    // Each thread its own PCI reads (a PF's links and its VF list may then be read once per
    // thread); only the reads run on them, the Scanner's indexes are changed here, in order.
    auto read = read_each<PciReads>(syspaths, workers, read_device);
    for (size_t i = 0; i < syspaths.size(); ++i)
        keep_device_read(syspaths[i], std::move(read[i]));
}

void Scanner::keep_device_read(const std::string& syspath, std::optional<DeviceState> read) {
    if (!read) { // gone
        erase_device_raw(syspath);
        incomplete_.erase(syspath);
        return;
    }
    DeviceState& d = *read;
    // A device exported as it was after its retries is taken as it is again: a full scan
    // (which forgets the retries) or a "change" hid it for the retries' time, and each SIGHUP
    // of a SIGHUP storm hid it again.
    const DeviceState* exported = inventory_.device(syspath);
    const bool taken_as_is = exported && looks_incomplete(*exported) && !incomplete_.count(syspath);
    if (looks_incomplete(d) && !taken_as_is && incomplete_[syspath] < kMaxRetries) {
        ++incomplete_[syspath];
    } else {
        if (looks_incomplete(d) && incomplete_.count(syspath))
            log::with(log::Level::warning, log::about(d.name, {}, d.pci_address),
                      "{}: still incomplete after {} reads; exporting what is there", d.name,
                      kMaxRetries + 1);
        incomplete_.erase(syspath);
    }
    put_device_raw(std::move(d));
}

Scanner::DeviceKeys Scanner::keys_of(const DeviceState& d) {
    DeviceKeys k{d.name, d.pci_address, d.physical_function, d.parent_netdev, {}};
    for (const auto& p : d.ports)
        for (const auto& g : p.gids)
            if (!g.netdev.empty() && std::find(k.gid_netdevs.begin(), k.gid_netdevs.end(),
                                               g.netdev) == k.gid_netdevs.end())
                k.gid_netdevs.push_back(g.netdev);
    return k;
}

void Scanner::index_device_raw(KeyRef syspath, const DeviceKeys& d, bool add) {
    auto update = [&](SyspathIndex& index, const std::string& key) {
        if (key.empty())
            return;
        if (add)
            index.add(key, syspath);
        else
            index.remove(key, syspath);
    };
    update(device_named_, d.name);
    update(devices_at_pci_, d.pci_address);
    update(devices_on_netdev_, d.parent_netdev);
    for (const auto& netdev : d.gid_netdevs)
        update(devices_on_netdev_, netdev);
}

const DeviceState* Scanner::device_read(const std::string& syspath) const {
    if (auto p = pending_.find(syspath); p != pending_.end())
        return &p->second;
    return inventory_.device(syspath);
}

std::optional<Scanner::DeviceKeys> Scanner::unindex_device_raw(KnownDevices::iterator it) {
    if (const DeviceState* d = device_read(*it)) {
        DeviceKeys keys = keys_of(*d);
        index_device_raw(&it->str(), keys, false);
        return keys;
    }
    // Read, and held neither here nor by the Inventory (derive_all() reads it again).
    for (SyspathIndex* index : {&device_named_, &devices_at_pci_, &devices_on_netdev_})
        index->remove_value(&it->str());
    return std::nullopt;
}

void Scanner::put_device_raw(DeviceState d) {
    // A device read again keeps its entry in known_: its key is what pfc_ports_ points at.
    auto [it, added] = known_.insert(d.syspath);
    if (!added)
        unindex_device_raw(it);
    index_device_raw(&it->str(), keys_of(d), true);
    pending_.insert_or_assign(*it, std::move(d));
}

void Scanner::erase_device_raw(const std::string& syspath) {
    auto it = known_.find(syspath);
    if (it == known_.end())
        return;
    unindex_device_raw(it);
    pfc_ports_.remove_value(&it->str());
    pending_.erase(syspath);
    known_.erase(it); // last: `syspath` may be its key
}

void Scanner::erase_link_raw(const std::string& syspath) {
    auto at = link_at_.find(syspath);
    if (at == link_at_.end())
        return;
    const auto link = links_.find(at->second);
    const std::string name = link->second.name;
    link_names_.erase({name, link->first});
    link_at_.erase(at); // before the syspath it points at
    links_.erase(link);
    index_link_name(name);
}

void Scanner::index_link_name(const std::string& name) {
    const auto it = link_names_.lower_bound({name, std::numeric_limits<int32_t>::min()});
    if (it != link_names_.end() && it->first == name)
        link_named_[name] = &links_.at(it->second);
    else
        link_named_.erase(name);
}

void Scanner::read_link_at(const std::string& syspath) {
    keep_link_read(syspath, sysfs::exists(syspath) ? std::optional(read_link(syspath, pci_reads_))
                                                   : std::nullopt);
}

void Scanner::read_links_at(const std::vector<std::string>& syspaths) {
    const unsigned workers = parallel_read_workers(syspaths.size());
    if (!workers) {
        for (const auto& syspath : syspaths)
            read_link_at(syspath);
        return;
    }
    auto read = read_each<PciReads>(syspaths, workers, read_link);
    for (size_t i = 0; i < syspaths.size(); ++i)
        keep_link_read(syspaths[i], std::move(read[i]));
}

void Scanner::keep_link_read(const std::string& syspath,
                             std::optional<std::optional<LinkState>> read) {
    // Links are keyed by ifindex; a rename (move) keeps the ifindex and changes the syspath.
    erase_link_raw(syspath);
    if (!read) { // gone
        incomplete_.erase(syspath);
        return;
    }
    auto& link = *read;
    if (!link) {
        if (incomplete_[syspath] < kMaxRetries) {
            ++incomplete_[syspath];
        } else {
            incomplete_.erase(syspath);
            log::warning("{}: no valid ifindex; netdev not exported", syspath);
        }
        return;
    }
    incomplete_.erase(syspath);
    if (auto it = links_.find(link->index);
        it != links_.end() && it->second.syspath != syspath && sysfs::exists(it->second.syspath)) {
        log::warning("{}: ifindex {} already belongs to {}; netdev not exported", syspath,
                     link->index, it->second.syspath);
        return;
    }
    std::string replaced; // the name of a link this one replaces (same ifindex, gone syspath)
    if (auto it = links_.find(link->index); it != links_.end()) {
        if (auto at = link_at_.find(it->second.syspath); at != link_at_.end())
            link_at_.erase(at); // before its syspath changes below
        replaced = it->second.name;
        link_names_.erase({replaced, link->index});
    }
    const int32_t index = link->index;
    LinkState& stored = links_[index];
    stored = std::move(*link);
    if (auto at = link_at_.find(stored.syspath); at != link_at_.end())
        link_at_.erase(at);
    link_at_.emplace(&stored.syspath.str(), index);
    link_names_.insert({stored.name, index});
    index_link_name(stored.name);
    if (!replaced.empty() && replaced != stored.name) {
        index_link_name(replaced);
        // Renamed without a "move" seen (rtnetlink): the DCB kept under either name.
        pfc_.note_renamed(replaced);
        pfc_.note_renamed(stored.name);
    }
}

void Scanner::read_verbs() {
    verbs_.clear();
    dirty_verbs_paths_.clear();
    for (const auto& path : device_paths::subsystem_devices("infiniband_verbs"))
        read_verbs_at(path);
}

void Scanner::read_verbs_at(const std::string& syspath) {
    // Each uverbs char device names its RDMA device in `ibdev`; its number says nothing
    // (uverbs19 may serve mlx5_24). Source: DOMAIN.md §3.3.
    erase_verbs(syspath);
    auto ibdev = sysfs::read_text(syspath, "ibdev");
    if (!ibdev)
        return;
    const std::string name = device_paths::sysname(syspath);
    std::string devname = device_paths::uevent_property(syspath, "DEVNAME").value_or("");
    if (devname.empty())
        devname = "infiniband/" + name;
    if (devname.front() != '/')
        devname = "/dev/" + devname;
    verbs_[syspath] = {std::string(trim_attribute(*ibdev)), std::move(devname)};
}

void Scanner::erase_verbs(const std::string& syspath) {
    verbs_.erase(syspath);
}

void Scanner::read_aux() {
    aux_.clear();
    dirty_aux_paths_.clear();
    for (const auto& path : device_paths::subsystem_devices("auxiliary"))
        read_aux_at(path);
}

void Scanner::read_aux_at(const std::string& syspath) {
    if (!sysfs::exists(syspath)) {
        erase_aux(syspath);
        return;
    }
    AuxDevice aux = read_aux_device(syspath, pci_reads_);
    if (is_unbound_rdma_aux(aux))
        aux_[syspath] = std::move(aux);
    else
        aux_.erase(syspath);
}

void Scanner::erase_aux(const std::string& syspath) {
    aux_.erase(syspath);
}

void Scanner::note_aux_under(const std::string& pci_syspath) {
    // An auxiliary device is a child of its PCI function, <pci syspath>/<name>, whose
    // `subsystem` link names the auxiliary bus (drivers/base/auxiliary.c). Looked up here, at a
    // PCI event, rather than every auxiliary device's path kept (0.13 KB a device). Its name
    // is "<module>.<name>.<id>" (auxiliary.c, __auxiliary_device_add()): only subdirectories
    // with two dots are asked, not the dozen attributes, links and class directories beside
    // them (a readlink each, at every PCI uevent of a 1,000-VF burst).
    for (const auto& name : sysfs::list_subdirs(pci_syspath, ""))
        if (std::count(name.begin(), name.end(), '.') >= 2 &&
            sysfs::link_basename(pci_syspath, name + "/subsystem") == "auxiliary")
            dirty_aux_paths_.insert(pci_syspath + "/" + name);
    // Those kept and gone already (an unbind): read_aux_at() drops them. aux_ is ordered by
    // syspath: they are the range that starts with the prefix.
    const std::string prefix = pci_syspath + "/";
    for (auto it = aux_.lower_bound(prefix); it != aux_.end() && it->first.starts_with(prefix);
         ++it)
        dirty_aux_paths_.insert(it->first);
}

void Scanner::mark_physical_function(const std::string& pf_address,
                                     std::set<std::string>& out) const {
    if (pf_address.empty())
        return;
    devices_at_pci_.for_each(pf_address, [&](KeyRef d) { out.insert(*d); });
}

void Scanner::mark_pci_function(const std::string& pci_address) {
    for (const auto& syspath : known_)
        if (const DeviceState* d = device_read(syspath);
            d && (d->pci_address == pci_address || d->physical_function == pci_address))
            dirty_devices_.insert(syspath);
    for (const auto& [_, l] : links_)
        if (l.pci_address == pci_address)
            dirty_links_.insert(l.syspath);
}

std::optional<std::pair<std::string, std::string>> Scanner::note(const Uevent& ev) {
    std::optional<std::pair<std::string, std::string>> renamed;
    // A "change" of a device or netdev already known only needs it re-read; anything else
    // (and a change of something not known yet) may add, remove or relate objects.
    const bool known = (ev.subsystem == "infiniband" && known_.count(ev.syspath)) ||
                       (ev.subsystem == "net" && link_at_.count(ev.syspath));
    if (ev.action != "change" || !known)
        structural_ = true;
    if (ev.action == "remove") {
        // Gone now, whatever sysfs still shows when the pass runs (udev sends "remove" before
        // the directory disappears).
        if (ev.subsystem == "infiniband") {
            // A VF that goes changes its PF's sriov_numvfs: the PF is read again.
            if (const DeviceState* d = known_.count(ev.syspath) ? device_read(ev.syspath) : nullptr)
                mark_physical_function(d->physical_function, dirty_devices_);
            erase_device_raw(ev.syspath);
            dirty_devices_.erase(ev.syspath);
            dirty_own_.erase(ev.syspath);
        } else if (ev.subsystem == "net") {
            erase_link_raw(ev.syspath);
            dirty_links_.erase(ev.syspath);
        } else if (ev.subsystem == "infiniband_verbs") {
            erase_verbs(ev.syspath);
            dirty_verbs_paths_.erase(ev.syspath);
        } else if (ev.subsystem == "auxiliary") {
            erase_aux(ev.syspath);
            dirty_aux_paths_.erase(ev.syspath);
        } else if (ev.subsystem == "pci") {
            // Its auxiliary devices go with it (their own "remove" says so too).
            const std::string prefix = ev.syspath + "/";
            std::erase_if(aux_, [&](const auto& a) { return a.first.starts_with(prefix); });
        }
        incomplete_.erase(ev.syspath);
        return renamed;
    }
    std::string old_name; // of an RDMA device renamed ("move")
    if (ev.subsystem == "infiniband") {
        if (ev.action == "move" && !ev.devpath_old.empty()) {
            const std::string old_syspath = "/sys" + ev.devpath_old;
            if (auto old = known_.find(old_syspath); old != known_.end()) {
                // Its index keys move with it; so does a read not yet derived. The Inventory's
                // copy is renamed by the caller (the keys of a device derived are read there);
                // the device is read again below either way.
                const std::optional<DeviceKeys> keys = unindex_device_raw(old);
                if (keys)
                    old_name = keys->name;
                std::optional<DeviceState> read;
                if (auto p = pending_.find(old_syspath); p != pending_.end())
                    read = std::move(pending_.extract(p).mapped());
                pfc_ports_.remove_value(&old->str());
                known_.erase(old);
                erase_device_raw(ev.syspath);
                const auto it = known_.insert(ev.syspath).first;
                if (keys)
                    index_device_raw(&it->str(), *keys, true);
                if (read) {
                    read->syspath = *it;
                    pending_.insert_or_assign(*it, std::move(*read));
                }
                renamed = std::make_pair(old_syspath, ev.syspath);
            }
            dirty_devices_.erase(old_syspath);
            dirty_own_.erase(old_syspath);
        }
        // A "change" of a device known is news of its own directory (reread_device_own());
        // an add or a move reads it whole.
        if (ev.action == "change" && known_.count(ev.syspath))
            dirty_own_.insert(ev.syspath);
        else
            dirty_devices_.insert(ev.syspath);
        // A renamed RDMA device changes what its uverbs device's `ibdev` reads; a "change"
        // (port state) leaves the names alone, and an add comes with its uverbs device's own.
        if (ev.action == "move") {
            if (renamed) {
                for (const auto& [syspath, v] : verbs_)
                    if (v.first == old_name)
                        dirty_verbs_paths_.insert(syspath);
            } else {
                dirty_verbs_ = true; // a device not known by its old path: look at all
            }
        }
    } else if (ev.subsystem == "net") {
        if (ev.action == "move" && !ev.devpath_old.empty()) {
            // A rename keeps the ifindex: forget the old path, the re-read takes its place.
            const std::string old_syspath = "/sys" + ev.devpath_old;
            // The kernel prints a GID's netdev by its name at the time of the read
            // (gid_attrs/ndevs, drivers/infiniband/core/sysfs.c print_ndev()) and tells the
            // RDMA device nothing: re-read the devices whose GIDs (or rxe parent) named it.
            if (auto at = link_at_.find(old_syspath); at != link_at_.end()) {
                const std::string& old_name = links_.at(at->second).name;
                devices_on_netdev_.for_each(old_name, [&](KeyRef d) { dirty_devices_.insert(*d); });
                pfc_.note_renamed(old_name);
            }
            pfc_.note_renamed(device_paths::sysname(ev.syspath));
            dirty_links_.erase(old_syspath);
            erase_link_raw(old_syspath);
        }
        dirty_links_.insert(ev.syspath);
    } else if (ev.subsystem == "infiniband_verbs") {
        dirty_verbs_paths_.insert(ev.syspath);
    } else if (ev.subsystem == "auxiliary") {
        dirty_aux_paths_.insert(ev.syspath);
    } else if (ev.subsystem == "pci") {
        const auto slash = ev.syspath.rfind('/');
        const std::string name =
            slash == std::string::npos ? ev.syspath : ev.syspath.substr(slash + 1);
        if (is_pci_address(name))
            mark_pci_function(name);
        // Binding a PCI driver creates or removes its auxiliary devices (each with its own
        // uevent); the ones known are read again for their driver.
        note_aux_under(ev.syspath);
    }
    return renamed;
}

void Scanner::note_link(int32_t ifindex) {
    auto note = [&](const LinkState& link) {
        dirty_links_.insert(link.syspath);
        // The ports it serves re-read their state too (RoCE/iWARP port state follows
        // carrier): devices on its PCI function, and those whose GIDs or rxe parent name it.
        for (const auto* index : {&devices_at_pci_, &devices_on_netdev_}) {
            const std::string& key = index == &devices_at_pci_ ? link.pci_address : link.name;
            if (!key.empty())
                index->for_each(key, [&](KeyRef d) { dirty_own_.insert(*d); });
        }
    };
    if (ifindex != 0) {
        if (auto it = links_.find(ifindex); it != links_.end())
            note(it->second);
        return;
    }
    structural_ = true;
    for (const auto& [_, link] : links_)
        note(link);
}

bool Scanner::note_address(int32_t ifindex) {
    const auto it = links_.find(ifindex);
    if (it == links_.end())
        return false;
    // The netdevs whose RoCE ports get this address as a GID (drivers/infiniband/core/
    // roce_gid_mgmt.c: the port's netdev and the upper devices stacked on it): the netdev
    // itself, a VLAN's lower netdev, and the slaves of either when it is a bond.
    // VLAN on VLAN (QinQ), macvlan on a VLAN: follow `iflink` down, a few levels at most
    // (a loop in hostile sysfs ends there too).
    std::set<std::string> names{it->second.name};
    int32_t lower_index = it->second.lower_ifindex;
    for (int level = 0; level < 8 && lower_index > 0; ++level) {
        const auto lower = links_.find(lower_index);
        if (lower == links_.end() || !names.insert(lower->second.name).second)
            break;
        lower_index = lower->second.lower_ifindex;
    }
    const std::set<std::string> uppers = names;
    for (const auto& [_, link] : links_)
        if (!link.master.empty() && uppers.count(link.master))
            names.insert(link.name);
    for (const auto& name : names)
        devices_on_netdev_.for_each(name, [&](KeyRef d) { address_devices_.insert(*d); });
    return !address_devices_.empty();
}

void Scanner::take_address_devices() {
    dirty_own_.insert(address_devices_.begin(), address_devices_.end());
    address_devices_.clear();
}

void Scanner::note_device(const std::string& name) {
    device_named_.for_each(name, [&](KeyRef d) { dirty_devices_.insert(*d); });
}

std::map<std::string, std::string> Scanner::devices_with_verbs() const {
    const auto by_ibdev = verbs_by_ibdev();
    std::map<std::string, std::string> out;
    for (const auto& syspath : known_)
        if (const DeviceState* d = device_read(syspath))
            if (auto v = by_ibdev.find(d->name); v != by_ibdev.end())
                out.emplace(d->name, v->second);
    return out;
}

bool Scanner::note_pfc(const dcb::DcbNotification& n) {
    if (!pfc_.note(n))
        return false;
    pfc_ports_.for_each(n.ifname, [&](KeyRef d) { pfc_devices_.insert(*d); });
    return true;
}

void Scanner::note_pfc_lost() {
    pfc_.note_all();
    pfc_ports_.for_all([&](KeyRef d) { pfc_devices_.insert(*d); });
}

ChangeSet Scanner::update_pfc(Inventory& inventory, const std::string& netdev,
                              const dcb::DcbResult& r) {
    ChangeSet cs;
    if (!pfc_.update(netdev, r))
        return cs;
    pfc_ports_.for_each(netdev, [&](KeyRef syspath) {
        if (const DeviceState* d = inventory.device(*syspath)) {
            DeviceState next = *d;
            fill_pfc(next);
            cs.merge(inventory.put_device(std::move(next)));
        }
    });
    return cs;
}

void Scanner::fill_pfc(DeviceState& d) const {
    for (auto& port : d.ports) {
        port.pfc = port.link_layer == "Ethernet" && !port.netdev.empty() ? pfc_.get(port.netdev)
                                                                         : PfcActual{};
        if (port.pfc.status == PfcActual::Status::ok)
            port.pfc_no_drop = port.pfc.priorities;
        else
            port.pfc_no_drop.clear();
    }
}

bool Scanner::dirty() const {
    return !dirty_devices_.empty() || !dirty_own_.empty() || !dirty_links_.empty() ||
           dirty_verbs_ || !dirty_verbs_paths_.empty() || !dirty_aux_paths_.empty() ||
           !incomplete_.empty() || !pfc_devices_.empty() || pfc_.noted();
}

ScanChanges Scanner::refresh(bool* incomplete) {
    pci_reads_.clear();
    ScanChanges changes;
    changes.full = structural_ || !incomplete_.empty();
    structural_ = false;
    // Retry what was incomplete last time along with what events named.
    for (const auto& [syspath, _] : incomplete_) {
        if (known_.count(syspath))
            dirty_devices_.insert(syspath);
        else
            dirty_links_.insert(syspath);
    }
    auto devices = std::move(dirty_devices_);
    const auto own = std::move(dirty_own_);
    const auto links = std::move(dirty_links_);
    dirty_devices_.clear();
    dirty_own_.clear();
    dirty_links_.clear();
    // A pass reads on the loop's thread alone: after start-up rdmad shares the host's CPUs
    // with its work, and under umockdev's preload a second thread cost 25-30 % more CPU
    // for the 1,000-VF burst (bench/README.md, issue #24).
    std::set<std::string> added; // devices not known before this read
    for (const auto& syspath : devices) {
        const bool was_known = known_.count(syspath) > 0;
        read_device_at(syspath);
        if (!was_known)
            added.insert(syspath);
    }
    for (const auto& syspath : own)
        if (known_.count(syspath) && devices.insert(syspath).second)
            read_device_at(syspath, true);
    changes.devices = std::move(devices);
    // A VF that came changes its PF's sriov_numvfs (DeviceState::sriov): the PF is read in
    // the same pass, once whatever the number of its VFs that came.
    std::set<std::string> pfs;
    for (const auto& syspath : added)
        if (const DeviceState* d = known_.count(syspath) ? device_read(syspath) : nullptr)
            mark_physical_function(d->physical_function, pfs);
    for (const auto& syspath : pfs)
        if (changes.devices.insert(syspath).second)
            read_device_at(syspath);
    for (const auto& syspath : links)
        read_link_at(syspath);
    for (const auto& syspath : links)
        if (auto it = link_at_.find(syspath); it != link_at_.end())
            changes.links.insert(it->second);
    // A netdev that did not read back (gone, no ifindex) changes the set of objects.
    changes.full = changes.full || changes.links.size() != links.size();
    if (dirty_verbs_) {
        read_verbs();
    } else {
        for (const auto& syspath : dirty_verbs_paths_)
            read_verbs_at(syspath);
        dirty_verbs_paths_.clear();
    }
    for (const auto& syspath : dirty_aux_paths_)
        read_aux_at(syspath);
    dirty_aux_paths_.clear();
    pci_reads_.clear(); // what a later pass reads of the PCI functions is read again
    dirty_verbs_ = false;
    changes.full = changes.full || !incomplete_.empty();
    if (changes.full) { // modules load and unload with devices: read the host's facts again
        MemlockFacts memlock = std::move(host_.memlock); // not tied to devices: on Reload only
        host_ = read_host(host_paths(options_));
        host_.memlock = std::move(memlock);
    }
    // PFC noted without its state (a CEE notification, a lost one): one IEEE_GET each.
    for (const auto& netdev : pfc_.refresh_noted())
        pfc_ports_.for_each(netdev, [&](KeyRef d) { pfc_devices_.insert(*d); });
    for (const auto& syspath : pfc_devices_)
        if (known_.count(syspath))
            changes.devices.insert(syspath); // derived again, not re-read
    pfc_devices_.clear();
    if (incomplete)
        *incomplete = !incomplete_.empty();
    return changes;
}

std::map<std::string, std::string> Scanner::verbs_by_ibdev() const {
    std::map<std::string, std::string> out;
    for (const auto& [_, v] : verbs_)
        out.insert_or_assign(v.first, v.second);
    return out;
}

void Scanner::derive_device(DeviceState& d, std::map<std::string, bool>& installed,
                            const std::map<std::string, std::string>& verbs_by_ibdev) const {
    if (auto it = verbs_by_ibdev.find(d.name); it != verbs_by_ibdev.end())
        d.verbs_device = it->second;
    d.provider = provider_for_driver(d.kernel_driver);
    auto [it, fresh] = installed.emplace(d.provider, false);
    if (fresh)
        it->second = provider_installed(options_.providers, d.provider);
    d.provider_installed = it->second;
    d.provider_package = d.provider.empty() || provider_package_.empty()
                             ? provider_package(d.provider, family_)
                             : provider_package_;
}

HostState Scanner::derive_all(const Inventory& inventory) {
    HostState inv;
    for (const auto& syspath : known_) {
        // A device still being retried is not exported yet: objects appear once fully built.
        if (incomplete_.count(syspath))
            continue;
        if (auto p = pending_.find(syspath); p != pending_.end()) {
            inv.devices.insert(pending_.extract(p)); // the entry itself: nothing copied
        } else if (const DeviceState* d = inventory.device(syspath)) {
            DeviceState read = as_read(*d);
            read.syspath = syspath; // renamed: the Inventory's copy was read at the old path
            inv.devices.emplace(syspath, std::move(read));
        } else {
            // Read, derived, and not in the Inventory: not the Inventory derive_into() filled.
            // Read it again rather than export a guess.
            log::warning("{}: read but not in the inventory; reading it again", syspath);
            dirty_devices_.insert(syspath);
            structural_ = true;
        }
    }
    inv.links = links_;
    const auto verbs = verbs_by_ibdev();
    std::map<std::string, bool> installed; // one look per provider and pass
    for (auto& [_, d] : inv.devices)
        derive_device(d, installed, verbs);
    std::vector<AuxDevice> aux;
    aux.reserve(aux_.size());
    for (const auto& [_, a] : aux_)
        aux.push_back(a);
    classify_links(inv, aux, modules_.lookup());
    const auto links = doctor::index_links(inv.links);
    for (auto& [_, d] : inv.devices) {
        fill_pfc(d);
        diagnose(d, {&links, &host_});
    }
    return inv;
}

namespace {

/// What classify_links() reads of a device (rdma_capability.cpp): when it is the same after
/// a re-read, every netdev keeps its classification.
bool same_link_facts(const DeviceState& a, const DeviceState& b) {
    if (a.name != b.name || a.pci_address != b.pci_address || a.parent_netdev != b.parent_netdev ||
        a.kernel_driver != b.kernel_driver || a.provider != b.provider ||
        a.provider_installed != b.provider_installed || a.provider_package != b.provider_package ||
        a.ports.size() != b.ports.size())
        return false;
    for (size_t i = 0; i < a.ports.size(); ++i) {
        const auto& pa = a.ports[i];
        const auto& pb = b.ports[i];
        if (pa.number != pb.number || pa.gids.size() != pb.gids.size())
            return false;
        for (size_t k = 0; k < pa.gids.size(); ++k)
            if (pa.gids[k].netdev != pb.gids[k].netdev)
                return false;
    }
    return true;
}

bool same_link_facts(const LinkState& a, const LinkState& b) {
    return a.name == b.name && a.syspath == b.syspath && a.pci_address == b.pci_address &&
           a.driver == b.driver && a.master == b.master && a.dev_port == b.dev_port &&
           a.type == b.type;
}

} // namespace

ChangeSet Scanner::derive_into(Inventory& inventory, ScanChanges& changes) {
    if (!changes.full) {
        // No uverbs device came, went or was renamed since the last derive (each is a full
        // pass), and a device renamed is one too (same_link_facts()): each keeps its own.
        const std::map<std::string, std::string> no_verbs;
        std::map<std::string, bool> installed;
        std::map<std::string, DeviceState> devices;
        std::map<int32_t, LinkState> links;
        const doctor::LinkIndex& link_index = link_named_;
        for (const auto& syspath : changes.devices) {
            const DeviceState* old = inventory.device(syspath);
            if (!known_.count(syspath) || !old) {
                changes.full = true;
                break;
            }
            // Re-read (pending), or derived again from what the Inventory holds (PFC).
            auto read = pending_.find(syspath);
            DeviceState d = read != pending_.end() ? read->second : as_read(*old);
            d.verbs_device = old->verbs_device;
            derive_device(d, installed, no_verbs);
            if (!same_link_facts(d, *old)) {
                changes.full = true;
                break;
            }
            // classify_links() fills a port's netdev the GID table does not name.
            for (size_t i = 0; i < d.ports.size(); ++i)
                d.ports[i].netdev = old->ports[i].netdev;
            fill_pfc(d);
            diagnose(d, {&link_index, &host_});
            devices.emplace(syspath, std::move(d));
        }
        for (const int32_t index : changes.links) {
            auto raw = links_.find(index);
            const LinkState* old = inventory.link(index);
            if (changes.full || raw == links_.end() || !old ||
                !same_link_facts(raw->second, *old)) {
                changes.full = true;
                break;
            }
            LinkState l = raw->second;
            l.rdma_capable = old->rdma_capable;
            l.rdma_device = old->rdma_device;
            l.hint = old->hint;
            links.emplace(index, std::move(l));
        }
        if (!changes.full) {
            ChangeSet cs;
            inventory.begin_batch();
            for (auto& [syspath, d] : devices) {
                pending_.erase(syspath);
                cs.merge(inventory.put_device(std::move(d)));
            }
            for (auto& [index, l] : links)
                cs.merge(inventory.put_link(std::move(l)));
            cs.merge(inventory.end_batch());
            return cs;
        }
    }
    changes.full = true;
    HostState all = derive_all(inventory);
    // Every Ethernet port's netdev is tracked for PFC: read the new ones, drop the gone ones.
    std::set<std::string> netdevs;
    pfc_ports_.clear();
    for (const auto& [syspath, d] : all.devices) {
        const auto keys = known_.find(syspath); // every device derive_all() gives is there
        for (const auto& port : d.ports)
            if (port.link_layer == "Ethernet" && !port.netdev.empty()) {
                netdevs.insert(port.netdev);
                if (keys != known_.end())
                    pfc_ports_.add(port.netdev, &keys->str());
            }
    }
    std::set<std::string> refill;
    for (const auto& netdev : pfc_.refresh(netdevs))
        pfc_ports_.for_each(netdev, [&](KeyRef d) { refill.insert(*d); });
    for (const auto& syspath : refill)
        fill_pfc(all.devices.at(syspath));
    return inventory.replace(std::move(all));
}

} // namespace rdmad
