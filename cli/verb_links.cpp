// SPDX-License-Identifier: MIT
//
// rdmactl links: every netdev, whether an RDMA device serves it, and what to do when none does
// (per host with several hosts).
#include "document.hpp"
#include "table.hpp"
#include "verbs.hpp"

#include <fmt/core.h>

namespace rdmactl {

nlohmann::json links_json(const nlohmann::json& doc) {
    return {{"Links", doc::array(doc, "Links")}};
}

int verb_links(const std::vector<HostDoc>& docs, const Output& out) {
    HostTable table({"IFINDEX", "NAME", "DRIVER", "PCI", "OPERSTATE", "RDMA", "DEVICE", "HINT"},
                    out.fleet);
    table.align_right(0);
    for (const auto& [host, doc] : docs)
        for (const auto* link : doc::links(doc))
            table.add_row(
                host, {std::to_string(doc::integer(*link, "Index")), doc::str(*link, "Name"),
                       doc::str(*link, "Driver"), doc::str(*link, "PCIAddress"),
                       doc::str(*link, "OperState"), doc::str(*link, "RdmaCapable"),
                       doc::name_of(doc, doc::str(*link, "RdmaDevice")), doc::str(*link, "Hint")});
    const std::size_t n = table.rows();
    if (n > 0)
        table.print(stdout, out.legend);
    if (out.legend)
        fmt::print("{}{} {} listed{}.\n", n == 0 ? "" : "\n", n, n == 1 ? "netdev" : "netdevs",
                   out.fleet
                       ? fmt::format(" on {} {}", docs.size(), docs.size() == 1 ? "host" : "hosts")
                       : "");
    return 0;
}

} // namespace rdmactl
