// SPDX-License-Identifier: MIT
#include "sources/pci_reads.hpp"

#include "inventory/attributes.hpp"
#include "sources/device_paths.hpp"
#include "sources/vf_guid_reader.hpp"
#include "util/sysfs.hpp"

namespace rdmad {
namespace {

std::string text_or_empty(const std::string& dir, std::string_view attr) {
    auto t = sysfs::read_text(dir, attr);
    return t ? std::string(trim_attribute(*t)) : std::string();
}

} // namespace

PciFunction PciReads::function_of(const std::string& syspath) {
    // Walk up the path: the parent of a device is the directory it sits in
    // (Documentation/ABI/testing/sysfs-devices).
    for (auto end = syspath.rfind('/'); end != std::string::npos && end > 0;
         end = syspath.rfind('/', end - 1)) {
        std::string ancestor = syspath.substr(0, end);
        std::string name = device_paths::sysname(ancestor);
        if (!is_pci_address(name))
            continue;
        if (is_pci(ancestor))
            return {std::move(name), std::move(ancestor)};
    }
    return {};
}

bool PciReads::is_pci(const std::string& dir) {
    auto it = is_pci_.find(dir);
    if (it == is_pci_.end())
        it = is_pci_.emplace(dir, sysfs::link_basename(dir, "subsystem") == "pci").first;
    return it->second;
}

std::string PciReads::physical_function(const std::string& pci_syspath) {
    std::string pf = sysfs::resolve_link(pci_syspath, "physfn");
    if (pf.empty() || pf == pci_syspath || !is_pci_address(device_paths::sysname(pf)))
        return {};
    // Every device sits below <sysfs>/devices (Documentation/ABI/testing/sysfs-devices); a
    // target elsewhere ("/", "..", an absolute path) is not read at all.
    const auto devices = pci_syspath.find("/devices/");
    if (devices == std::string::npos ||
        pf.compare(0, devices + 9, pci_syspath, 0, devices + 9) != 0)
        return {};
    auto it = is_pf_.find(pf);
    if (it == is_pf_.end()) {
        // A PF is a function with the SR-IOV capability, and only such a function has
        // `sriov_totalvfs`: drivers/pci/iov.c shows sriov_pf_dev_attrs where dev_is_pf()
        // (dev->is_physfn) alone; Documentation/ABI/testing/sysfs-bus-pci: "This file appears
        // when a physical PCIe device supports SR-IOV" (November 2012, Linux 3.8). A bridge
        // or a plain function the link names is no PF.
        const bool pf_function = is_pci(pf) && sysfs::exists(pf + "/sriov_totalvfs") &&
                                 sysfs::link_basename(pf, "physfn").empty();
        it = is_pf_.emplace(pf, sysfs::absent(pf) || pf_function).first;
    }
    return it->second ? pf : std::string();
}

std::vector<PcieFunction> PciReads::pcie_path(const std::string& pci_syspath) {
    // Each PCI function's directory sits below its upstream bridge's
    // (/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0): walk the path up while the
    // directory names a PCI function. Bounded: PCIe allows at most 256 buses.
    std::vector<PcieFunction> path;
    std::string dir = pci_syspath;
    while (path.size() < 256) {
        const auto slash = dir.rfind('/');
        if (slash == std::string::npos)
            break;
        std::string name = dir.substr(slash + 1);
        if (!is_pci_address(name))
            break;
        auto it = pcie_.find(dir);
        if (it == pcie_.end()) {
            PcieFunction f;
            f.address = std::move(name);
            f.current_link_speed = text_or_empty(dir, "current_link_speed");
            f.current_link_width = text_or_empty(dir, "current_link_width");
            f.max_link_speed = text_or_empty(dir, "max_link_speed");
            f.max_link_width = text_or_empty(dir, "max_link_width");
            it = pcie_.emplace(dir, std::move(f)).first;
        }
        path.push_back(it->second);
        dir.resize(slash);
    }
    return path;
}

int32_t PciReads::vf_index(const std::string& pci_syspath, const std::string& pf_syspath,
                           const std::string& address) {
    auto [it, fresh] = vfs_.try_emplace(pf_syspath);
    if (fresh)
        it->second = read_vf_indexes(pci_syspath);
    auto vf = it->second.find(address);
    if (vf == it->second.end() && !fresh) { // a VF created since this pass read its PF
        it->second = read_vf_indexes(pci_syspath);
        vf = it->second.find(address);
    }
    return vf == it->second.end() ? -1 : vf->second;
}

void PciReads::clear() {
    is_pci_.clear();
    is_pf_.clear();
    pcie_.clear();
    vfs_.clear();
}

} // namespace rdmad
