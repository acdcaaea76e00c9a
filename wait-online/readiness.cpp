// SPDX-License-Identifier: MIT
#include "readiness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <tuple>

namespace rdmad::wait_online {

namespace {

// IBTA spec vol. 1, chapter 4 "Addressing": LID 0 is reserved (a port the subnet manager has
// not given a LID has 0), 0xFFFF is the permissive LID; neither addresses a configured port.
constexpr uint16_t kPermissiveLid = 0xffff;

/// The doctor's text for `code` about `port`, "" when the device has none.
std::string doctor_text(const Device* device, const std::string& code, uint32_t port) {
    if (!device)
        return {};
    for (const Problem& p : device->problems)
        if (p.code == code && p.port == port)
            return p.text;
    return {};
}

std::string or_unreadable(const std::string& s) {
    return s.empty() ? std::string("unreadable") : s;
}

} // namespace

std::optional<Target> parse_target(std::string_view text, std::string& error) {
    Target t;
    const auto colon = text.rfind(':');
    t.device = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) {
        const std::string_view num = text.substr(colon + 1);
        auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), t.port);
        if (num.empty() || ec != std::errc() || end != num.data() + num.size() || t.port == 0) {
            error = fmt::format("\"{}\": the port after ':' must be a number from 1", text);
            return std::nullopt;
        }
    }
    if (t.device.empty()) {
        error = fmt::format("\"{}\": give a device name (DEVICE or DEVICE:PORT)", text);
        return std::nullopt;
    }
    return t;
}

std::optional<std::string> parse_transport(std::string_view name) {
    if (name == "ib")
        return "InfiniBand";
    if (name == "roce")
        return "RoCE";
    if (name == "iwarp")
        return "iWARP";
    return std::nullopt;
}

std::string why_not_usable(const Device* device, const Port& port) {
    if (port.state != "ACTIVE") {
        std::string text = doctor_text(device, "port-not-active", port.number);
        if (text.empty())
            text = fmt::format("port {} is {} ({})", port.number, or_unreadable(port.state),
                               or_unreadable(port.phys_state));
        return text;
    }
    if (port.phys_state != "LinkUp")
        return fmt::format("port {} is ACTIVE but its physical state is {}, not LinkUp",
                           port.number, or_unreadable(port.phys_state));
    if (port.transport == "InfiniBand") {
        if (port.sm_lid == 0)
            return fmt::format("port {} is ACTIVE but knows no subnet manager (SM LID 0)",
                               port.number);
        if (port.lid == 0 || port.lid == kPermissiveLid)
            return fmt::format("port {} is ACTIVE but has no valid LID (LID 0x{:x})", port.number,
                               port.lid);
    }
    if (port.transport == "RoCE" && port.recommended_gid.empty()) {
        std::string text = doctor_text(device, "no-routable-gid", port.number);
        if (text.empty())
            text = fmt::format("port {} is ACTIVE but has no GID to use (RecommendedGID is empty)",
                               port.number);
        return text;
    }
    return {};
}

Verdict judge(const Objects& objects, const Selection& selection) {
    struct Row {
        std::string device;
        const Port* port;
        const Device* dev;
    };
    std::vector<Row> rows;
    for (const auto& [path, port] : objects.ports) {
        auto it = objects.devices.find(port.device_path);
        const Device* dev = it == objects.devices.end() ? nullptr : &it->second;
        // A port whose device object has not come (yet) is known by its device's path.
        rows.push_back({dev ? dev->name : port.device_path, &port, dev});
    }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        return std::tie(a.device, a.port->number) < std::tie(b.device, b.port->number);
    });

    const std::string transport_words =
        selection.transport.empty() ? std::string("RDMA") : selection.transport;
    Verdict v;
    std::vector<bool> matched(selection.targets.size(), false);
    size_t selected = 0;
    for (const Row& r : rows) {
        bool named = selection.targets.empty();
        for (size_t i = 0; i < selection.targets.size(); ++i) {
            const Target& t = selection.targets[i];
            if (t.device != r.device || (t.port != 0 && t.port != r.port->number))
                continue;
            named = true;
            if (selection.transport.empty() || r.port->transport == selection.transport)
                matched[i] = true;
        }
        if (!named || (!selection.transport.empty() && r.port->transport != selection.transport))
            continue;
        ++selected;
        const std::string why = why_not_usable(r.dev, *r.port);
        if (why.empty())
            v.usable.push_back(fmt::format("{} port {}", r.device, r.port->number));
        else
            v.waiting.push_back(fmt::format("{} {}", r.device, why));
    }
    for (size_t i = 0; i < selection.targets.size(); ++i) {
        if (matched[i])
            continue;
        const Target& t = selection.targets[i];
        const bool known = std::any_of(rows.begin(), rows.end(),
                                       [&](const Row& r) { return r.device == t.device; });
        if (!known)
            v.waiting.push_back(
                fmt::format("{}: rdmad knows no RDMA device of this name", t.device));
        else if (t.port != 0)
            v.waiting.push_back(
                fmt::format("{} has no {}port {}", t.device,
                            selection.transport.empty() ? "" : selection.transport + " ", t.port));
        else
            v.waiting.push_back(fmt::format("{} has no {} port", t.device, transport_words));
    }
    if (selected == 0 && selection.targets.empty())
        v.waiting.push_back(fmt::format("rdmad knows no {} port", transport_words));
    v.ready = selection.any ? !v.usable.empty() : (selected > 0 && v.waiting.empty());
    return v;
}

} // namespace rdmad::wait_online
