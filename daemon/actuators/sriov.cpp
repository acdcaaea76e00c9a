// SPDX-License-Identifier: MIT
#include "actuators/sriov.hpp"

#include "actuators/rdma_cm.hpp"
#include "inventory/attributes.hpp"
#include "sources/sriov_reader.hpp"
#include "util/sysfs.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <optional>
#include <vector>

namespace rdmad {
namespace {

std::optional<uint32_t> read_count(const std::string& dir) {
    const auto text = sysfs::read_text(dir, "sriov_numvfs");
    return text ? parse_vf_count(*text) : std::nullopt;
}

SriovWrite failed(SriovWrite w, int error, std::string message) {
    w.error = error;
    w.message = std::move(message);
    return w;
}

} // namespace

SriovWrite set_sriov_numvfs(const std::string& pci_address, uint32_t count,
                            const std::string& pci_dir) {
    SriovWrite w;
    if (!is_pci_address(pci_address) || count > 65535)
        return failed(std::move(w), EINVAL, "invalid SR-IOV request");
    const std::string dir = pci_dir + "/" + pci_address;
    const std::string path = dir + "/sriov_numvfs";
    const auto now = read_count(dir);
    if (!now)
        return failed(std::move(w), EIO, path + ": cannot be read");
    if (*now == count)
        return w;
    // Between two non-zero counts through 0 (the kernel's EBUSY otherwise).
    const std::vector<uint32_t> steps =
        *now != 0 && count != 0 ? std::vector<uint32_t>{0, count} : std::vector<uint32_t>{count};
    for (const uint32_t value : steps) {
        w.wrote.push_back(value);
        // One open(2) and one write(2), as for configfs: the kernel's store() answers through
        // write(2) (EBUSY, ENOMEM, ERANGE).
        if (const int e = write_configfs_attribute(path, fmt::format("{}\n", value)))
            return failed(std::move(w), e,
                          fmt::format("{}: writing {}: {}", path, value, std::strerror(e)));
        const auto back = read_count(dir);
        if (back != value)
            return failed(std::move(w), EIO,
                          fmt::format("{}: wrote {}, reads back {}", path, value,
                                      back ? std::to_string(*back) : "nothing"));
    }
    return w;
}

} // namespace rdmad
