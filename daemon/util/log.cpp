// SPDX-License-Identifier: MIT
#include "util/log.hpp"

#include "util/text.hpp"

#include <cstdio>
#include <cstdlib>
#include <systemd/sd-journal.h>
#include <sys/uio.h>

namespace rdmad::log {
namespace {

Level max_level = Level::info;

// Read at each message, not once: a forked child set up for the journal (the unit test of the
// fields) decides for itself. A getenv() costs nothing next to the message's formatting.
bool to_journal() {
    return std::getenv("JOURNAL_STREAM") != nullptr;
}

} // namespace

void set_max_level(Level level) { max_level = level; }

Fields about(const std::string& rdma_device, const std::string& netdev,
             const std::string& pci_address, uint32_t port) {
    Fields fields;
    if (!rdma_device.empty())
        fields.emplace_back("RDMA_DEVICE", rdma_device);
    if (port)
        fields.emplace_back("PORT", std::to_string(port));
    if (!netdev.empty())
        fields.emplace_back("NETDEV", netdev);
    if (!pci_address.empty())
        fields.emplace_back("PCI_ADDRESS", pci_address);
    return fields;
}

void write(Level level, const std::string& raw_message, const Fields& raw_fields) {
    if (static_cast<int>(level) > static_cast<int>(max_level))
        return;
    // Messages quote file and kernel names, which are bytes: the journal and a terminal get
    // valid UTF-8 without control characters, as the bus does.
    const std::string message = message_text(raw_message);
    Fields fields;
    for (const auto& [k, v] : raw_fields)
        fields.emplace_back(k, valid_utf8(v));
    if (!to_journal()) {
        std::string line = "rdmad: " + message;
        for (const auto& [k, v] : fields)
            line += " " + k + "=" + v;
        line += "\n";
        std::fwrite(line.data(), 1, line.size(), stderr);
        return;
    }
    std::vector<std::string> items;
    items.push_back("MESSAGE=" + message);
    items.push_back(fmt::format("PRIORITY={}", static_cast<int>(level)));
    items.push_back("SYSLOG_IDENTIFIER=rdmad");
    for (const auto& [k, v] : fields)
        items.push_back(k + "=" + v);
    std::vector<struct iovec> iov;
    for (auto& s : items)
        iov.push_back({s.data(), s.size()});
    sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
}

} // namespace rdmad::log
