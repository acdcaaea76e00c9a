// SPDX-License-Identifier: MIT
#include "agent.hpp"

#include "install_call.hpp"
#include "objects.hpp"
#include "org.freedesktop.Notifications.proxy.h"
#include "org.rdmad1.Device.proxy.h"
#include "org.rdmad1.Manager.proxy.h"
#include "org.rdmad1.Port.proxy.h"
#include "rdmad_api.hpp"
#include "replace_ids.hpp"
#include "stop_signals.hpp"
#include "tracker.hpp"
#include "window.hpp"

#include <fmt/core.h>
#include <sdbus-c++/sdbus-c++.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <poll.h>
#include <stdexcept>

namespace rdmad::notify {

namespace {

constexpr const char* kNotificationsName = "org.freedesktop.Notifications";
constexpr const char* kNotificationsPath = "/org/freedesktop/Notifications";
constexpr const char* kObjectManager = "org.freedesktop.DBus.ObjectManager";
// The name in "desktop-entry" hints: rdmad-notify.desktop (Desktop Notifications
// Specification 1.2, "Standard Hints").
constexpr const char* kDesktopEntry = "rdmad-notify";
constexpr const char* kAppName = "RDMA";
// Owned on the session bus while an agent runs: the autostart entry and the user unit may both
// be enabled, and one user should get each notification once.
constexpr const char* kAgentName = "org.rdmad1.Notify";

void warn(const std::string& what) {
    fmt::print(stderr, "rdmad-notify: {}\n", what);
}

// Body text for a server that takes markup ("body-markup" capability): the specification's
// markup is a subset of XML, so &, < and > are escaped.
std::string escape_markup(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

// How long a call to the notification server may take. The calls are asynchronous, so a
// server that owns the name but never answers (a hung shell) stalls nothing; after this long
// the call fails, is reported and its notification is dropped.
constexpr std::chrono::seconds kNotifyTimeout{2};

// How long reading rdmad's objects (GetManagedObjects) may take. The read is asynchronous, so
// the agent goes on posting what it has while rdmad answers (about 0.4 s at 1,024 devices,
// bench/README.md); one that takes longer is reported and retried when rdmad restarts.
constexpr std::chrono::seconds kReadTimeout{60};

// How long Manager.InstallProviders() may take: rdmad answers once polkit has, and polkit's
// agent waits for the user to type a password (auth_admin_keep).
constexpr std::chrono::minutes kInstallTimeout{5};

// The notification server on the session bus, through the proxy generated from
// notify/org.freedesktop.Notifications.xml. Every call is asynchronous: the replies arrive in
// the agent's loop (processPendingRequest of the session bus).
class Poster : public sdbus::ProxyInterfaces<org::freedesktop::Notifications_proxy> {
  public:
    /// `install(id, key)` is called when the user invoked the install action of notification
    /// `id` (about `key`) that this agent posted.
    Poster(sdbus::IConnection& session, std::function<void(uint32_t, const std::string&)> install)
        : ProxyInterfaces(session, kNotificationsName, kNotificationsPath),
          install_(std::move(install)) {
        registerProxy();
    }
    ~Poster() { unregisterProxy(); }

    /// Posts `n`, replacing the last notification with its key. The first notification for a
    /// server asks it for its capabilities first (GetCapabilities: "body-markup"), and waits
    /// for the answer with the others. A server that is missing, fails or does not answer
    /// within kNotifyTimeout is reported on stderr; the notification is then lost (it is not
    /// news later).
    void post(const Notification& n) { post(n, std::nullopt); }

    /// Posts `n` in place of notification `id` (replaces_id), whatever ids_ says: the outcome
    /// of an action replaces the notification clicked even when the server closed it on the
    /// click (then the server makes a new one).
    void post(const Notification& n, std::optional<uint32_t> replaces) {
        if (markup_) {
            send(n, replaces);
            return;
        }
        waiting_.push_back({n, replaces});
        ask_capabilities();
    }

    /// ActionInvoked(id, action) came from `sender` (a unique name). Only the server that
    /// returned `id` for a notification offering the action is heard: another connection may
    /// send the signal too (any peer on the session bus can emit it, or send it to us alone).
    void action_invoked(const std::string& sender, uint32_t id, const std::string& action) {
        auto it = offers_.find(id);
        if (action != kInstallAction || it == offers_.end() || it->second.server != sender)
            return;
        install_(id, it->second.key);
    }

    /// org.freedesktop.Notifications has a new owner (`owner`, "" for none): what the old
    /// server said (its capabilities, the ids it gave) means nothing to the new one.
    void server_changed(const std::string& owner) {
        ++generation_;
        markup_.reset();
        actions_ = false;
        asking_ = false;
        ids_.clear();
        offers_.clear();
        if (!owner.empty() && !waiting_.empty())
            ask_capabilities();
    }

  private:
    void ask_capabilities() {
        if (asking_)
            return;
        asking_ = true;
        const uint64_t generation = generation_;
        getProxy()
            .callMethodAsync("GetCapabilities")
            .onInterface(INTERFACE_NAME)
            .withTimeout(kNotifyTimeout)
            .uponReplyInvoke([this, generation](const sdbus::Error* error,
                                                const std::vector<std::string>& caps) {
                if (generation != generation_)
                    return; // asked a server that is gone
                asking_ = false;
                auto waiting = std::move(waiting_);
                waiting_.clear();
                if (error) {
                    for (const auto& w : waiting)
                        warn(fmt::format("cannot post \"{}\": GetCapabilities: {}: {}", w.n.summary,
                                         error->getName(), error->getMessage()));
                    return;
                }
                markup_ = std::find(caps.begin(), caps.end(), "body-markup") != caps.end();
                // Desktop Notifications Specification 1.2, "GetCapabilities": "actions" — the
                // server will provide the specified actions to the user. Without it a server
                // may not show them: no notification then offers one.
                actions_ = std::find(caps.begin(), caps.end(), "actions") != caps.end();
                for (const auto& w : waiting)
                    send(w.n, w.replaces);
            });
    }

    void send(const Notification& n, std::optional<uint32_t> replaces) {
        std::map<std::string, sdbus::Variant> hints{
            {"urgency", sdbus::Variant(n.urgency)},
            {"category", sdbus::Variant(n.category)},
            {"desktop-entry", sdbus::Variant(std::string(kDesktopEntry))},
        };
        // Desktop Notifications Specification 1.2, "Notify": actions are a list of pairs,
        // action identifier then the label shown; ActionInvoked returns the identifier.
        std::vector<std::string> actions;
        if (actions_ && !n.install.empty())
            actions = {kInstallAction, "Install " + n.install};
        const bool offering = !actions.empty();
        const uint64_t generation = generation_;
        // The summary is plain text for every server (Desktop Notifications Specification 1.2,
        // "Notify": summary); only the body may carry markup, so only the body is escaped.
        getProxy()
            .callMethodAsync("Notify")
            .onInterface(INTERFACE_NAME)
            .withTimeout(kNotifyTimeout)
            .withArguments(std::string(kAppName), replaces.value_or(ids_.replaces(n.key)), n.icon,
                           n.summary, *markup_ ? escape_markup(n.body) : n.body, actions, hints,
                           int32_t{-1})
            .uponReplyInvoke([this, generation, key = n.key, summary = n.summary,
                              offering](const sdbus::Error* error, uint32_t id) {
                if (error) {
                    warn(fmt::format("cannot post \"{}\": {}: {}", summary, error->getName(),
                                     error->getMessage()));
                    return;
                }
                if (generation != generation_)
                    return;
                ids_.posted(key, id);
                // The server that gave the id: the one whose ActionInvoked for it counts.
                const sdbus::Message* reply = getProxy().getCurrentlyProcessedMessage();
                if (offering && reply)
                    offers_[id] = {key, reply->getSender()};
                else
                    offers_.erase(id); // replaced by one without the action
            });
    }

    void onNotificationClosed(const uint32_t& id, const uint32_t&) override {
        ids_.closed(id);
        offers_.erase(id);
    }

    struct Waiting {
        Notification n;
        std::optional<uint32_t> replaces;
    };
    struct Offer {
        std::string key;    // the notification's Notification::key
        std::string server; // the unique name of the server that returned its id
    };

    std::function<void(uint32_t, const std::string&)> install_;
    ReplaceIds ids_;
    std::map<uint32_t, Offer> offers_; // by id: the notifications now offering the action
    std::optional<bool> markup_; // of the server now; unset until it answered GetCapabilities
    bool actions_ = false;       // the server now has the "actions" capability
    bool asking_ = false;        // a GetCapabilities call is out
    std::vector<Waiting> waiting_;      // for the answer of GetCapabilities
    uint64_t generation_ = 0;           // counts the owners of org.freedesktop.Notifications
};

class Agent {
  public:
    Agent(sdbus::IConnection& system, sdbus::IConnection& session, const AgentOptions& options)
        : system_(system), session_(session),
          poster_(session, [this](uint32_t id, const std::string& key) { install(id, key); }),
          window_(options.quiet, options.longest) {}

    int run();

  private:
    void subscribe();
    /// Asks rdmad for its objects; on_snapshot() gets them when the reply comes.
    void resync();
    /// Then its Manager's properties; on_snapshot() gets both.
    void read_manager(uint64_t read, Snapshot snapshot);
    void on_snapshot(Snapshot snapshot);
    void changed() {
        if (tracker_ && tracker_->dirty())
            window_.event(Window::Clock::now());
    }
    void on_interfaces_added(sdbus::Message& m);
    void on_interfaces_removed(sdbus::Message& m);
    void on_properties_changed(sdbus::Message& m);
    void on_name_owner_changed(sdbus::Message& m);
    void on_server_owner_changed(sdbus::Message& m);
    void on_action_invoked(sdbus::Message& m);
    /// The install action of notification `id` (about `key`) was invoked: calls
    /// Manager.InstallProviders() unless a call is out already.
    void install(uint32_t id, const std::string& key);
    /// The call ended: its outcome replaces the notification clicked.
    void installed(const InstallCall::Outcome& outcome);

    sdbus::IConnection& system_;
    sdbus::IConnection& session_;
    Poster poster_;
    Window window_;
    // Empty until the first snapshot of rdmad (it may start after us): that one is quiet.
    std::optional<Tracker> tracker_;
    bool resync_pending_ = false;
    std::unique_ptr<sdbus::IProxy> rdmad_; // /org/rdmad1, for GetManagedObjects
    uint64_t reads_ = 0; // counts the reads asked; only the reply of the last one is used
    std::vector<sdbus::Slot> slots_;
    std::unique_ptr<InstallCall> install_; // while Manager.InstallProviders() is out
    uint32_t install_id_ = 0;              // the notification clicked, and its key
    std::string install_key_;
};

void Agent::install(uint32_t id, const std::string& key) {
    if (install_)
        return; // one call per click: this click came while the last one is out
    install_id_ = id;
    install_key_ = key;
    try {
        install_ = std::make_unique<InstallCall>(kInstallTimeout);
    } catch (const std::runtime_error& e) {
        installed({{}, "org.freedesktop.DBus.Error.Disconnected", e.what()});
    }
}

void Agent::installed(const InstallCall::Outcome& outcome) {
    poster_.post(
        install_outcome(install_key_, outcome.packages, outcome.error_name, outcome.error_message),
        install_id_);
}

void Agent::resync() {
    resync_pending_ = false;
    const uint64_t read = ++reads_;
    try {
        if (!rdmad_)
            rdmad_ = sdbus::createProxy(system_, api::kBusName, api::kManagerPath);
        rdmad_->callMethodAsync("GetManagedObjects")
            .onInterface(kObjectManager)
            .withTimeout(kReadTimeout)
            .uponReplyInvoke(
                [this, read](const sdbus::Error* error, const ManagedObjects& objects) {
                    if (read != reads_)
                        return; // rdmad restarted meanwhile: a newer read is out
                    // Not running (yet): its NameOwnerChanged brings us back to resync().
                    if (error) {
                        if (error->getName() != "org.freedesktop.DBus.Error.ServiceUnknown" &&
                            error->getName() != "org.freedesktop.DBus.Error.NameHasNoOwner")
                            warn(fmt::format("cannot read rdmad's objects: {}: {}",
                                             error->getName(), error->getMessage()));
                        return;
                    }
                    try {
                        read_manager(read, snapshot_from(objects));
                    } catch (const sdbus::Error& e) {
                        warn(fmt::format("cannot read rdmad's objects: {}: {}", e.getName(),
                                         e.getMessage()));
                    }
                });
    } catch (const sdbus::Error& e) {
        warn(fmt::format("cannot read rdmad's objects: {}: {}", e.getName(), e.getMessage()));
    }
}

// GetManagedObjects lists the objects below /org/rdmad1, not the Manager itself: its
// Problems (a configuration error rdmad started with) come from GetAll, so that they are not
// told as new when another problem comes.
void Agent::read_manager(uint64_t read, Snapshot snapshot) {
    rdmad_->callMethodAsync("GetAll")
        .onInterface("org.freedesktop.DBus.Properties")
        .withTimeout(kReadTimeout)
        .withArguments(std::string(org::rdmad1::Manager_proxy::INTERFACE_NAME))
        .uponReplyInvoke([this, read, snapshot = std::move(snapshot)](const sdbus::Error* error,
                                                                      const Properties& props) {
            if (read != reads_)
                return;
            if (error) {
                warn(fmt::format("cannot read rdmad's Manager: {}: {}", error->getName(),
                                 error->getMessage()));
                return;
            }
            try {
                Snapshot whole = snapshot; // sdbus-c++ calls this handler as const
                if (auto problems = problems_from(props))
                    whole.manager_problems = std::move(*problems);
                whole.install_providers_mode = install_mode_from(props).value_or("");
                on_snapshot(std::move(whole));
            } catch (const sdbus::Error& e) {
                warn(fmt::format("cannot read rdmad's Manager: {}: {}", e.getName(),
                                 e.getMessage()));
            }
        });
}

// Signals that came before the reply were sent before it (one sender's messages keep their
// order), so the snapshot already holds them; the first snapshot is no news.
void Agent::on_snapshot(Snapshot snapshot) {
    if (!tracker_) {
        tracker_.emplace(std::move(snapshot));
        return;
    }
    tracker_->resync(std::move(snapshot));
    changed();
}

void Agent::on_interfaces_added(sdbus::Message& m) {
    sdbus::ObjectPath path;
    Interfaces ifaces;
    m >> path >> ifaces;
    if (!tracker_)
        return;
    for (const auto& [iface, props] : ifaces) {
        if (iface == org::rdmad1::Device_proxy::INTERFACE_NAME)
            tracker_->device_added(path, device_from(props));
        else if (iface == org::rdmad1::Port_proxy::INTERFACE_NAME)
            tracker_->port_added(path, port_from(path, props));
    }
    changed();
}

void Agent::on_interfaces_removed(sdbus::Message& m) {
    sdbus::ObjectPath path;
    std::vector<std::string> ifaces;
    m >> path >> ifaces;
    if (!tracker_)
        return;
    tracker_->object_removed(path);
    changed();
}

void Agent::on_properties_changed(sdbus::Message& m) {
    std::string iface;
    Properties props;
    m >> iface >> props;
    if (!tracker_)
        return;
    const std::string path = m.getPath();
    if (iface == org::rdmad1::Port_proxy::INTERFACE_NAME) {
        if (auto it = props.find("State");
            it != props.end() && it->second.containsValueOfType<std::string>())
            tracker_->port_state(path, it->second.get<std::string>());
        if (auto port = tracker_->state().ports.find(path); port != tracker_->state().ports.end()) {
            PortSettings settings = port->second.settings;
            if (update_port_settings(props, settings))
                tracker_->port_settings(path, std::move(settings));
        }
    } else if (iface == org::rdmad1::Device_proxy::INTERFACE_NAME) {
        if (auto it = props.find("Name");
            it != props.end() && it->second.containsValueOfType<std::string>())
            tracker_->device_name(path, it->second.get<std::string>());
        if (auto dev = tracker_->state().devices.find(path);
            dev != tracker_->state().devices.end()) {
            bool installed = dev->second.provider_installed;
            std::string package = dev->second.provider_package;
            if (update_provider(props, installed, package))
                tracker_->device_provider(path, installed, package);
        }
        if (auto problems = problems_from(props))
            tracker_->device_problems(path, std::move(*problems));
        if (auto origin = origin_from(props))
            tracker_->device_origin(path, std::move(*origin));
    } else if (iface == org::rdmad1::Manager_proxy::INTERFACE_NAME) {
        if (auto problems = problems_from(props))
            tracker_->manager_problems(std::move(*problems));
        if (auto mode = install_mode_from(props))
            tracker_->install_providers_mode(*mode);
    }
    changed();
}

void Agent::on_name_owner_changed(sdbus::Message& m) {
    std::string name, old_owner, new_owner;
    m >> name >> old_owner >> new_owner;
    // rdmad (re)started: read everything again, outside this callback. Its going away alone is
    // no news: its objects are kept until a new rdmad says otherwise.
    if (name == api::kBusName && !new_owner.empty())
        resync_pending_ = true;
}

void Agent::on_server_owner_changed(sdbus::Message& m) {
    std::string name, old_owner, new_owner;
    m >> name >> old_owner >> new_owner;
    if (name == kNotificationsName)
        poster_.server_changed(new_owner);
}

void Agent::subscribe() {
    const std::string sender = fmt::format("type='signal',sender='{}',", api::kBusName);
    auto guarded = [this](void (Agent::*handler)(sdbus::Message&)) {
        return [this, handler](sdbus::Message& m) {
            try {
                (this->*handler)(m);
            } catch (const sdbus::Error& e) {
                warn(fmt::format("ignoring a malformed {} signal: {}", m.getMemberName(),
                                 e.getMessage()));
            }
        };
    };
    slots_.push_back(
        system_.addMatch(sender + fmt::format("path='{}',interface='{}',member='InterfacesAdded'",
                                              api::kManagerPath, kObjectManager),
                         guarded(&Agent::on_interfaces_added)));
    slots_.push_back(
        system_.addMatch(sender + fmt::format("path='{}',interface='{}',member='InterfacesRemoved'",
                                              api::kManagerPath, kObjectManager),
                         guarded(&Agent::on_interfaces_removed)));
    slots_.push_back(system_.addMatch(
        sender + fmt::format("path_namespace='{}',interface='org.freedesktop.DBus.Properties',"
                             "member='PropertiesChanged'",
                             api::kManagerPath),
        guarded(&Agent::on_properties_changed)));
    slots_.push_back(
        system_.addMatch(api::kNameOwnerChangedMatch, guarded(&Agent::on_name_owner_changed)));
    // A new notification server (a desktop shell restarted, another daemon took the name).
    slots_.push_back(session_.addMatch(
        fmt::format("type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                    "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='{}'",
                    kNotificationsName),
        guarded(&Agent::on_server_owner_changed)));
    // A click on an action (Desktop Notifications Specification 1.2, "ActionInvoked": id,
    // action_key). Matched without a sender: the well-known name would leave the check to the
    // bus daemon for broadcasts only, and a signal sent to us by unique name passes any match;
    // Poster::action_invoked() checks the sender against the server that gave the id.
    slots_.push_back(session_.addMatch(
        fmt::format("type='signal',path='{}',interface='{}',member='ActionInvoked'",
                    kNotificationsPath, kNotificationsName),
        guarded(&Agent::on_action_invoked)));
}

void Agent::on_action_invoked(sdbus::Message& m) {
    uint32_t id = 0;
    std::string action;
    m >> id >> action;
    poster_.action_invoked(m.getSender(), id, action);
}

int Agent::run() {
    StopSignals stop;
    // Subscribe first, then read: no change falls between the two.
    subscribe();
    resync();
    for (;;) {
        while (system_.processPendingRequest()) {
        }
        while (session_.processPendingRequest()) {
        }
        if (install_) {
            if (auto outcome = install_->process()) {
                install_.reset();
                installed(*outcome);
            }
        }
        if (resync_pending_)
            resync();
        if (tracker_ && window_.due(Window::Clock::now()))
            for (const auto& n : tracker_->flush())
                poster_.post(n);

        const auto sys = system_.getEventLoopPollData();
        const auto ses = session_.getEventLoopPollData();
        int timeout = -1;
        auto shorter = [&](int t) {
            if (t >= 0 && (timeout < 0 || t < timeout))
                timeout = t;
        };
        shorter(sys.getPollTimeout());
        shorter(ses.getPollTimeout());
        if (auto deadline = window_.deadline()) {
            const auto left =
                std::chrono::ceil<std::chrono::milliseconds>(*deadline - Window::Clock::now());
            shorter(static_cast<int>(std::max<int64_t>(0, left.count())));
        }
        pollfd fds[4] = {{sys.fd, sys.events, 0}, {ses.fd, ses.events, 0}, {stop.fd(), POLLIN, 0}};
        nfds_t nfds = 3;
        if (install_) {
            fds[nfds++] = install_->poll_fd();
            shorter(install_->poll_timeout_ms());
        }
        if (poll(fds, nfds, timeout) < 0) {
            if (errno == EINTR)
                continue;
            throw std::runtime_error(fmt::format("poll failed: {}", std::strerror(errno)));
        }
        if (fds[2].revents & POLLIN) {
            stop.consume();
            return 0;
        }
    }
}

} // namespace

int run_agent(const AgentOptions& options) {
    std::unique_ptr<sdbus::IConnection> system, session;
    try {
        system = sdbus::createSystemBusConnection();
    } catch (const sdbus::Error& e) {
        throw std::runtime_error(fmt::format("cannot reach the system bus: {}", e.getMessage()));
    }
    try {
        session = sdbus::createSessionBusConnection();
    } catch (const sdbus::Error& e) {
        throw std::runtime_error(fmt::format("cannot reach the session bus: {}", e.getMessage()));
    }
    try {
        session->requestName(kAgentName);
    } catch (const sdbus::Error& e) {
        // sd_bus_request_name() without flags fails with EEXIST when another connection owns
        // the name; sd-bus maps that errno to org.freedesktop.DBus.Error.FileExists
        // (systemd src/libsystemd/sd-bus/bus-error.c).
        if (e.getName() != "org.freedesktop.DBus.Error.FileExists")
            throw std::runtime_error(fmt::format("cannot own {} on the session bus: {}: {}",
                                                 kAgentName, e.getName(), e.getMessage()));
        fmt::print(stderr,
                   "rdmad-notify: another rdmad-notify runs in this session ({} is "
                   "taken); exiting\n",
                   kAgentName);
        return 0;
    }
    try {
        Agent agent(*system, *session, options);
        return agent.run();
    } catch (const sdbus::Error& e) {
        throw std::runtime_error(fmt::format("{}: {}", e.getName(), e.getMessage()));
    }
}

} // namespace rdmad::notify
