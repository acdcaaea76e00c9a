// SPDX-License-Identifier: MIT
//
// ConfigLoader (daemon/reconcile/config_loader.hpp): the configuration read on a thread of its
// own, taken on the sd-event loop; a read asked for while one runs follows it.
#include "reconcile/config_loader.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <dlfcn.h>
#include <pthread.h>
#include <systemd/sd-event.h>
#include <variant>
#include <vector>

using namespace rdmad;

namespace {

/// While set, pthread_create() below fails with EAGAIN, as it does at RLIMIT_NPROC or a unit's
/// TasksMax= (pthread_create(3)); std::thread then throws std::system_error.
std::atomic<bool> no_threads{false};

} // namespace

/// This executable's pthread_create() comes before libc's for every caller (std::thread's
/// included): the real one unless no_threads is set.
extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                              void* arg) {
    using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
    static const auto real = reinterpret_cast<Create>(::dlsym(RTLD_NEXT, "pthread_create"));
    if (no_threads)
        return EAGAIN;
    return real(thread, attr, start, arg);
}

namespace {

struct Loop {
    sd_event* event = nullptr;
    Loop() { REQUIRE(sd_event_new(&event) >= 0); }
    ~Loop() { sd_event_unref(event); }
    /// Run the loop until `done()` or 10 s pass.
    template <typename F> bool run_until(F done) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!done() && std::chrono::steady_clock::now() < until)
            sd_event_run(event, 100'000);
        return done();
    }
};

ReconcilerOptions options_in(const test::TempDir& dir) {
    ReconcilerOptions o;
    o.config_dir = (dir.path / "etc").string();
    o.state_dir = (dir.path / "state").string();
    o.legacy_mlx4_conf = (dir.path / "no-mlx4.conf").string();
    return o;
}

constexpr const char* kRule = "[[rule]]\npci_address = \"0000:03:00.0\"\nport_type = [\"eth\"]\n";

} // namespace

TEST_CASE("the loader reads on its thread and hands the rules to the loop", "[config]") {
    test::TempDir dir;
    const std::string main = dir.write("etc/rdmad.conf", kRule);
    const std::string dropin = dir.write("etc/conf.d/10-pfc.conf",
                                         "[[rule]]\ndriver = \"mlx5_core\"\npfc_no_drop = [3]\n");
    Loop loop;
    std::vector<std::optional<Reconciler::Loaded>> got;
    ConfigLoader loader(loop.event, [&](auto loaded) { got.push_back(std::move(loaded)); });
    loader.start(options_in(dir));
    CHECK(got.empty()); // taken on the loop, not in start()
    REQUIRE(loop.run_until([&] { return !got.empty(); }));
    CHECK_FALSE(loader.running());
    REQUIRE(got.size() == 1);
    REQUIRE(got[0]);
    const auto* config = std::get_if<DesiredConfig>(&got[0]->etc);
    REQUIRE(config);
    CHECK(config->sources == std::vector<std::string>{main, dropin});
    CHECK(config->rules.size() == 2);
    CHECK(got[0]->state_status == FileRead::Status::missing);
}

TEST_CASE("a bad drop-in comes back as the /etc unit's error, file:line:column", "[config]") {
    test::TempDir dir;
    dir.write("etc/rdmad.conf", kRule);
    const std::string bad = dir.write("etc/conf.d/20-bad.conf", "[[rule]]\ndevice = 5\n");
    Loop loop;
    std::optional<Reconciler::Loaded> got;
    bool called = false;
    ConfigLoader loader(loop.event, [&](auto loaded) {
        got = std::move(loaded);
        called = true;
    });
    loader.start(options_in(dir));
    REQUIRE(loop.run_until([&] { return called; }));
    REQUIRE(got);
    const auto* err = std::get_if<ConfigError>(&got->etc);
    REQUIRE(err);
    // rdmad.conf(5), ERRORS; the reason as test_config.cpp has it.
    CHECK(err->to_string() == bad + ":2:10: device must be a string, not an integer");
}

TEST_CASE("a start() while a read runs reads once more after it; discard() drops the running "
          "read",
          "[config]") {
    test::TempDir dir;
    dir.write("etc/rdmad.conf", kRule);
    Loop loop;
    std::vector<bool> got; // whether each result was there to take
    ConfigLoader loader(loop.event, [&](auto loaded) { got.push_back(loaded.has_value()); });
    loader.start(options_in(dir));
    loader.start(options_in(dir));
    loader.start(options_in(dir)); // the two while it runs make one more read
    REQUIRE(loop.run_until([&] { return got.size() == 2 && !loader.running(); }));
    sd_event_run(loop.event, 50'000); // nothing more comes
    CHECK(got == std::vector<bool>{true, true});

    got.clear();
    loader.start(options_in(dir));
    loader.discard(); // a Reload read the files on the loop meanwhile
    REQUIRE(loop.run_until([&] { return got.size() == 1; }));
    CHECK(got == std::vector<bool>{false});
}

TEST_CASE("without a thread to be had, the loader reads on the caller's thread and the loop "
          "takes the rules all the same",
          "[config]") {
    // SIGHUP and Manager.Reload ended with EAGAIN, nothing read again, where std::thread
    // could not start (rdmad's log: "SIGHUP: Resource temporarily unavailable").
    test::TempDir dir;
    const std::string main = dir.write("etc/rdmad.conf", kRule);
    Loop loop;
    std::vector<std::optional<Reconciler::Loaded>> got;
    ConfigLoader loader(loop.event, [&](auto loaded) { got.push_back(std::move(loaded)); });
    no_threads = true;
    CHECK_NOTHROW(loader.start(options_in(dir)));
    CHECK(loader.running());
    CHECK_NOTHROW(loader.start(options_in(dir))); // asked again meanwhile: one more read
    no_threads = false;
    CHECK(got.empty()); // taken on the loop, not in start()
    REQUIRE(loop.run_until([&] { return got.size() == 2 && !loader.running(); }));
    for (const auto& loaded : got) {
        REQUIRE(loaded);
        const auto* config = std::get_if<DesiredConfig>(&loaded->etc);
        REQUIRE(config);
        CHECK(config->sources == std::vector<std::string>{main});
        CHECK(config->rules.size() == 1);
    }
}
