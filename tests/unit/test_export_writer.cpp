// SPDX-License-Identifier: MIT
//
// The export writer (daemon/export/export_writer.hpp) on a real sd-event loop and real files:
// written at once after a quiet spell, at most once per interval during a burst and once more
// when it settles, never when nothing changed, off without its directory, the NFD temporary
// file a dot-file, and the files gone when the writer ends; a large rdmad.prom written in
// slices between the loop's other work, written again whole when the Inventory changes midway.
#include "export/export_writer.hpp"
#include "util/atomic_file.hpp"

#include "inventory_fixtures.hpp"
#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-event.h>
#include <vector>

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

namespace {

/// `n` dual-port devices and their netdevs: about 1.2 KiB of rdmad.prom each.
void fill(Inventory& inv, int n) {
    for (int i = 0; i < n; ++i) {
        char pci[32];
        std::snprintf(pci, sizeof pci, "0000:%02x:%02x.0", 1 + i / 32, i % 32);
        char guid[40];
        std::snprintf(guid, sizeof guid, "0c42:a103:00%02x:%04x", i / 256, i % 256);
        inv.put_device(test::cx5("mlx5_" + std::to_string(i), guid, pci));
        inv.put_link(test::netdev(100 + i, "mlx5_" + std::to_string(i) + "p1", "mlx5_0"));
    }
}

size_t entries(const std::filesystem::path& dir) {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir))
        ++n;
    return n;
}

} // namespace

TEST_CASE("export writer: a large rdmad.prom is written in slices, each at a turn of the loop; a "
          "change of the inventory midway writes the new state, never a mix") {
    TempDir dir("rdmad-unit-export");
    std::filesystem::create_directories(dir.path / "prom");
    ExportConfig config{(dir.path / "prom").string(), ""};
    const auto prom = dir.path / "prom" / "rdmad.prom";
    Loop loop;
    WriterOptions options;
    options.min_interval_usec = 50'000;
    ExportWriter writer(loop.event, [&] { return config; }, options);
    Inventory inv;
    fill(inv, 300);
    writer.changed(inv, inv.put_link(eth0("yes")), "running", 0, true);
    // The timer's turn writes the first slice; each later turn, one more.
    REQUIRE(sd_event_run(loop.event, 1'000) > 0);
    CHECK(!std::filesystem::exists(prom));
    CHECK(entries(dir.path / "prom") == 1); // the temporary file, a dot-file
    const int slices = loop.run_for(1'000);
    CHECK(slices >= 4); // 300 devices: more than 5 x 64 KiB
    REQUIRE(std::filesystem::exists(prom));
    ManagerFacts facts;
    facts.state = "running";
    const std::string whole = slurp(prom);
    CHECK(whole.size() > 5 * 64 * 1024);
    CHECK(whole.find("rdmad_netdev_rdma_capable{device=\"eth0\",state=\"yes\"} 1\n") !=
          std::string::npos);
    CHECK(whole.find("rdmad_device_info{device=\"mlx5_299\"") != std::string::npos);
    CHECK(entries(dir.path / "prom") == 1);

    // A change midway: the slices of the old state stop, and its temporary file goes; the
    // new state is written when the interval has passed.
    const ino_t first = inode(prom);
    writer.changed(inv, inv.put_link(eth0("no")), "running", 0, true);
    REQUIRE(sd_event_run(loop.event, 200'000) > 0); // the timer: the first slice
    REQUIRE(sd_event_run(loop.event, 0) > 0);       // a second slice
    CHECK(inode(prom) == first);
    DeviceState gone = *inv.device_named("mlx5_7");
    const ChangeSet removed = inv.remove_device(gone.syspath);
    writer.changed(inv, removed, "running", 0, true);
    loop.run_for(5'000); // the slices, until the timer is all that is left
    CHECK(inode(prom) == first);
    CHECK(entries(dir.path / "prom") == 1);
    loop.run_for(200'000);
    CHECK(inode(prom) != first);
    const std::string after = slurp(prom);
    CHECK(after.find("rdmad_netdev_rdma_capable{device=\"eth0\",state=\"no\"} 1\n") !=
          std::string::npos);
    CHECK(after.find("device=\"mlx5_7\"") == std::string::npos);
    CHECK(after.find("device=\"mlx5_8\"") != std::string::npos);
    CHECK(entries(dir.path / "prom") == 1); // the cut-short write's temporary file is gone

    // A change without a call to changed() (a rename before its pass) also stops the slices:
    // the writer asks for a write of its own.
    const ino_t second = inode(prom);
    writer.changed(inv, inv.put_link(eth0("yes")), "running", 0, true);
    REQUIRE(sd_event_run(loop.event, 200'000) > 0);
    inv.put_device(test::cx5("mlx5_7", "0c42:a103:0000:0007", "0000:01:07.0"));
    loop.run_for(5'000);
    CHECK(inode(prom) == second);
    loop.run_for(200'000);
    CHECK(inode(prom) != second);
    const std::string last = slurp(prom);
    CHECK(last.find("device=\"mlx5_7\"") != std::string::npos);
    CHECK(last.find("rdmad_netdev_rdma_capable{device=\"eth0\",state=\"yes\"} 1\n") !=
          std::string::npos);
    CHECK(entries(dir.path / "prom") == 1);
}

TEST_CASE("export writer: a directory that does not exist turns its file off") {
    TempDir dir("rdmad-unit-export");
    ExportConfig config{(dir.path / "absent").string(), ""};
    Loop loop;
    WriterOptions options;
    options.min_interval_usec = 100'000; // the second write within run_for()'s 300 ms
    ExportWriter writer(loop.event, [&] { return config; }, options);
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

TEST_CASE("a file written across turns whose directory path comes to name another directory "
          "(a symlink repointed) midway leaves no temporary file in either directory") {
    // prometheus_dir may be a symlink (a deployment's "current" link): repointed while
    // rdmad.prom is written in slices, the temporary file is in the old target and the path
    // now resolves into the new one. A temporary file left in the old target stays: rdmad
    // never lists that directory again. A commit puts the file where the path names now.
    TempDir dir;
    namespace fs = std::filesystem;
    fs::create_directory(dir.path / "a");
    fs::create_directory(dir.path / "b");
    fs::create_directory_symlink("a", dir.path / "current");
    const std::string path = (dir.path / "current" / "rdmad.prom").string();
    auto files = [&](const char* sub) {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(dir.path / sub))
            names.push_back(e.path().filename().string());
        return names;
    };
    auto repoint = [&](const char* to) {
        fs::remove(dir.path / "current");
        fs::create_directory_symlink(to, dir.path / "current");
    };
    SECTION("committed: where the path names now") {
        {
            AtomicFile file(path, true);
            file.append("a 1\n");
            REQUIRE(files("a").size() == 1); // the temporary file
            repoint("b");
            file.commit(0644, Sync::replace_only);
        }
        CHECK(slurp(dir.path / "b" / "rdmad.prom") == "a 1\n");
        fs::remove(dir.path / "b" / "rdmad.prom");
    }
    SECTION("written after the move (through its descriptor: no failure), then dropped") {
        AtomicFile file(path, true);
        repoint("b");
        file.append("a 1\n");
    }
    SECTION("dropped before its commit (a change of the Inventory, rdmad stopping)") {
        AtomicFile file(path, true);
        file.append("a 1\n");
        repoint("b");
    }
    CHECK(files("a").empty());
    CHECK(files("b").empty());
}

TEST_CASE("a write that fails names the file it replaces, the same at every attempt, not its "
          "temporary file") {
    // The export writer logs and reports (Manager.Problems) an error once until it changes:
    // a message naming the temporary file (a new random name each time) was a new error at
    // every write of rdmad.prom to a full file system, up to four warnings and four
    // PropertiesChanged a second. RLIMIT_FSIZE makes write(2) fail (EFBIG) as ENOSPC would.
    TempDir dir;
    const std::string path = (dir.path / "rdmad.prom").string();
    struct rlimit saved {};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
    const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = saved;
    small.rlim_cur = 4096;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    std::vector<std::string> messages;
    for (int i = 0; i < 2; ++i) {
        try {
            AtomicFile file(path, true);
            file.append(std::string(8192, 'x'));
        } catch (const std::system_error& e) {
            messages.push_back(e.what());
        }
    }
    ::setrlimit(RLIMIT_FSIZE, &saved);
    ::signal(SIGXFSZ, old_handler);
    REQUIRE(messages.size() == 2);
    CHECK(messages[0] == messages[1]);
    CHECK_THAT(messages[0], Catch::Contains("cannot write " + path));
    CHECK(std::filesystem::is_empty(dir.path));
}
