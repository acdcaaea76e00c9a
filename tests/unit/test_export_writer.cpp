// SPDX-License-Identifier: MIT
//
// The export writer (daemon/export/export_writer.hpp) on a real sd-event loop and real files:
// written at once after a quiet spell, at most once per interval during a burst and once more
// when it settles, never when nothing changed, off without its directory, the NFD temporary
// file a dot-file, and the files gone when the writer ends.
#include "export/export_writer.hpp"
#include "util/atomic_file.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <systemd/sd-event.h>

using namespace rdmad;
using namespace rdmad::exports;
using rdmad::test::TempDir;

namespace {

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

ino_t inode(const std::filesystem::path& p) {
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_ino;
}

LinkState eth0(const std::string& rdma_capable) {
    LinkState l;
    l.index = 2;
    l.name = "eth0";
    l.rdma_capable = rdma_capable;
    return l;
}

struct Loop {
    sd_event* event = nullptr;
    Loop() { REQUIRE(sd_event_new(&event) >= 0); }
    ~Loop() { sd_event_unref(event); }
    /// Run the loop until nothing is due within `usec` (the writer's timer is one-shot).
    int run_for(uint64_t usec) {
        int dispatched = 0;
        for (;;) {
            int r = sd_event_run(event, usec);
            REQUIRE(r >= 0);
            if (r == 0)
                return dispatched;
            ++dispatched;
        }
    }
};

} // namespace

TEST_CASE("export writer: at once (after the loop's other work) after a quiet spell, then at most "
          "once per interval, once more "
          "when the burst settles, never without a change") {
    TempDir dir("rdmad-unit-export");
    std::filesystem::create_directories(dir.path / "prom");
    std::filesystem::create_directories(dir.path / "nfd");
    ExportConfig config{(dir.path / "prom").string(), (dir.path / "nfd").string()};
    Loop loop;
    WriterOptions options;
    options.min_interval_usec = 100'000;
    {
        ExportWriter writer(
            loop.event, [&] { return config; }, options);
        const auto prom = dir.path / "prom" / "rdmad.prom";
        const auto nfd = dir.path / "nfd" / "rdmad";

        Inventory inv;
        writer.changed(inv, inv.put_link(eth0("yes")), "running", 0, true);
        // The leading edge: written at the loop's next turn, after whatever else is due (the
        // D-Bus signals of the pass that asked), not within the call.
        CHECK(!std::filesystem::exists(prom));
        CHECK(loop.run_for(1'000) == 1);
        REQUIRE(std::filesystem::exists(prom));
        REQUIRE(std::filesystem::exists(nfd));
        CHECK(slurp(prom).find("rdmad_netdev_rdma_capable{device=\"eth0\",state=\"yes\"} 1\n") !=
              std::string::npos);
        CHECK(slurp(nfd).find("# +expiry-time=") != std::string::npos);
        const ino_t first = inode(prom);

        // A burst: changes within the interval wait for the timer; the last one wins.
        writer.changed(inv, inv.put_link(eth0("no")), "running", 0, false);
        writer.changed(inv, inv.put_link(eth0("module-not-loaded")), "running", 0, false);
        CHECK(inode(prom) == first);
        CHECK(loop.run_for(1'000'000) == 1); // the one timer, once
        CHECK(inode(prom) != first);
        CHECK(slurp(prom).find(
                  "rdmad_netdev_rdma_capable{device=\"eth0\",state=\"module-not-loaded\"} 1\n") !=
              std::string::npos);

        // A pass that changed nothing exported (the interval is over: rendered at once):
        // nothing written, and no timer left running (zero idle wake-ups).
        const ino_t second = inode(prom);
        const ino_t nfd_ino = inode(nfd);
        writer.changed(inv, inv.put_link(eth0("module-not-loaded")), "running", 0, false);
        CHECK(loop.run_for(1'000) == 1); // one look
        CHECK(inode(prom) == second);
        CHECK(inode(nfd) == nfd_ino); // the labels did not change either
        CHECK(loop.run_for(300'000) == 0);

        // Only the NFD temporary file is a dot-file; none is left behind.
        size_t entries = 0;
        for (const auto& e : std::filesystem::directory_iterator(dir.path / "nfd")) {
            CHECK(e.path().filename() == "rdmad");
            ++entries;
        }
        CHECK(entries == 1);

        // [export] turns Prometheus off (SIGHUP): its file goes at the next write.
        config.prometheus_dir.clear();
        loop.run_for(200'000);
        writer.changed(inv, inv.put_link(eth0("yes")), "degraded", 1, false);
        loop.run_for(200'000);
        CHECK(!std::filesystem::exists(prom));
        CHECK(slurp(nfd).find("rdmad.in-sync=false\n") != std::string::npos); // config error
    }
    // The writer's end (rdmad stops): its files are gone.
    CHECK(!std::filesystem::exists(dir.path / "nfd" / "rdmad"));
}

TEST_CASE("export writer: a directory that does not exist turns its file off") {
    TempDir dir("rdmad-unit-export");
    ExportConfig config{(dir.path / "absent").string(), ""};
    Loop loop;
    ExportWriter writer(loop.event, [&] { return config; });
    Inventory inv;
    writer.changed(inv, inv.put_link(eth0("yes")), "running", 0, true);
    CHECK(loop.run_for(300'000) == 1); // one look, nothing written
    CHECK(!std::filesystem::exists(dir.path / "absent"));
    // Created later: written at the next change.
    std::filesystem::create_directories(dir.path / "absent");
    writer.changed(inv, inv.put_link(eth0("no")), "running", 0, true);
    loop.run_for(300'000);
    CHECK(std::filesystem::exists(dir.path / "absent" / "rdmad.prom"));
}

TEST_CASE("a file written piece by piece replaces the old one whole; a failure midway leaves the "
          "old content and no temporary file") {
    TempDir dir;
    const auto path = dir.path / "rdmad.prom";
    write_file_atomically(path.string(), "old\n", 0644, true, Sync::replace_only);
    write_file_atomically(
        path.string(),
        [](const FileSink& put) {
            put("# HELP a\n");
            put("");
            put("a 1\n");
        },
        0644, true, Sync::replace_only);
    CHECK(slurp(path) == "# HELP a\na 1\n");

    CHECK_THROWS_AS(write_file_atomically(
                        path.string(),
                        [](const FileSink& put) {
                            put("half");
                            throw std::runtime_error("the renderer failed");
                        },
                        0644, true, Sync::replace_only),
                    std::runtime_error);
    CHECK(slurp(path) == "# HELP a\na 1\n");
    size_t entries = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path)) {
        CHECK(e.path().filename() == "rdmad.prom");
        ++entries;
    }
    CHECK(entries == 1);
}
