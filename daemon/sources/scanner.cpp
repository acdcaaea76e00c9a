// SPDX-License-Identifier: MIT
#include "sources/scanner.hpp"

#include "inventory/attributes.hpp"
#include "inventory/problems.hpp"
#include "inventory/rdma_capability.hpp"
#include "sources/device_reader.hpp"
#include "sources/link_reader.hpp"
#include "util/log.hpp"
#include "util/sysfs.hpp"

#include <map>

namespace rdmad {

Scanner::Scanner(ScanOptions options) : options_(std::move(options)), udev_(udev::make_context()) {
    auto text = sysfs::read_text(options_.os_release_path, "");
    if (!text && options_.os_release_path == "/etc/os-release")
        text = sysfs::read_text("/usr/lib/os-release", "");
    if (text)
        family_ = distro_family(parse_os_release(*text));
}

Inventory Scanner::scan() {
    Inventory inv;
    struct udev* ctx = udev_.get();

    for (const auto& path : udev::enumerate_syspaths(ctx, "infiniband")) {
        udev::Device dev(udev_device_new_from_syspath(ctx, path.c_str()));
        if (!dev)
            continue;
        DeviceState d = read_device(dev.get());
        inv.devices.emplace(d.syspath, std::move(d));
    }

    // Each uverbs char device names its RDMA device in `ibdev`; its number says nothing
    // (uverbs19 may serve mlx5_24). Source: DOMAIN.md §3.3.
    std::map<std::string, std::string> verbs_by_ibdev;
    for (const auto& path : udev::enumerate_syspaths(ctx, "infiniband_verbs")) {
        udev::Device dev(udev_device_new_from_syspath(ctx, path.c_str()));
        if (!dev)
            continue;
        auto ibdev = sysfs::read_text(path, "ibdev");
        if (!ibdev)
            continue;
        std::string name = udev::str(udev_device_get_sysname(dev.get()));
        std::string devname = udev::str(udev_device_get_property_value(dev.get(), "DEVNAME"));
        if (devname.empty())
            devname = "infiniband/" + name;
        if (devname.front() != '/')
            devname = "/dev/" + devname;
        std::string key(trim_attribute(*ibdev));
        verbs_by_ibdev.emplace(key, devname);
    }

    for (const auto& path : udev::enumerate_syspaths(ctx, "net")) {
        udev::Device dev(udev_device_new_from_syspath(ctx, path.c_str()));
        if (!dev)
            continue;
        if (auto link = read_link(dev.get()))
            inv.links.emplace(link->index, std::move(*link));
    }

    std::vector<AuxDevice> aux;
    for (const auto& path : udev::enumerate_syspaths(ctx, "auxiliary")) {
        udev::Device dev(udev_device_new_from_syspath(ctx, path.c_str()));
        if (dev)
            aux.push_back(read_aux_device(dev.get()));
    }

    for (auto& [_, d] : inv.devices) {
        if (auto it = verbs_by_ibdev.find(d.name); it != verbs_by_ibdev.end())
            d.verbs_device = it->second;
        d.provider = provider_for_driver(d.kernel_driver);
        d.provider_installed = provider_installed(options_.providers, d.provider);
        d.provider_package = provider_package(d.provider, family_);
    }
    classify_links(inv, aux, modules_.lookup());
    for (auto& [_, d] : inv.devices)
        d.problems = device_problems(d);
    return inv;
}

} // namespace rdmad
