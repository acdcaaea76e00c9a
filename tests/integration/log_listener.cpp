// SPDX-License-Identifier: MIT
//
// The integration suite's listener: it prints the daemon's output of a test case only when
// that test case failed. main() is tests/catch_main.cpp's, shared with the unit tests.
#define CATCH_CONFIG_EXTERNAL_INTERFACES // TestEventListenerBase (also in pch/integration_pch.hpp)
#include <catch2/catch.hpp>

#include "harness.hpp"

#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace it {
namespace {
std::vector<std::pair<std::string, std::string>>& logs() {
    static std::vector<std::pair<std::string, std::string>> v;
    return v;
}
} // namespace

void record_log(const std::string& title, const std::string& text) {
    logs().emplace_back(title, text);
}

struct DaemonLogListener : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    void testCaseStarting(const Catch::TestCaseInfo&) override { logs().clear(); }
    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        if (stats.totals.assertions.failed > 0) {
            for (auto& [title, text] : logs())
                std::cerr << "---- " << stats.testInfo.name << ": " << title << " ----\n"
                          << text << "---- end ----\n";
        }
        logs().clear();
    }
};
CATCH_REGISTER_LISTENER(DaemonLogListener)
} // namespace it
