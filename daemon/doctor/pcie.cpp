// SPDX-License-Identifier: MIT
#include "doctor/pcie.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>

namespace rdmad::doctor {
namespace {

std::string_view trim(std::string_view t) {
    while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
        t.remove_suffix(1);
    while (!t.empty() && t.front() == ' ')
        t.remove_prefix(1);
    return t;
}

std::string show(const std::string& v) {
    return v.empty() ? "absent" : v;
}

std::string gts(double v) {
    return fmt::format("{:g} GT/s", v);
}

struct End {
    std::optional<double> cur_speed, max_speed;
    std::optional<uint32_t> cur_width, max_width;
};

End parse(const PcieFunction& f) {
    return {parse_pcie_speed(f.current_link_speed), parse_pcie_speed(f.max_link_speed),
            parse_pcie_width(f.current_link_width), parse_pcie_width(f.max_link_width)};
}

void add_evidence(Problem& pr, const PcieFunction& f) {
    const std::string dir = pci_path(f.address);
    pr.evidence.push_back(evidence(dir + "/current_link_speed", show(f.current_link_speed)));
    pr.evidence.push_back(evidence(dir + "/current_link_width", show(f.current_link_width)));
    pr.evidence.push_back(evidence(dir + "/max_link_speed", show(f.max_link_speed)));
    pr.evidence.push_back(evidence(dir + "/max_link_width", show(f.max_link_width)));
}

} // namespace

std::optional<double> parse_pcie_speed(std::string_view text) {
    text = trim(text);
    constexpr std::string_view kNew = " GT/s PCIe", kOld = " GT/s";
    if (text.size() > kNew.size() && text.substr(text.size() - kNew.size()) == kNew)
        text.remove_suffix(kNew.size());
    else if (text.size() > kOld.size() && text.substr(text.size() - kOld.size()) == kOld)
        text.remove_suffix(kOld.size());
    else
        return std::nullopt;
    // "2.5", "5.0", "8", "16.0", "32.0", "64.0": digits with at most one decimal point.
    double whole = 0, frac = 0, scale = 1;
    bool point = false, digit = false;
    for (char c : text) {
        if (c == '.' && !point) {
            point = true;
        } else if (c >= '0' && c <= '9') {
            digit = true;
            if (point) {
                scale /= 10;
                frac += (c - '0') * scale;
            } else {
                whole = whole * 10 + (c - '0');
            }
        } else {
            return std::nullopt;
        }
    }
    if (!digit || whole + frac <= 0)
        return std::nullopt;
    return whole + frac;
}

std::optional<uint32_t> parse_pcie_width(std::string_view text) {
    text = trim(text);
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || v == 0)
        return std::nullopt;
    return v;
}

std::vector<Problem> check_pcie(const DeviceState& d) {
    std::vector<Problem> out;
    const auto& path = d.pcie_path;
    if (path.empty()) {
        if (!d.pci_address.empty())
            out.push_back({"pcie-unknown", "info",
                           fmt::format("PCIe link of {} unknown: its sysfs directory was not read",
                                       d.pci_address)});
        return out;
    }
    if (path.size() < 2) {
        Problem pr{"pcie-unknown", "info",
                   fmt::format("PCIe link of {} unknown: no bridge above it in sysfs (a "
                               "virtual machine's or root-complex-integrated function)",
                               path[0].address)};
        add_evidence(pr, path[0]);
        out.push_back(std::move(pr));
        return out;
    }
    for (size_t i = 0; i + 1 < path.size(); i += 2) {
        const PcieFunction& low = path[i];
        const PcieFunction& up = path[i + 1];
        const End a = parse(low), b = parse(up);
        // A VF's path is its PF's (sources/device_reader.cpp): say whose link it is.
        const std::string hop =
            fmt::format("{}{} - {}", d.physical_function.empty() ? "" : "of physical function ",
                        low.address, up.address);
        if (!a.cur_speed || !a.cur_width || !a.max_speed || !a.max_width || !b.max_speed ||
            !b.max_width) {
            // Name the end whose files are missing: "its link attributes" read as the
            // device's own when only the bridge's were absent.
            const bool low_known = a.cur_speed && a.cur_width && a.max_speed && a.max_width;
            const bool up_known = b.max_speed && b.max_width;
            const std::string which =
                low_known ? fmt::format("the link attributes of {} (the bridge) are", up.address)
                : up_known ? fmt::format("the link attributes of {} are", low.address)
                           : std::string("the link attributes of both ends are");
            Problem pr{"pcie-unknown", "info",
                       fmt::format("PCIe link {} unknown: {} absent or unreadable", hop, which)};
            add_evidence(pr, low);
            add_evidence(pr, up);
            out.push_back(std::move(pr));
            continue;
        }
        const double speed = std::min(*a.max_speed, *b.max_speed);
        const uint32_t width = std::min(*a.max_width, *b.max_width);
        if (*a.cur_speed < speed || *a.cur_width < width) {
            // A VF's finding is its PF's link, which the PF's own device reports as a
            // warning: on each VF it is info (ProblemDetails only), so that one slot is one
            // warning, not one per VF.
            Problem pr{"pcie-degraded", d.physical_function.empty() ? "warning" : "info",
                       fmt::format("PCIe link {} runs at {} x{}, below the {} x{} both ends can "
                                   "do",
                                   hop, gts(*a.cur_speed), *a.cur_width, gts(speed), width)};
            add_evidence(pr, low);
            add_evidence(pr, up);
            pr.remedy = "reseat the card or move it to another slot, check the riser and the "
                        "BIOS PCIe settings (link speed, bifurcation); a link that trains down "
                        "after boot may point at a failing card or slot";
            out.push_back(std::move(pr));
        }
        if (i == 0 && (*a.max_speed > *b.max_speed || *a.max_width > *b.max_width)) {
            Problem pr{"pcie-slot-limited", "info",
                       fmt::format("{} can do {} x{} but its slot ({}) only {} x{}", low.address,
                                   gts(*a.max_speed), *a.max_width, up.address, gts(*b.max_speed),
                                   *b.max_width)};
            add_evidence(pr, low);
            add_evidence(pr, up);
            pr.remedy = "move the card to a faster or wider slot if its bandwidth matters";
            out.push_back(std::move(pr));
        }
    }
    return out;
}

} // namespace rdmad::doctor
