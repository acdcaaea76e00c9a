// SPDX-License-Identifier: MIT
//
// DCB as a source: the IEEE PFC state, and the DSCP entries of the IEEE APP table, of every
// netdev that serves an RDMA port over Ethernet (RoCE, iWARP), rules or not. Each netdev is read
// once (one IEEE_GET) when it first serves a port; after that its state changes only through what
// reports a change: an RTNLGRP_DCB notification (it carries the state, so no read), the verified
// read-back of rdmad's own SET, or a lost notification (everything is read again). DOMAIN.md
// §2.2-2.3.
#pragma once

#include "actuators/dcb_client.hpp"
#include "inventory/model.hpp"

#include <map>
#include <set>
#include <string>

namespace rdmad {

/// `r` (an IEEE_GET, or a SET's read-back) as the port's PFC state.
PfcActual pfc_actual(const dcb::DcbResult& r);

/// True when lldpad runs: `<run_dir>/lldpad.pid` names a process whose comm is "lldpad"
/// (lldpad writes /var/run/lldpad.pid; libvirt and dracut find it the same way). Two small
/// reads, not a walk of /proc.
bool lldpad_running(const std::string& run_dir = "/run");

class PfcReader {
  public:
    /// `client` may be null (no netlink socket): every netdev then reads as failed.
    explicit PfcReader(dcb::DcbClient* client = nullptr) : client_(client) {}
    void set_client(dcb::DcbClient* client) { client_ = client; }

    /// An RTNLGRP_DCB notification. With the IEEE PFC state in it, that state is taken as
    /// is (and its APP table, when it carries one; else the DSCP facts stay); without (a CEE
    /// notification), the netdev is read again at the next refresh().
    /// Returns true when a tracked netdev's state changed or must be read.
    bool note(const dcb::DcbNotification& n);
    /// Notifications were lost: read every tracked netdev again at the next refresh().
    void note_all();
    /// A netdev was renamed (either of its names): read `netdev` again at the next
    /// refresh_noted() when it is tracked. The kernel's DCB follows the device, and DCB
    /// requests and notifications name it (DCB_ATTR_IFNAME, linux/dcbnl.h), so what rdmad keeps
    /// under a name may belong to another device after a swap (eth0 <-> eth1).
    void note_renamed(const std::string& netdev);
    /// The read-back of rdmad's own SET (ok or not_applied); a result that read no APP table
    /// (a SET with nothing to do) keeps the DSCP facts. Returns true when it changed a
    /// tracked netdev's state.
    bool update(const std::string& netdev, const dcb::DcbResult& r);

    /// Track exactly `netdevs`: read (one IEEE_GET each) those never read or noted since,
    /// forget the others. Returns the netdevs whose state changed.
    std::set<std::string> refresh(const std::set<std::string>& netdevs);
    /// Read the tracked netdevs noted since the last refresh (CEE notifications, a lost
    /// notification). Returns the netdevs whose state changed.
    std::set<std::string> refresh_noted();

    /// The state of `netdev`; Status::unknown when it is not tracked. `lldpad` is whether
    /// lldpad ran when DCB last changed (looked at on every refresh() that reads and every
    /// notification: an LLDP agent owns DCB, DOMAIN.md §2).
    PfcActual get(const std::string& netdev) const;
    /// True when refresh_noted() has work to do.
    bool noted() const { return !dirty_.empty(); }

  private:
    /// One IEEE_GET of `netdev`; true when its state changed.
    bool read(const std::string& netdev);

    dcb::DcbClient* client_;
    std::map<std::string, PfcActual> state_; ///< tracked netdevs
    std::set<std::string> dirty_;            ///< tracked netdevs to read again
    bool lldpad_ = false;
};

} // namespace rdmad
