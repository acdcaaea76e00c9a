// SPDX-License-Identifier: MIT
//
// rdmactl list: one row per RDMA device (per host with several hosts).
#include "document.hpp"
#include "table.hpp"
#include "verbs.hpp"

#include <fmt/core.h>

namespace rdmactl {

nlohmann::json list_json(const nlohmann::json& doc) {
    return {{"Devices", doc::array(doc, "Devices")}};
}

int verb_list(const std::vector<HostDoc>& docs, const Output& out) {
    HostTable table({"NAME", "TYPE", "PCI", "DRIVER", "PROVIDER", "PORTS", "FIRMWARE"}, out.fleet);
    table.align_right(5);
    for (const auto& [host, doc] : docs)
        for (const auto* dev : doc::devices(doc))
            table.add_row(host, {doc::str(*dev, "Name"), doc::str(*dev, "NodeType"),
                                 doc::str(*dev, "PCIAddress"), doc::str(*dev, "KernelDriver"),
                                 doc::provider_text(*dev), std::to_string(doc::ports(*dev).size()),
                                 doc::str(*dev, "FirmwareVersion")});
    const std::size_t n = table.rows();
    if (n > 0)
        table.print(stdout, out.legend, out.color);
    if (out.legend)
        fmt::print(
            "{}{} {} listed{}.\n", n == 0 ? "" : "\n", n, n == 1 ? "RDMA device" : "RDMA devices",
            out.fleet ? fmt::format(" on {} {}", docs.size(), docs.size() == 1 ? "host" : "hosts")
                      : "");
    return 0;
}

} // namespace rdmactl
