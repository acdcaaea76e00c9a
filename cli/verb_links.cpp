// SPDX-License-Identifier: MIT
//
// rdmactl links: every netdev, whether an RDMA device serves it, and what to do when none does.
#include "document.hpp"
#include "table.hpp"
#include "verbs.hpp"

#include <fmt/core.h>

namespace rdmactl {

int verb_links(Client& client, const Output& out) {
    const nlohmann::json doc = client.describe();
    if (out.json) {
        print_json({{"Links", doc::array(doc, "Links")}});
        return 0;
    }

    Table table({"IFINDEX", "NAME", "DRIVER", "PCI", "OPERSTATE", "RDMA", "DEVICE", "HINT"});
    table.align_right(0);
    const auto links = doc::links(doc);
    for (const auto* link : links)
        table.add_row({std::to_string(doc::integer(*link, "Index")), doc::str(*link, "Name"),
                       doc::str(*link, "Driver"), doc::str(*link, "PCIAddress"),
                       doc::str(*link, "OperState"), doc::str(*link, "RdmaCapable"),
                       doc::name_of(doc, doc::str(*link, "RdmaDevice")), doc::str(*link, "Hint")});
    if (!links.empty())
        table.print(stdout, out.legend);
    if (out.legend)
        fmt::print("{}{} {} listed.\n", links.empty() ? "" : "\n", links.size(),
                   links.size() == 1 ? "netdev" : "netdevs");
    return 0;
}

} // namespace rdmactl
