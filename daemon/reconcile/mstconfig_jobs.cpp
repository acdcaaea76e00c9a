// SPDX-License-Identifier: MIT
#include "reconcile/mstconfig_jobs.hpp"

#include "actuators/mstconfig.hpp"
#include "sources/mstconfig.hpp"

#include <cerrno>
#include <fmt/format.h>

namespace rdmad {

MstconfigJobs::MstconfigJobs(sd_event* event, Handlers handlers, size_t at_once,
                             std::chrono::milliseconds timeout)
    : handlers_(std::move(handlers)), timeout_(timeout), runner_(event, at_once) {}

void MstconfigJobs::query(const std::string& tool, const std::string& pci, uint32_t card_port) {
    if (auto q = querying_.find(pci); q != querying_.end() && q->second == generation_)
        return;
    querying_[pci] = generation_;
    runner_.run(
        mstconfig_query_argv(tool, pci, card_port), timeout_,
        [this, tool, pci, card_port, asked = generation_](ToolRun run) {
            auto q = querying_.find(pci);
            if (q == querying_.end() || q->second != asked)
                return; // forgotten since, and a newer query runs: that one counts
            querying_.erase(q);
            if (asked != generation_)
                return; // forgotten since (a Reload): the next plan asks again
            handlers_.read(pci, firmware_port_type_of(run, tool, pci, card_port, timeout_));
        },
        // Forgotten before its turn (a Reload, the device added again): a newer query
        // of the function, if any, waits behind it and counts.
        [this, pci, asked = generation_] {
            auto q = querying_.find(pci);
            return q != querying_.end() && q->second == asked && asked == generation_;
        });
}

bool MstconfigJobs::write(const std::string& tool, const Action& a) {
    if (!writing_.insert(a.pci_address).second)
        return false;
    const uint32_t card_port = static_cast<uint32_t>(a.number);
    auto argv = mstconfig_set_argv(tool, a.pci_address, card_port, a.value);
    runner_.run(argv, timeout_, [this, tool, a, argv, card_port](ToolRun run) {
        const WriteResult w = firmware_write_result(run, argv);
        if (!w.ok()) {
            writing_.erase(a.pci_address);
            handlers_.written(write_outcome(a, w, std::nullopt));
            return;
        }
        // One query back; what it reads goes into the Inventory either way.
        runner_.run(mstconfig_query_argv(tool, a.pci_address, card_port), timeout_,
                    [this, tool, a, w, card_port](ToolRun back_run) {
                        writing_.erase(a.pci_address);
                        const FirmwarePortType back = firmware_port_type_of(
                            back_run, tool, a.pci_address, card_port, timeout_);
                        handlers_.read(a.pci_address, back);
                        handlers_.written(write_outcome(a, w, back));
                    });
    });
    return true;
}

void MstconfigJobs::forget(const std::string& pci) {
    if (pci.empty())
        ++generation_;
    else
        querying_.erase(pci);
}

Outcome MstconfigJobs::write_outcome(const Action& a, const WriteResult& w,
                                     const std::optional<FirmwarePortType>& back) {
    Outcome o{a, w.ok(), w.error, w.message, std::nullopt};
    if (!back)
        return o;
    o.ok = back->status == FirmwarePortType::Status::ok && back->next_boot == a.value;
    if (!o.ok) {
        o.error = EIO;
        o.message = back->status == FirmwarePortType::Status::ok
                        ? fmt::format("mstconfig set LINK_TYPE_P{}={} exited 0, but next "
                                      "boot reads back {}",
                                      a.number, link_type_number(a.value), back->next_boot)
                        : "the query after the write failed: " + back->message;
    }
    return o;
}

} // namespace rdmad
