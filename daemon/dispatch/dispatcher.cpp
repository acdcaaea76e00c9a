// SPDX-License-Identifier: MIT
#include "dispatch/dispatcher.hpp"

#include "util/run_tool.hpp"

#include "util/log.hpp"
#include "util/loop_edge.hpp"
#include "util/unique_fd.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

namespace rdmad::dispatch {

namespace {

/// The PATH a script gets (systemd's default for services, path-lookup.c DEFAULT_PATH).
constexpr const char* kPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

uint64_t now_usec(sd_event* event) {
    uint64_t now = 0;
    sd_event_now(event, CLOCK_MONOTONIC, &now);
    return now;
}

log::Fields fields_of(const Event& e, const Script& s) {
    auto get = [&](const char* name) {
        auto it = e.env.find(name);
        return it == e.env.end() ? std::string() : it->second;
    };
    const std::string port = get("RDMAD_PORT");
    log::Fields f = log::about(get("RDMAD_DEVICE"), get("RDMAD_NETDEV"), get("RDMAD_PCI_ADDRESS"),
                               port.empty() ? 0 : static_cast<uint32_t>(std::stoul(port)));
    f.emplace_back("RDMAD_EVENT", e.name);
    if (!s.path.empty())
        f.emplace_back("RDMAD_SCRIPT", s.path);
    return f;
}

} // namespace

Dispatcher::Dispatcher(sd_event* event, std::function<DispatcherConfig()> config, size_t max_queue)
    : event_(event), config_(std::move(config)), max_queue_(max_queue) {
    if (sd_event_add_defer(event_, into(kick_), on_kick, this) < 0)
        throw std::runtime_error("cannot add the dispatcher's event source");
    sd_event_source_set_enabled(kick_.get(), SD_EVENT_OFF);
}

Dispatcher::~Dispatcher() {
    if (pid_ > 0) {
        kill(-pid_, SIGKILL);
        kill(pid_, SIGKILL);
        child_.reset(); // before reaping: sd-event must not wait for it
        waitpid(pid_, nullptr, 0);
    }
}

void Dispatcher::start(const Inventory& inventory) {
    known_ = know_all(inventory);
    started_ = true;
}

void Dispatcher::changed(const Inventory& inventory, const ChangeSet& changes) {
    if (!started_ || changes.empty())
        return;
    auto events = derive_events(changes, inventory, known_);
    if (events.empty())
        return;
    for (auto& e : events)
        queue_.push_back(std::move(e));
    if (queue_.size() > max_queue_) {
        auto kept = coalesce(std::vector<Event>(queue_.begin(), queue_.end()));
        if (!overflowed_)
            log::warning("dispatcher: more than {} events wait for the scripts; keeping the "
                         "latest event of each object ({} of {})",
                         max_queue_, kept.size(), queue_.size());
        overflowed_ = true;
        queue_.assign(std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
    }
    kick();
}

void Dispatcher::kick() {
    if (pid_ < 0)
        sd_event_source_set_enabled(kick_.get(), SD_EVENT_ONESHOT);
}

int Dispatcher::on_kick(sd_event_source*, void* userdata) {
    return at_loop_edge("dispatcher", [&] { static_cast<Dispatcher*>(userdata)->next(); });
}

void Dispatcher::log_listing(const Listing& listing) {
    std::map<std::string, std::string> now;
    for (const auto& r : listing.refused) {
        now[r.script.path] = r.version;
        auto it = refused_logged_.find(r.script.path);
        if (it != refused_logged_.end() && it->second == r.version && !r.version.empty())
            continue;
        log::with(log::Level::warning, {{"RDMAD_SCRIPT", r.script.path}},
                  "dispatcher: not running {}: {}", r.script.path, r.reason);
    }
    refused_logged_ = std::move(now);
    if (listing.errors != errors_logged_)
        for (const auto& e : listing.errors)
            log::warning("dispatcher: cannot list {}", e);
    errors_logged_ = listing.errors;
}

void Dispatcher::next() {
    // The directories are listed once per call: the events this call takes without running a
    // script (none to run) are all taken at the same instant, so one listing serves them all
    // (a 1,000-VF burst queues 3,000 events: a stat and an open per directory each). A script
    // run ends the call; the next event is listed again when it has exited.
    bool listed = false;
    while (pid_ < 0) {
        if (current_ && next_script_ < scripts_.size()) {
            spawn(scripts_[next_script_++]);
            continue;
        }
        current_.reset();
        if (queue_.empty()) {
            overflowed_ = false;
            return;
        }
        current_ = std::move(queue_.front());
        queue_.pop_front();
        if (!listed || !scripts_.empty()) {
            const DispatcherConfig config = config_();
            Listing listing = list_scripts(config.directories);
            log_listing(listing);
            scripts_ = std::move(listing.run);
            timeout_sec_ = config.timeout_sec;
            listed = true;
        }
        next_script_ = 0;
    }
}

bool Dispatcher::spawn(const Script& script) {
    const Event& e = *current_;
    // Checked again right before the run: earlier scripts may have run for a while since the
    // listing (the directory is root's alone, list_scripts(), so only root can swap it).
    struct stat st {};
    if (stat(script.path.c_str(), &st) != 0 || refusal(st)) {
        log::with(log::Level::warning, {{"RDMAD_SCRIPT", script.path}},
                  "dispatcher: not running {}: it changed since it was checked", script.path);
        return false;
    }
    std::vector<std::string> env_s = {kPath};
    for (const auto& [k, v] : e.env)
        env_s.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_s)
        envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string path = script.path, object = e.object, name = e.name;
    char* argv[] = {path.data(), object.data(), name.data(), nullptr};

    // The script's output goes to the journal under its own identifier, else nowhere.
    UniqueFd out(sd_journal_stream_fd("rdmad-dispatcher", LOG_INFO, 1));
    if (!out)
        out.reset(open("/dev/null", O_WRONLY | O_CLOEXEC));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (out) {
        posix_spawn_file_actions_adddup2(&fa, out.get(), 1);
        posix_spawn_file_actions_adddup2(&fa, out.get(), 2);
    }
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    posix_spawnattr_t attr;
    init_child_spawnattr(attr); // signals at their defaults; its own group for the time limit
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, path.c_str(), &fa, &attr, argv, envp.data());
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    out.reset();
    if (rc != 0) {
        log::with(log::Level::warning, fields_of(e, script),
                  "dispatcher: cannot run {} ({} {}): {}", script.path, e.object, e.name,
                  std::strerror(rc));
        return false;
    }
    if (sd_event_add_child(event_, into(child_), pid, WEXITED, on_child, this) < 0) {
        log::error("dispatcher: cannot watch {} (pid {}); killed", script.path, pid);
        kill(-pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        return false;
    }
    pid_ = pid;
    running_ = script;
    timed_out_ = false;
    started_usec_ = now_usec(event_);
    sd_event_add_time(event_, into(timer_), CLOCK_MONOTONIC,
                      started_usec_ + uint64_t(timeout_sec_) * 1'000'000, 10'000, on_timeout, this);
    log::with(log::Level::debug, fields_of(e, script), "dispatcher: {} {} {} (pid {})", script.path,
              e.object, e.name, pid);
    return true;
}

int Dispatcher::on_timeout(sd_event_source*, uint64_t, void* userdata) {
    auto* self = static_cast<Dispatcher*>(userdata);
    if (self->pid_ > 0) {
        self->timed_out_ = true;
        kill(-self->pid_, SIGKILL);
        kill(self->pid_, SIGKILL);
    }
    return 0;
}

int Dispatcher::on_child(sd_event_source*, const siginfo_t* si, void* userdata) {
    auto* self = static_cast<Dispatcher*>(userdata);
    // What the script left running in its process group ends with it: a script is a step,
    // not a way to start daemons (a systemd unit is). Its pid is not reaped yet, so the group
    // id is still its own.
    kill(-self->pid_, SIGKILL);
    // The sources below must go whatever the log does.
    at_loop_edge("dispatcher", [&] {
        const Event& e = *self->current_;
        const Script& s = self->running_;
        const double secs = double(now_usec(self->event_) - self->started_usec_) / 1e6;
        if (self->timed_out_) {
            log::with(log::Level::warning, fields_of(e, s),
                      "dispatcher: {} ({} {}) killed after its time limit of {} s", s.path,
                      e.object, e.name, self->timeout_sec_);
        } else if (si->si_code == CLD_EXITED && si->si_status == 0) {
            log::with(log::Level::debug, fields_of(e, s), "dispatcher: {} ({} {}) done in {:.3f} s",
                      s.path, e.object, e.name, secs);
        } else if (si->si_code == CLD_EXITED) {
            log::with(log::Level::warning, fields_of(e, s),
                      "dispatcher: {} ({} {}) failed with exit status {}", s.path, e.object, e.name,
                      si->si_status);
        } else {
            log::with(log::Level::warning, fields_of(e, s), "dispatcher: {} ({} {}) killed by {}",
                      s.path, e.object, e.name, strsignal(si->si_status));
        }
    });
    // sd-event reaps the child after this callback (WEXITED); the sources go now.
    // Unreferenced, not disabled: the child is not reaped yet.
    sd_event_source_unref(self->child_.release());
    self->timer_.reset();
    self->pid_ = -1;
    return at_loop_edge("dispatcher", [&] { self->next(); });
}

} // namespace rdmad::dispatch
