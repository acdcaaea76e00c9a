// SPDX-License-Identifier: MIT
//
// The one Catch2 main (and the Catch2 implementation) for every Catch2 executable, compiled
// once into a static library (tests/meson.build): it is the costliest file of the tests.
// Before Catch2 runs it starts what undoes a test's directories, children and namespaces when
// a signal ends the test (kill_cleanup.hpp), whose handlers replace Catch2's own.
#define CATCH_CONFIG_RUNNER
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include "kill_cleanup.hpp"

namespace {

// Tells kill_cleanup which case is running: a signal that ends the test names it.
struct RunningCaseListener : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    void testCaseStarting(const Catch::TestCaseInfo& info) override {
        kill_cleanup::set_running_case(info.name);
    }
    void testCaseEnded(const Catch::TestCaseStats&) override { kill_cleanup::set_running_case(""); }
};
CATCH_REGISTER_LISTENER(RunningCaseListener)

} // namespace

int main(int argc, char* argv[]) {
    kill_cleanup::start();
    return Catch::Session().run(argc, argv);
}
