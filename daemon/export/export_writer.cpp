// SPDX-License-Identifier: MIT
#include "export/export_writer.hpp"

#include "export/nfd.hpp"
#include "export/prometheus.hpp"
#include "util/atomic_file.hpp"
#include "util/log.hpp"
#include "util/loop_edge.hpp"

#include <cerrno>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace rdmad::exports {
namespace {

uint64_t now_usec(clockid_t clock) {
    struct timespec ts {};
    clock_gettime(clock, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000 + uint64_t(ts.tv_nsec) / 1000;
}

/// Remove what an interrupted write left in `dir`: write_file_atomically()'s hidden temporary
/// files, `stem` and six characters (mkostemp(3)): ".rdmad.prom.rdmad-tmp.XXXXXX",
/// ".rdmad.rdmad-tmp.XXXXXX". The directories are shared with others: nothing else is touched.
void remove_stale_temporaries(const std::string& dir, const std::string& stem) {
    DIR* d = ::opendir(dir.c_str());
    if (!d)
        return;
    while (const struct dirent* e = ::readdir(d)) {
        const std::string entry = e->d_name;
        if (entry.size() == stem.size() + 6 && entry.compare(0, stem.size(), stem) == 0)
            ::unlinkat(::dirfd(d), entry.c_str(), 0);
    }
    ::closedir(d);
}

/// Writes of rdmad.prom in a row that a change of the Inventory may cut short before the next
/// is written whole: a flood of changes delays the file, it cannot hold it off.
constexpr unsigned kMaxAborts = 3;

bool is_directory(const std::string& dir) {
    struct stat st {};
    return !dir.empty() && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

} // namespace

ExportWriter::ExportWriter(sd_event* event, std::function<ExportConfig()> config,
                           WriterOptions options)
    : event_(event), config_(std::move(config)), options_(options) {
    // Accuracy 1 ms (0 would be sd-event's default slack of 250 ms); the NFD renewal a minute.
    int r = sd_event_add_time(event_, into(timer_), CLOCK_MONOTONIC, 0, 1000, on_timer, this);
    if (r >= 0)
        r = sd_event_source_set_enabled(timer_.get(), SD_EVENT_OFF);
    // After everything else that is due: the D-Bus signals of the pass that asked for the
    // write leave first (at 1,024 devices a write renders and writes 1.3 MB).
    if (r >= 0)
        r = sd_event_source_set_priority(timer_.get(), SD_EVENT_PRIORITY_IDLE);
    if (r >= 0)
        r = sd_event_add_time(event_, into(refresh_), CLOCK_MONOTONIC, 0, 60'000'000, on_refresh,
                              this);
    if (r >= 0)
        r = sd_event_source_set_enabled(refresh_.get(), SD_EVENT_OFF);
    if (r >= 0)
        r = sd_event_add_defer(event_, into(slice_), on_slice, this);
    if (r >= 0)
        r = sd_event_source_set_enabled(slice_.get(), SD_EVENT_OFF);
    // A slice only when nothing else is due: signals, calls and uevents go first.
    if (r >= 0)
        r = sd_event_source_set_priority(slice_.get(), SD_EVENT_PRIORITY_IDLE);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "export timer");
}

ExportWriter::~ExportWriter() {
    // rdmad stops: what it said stops being true. Without the files, node-exporter drops the
    // rdmad_* series (`up unless on(instance) rdmad_state` finds the host) and NFD the labels,
    // instead of serving the last state as if it were current.
    for (const std::string* path : {&prom_path_, &nfd_path_})
        if (!path->empty())
            ::unlink(path->c_str());
}

void ExportWriter::changed(const Inventory& inventory, const ChangeSet& changes,
                           const std::string& state, size_t config_errors, bool reconciled_ok,
                           std::vector<Problem> manager_problems) {
    if (inventory_ != &inventory)
        prometheus_.invalidate();
    inventory_ = &inventory;
    prometheus_.changed(changes);
    facts_.state = state;
    facts_.config_errors = config_errors;
    facts_.problems = std::move(manager_problems);
    if (reconciled_ok)
        facts_.last_reconcile_usec = now_usec(CLOCK_REALTIME);
    pending_ = true;
    schedule();
}

void ExportWriter::schedule() {
    if (armed_)
        return; // the timer writes the latest state when it fires
    const uint64_t now = now_usec(CLOCK_MONOTONIC);
    if (last_write_usec_ == 0 || now - last_write_usec_ >= options_.min_interval_usec)
        arm(now); // leading edge: an isolated change is written at once, after its signals
    else
        arm(last_write_usec_ + options_.min_interval_usec);
}

void ExportWriter::arm(uint64_t at_usec) {
    if (sd_event_source_set_time(timer_.get(), at_usec) >= 0 &&
        sd_event_source_set_enabled(timer_.get(), SD_EVENT_ONESHOT) >= 0)
        armed_ = true;
    else
        write_pending(); // no timer: write now rather than never
}

int ExportWriter::on_timer(sd_event_source*, uint64_t, void* userdata) {
    auto* self = static_cast<ExportWriter*>(userdata);
    self->armed_ = false;
    return at_loop_edge("exports", [&] {
        if (self->pending_)
            self->write_pending();
    });
}

int ExportWriter::on_refresh(sd_event_source*, uint64_t, void* userdata) {
    auto* self = static_cast<ExportWriter*>(userdata);
    self->nfd_labels_.clear(); // a new expiry-time is due: rewrite even if nothing changed
    self->pending_ = true;
    return at_loop_edge("exports", [&] { self->write_pending(); });
}

int ExportWriter::on_slice(sd_event_source*, void* userdata) {
    auto* self = static_cast<ExportWriter*>(userdata);
    return at_loop_edge("exports", [&] {
        if (!self->prom_slice())
            sd_event_source_set_enabled(self->slice_.get(), SD_EVENT_OFF);
    });
}

void ExportWriter::write_pending() {
    pending_ = false;
    last_write_usec_ = now_usec(CLOCK_MONOTONIC);
    if (!inventory_)
        return;
    const ExportConfig config = config_();
    // A file rdmad wrote where [export] no longer points (changed, or "", on SIGHUP) goes.
    const bool prom_on = is_directory(config.prometheus_dir);
    const bool nfd_on = is_directory(config.nfd_dir);
    const std::string prom_path = config.prometheus_dir + "/" + prometheus_file;
    if (prom_job_ && (!prom_on || prom_job_->path != prom_path)) {
        prom_job_.reset(); // its temporary file goes with it
        sd_event_source_set_enabled(slice_.get(), SD_EVENT_OFF);
    }
    if (!prom_path_.empty() && (!prom_on || prom_path_ != prom_path)) {
        ::unlink(prom_path_.c_str());
        prom_path_.clear();
    }
    if (!prom_on)
        prom_error_.clear();
    if (!nfd_path_.empty() && (!nfd_on || nfd_path_ != config.nfd_dir + "/" + nfd_file)) {
        ::unlink(nfd_path_.c_str());
        nfd_path_.clear();
    }
    if (prom_on) {
        prometheus_.update(*inventory_, facts_);
        const bool written =
            prom_path == prom_path_ && prometheus_.generation() == prom_generation_;
        const bool writing = prom_job_ && prom_job_->generation == prometheus_.generation() &&
                             prom_job_->version == inventory_->version();
        if (!written && !writing)
            start_prom(prom_path);
    }
    nfd_error_.clear();
    if (nfd_on) {
        const std::string path = config.nfd_dir + "/" + nfd_file;
        std::string labels = render_nfd_labels(inventory_->state(), facts_);
        if (path != nfd_path_ || labels != nfd_labels_) {
            if (path != nfd_path_)
                remove_stale_temporaries(config.nfd_dir,
                                         "." + std::string(nfd_file) + ".rdmad-tmp.");
            const uint64_t ttl_s = options_.nfd_ttl_usec / 1'000'000;
            const auto expiry = static_cast<int64_t>(now_usec(CLOCK_REALTIME) / 1'000'000 + ttl_s);
            try {
                // NFD reads every file of features.d that is not a dot-file: the temporary
                // file must be one.
                write_file_atomically(path, render_nfd(labels, expiry), 0644, true,
                                      Sync::replace_only);
                nfd_path_ = path;
                nfd_labels_ = std::move(labels);
                // Renew the expiry halfway through its life, whether or not labels change.
                sd_event_source_set_time(refresh_.get(),
                                         last_write_usec_ + options_.nfd_ttl_usec / 2);
                sd_event_source_set_enabled(refresh_.get(), SD_EVENT_ONESHOT);
            } catch (const std::system_error& e) {
                nfd_error_ = e.what();
            }
        }
    } else {
        sd_event_source_set_enabled(refresh_.get(), SD_EVENT_OFF);
    }
    report();
}

void ExportWriter::start_prom(const std::string& path) {
    prom_job_.reset(); // one that a change cut short: its temporary file goes
    sd_event_source_set_enabled(slice_.get(), SD_EVENT_OFF);
    if (path != prom_path_)
        remove_stale_temporaries(path.substr(0, path.rfind('/')),
                                 "." + std::string(prometheus_file) + ".rdmad-tmp.");
    try {
        // A dot-file, not *.prom: node-exporter never reads it half-written. Rendered from
        // the Inventory as it streams: neither the whole text (1.3 MB at 1,024 devices) nor
        // any object's samples kept.
        prom_job_.reset(new PromJob{path, prometheus_.generation(), inventory_->version(),
                                    AtomicFile(path, true), prometheus_.stream(*inventory_)});
    } catch (const std::system_error& e) {
        end_prom(e.what());
        return;
    }
    // The first slice now (a small file is then written whole, at once); the rest when the
    // loop is idle, or now after kMaxAborts, or when no slice can be scheduled.
    if (!prom_slice())
        return;
    if (prom_aborts_ >= kMaxAborts || sd_event_source_set_enabled(slice_.get(), SD_EVENT_ON) < 0)
        while (prom_slice()) {
        }
}

bool ExportWriter::prom_slice() {
    if (!prom_job_)
        return false;
    if (prom_job_->version != inventory_->version()) {
        // The objects it walks may be gone: this state is not the one to write. The change
        // that moved the version asks for a write of its own; ask anyway.
        prom_job_.reset();
        ++prom_aborts_;
        pending_ = true;
        schedule();
        return false;
    }
    try {
        if (const std::string_view piece = prom_job_->stream.next(); !piece.empty())
            prom_job_->file.append(piece);
        if (!prom_job_->stream.done())
            return true;
        prom_job_->file.commit(0644, Sync::replace_only);
        prom_path_ = prom_job_->path;
        prom_generation_ = prom_job_->generation;
        end_prom("");
    } catch (const std::system_error& e) {
        end_prom(e.what());
    }
    return false;
}

void ExportWriter::end_prom(std::string error) {
    prom_job_.reset();
    prom_aborts_ = 0;
    prom_error_ = std::move(error);
    // The pieces rdmad.prom was rendered into went back to malloc: give their pages back too.
    malloc_trim(0);
    report();
}

void ExportWriter::report() {
    // Both files may fail: say both.
    std::string error = prom_error_;
    if (!nfd_error_.empty())
        error += (error.empty() ? "" : "; ") + nfd_error_;
    if (error == last_error_)
        return;
    if (!error.empty())
        log::warning("export: {}", error);
    else
        log::info("export: the files are written again");
    last_error_ = error;
    if (options_.on_error)
        options_.on_error(last_error_);
}

} // namespace rdmad::exports
