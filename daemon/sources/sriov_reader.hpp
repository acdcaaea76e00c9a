// SPDX-License-Identifier: MIT
//
// The SR-IOV state of a PCI function as a source: how many VFs a PF has enabled and how many it
// can enable. Source: kernel drivers/pci/iov.c (sriov_numvfs_show(), sriov_totalvfs_show():
// "%u\n"), Documentation/PCI/pci-iov-howto.rst; the files exist on a PF only (a VF, or a
// function without the SR-IOV capability, has neither).
#pragma once

#include "inventory/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rdmad {

/// A VF count as the kernel prints it ("%u\n" of a u16: at most 65535), the newline optional.
/// nullopt for anything else.
std::optional<uint32_t> parse_vf_count(std::string_view text);

/// `<pci_syspath>/sriov_numvfs` and `sriov_totalvfs`; both nullopt unless both read as counts,
/// then `unreadable` names the first that did not (no sriov_totalvfs: not a PF, "").
SriovActual read_sriov(const std::string& pci_syspath);

} // namespace rdmad
