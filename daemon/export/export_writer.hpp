// SPDX-License-Identifier: MIT
//
// Writes the exports (rdmad.prom for node-exporter's textfile collector, the NFD feature file
// `rdmad`) when what they say changed: atomically (util/atomic_file: a temporary file in the
// same directory, then rename, without fsync (Sync::replace_only); for NFD a dot-file, which
// nfd-worker ignores), never a torn
// file. Event-driven: the first change after a quiet spell is written at once, the rest of a
// burst at most once per `min_interval_usec`, and once more when the burst settles. The one
// timer (sd-event, CLOCK_MONOTONIC, one-shot) runs only while a change waits; besides it, a
// long timer renews the NFD expiry (every nfd_ttl/2, 12 h by default). A directory that does
// not exist (or "" in [export]) turns its file off; it is looked up at each write, so creating
// the directory later turns it on at the next change. When rdmad stops (the writer's end), it
// removes the files it wrote: stale facts are worse than none. rdmad.prom (1.3 MB at 1,024
// devices, 3 ms to render and write) is written in slices of about 64 KiB, one per turn of the
// event loop that has nothing else to do, so that a uevent or a D-Bus call waits for one slice
// at most instead of the whole file; a change of the Inventory during the write starts it
// again (the file is one state, never two), and after kMaxAborts writes cut short in a row
// the next is written whole.
#pragma once

#include "config/desired.hpp"
#include "export/facts.hpp"
#include "export/prometheus.hpp"
#include "inventory/inventory.hpp"
#include "inventory/model.hpp"
#include "util/atomic_file.hpp"
#include "util/event_source.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemd/sd-event.h>

namespace rdmad::exports {

/// The file name in prometheus_dir (node-exporter reads *.prom there).
inline constexpr const char* prometheus_file = "rdmad.prom";
/// The file name in nfd_dir.
inline constexpr const char* nfd_file = "rdmad";

struct WriterOptions {
    /// At most one write a second while changes keep coming: node-exporter reads the file at
    /// each scrape (15 s and more apart), and at 1,024 devices each write of rdmad.prom is
    /// 1.3 MB rendered and a rename that ext4 makes write it back (1.7-2.3 ms in one piece).
    uint64_t min_interval_usec = 1'000'000;
    uint64_t nfd_ttl_usec = 24ull * 3600 * 1'000'000; ///< expiry-time = write time + this
    /// Called when the outcome of the writes changes: the error text ("dir/file: reason",
    /// both files' joined by "; "), "" once they write again.
    std::function<void(const std::string& error)> on_error;
};

class ExportWriter {
  public:
    /// `config` is asked at each write (SIGHUP may change [export]); `event` must outlive the
    /// writer. Throws std::system_error when the timer cannot be created.
    ExportWriter(sd_event* event, std::function<ExportConfig()> config, WriterOptions options = {});
    ~ExportWriter();
    ExportWriter(const ExportWriter&) = delete;
    ExportWriter& operator=(const ExportWriter&) = delete;

    /// What rdmad exports may have changed: the inventory as published, the objects of it
    /// that `changes` names (only those are rendered again; every change of the inventory
    /// must reach this call), and the daemon's facts. `inventory` is read when the write
    /// happens (now, or when the timer fires), so it must stay valid until the next call or
    /// the writer's end (the daemon's own). `reconciled_ok`: this pass left no action failed
    /// and no configuration error (stamps rdmad_last_reconcile_timestamp_seconds).
    /// `manager_problems`: org.rdmad1.Manager Problems as they are now (rdmad_problems).
    void changed(const Inventory& inventory, const ChangeSet& changes, const std::string& state,
                 size_t config_errors, bool reconciled_ok,
                 std::vector<Problem> manager_problems = {});

  private:
    /// rdmad.prom being written, a slice (PrometheusStream::next(), about 64 KiB) at each
    /// turn of the event loop that has nothing else to do.
    struct PromJob {
        std::string path;
        uint64_t generation; ///< PrometheusRenderer::generation() it renders
        uint64_t version;    ///< Inventory::version() it started at
        AtomicFile file;
        PrometheusStream stream;
    };

    void write_pending();
    /// Write rdmad.prom to `path`: in slices, or whole after kMaxAborts writes in a row that
    /// a change of the Inventory cut short.
    void start_prom(const std::string& path);
    /// The job's next slice; commits it after its last. False once the job has ended.
    bool prom_slice();
    /// The job ended (written or failed): its outcome is reported.
    void end_prom(std::string error);
    /// A write is wanted: now after a quiet spell, else once min_interval_usec has passed
    /// since the last.
    void schedule();
    void arm(uint64_t at_usec);
    /// Log and report (on_error) the two files' errors, once until they change.
    void report();
    static int on_timer(sd_event_source* s, uint64_t usec, void* userdata);
    static int on_refresh(sd_event_source* s, uint64_t usec, void* userdata);
    static int on_slice(sd_event_source* s, void* userdata);

    sd_event* event_;
    std::function<ExportConfig()> config_;
    WriterOptions options_;
    EventSource timer_;   ///< the burst timer, off unless a change waits
    EventSource refresh_; ///< renews the NFD expiry, off without an NFD file
    EventSource slice_;   ///< idle-priority defer: on while prom_job_ runs
    const Inventory* inventory_ = nullptr;
    PrometheusRenderer prometheus_; ///< rdmad.prom, rendered from the Inventory at each write
    ManagerFacts facts_;
    bool pending_ = false;
    bool armed_ = false;
    uint64_t last_write_usec_ = 0; ///< CLOCK_MONOTONIC of the last write attempt, 0 = never
    std::string prom_path_;        ///< the file rdmad wrote
    /// PrometheusRenderer::generation() of what prom_path_ holds: no copy of 1.3 MB (at
    /// 1,024 devices) kept to compare with
    uint64_t prom_generation_ = 0;
    std::string nfd_path_, nfd_labels_;
    std::unique_ptr<PromJob> prom_job_;
    unsigned prom_aborts_ = 0; ///< jobs in a row that a change of the Inventory cut short
    std::string prom_error_, nfd_error_;
    std::string last_error_; ///< logged and reported (on_error) once until it changes
};

} // namespace rdmad::exports
