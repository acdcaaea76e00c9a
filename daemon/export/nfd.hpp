// SPDX-License-Identifier: MIT
//
// rdmad's labels for Kubernetes Node Feature Discovery, as a local feature file
// (nfd-worker's features.d, https://kubernetes-sigs.github.io/node-feature-discovery/stable/
// usage/customization-guide.html#feature-files): "name=value" lines, "#" comments, and the
// "# +expiry-time=<RFC 3339>" directive after which NFD drops the labels (so they vanish when
// rdmad stops). A name without a prefix becomes feature.node.kubernetes.io/<name>. Pure.
//
// The labels say what NFD's own rdma.capable (Mellanox vendor ID) and rdma.available (two
// modules loaded) do not: which transports are usable here and how many ports each has,
// whether every provider is installed, whether the host is in sync with its desired state,
// and the RoCE GID index to give applications when every usable RoCE v2 port agrees.
#pragma once

#include "export/facts.hpp"
#include "inventory/model.hpp"

#include <cstdint>
#include <string>

namespace rdmad::exports {

/// The label lines, sorted by name, each "name=value\n":
///   rdmad.infiniband.ports=N, rdmad.roce-v2.ports=N, rdmad.iwarp.ports=N   usable ports
///     (facts.hpp usable_transport()), always present;
///   rdmad.infiniband=true, rdmad.roce-v2=true, rdmad.iwarp=true   only when N > 0;
///   rdmad.providers-installed=true|false   every RDMA device's provider installed (absent
///     without RDMA devices);
///   rdmad.in-sync=true|false   every port in sync and no configuration error;
///   rdmad.roce-gid-index=N   when every usable RoCE v2 port has the same
///     recommended_roce_gid_index() (absent otherwise).
/// Every name and value is a valid Kubernetes label name and value (valid_label_name(),
/// valid_label_value()).
std::string render_nfd_labels(const HostState& inventory, const ManagerFacts& facts);

/// The whole feature file: a comment naming rdmad, the expiry directive for `expiry_unix`
/// (seconds since the epoch, UTC), then `labels`.
std::string render_nfd(const std::string& labels, int64_t expiry_unix);

/// Kubernetes label name (the part after the prefix): 1-63 characters of [A-Za-z0-9_.-],
/// beginning and ending with an alphanumeric (k8s.io apimachinery validation.IsQualifiedName).
bool valid_label_name(const std::string& name);

/// Kubernetes label value: empty, or as valid_label_name() (validation.IsValidLabelValue).
bool valid_label_value(const std::string& value);

} // namespace rdmad::exports
