// SPDX-License-Identifier: MIT
#include "actuators/packagekit.hpp"

#include "bus/sd_bus_ptr.hpp"
#include "util/event_source.hpp"
#include "util/log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <systemd/sd-bus.h>
#include <utility>

namespace rdmad::packagekit {
namespace {

constexpr const char* kService = "org.freedesktop.PackageKit";
constexpr const char* kPath = "/org/freedesktop/PackageKit";
constexpr const char* kTransaction = "org.freedesktop.PackageKit.Transaction";

// PackageKit's lib/packagekit-glib2/pk-enum.h: a filter or transaction-flag bitfield has bit
// (1 << enum value) set for each value.
constexpr uint64_t kFilterNotInstalled = 1ull << 3; // PK_FILTER_ENUM_NOT_INSTALLED
constexpr uint64_t kFilterNewest = 1ull << 16;      // PK_FILTER_ENUM_NEWEST
constexpr uint64_t kFilterArch = 1ull << 18;        // PK_FILTER_ENUM_ARCH
constexpr uint64_t kFilterNotSource = 1ull << 21;   // PK_FILTER_ENUM_NOT_SOURCE
/// Resolve's filter: the newest installable package of this machine's architecture, no
/// source package (as Cockpit's pkg/lib/packagekit.js installs a package by name).
constexpr uint64_t kResolveFilter =
    kFilterNotInstalled | kFilterNewest | kFilterArch | kFilterNotSource;
constexpr uint64_t kOnlyTrusted = 1ull << 1; // PK_TRANSACTION_FLAG_ENUM_ONLY_TRUSTED
constexpr uint32_t kExitSuccess = 1;         // PK_EXIT_ENUM_SUCCESS
/// Transaction.Percentage "or 101 if unknown" (src/org.freedesktop.PackageKit.Transaction.xml).
constexpr uint32_t kPercentageUnknown = 101;

/// PkExitEnum's names (pk-enum.c's enum_exit table), for a Finished without an ErrorCode.
std::string exit_name(uint32_t exit) {
    static const char* const names[] = {"unknown",          "success",
                                        "failed",           "cancelled",
                                        "key-required",     "eula-required",
                                        "killed",           "media-change-required",
                                        "need-untrusted",   "cancelled-priority",
                                        "skip-transaction", "repair-required"};
    return exit < std::size(names) ? names[exit] : fmt::format("exit {}", exit);
}

std::string error_text(const sd_bus_error* e) {
    return e && e->message ? e->message : (e && e->name ? e->name : "unknown error");
}

/// The package name of a PackageKit package id "name;version;arch;data".
std::string id_name(const std::string& id) {
    return id.substr(0, id.find(';'));
}

/// What the asynchronous calls carry: the client and the job, looked up again on the reply
/// (a job that ended meanwhile is gone, and its reply ignored).
struct Ticket {
    Client* client;
    uint64_t id;
};

} // namespace

struct Client::Connection {
    BusPtr bus;
    SlotPtr signals;    ///< every Transaction signal PackageKit sends, dispatched by path
    SlotPtr properties; ///< PropertiesChanged of PackageKit's objects (transactions' progress)
    SlotPtr owner;      ///< NameOwnerChanged of org.freedesktop.PackageKit
};

struct Client::Job {
    std::vector<std::string> names;
    Done done;
    Progress progress;
    std::optional<uint32_t> percent; ///< the last Percentage passed to `progress`
    enum class Stage { resolve, install } stage = Stage::resolve;
    std::string path; ///< the transaction running now, "" between two
    /// The unique name that answered CreateTransaction: the only sender whose signals count
    /// (a signal sent to rdmad's connection by name reaches it whatever its match rules).
    std::string owner;
    std::vector<std::string> ids;     ///< Resolve's Package ids, one per name
    std::optional<std::string> error; ///< the first ErrorCode of the transaction
    std::optional<Outcome> ended;     ///< set when the timer ends it (at once or late)
    EventSource timer;
};

namespace {

/// An asynchronous call whose reply goes to `handler` with a Ticket (freed with the call):
/// the slot floats, owned by the bus, so a job may end before its reply comes.
/// Leave the pending call `slot` to the bus (floating), `ticket` (its userdata) freed with it.
void leave_to_bus(sd_bus_slot* slot, std::unique_ptr<Ticket> ticket) {
    sd_bus_slot_set_destroy_callback(slot, [](void* p) { delete static_cast<Ticket*>(p); });
    sd_bus_slot_set_floating(slot, 1);
    sd_bus_slot_unref(slot);
    ticket.release();
}

template <typename... Args>
int call_async(sd_bus* bus, sd_bus_message_handler_t handler, Ticket ticket, const char* path,
               const char* interface, const char* member, const char* types, Args... args) {
    auto owned = std::make_unique<Ticket>(ticket);
    sd_bus_slot* slot = nullptr;
    int r = sd_bus_call_method_async(bus, &slot, kService, path, interface, member, handler,
                                     owned.get(), types, args...);
    if (r >= 0)
        leave_to_bus(slot, std::move(owned));
    return r;
}

/// Append `strings` to `m` as "as".
int append_strings(sd_bus_message* m, const std::vector<std::string>& strings) {
    int r = sd_bus_message_open_container(m, 'a', "s");
    for (size_t i = 0; r >= 0 && i < strings.size(); ++i)
        r = sd_bus_message_append(m, "s", strings[i].c_str());
    return r < 0 ? r : sd_bus_message_close_container(m);
}

} // namespace

Client::Client(sd_event* event, uint64_t timeout_usec)
    : event_(event), timeout_usec_(timeout_usec) {}

Client::~Client() {
    // Jobs first (their timers), then the connection with the pending calls' tickets.
    jobs_.clear();
    connection_.reset();
}

bool Client::connect(std::string& why) {
    if (connection_ && sd_bus_is_open(connection_->bus.get()) > 0)
        return true;
    connection_.reset();
    auto c = std::make_unique<Connection>();
    sd_bus* raw = nullptr;
    // sd_bus_open_system(3): DBUS_SYSTEM_BUS_ADDRESS when set, as rdmad's own connection.
    int r = sd_bus_open_system(&raw);
    if (r >= 0) {
        c->bus.reset(raw);
        r = sd_bus_attach_event(raw, event_, SD_EVENT_PRIORITY_NORMAL);
    }
    sd_bus_slot* slot = nullptr;
    // AddMatch goes out before any call of ours: the bus daemon takes a connection's messages
    // in order, so the match is in place before PackageKit can signal a transaction of ours.
    if (r >= 0)
        r = sd_bus_match_signal_async(
            raw, &slot, kService, nullptr, kTransaction, nullptr,
            [](sd_bus_message* m, void* userdata, sd_bus_error*) -> int {
                const char* path = sd_bus_message_get_path(m);
                const char* member = sd_bus_message_get_member(m);
                static_cast<Client*>(userdata)->on_signal(path ? path : "", member ? member : "",
                                                          m);
                return 0;
            },
            nullptr, this);
    if (r < 0) {
        why = std::string("cannot connect to the system bus: ") + std::strerror(-r);
        return false;
    }
    c->signals.reset(slot);
    // A transaction's properties change by the standard signal on its path, one property at
    // a time (PackageKit's src/pk-transaction.c, pk_transaction_emit_property_changed()).
    sd_bus_slot* properties_slot = nullptr;
    r = sd_bus_match_signal_async(
        raw, &properties_slot, kService, nullptr, "org.freedesktop.DBus.Properties",
        "PropertiesChanged",
        [](sd_bus_message* m, void* userdata, sd_bus_error*) -> int {
            static_cast<Client*>(userdata)->on_properties_changed(m);
            return 0;
        },
        nullptr, this);
    if (r < 0) {
        why = std::string("cannot watch PackageKit's transactions: ") + std::strerror(-r);
        return false;
    }
    c->properties.reset(properties_slot);
    // PackageKit leaving the bus (it crashed, or was stopped) ends the transactions it ran:
    // no Finished will come. org.freedesktop.DBus's NameOwnerChanged(s name, s old, s new).
    sd_bus_slot* owner_slot = nullptr;
    r = sd_bus_add_match_async(
        raw, &owner_slot,
        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
        "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
        "arg0='org.freedesktop.PackageKit'",
        [](sd_bus_message* m, void* userdata, sd_bus_error*) -> int {
            const char *name = nullptr, *old_owner = nullptr, *new_owner = nullptr;
            if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) >= 0 && old_owner &&
                *old_owner)
                static_cast<Client*>(userdata)->on_owner_gone(old_owner);
            return 0;
        },
        nullptr, this);
    if (r < 0) {
        why = std::string("cannot watch PackageKit on the system bus: ") + std::strerror(-r);
        return false;
    }
    c->owner.reset(owner_slot);
    connection_ = std::move(c);
    return true;
}

void Client::install(const std::vector<std::string>& names, Done done, Progress progress) {
    const uint64_t id = next_id_++;
    auto job = std::make_unique<Job>();
    job->names = names;
    job->done = std::move(done);
    job->progress = std::move(progress);
    auto on_timer = [](sd_event_source*, uint64_t, void* userdata) -> int {
        auto* t = static_cast<Ticket*>(userdata);
        Client* self = t->client;
        const uint64_t job_id = t->id;
        auto it = self->jobs_.find(job_id);
        if (it == self->jobs_.end())
            return 0;
        Job& job = *it->second;
        // Given up while a transaction runs: PackageKit is told so, or it would go on
        // installing (and holding its lock) for a job rdmad reports failed.
        if (!job.ended && !job.path.empty())
            self->cancel(job.path);
        Outcome o = job.ended ? *job.ended
                              : Outcome{Outcome::Kind::failed,
                                        "PackageKit did not finish the transaction in time",
                                        {}};
        self->finish(job_id, std::move(o));
        return 0;
    };
    // The timer's ticket lives as long as the timer (freed by its destroy callback).
    auto ticket = std::make_unique<Ticket>(Ticket{this, id});
    if (sd_event_add_time_relative(event_, into(job->timer), CLOCK_MONOTONIC, timeout_usec_,
                                   1'000'000, on_timer, ticket.get()) < 0)
        throw std::runtime_error("cannot add the PackageKit timer");
    sd_event_source_set_destroy_callback(job->timer.get(),
                                         [](void* p) { delete static_cast<Ticket*>(p); });
    ticket.release();
    Job* j = job.get();
    jobs_.emplace(id, std::move(job));
    std::string why;
    if (names.empty() || !connect(why)) {
        // Ended by the timer at once: `done` never runs inside install().
        j->ended = Outcome{Outcome::Kind::failed, names.empty() ? "no package named" : why, {}};
        sd_event_source_set_time_relative(j->timer.get(), 0);
        return;
    }
    create_transaction(id);
}

void Client::create_transaction(uint64_t id) {
    auto on_created = [](sd_bus_message* m, void* userdata, sd_bus_error*) -> int {
        auto* t = static_cast<Ticket*>(userdata);
        Client* self = t->client;
        auto it = self->jobs_.find(t->id);
        if (it == self->jobs_.end())
            return 0;
        Job& job = *it->second;
        const uint64_t id = t->id;
        if (const sd_bus_error* e = sd_bus_message_get_error(m)) {
            // No owner and no activation file: PackageKit is not installed (or not running
            // where nothing can start it).
            const bool absent = sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                                       SD_BUS_ERROR_NAME_HAS_NO_OWNER);
            self->finish(id, {absent ? Outcome::Kind::missing : Outcome::Kind::failed,
                              "PackageKit: " + error_text(e),
                              {}});
            return 0;
        }
        const char* path = nullptr;
        if (int r = sd_bus_message_read(m, "o", &path); r < 0 || !path) {
            self->finish(
                id,
                {Outcome::Kind::failed, "PackageKit's CreateTransaction reply cannot be read", {}});
            return 0;
        }
        job.path = path;
        const char* sender = sd_bus_message_get_sender(m);
        job.owner = sender ? sender : "";
        job.error.reset();
        // The transaction's call: its reply is empty, its result comes in signals.
        sd_bus_message* raw = nullptr;
        int r = sd_bus_message_new_method_call(
            sd_bus_message_get_bus(m), &raw, kService, path, kTransaction,
            job.stage == Job::Stage::resolve ? "Resolve" : "InstallPackages");
        MessagePtr call(raw);
        if (r >= 0)
            r = sd_bus_message_append(
                raw, "t", job.stage == Job::Stage::resolve ? kResolveFilter : kOnlyTrusted);
        if (r >= 0)
            r = append_strings(raw, job.stage == Job::Stage::resolve ? job.names : job.ids);
        auto on_reply = [](sd_bus_message* m, void* userdata, sd_bus_error*) -> int {
            auto* t = static_cast<Ticket*>(userdata);
            if (const sd_bus_error* e = sd_bus_message_get_error(m))
                if (t->client->jobs_.count(t->id))
                    t->client->finish(t->id,
                                      {Outcome::Kind::failed, "PackageKit: " + error_text(e), {}});
            return 0;
        };
        if (r >= 0) {
            auto owned = std::make_unique<Ticket>(Ticket{self, id});
            sd_bus_slot* slot = nullptr;
            r = sd_bus_call_async(sd_bus_message_get_bus(m), &slot, raw, on_reply, owned.get(), 0);
            if (r >= 0)
                leave_to_bus(slot, std::move(owned));
        }
        if (r < 0)
            self->finish(id, {Outcome::Kind::failed,
                              std::string("cannot ask PackageKit: ") + std::strerror(-r),
                              {}});
        return 0;
    };
    int r = call_async(connection_->bus.get(), on_created, Ticket{this, id}, kPath, kService,
                       "CreateTransaction", "");
    if (r < 0) {
        Job& job = *jobs_.at(id);
        job.ended = Outcome{
            Outcome::Kind::failed, std::string("cannot ask PackageKit: ") + std::strerror(-r), {}};
        sd_event_source_set_time_relative(job.timer.get(), 0);
    }
}

void Client::cancel(const std::string& path) {
    // org.freedesktop.PackageKit.Transaction.Cancel(): "This method cancels a transaction that
    // is already running" (PackageKit src/org.freedesktop.PackageKit.Transaction.xml). No
    // reply is waited for (no slot, no callback: sent with NO_REPLY_EXPECTED); the job ends
    // now whatever PackageKit does.
    if (!connection_)
        return;
    if (int r = sd_bus_call_method_async(connection_->bus.get(), nullptr, kService, path.c_str(),
                                         kTransaction, "Cancel", nullptr, nullptr, "");
        r < 0)
        log::warning("cannot cancel the PackageKit transaction {}: {}", path, std::strerror(-r));
    else
        log::info("cancelled the PackageKit transaction {}: it took too long", path);
}

void Client::on_owner_gone(const std::string& old_owner) {
    std::vector<uint64_t> gone;
    for (const auto& [id, job] : jobs_)
        if (!job->path.empty() && job->owner == old_owner)
            gone.push_back(id);
    for (uint64_t id : gone)
        finish(id, {Outcome::Kind::failed, "PackageKit left the bus during the transaction", {}});
}

void Client::on_signal(const std::string& path, const std::string& member, void* message) {
    auto* m = static_cast<sd_bus_message*>(message);
    const char* sender = sd_bus_message_get_sender(m);
    for (auto& [id, job] : jobs_) {
        if (job->path != path)
            continue;
        if (!sender || job->owner != sender) {
            log::warning("ignored a PackageKit {} signal from {}, not PackageKit ({})", member,
                         sender ? sender : "no sender", job->owner);
            return;
        }
        if (member == "Package" && job->stage == Job::Stage::resolve) {
            // Package(u info, s package_id, s summary): one resolved package; several
            // architectures of one name may come, the first is taken.
            uint32_t info = 0;
            const char* pid = nullptr;
            const char* summary = nullptr;
            if (sd_bus_message_read(m, "uss", &info, &pid, &summary) < 0 || !pid)
                return;
            const std::string name = id_name(pid);
            // Only a package of a name asked for: Resolve of "libawesome" gives no other.
            if (std::find(job->names.begin(), job->names.end(), name) == job->names.end())
                return;
            bool have = false;
            for (const auto& known : job->ids)
                have = have || id_name(known) == name;
            if (!have)
                job->ids.emplace_back(pid);
        } else if (member == "ErrorCode") {
            // ErrorCode(u code, s details): the backend's own text. The first one is kept.
            uint32_t code = 0;
            const char* details = nullptr;
            if (sd_bus_message_read(m, "us", &code, &details) >= 0 && !job->error)
                job->error = details && *details ? details : fmt::format("error {}", code);
        } else if (member == "Finished") {
            // Finished(u exit, u runtime_ms): the transaction is over.
            uint32_t exit = 0, runtime = 0;
            const bool read = sd_bus_message_read(m, "uu", &exit, &runtime) >= 0;
            job->path.clear();
            const uint64_t job_id = id;
            if (!read) {
                // The transaction is over either way: waiting would only reach the time bound.
                const char* signature = sd_bus_message_get_signature(m, 1);
                finish(job_id, {Outcome::Kind::failed,
                                fmt::format("PackageKit's Finished signal is not (uu) but ({})",
                                            signature ? signature : ""),
                                {}});
                return;
            }
            if (exit != kExitSuccess || job->error) {
                finish(job_id, {Outcome::Kind::failed,
                                job->error ? *job->error : "PackageKit: " + exit_name(exit),
                                {}});
                return;
            }
            if (job->stage == Job::Stage::install) {
                finish(job_id, {Outcome::Kind::installed, "", job->ids});
                return;
            }
            std::vector<std::string> unresolved;
            for (const auto& name : job->names) {
                bool found = false;
                for (const auto& known : job->ids)
                    found = found || id_name(known) == name;
                if (!found)
                    unresolved.push_back(name);
            }
            if (!unresolved.empty()) {
                finish(job_id, {Outcome::Kind::failed,
                                fmt::format("PackageKit knows no package {} to install",
                                            fmt::join(unresolved, ", ")),
                                {}});
                return;
            }
            job->stage = Job::Stage::install;
            create_transaction(job_id);
        }
        return;
    }
}

void Client::on_properties_changed(void* message) {
    auto* m = static_cast<sd_bus_message*>(message);
    const char* path = sd_bus_message_get_path(m);
    const char* sender = sd_bus_message_get_sender(m);
    Job* job = nullptr;
    for (auto& [id, j] : jobs_)
        if (path && j->path == path)
            job = j.get();
    // Only InstallPackages' progress is the install's (Resolve's is over in a moment), and
    // only from the owner that created the transaction, as for its other signals.
    if (!job || job->stage != Job::Stage::install || !job->progress || !sender ||
        job->owner != sender)
        return;
    // PropertiesChanged(s interface, a{sv} changed, as invalidated).
    const char* interface = nullptr;
    if (sd_bus_message_read(m, "s", &interface) < 0 || !interface ||
        std::strcmp(interface, kTransaction) != 0 ||
        sd_bus_message_enter_container(m, 'a', "{sv}") <= 0)
        return;
    std::optional<uint32_t> percent;
    while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
        const char* name = nullptr;
        uint32_t value = 0;
        if (sd_bus_message_read(m, "s", &name) < 0)
            return;
        if (name && std::strcmp(name, "Percentage") == 0) {
            if (sd_bus_message_read(m, "v", "u", &value) < 0)
                return; // not a u: a PackageKit that does not follow its own API
            percent = value;
        } else if (sd_bus_message_skip(m, "v") < 0) {
            return;
        }
        if (sd_bus_message_exit_container(m) < 0)
            return;
    }
    if (!percent || *percent >= kPercentageUnknown || percent == job->percent)
        return;
    job->percent = percent;
    job->progress(*percent);
}

void Client::finish(uint64_t id, Outcome outcome) {
    auto it = jobs_.find(id);
    if (it == jobs_.end())
        return;
    // Taken out first: `done` may start another install (which adds to jobs_).
    std::unique_ptr<Job> job = std::move(it->second);
    jobs_.erase(it);
    if (outcome.kind == Outcome::Kind::installed)
        log::info("PackageKit installed {}", fmt::join(outcome.package_ids, ", "));
    else
        log::warning("PackageKit could not install {}: {}", fmt::join(job->names, " "),
                     outcome.error);
    Done done = std::move(job->done);
    // The job's timer may be the source dispatching now: sd-event frees it after its callback.
    job.reset();
    if (done)
        done(outcome);
}

} // namespace rdmad::packagekit
