// SPDX-License-Identifier: MIT
#include "sources/pfc_reader.hpp"

#include "config/pfc.hpp"
#include "util/sysfs.hpp"

#include <algorithm>
#include <charconv>

namespace rdmad {

PfcActual pfc_actual(const dcb::DcbResult& r) {
    PfcActual a;
    a.message = r.message;
    switch (r.status) {
    case dcb::DcbResult::Status::ok:
    case dcb::DcbResult::Status::not_applied: // the read-back is the state, whatever was asked
        a.status = PfcActual::Status::ok;
        a.priorities = pfc_priorities(r.state.pfc_en);
        a.pfc_cap = r.state.pfc_cap;
        a.mbc = r.state.mbc;
        a.delay = r.state.delay;
        // DCB_CAP_DCBX_HOST 0x01 (host-managed) absent and DCB_CAP_DCBX_LLD_MANAGED 0x02: the
        // firmware's DCBX, which in willing mode takes the switch's settings (linux/dcbnl.h;
        // DOMAIN.md §2.3, mlx5).
        a.willing = r.dcbx && !(*r.dcbx & 0x01) && (*r.dcbx & 0x02);
        if (r.app) {
            for (const auto& e : *r.app)
                if (e.selector == dcb::app_sel_dscp)
                    a.dscp_map.emplace_back(static_cast<uint8_t>(e.protocol), e.priority);
            std::sort(a.dscp_map.begin(), a.dscp_map.end());
            a.dscp_map.erase(std::unique(a.dscp_map.begin(), a.dscp_map.end()), a.dscp_map.end());
            a.trust = a.dscp_map.empty() ? "pcp" : "dscp";
        }
        a.message = {};
        break;
    case dcb::DcbResult::Status::not_supported:
        a.status = PfcActual::Status::not_supported;
        break;
    default:
        a.status = PfcActual::Status::failed;
        break;
    }
    return a;
}

namespace {

/// A result without an APP table (a SET that had nothing to do, a notification without one)
/// leaves the APP facts as they were: keep `before`'s in `now`.
void keep_app(PfcActual& now, const PfcActual& before, bool had_app) {
    if (had_app || now.status != PfcActual::Status::ok || before.status != PfcActual::Status::ok)
        return;
    now.trust = before.trust;
    now.dscp_map = before.dscp_map;
}

} // namespace

bool lldpad_running(const std::string& run_dir) {
    const auto pid_text = sysfs::read_text(run_dir, "lldpad.pid");
    if (!pid_text)
        return false;
    unsigned long pid = 0;
    const char* first = pid_text->data();
    const char* last = first + pid_text->size();
    if (std::from_chars(first, last, pid).ec != std::errc{} || pid == 0)
        return false;
    const auto comm = sysfs::read_text("/proc/" + std::to_string(pid), "comm");
    return comm && *comm == "lldpad\n";
}

bool PfcReader::note(const dcb::DcbNotification& n) {
    auto it = state_.find(n.ifname);
    if (it == state_.end())
        return false; // serves no RDMA port: read when it does
    const bool lldpad = lldpad_running(); // who may have made this change
    const bool lldpad_changed = lldpad != lldpad_;
    lldpad_ = lldpad;
    if (!n.pfc) {
        dirty_.insert(n.ifname);
        return true;
    }
    dcb::DcbResult r;
    r.status = dcb::DcbResult::Status::ok;
    r.state = *n.pfc;
    r.dcbx = n.dcbx;
    r.app = n.app;
    PfcActual now = pfc_actual(r);
    keep_app(now, it->second, n.app.has_value());
    dirty_.erase(n.ifname);
    if (now == it->second)
        return lldpad_changed; // else the echo of a state known (rdmad's own SET, read back)
    it->second = std::move(now);
    return true;
}

void PfcReader::note_all() {
    for (const auto& [netdev, _] : state_)
        dirty_.insert(netdev);
}

bool PfcReader::update(const std::string& netdev, const dcb::DcbResult& r) {
    auto it = state_.find(netdev);
    if (it == state_.end())
        return false;
    PfcActual now = pfc_actual(r);
    keep_app(now, it->second, r.app.has_value());
    if (now == it->second)
        return false;
    it->second = std::move(now);
    return true;
}

bool PfcReader::read(const std::string& netdev) {
    PfcActual now;
    if (!client_) {
        now.status = PfcActual::Status::failed;
        now.message = "no netlink socket";
    } else {
        now = pfc_actual(client_->get_pfc(netdev));
    }
    dirty_.erase(netdev);
    auto [it, fresh] = state_.try_emplace(netdev, now);
    if (!fresh && it->second == now)
        return false;
    it->second = std::move(now);
    return true;
}

void PfcReader::note_renamed(const std::string& netdev) {
    if (state_.count(netdev))
        dirty_.insert(netdev);
}

std::set<std::string> PfcReader::refresh(const std::set<std::string>& netdevs) {
    std::set<std::string> changed;
    lldpad_ = lldpad_running();
    std::erase_if(state_, [&](const auto& s) { return !netdevs.count(s.first); });
    std::erase_if(dirty_, [&](const std::string& n) { return !netdevs.count(n); });
    for (const auto& netdev : netdevs)
        if ((!state_.count(netdev) || dirty_.count(netdev)) && read(netdev))
            changed.insert(netdev);
    return changed;
}

std::set<std::string> PfcReader::refresh_noted() {
    std::set<std::string> changed;
    const auto noted = std::move(dirty_);
    dirty_.clear();
    for (const auto& netdev : noted)
        if (state_.count(netdev) && read(netdev))
            changed.insert(netdev);
    return changed;
}

PfcActual PfcReader::get(const std::string& netdev) const {
    auto it = state_.find(netdev);
    if (it == state_.end())
        return PfcActual{};
    PfcActual a = it->second;
    a.lldpad = lldpad_;
    return a;
}

} // namespace rdmad
