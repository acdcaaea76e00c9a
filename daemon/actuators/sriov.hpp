// SPDX-License-Identifier: MIT
//
// The SR-IOV VF count of a PF: `/sys/bus/pci/devices/<pf>/sriov_numvfs`.
// Source: kernel Documentation/PCI/pci-iov-howto.rst ("echo 0 > sriov_numvfs" disables the VFs;
// "To enable SR-IOV capability ... echo 'num_vfs' > sriov_numvfs") and drivers/pci/iov.c
// sriov_numvfs_store(): the value is a u16 (kstrtou16), more than sriov_totalvfs is ERANGE, the
// count it has already is accepted and does nothing, a non-zero count while VFs are enabled is
// EBUSY ("%d VFs already enabled. Disable before enabling %d VFs"): a change between two
// non-zero counts goes through 0. A driver without sriov_configure answers ENOENT. The write
// returns once the driver has enabled (or disabled) the VFs; their devices then arrive as
// uevents.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rdmad {

/// Where the PCI functions are: `<dir>/<bdf>/sriov_numvfs`.
inline constexpr const char* kPciDevicesDir = "/sys/bus/pci/devices";

struct SriovWrite {
    int error = 0;               ///< 0 when sriov_numvfs reads back the count asked, else errno
    std::string message;         ///< for the admin, naming the file and the errno text; "" ok
    std::vector<uint32_t> wrote; ///< the values written, in order ({0, 4} for 8 -> 4)
    bool ok() const { return error == 0; }
};

/// Make the PF `pci_address` (under `pci_dir`) have `count` VFs: read sriov_numvfs; when it
/// is already `count` nothing is written; a non-zero count that differs is first set to 0 and
/// read back as 0; then `count` is written ("<count>\n", as echo(1) does) and read back.
/// Errors: EINVAL for a bad address; what open(2)/write(2) answered (EBUSY, ENOMEM, ERANGE,
/// ENOENT, EACCES); EIO when a read-back differs or does not parse. Never retries.
SriovWrite set_sriov_numvfs(const std::string& pci_address, uint32_t count,
                            const std::string& pci_dir = kPciDevicesDir);

} // namespace rdmad
