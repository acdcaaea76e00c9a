// SPDX-License-Identifier: MIT
//
// What rdmad-notify tells a desktop user, decided on plain values: the state of rdmad's objects
// as of the last notification (what the user has been told) against the state now, after every
// signal of the coalescing window. No D-Bus here: notify/watch.cpp feeds it and posts what
// flush() returns.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rdmad::notify {

/// One entry of Device.Problems (code, severity, text) or Device.ProblemDetails (code,
/// severity, text, evidence, remedy, port); org.rdmad1(5). Manager.Problems has no remedy and
/// no port (remedy "", port 0).
struct Problem {
    std::string code;
    std::string severity; ///< "error", "warning" or "info"
    std::string text;
    std::string remedy; ///< "" when none (or when it came from Problems)
    uint32_t port = 0;  ///< the port it is about, 0 for the device
    bool operator==(const Problem&) const = default;
};

/// A device object (/org/rdmad1/device/<id>): what the notifications name.
struct DeviceState {
    std::string name;        ///< Device.Name, e.g. "mlx5_0"
    std::string pci_address; ///< Device.PCIAddress, "" for rxe/siw
    std::vector<Problem> problems;
    /// Device.DesiredOrigin: rdmad.conf(5) key ("trust", "dscp_priority", ...) -> where the
    /// value in force came from ("file:line", "profile lossless-roce (file:line)", "D-Bus").
    std::map<std::string, std::string> origin = {};
    bool provider_installed = true;    ///< Device.ProviderInstalled
    std::string provider_package = {}; ///< Device.ProviderPackage, e.g. "ibverbs-providers"
    bool operator==(const DeviceState&) const = default;
};

/// (DSCP 0-63, priority 0-7) entries, as Port.DSCPPriority gives them.
using DscpMap = std::vector<std::pair<uint8_t, uint8_t>>;

/// A port's settings with the desired state that asks them, actual and desired
/// (org.rdmad1.Port: PortType/DesiredPortType ... RDMACMToS/DesiredRDMACMToS, InSync).
/// Defaults are the values of a port nothing is asked of.
struct PortSettings {
    bool in_sync = true;    ///< Port.InSync
    std::string link_layer; ///< Port.LinkLayer: tells the type without a port type switch
    std::string port_type;  ///< "" without a port type switch (not mlx4)
    std::string desired_port_type;
    std::vector<uint8_t> pfc_no_drop = {};
    std::vector<uint8_t> desired_pfc_no_drop = {};
    std::string trust; ///< "dscp", "pcp", "" unreadable
    std::string desired_trust;
    DscpMap dscp_priority = {};
    DscpMap desired_dscp_priority = {};
    std::string rdma_cm_roce_mode; ///< "" unreadable
    std::string desired_rdma_cm_roce_mode;
    int32_t rdma_cm_tos = -1; ///< -1 unreadable
    int32_t desired_rdma_cm_tos = -1;
    bool operator==(const PortSettings&) const = default;
};

/// One setting of a port whose actual value is not the desired one.
struct Drift {
    std::string key;   ///< the rdmad.conf(5) key: "port_type", "pfc_no_drop", "trust", ...
    std::string label; ///< how the notification names it: "trust", "DSCP map", ...
    std::string now;   ///< the actual value as text ("none", "unknown" when there is none)
    std::string want;  ///< the desired value as text
    bool operator==(const Drift&) const = default;
};

/// The settings of `s` that the desired state asks and whose actual value differs, in the
/// order of org.rdmad1.Port. As rdmad compares them (daemon/reconcile/settings/): a port type
/// "auto" takes "auto (eth)" and "eth" takes "auto (eth)", and without a switch the link layer
/// tells the type; PFC priorities as a set; the DSCP map holds every desired entry and no
/// other priority for its DSCPs (entries for other DSCPs are someone else's unless the rule is
/// `exclusive`, which the bus does not show: InSync still says so). Empty when nothing
/// differs.
std::vector<Drift> drifts(const PortSettings& s);

/// A port object (/org/rdmad1/device/<id>/port/<n>).
struct PortState {
    std::string device_path; ///< the device object the port belongs to
    uint32_t number = 0;     ///< Port.Number, from 1
    std::string state;       ///< Port.State: "DOWN", "INIT", "ARMED", "ACTIVE", ...; "" unreadable
    PortSettings settings = {};
    bool operator==(const PortState&) const = default;
};

/// rdmad's objects as GetManagedObjects gives them, keyed by object path.
struct Snapshot {
    std::map<std::string, DeviceState> devices;
    std::map<std::string, PortState> ports;
    std::vector<Problem> manager_problems; ///< Manager.Problems
    /// Manager.InstallProvidersMode: "never", "ask", "auto"; "" from an rdmad without it.
    std::string install_providers_mode = {};
    bool operator==(const Snapshot&) const = default;
};

/// One org.freedesktop.Notifications.Notify call to make. Desktop Notifications Specification
/// 1.2: urgency hint 0 low, 1 normal, 2 critical; categories from its "Categories" table.
struct Notification {
    /// What the notification is about (a port's object path, "<device path>#<code>" for a
    /// problem, ...): a later notification with the same key replaces this one (replaces_id).
    /// "" for one that nothing replaces.
    std::string key;
    std::string summary;
    std::string body; ///< plain text (the caller escapes it for servers with body-markup)
    uint8_t urgency = 1;
    std::string category; ///< "network.disconnected", "device.added", ...
    std::string icon;     ///< a Freedesktop Icon Naming Specification name
    /// The packages Manager.InstallProviders would install, "a, b": the notification offers
    /// the action "install-providers", labelled "Install <install>". "" for no action.
    std::string install = {};
    bool operator==(const Notification&) const = default;
};

/// The action a notification offers to install missing verbs providers (Desktop
/// Notifications Specification 1.2, "Notify": actions are pairs of action key and label).
inline constexpr const char* kInstallAction = "install-providers";

/// The ProviderPackage `d` needs installed when rdmad would install it on
/// Manager.InstallProviders() and leaves that to a user: `mode` (Manager.InstallProvidersMode)
/// is "ask", d's provider is missing (ProviderInstalled false, a "provider-missing" problem:
/// a rule with require_provider = false takes that away and rdmad leaves the device alone)
/// and ProviderPackage is known. "" otherwise.
std::string package_to_offer(const DeviceState& d, const std::string& mode);

/// The notification that replaces one whose install action was invoked, once
/// Manager.InstallProviders() answered: `packages` installing now, or the D-Bus error
/// (`error_name` not "") with its message. `key` is the clicked notification's.
Notification install_outcome(const std::string& key, const std::vector<std::string>& packages,
                             const std::string& error_name, const std::string& error_message);

/// True for the Port.State values of a port that carries traffic: "ACTIVE" and "ACTIVE_DEFER"
/// (kernel include/rdma/ib_verbs.h enum ib_port_state: IB_PORT_ACTIVE, IB_PORT_ACTIVE_DEFER).
bool port_is_active(const std::string& state);

/// At most this many port changes (or new problems) in one window get a notification each;
/// more are summed up in one notification per kind.
inline constexpr size_t kMaxSingle = 3;
/// Names listed in the body of a summed-up notification before "and N more".
inline constexpr size_t kMaxNamesListed = 5;

class Tracker {
  public:
    /// Starts from what rdmad exports now: nothing of it is news.
    explicit Tracker(Snapshot initial);

    // The signals, applied to the state now. Unknown object paths are ignored.
    void device_added(const std::string& path, DeviceState device);
    void port_added(const std::string& path, PortState port);
    /// InterfacesRemoved of a device or port object (a device takes its ports with it).
    void object_removed(const std::string& path);
    void device_name(const std::string& path, const std::string& name);
    void port_state(const std::string& path, const std::string& state);
    /// The port's settings or InSync changed: `settings` is their new value.
    void port_settings(const std::string& path, PortSettings settings);
    /// Device.DesiredOrigin changed: `origin` (key -> origin) is its new value; what the body
    /// of an out-of-sync notification names.
    void device_origin(const std::string& path, std::map<std::string, std::string> origin);
    /// Device.Problems or Device.ProblemDetails changed: `problems` is the new value. The two
    /// carry the same error entries; an entry of Problems takes the remedy and port of the
    /// ProblemDetails entry of the same code and text when one is known.
    void device_problems(const std::string& path, std::vector<Problem> problems);
    void manager_problems(std::vector<Problem> problems);
    /// Device.ProviderInstalled or Device.ProviderPackage changed (`installed`, `package` are
    /// the values now): what decides whether a notification offers to install the package.
    void device_provider(const std::string& path, bool installed, const std::string& package);
    /// Manager.InstallProvidersMode changed: no news in itself, it decides the offer.
    void install_providers_mode(const std::string& mode);
    /// rdmad restarted (or the agent lost track): `now` is the new GetManagedObjects. What
    /// differs from before becomes news like any signal; the restart itself is not.
    void resync(Snapshot now);

    /// Whether something changed since the last flush() (the caller's timer should be running).
    bool dirty() const { return dirty_; }
    /// The notifications for every difference between what was told and the state now, in a
    /// fixed order (removed devices, added devices, ports down, ports up, ports that flapped,
    /// ports out of sync, ports in sync again, problems); the state now becomes what was told.
    /// A port that left ACTIVE and came back (or the other way round) within the window
    /// flapped: "mlx5_0 port 1 flapped N times", N the number of times it went down (or came
    /// up), with the port's key. A port whose InSync went false, or that stayed out of sync
    /// with other settings drifting (drifts()), is "mlx5_0 port 1 is out of sync: trust, DSCP
    /// map", each setting's value, desired value and origin in the body; one whose InSync came
    /// back is "mlx5_0 port 1 is in sync again"; both with the key "<port path>#sync". A drift
    /// that rdmad corrects within the window is not told. A device added, or a new
    /// "provider-missing" problem, whose package package_to_offer() names carries it in
    /// Notification::install (a summed-up notification: every such package).
    std::vector<Notification> flush();

    const Snapshot& state() const { return now_; }

  private:
    // A port's state changed from `before` to `after`: counts a crossing of the ACTIVE line.
    void crossed(const std::string& path, const std::string& before, const std::string& after);

    Snapshot told_;
    Snapshot now_;
    /// Per port object path: how often its state crossed between active and not active since
    /// the last flush(). A port on the same side at both ends of a window with crossings
    /// flapped: it is told, though the states flush() compares are equal.
    std::map<std::string, uint32_t> crossings_;
    bool dirty_ = false;
};

} // namespace rdmad::notify
