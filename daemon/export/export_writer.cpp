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
                           const std::string& state, size_t config_errors, bool reconciled_ok) {
    if (inventory_ != &inventory)
        prometheus_.invalidate();
    inventory_ = &inventory;
    prometheus_.changed(changes);
    facts_.state = state;
    facts_.config_errors = config_errors;
    if (reconciled_ok)
        facts_.last_reconcile_usec = now_usec(CLOCK_REALTIME);
    pending_ = true;
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

void ExportWriter::write_pending() {
    pending_ = false;
    last_write_usec_ = now_usec(CLOCK_MONOTONIC);
    if (!inventory_)
        return;
    const ExportConfig config = config_();
    std::string error;
    // A file rdmad wrote where [export] no longer points (changed, or "", on SIGHUP) goes.
    const bool prom_on = is_directory(config.prometheus_dir);
    const bool nfd_on = is_directory(config.nfd_dir);
    if (!prom_path_.empty() &&
        (!prom_on || prom_path_ != config.prometheus_dir + "/" + prometheus_file)) {
        ::unlink(prom_path_.c_str());
        prom_path_.clear();
    }
    if (!nfd_path_.empty() && (!nfd_on || nfd_path_ != config.nfd_dir + "/" + nfd_file)) {
        ::unlink(nfd_path_.c_str());
        nfd_path_.clear();
    }
    if (prom_on) {
        const std::string path = config.prometheus_dir + "/" + prometheus_file;
        prometheus_.update(*inventory_, facts_);
        if (path != prom_path_ || prometheus_.generation() != prom_generation_) {
            if (path != prom_path_)
                remove_stale_temporaries(config.prometheus_dir,
                                         "." + std::string(prometheus_file) + ".rdmad-tmp.");
            try {
                // A dot-file, not *.prom: node-exporter never reads it half-written.
                // Rendered from the Inventory as it streams, in pieces of 64 KiB: neither
                // the whole text (1.3 MB at 1,024 devices) nor any object's samples kept.
                write_file_atomically(
                    path, [&](const FileSink& put) { prometheus_.write(*inventory_, put); }, 0644,
                    true, Sync::replace_only);
                prom_path_ = path;
                prom_generation_ = prometheus_.generation();
            } catch (const std::system_error& e) {
                error = e.what();
            }
        }
    }
    // The piece rdmad.prom was rendered into went back to malloc: give its pages back too.
    malloc_trim(0);
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
                // Both files may fail in one pass: say both.
                error += (error.empty() ? "" : "; ") + std::string(e.what());
            }
        }
    } else {
        sd_event_source_set_enabled(refresh_.get(), SD_EVENT_OFF);
    }
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
