// SPDX-License-Identifier: MIT
//
// rdmactl list: one row per RDMA device.
#include "document.hpp"
#include "table.hpp"
#include "verbs.hpp"

#include <fmt/core.h>

namespace rdmactl {

int verb_list(Client& client, const Output& out) {
    const nlohmann::json doc = client.describe();
    if (out.json) {
        print_json({{"Devices", doc::array(doc, "Devices")}});
        return 0;
    }

    Table table({"NAME", "TYPE", "PCI", "DRIVER", "PROVIDER", "PORTS", "FIRMWARE"});
    table.align_right(5);
    const auto devices = doc::devices(doc);
    for (const auto* dev : devices)
        table.add_row({doc::str(*dev, "Name"), doc::str(*dev, "NodeType"),
                       doc::str(*dev, "PCIAddress"), doc::str(*dev, "KernelDriver"),
                       doc::provider_text(*dev), std::to_string(doc::ports(*dev).size()),
                       doc::str(*dev, "FirmwareVersion")});
    if (!devices.empty())
        table.print(stdout, out.legend, out.color);
    if (out.legend)
        fmt::print("{}{} {} listed.\n", devices.empty() ? "" : "\n", devices.size(),
                   devices.size() == 1 ? "RDMA device" : "RDMA devices");
    return 0;
}

} // namespace rdmactl
