// SPDX-License-Identifier: MIT
//
// Unit tests for SharedText (daemon/util/shared_text.hpp): the interned, immutable text the
// Inventory's problems and status messages hold, one copy per distinct text.
#include "util/shared_text.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <string>
#include <utility>
#include <vector>

using namespace rdmad;

TEST_CASE("a shared text reads, compares and formats as the string it was made from") {
    const std::string made = "kernel module rdma_ucm is not loaded";
    const SharedText t(made);
    CHECK(t.str() == made);
    CHECK(t == made);
    CHECK(t == "kernel module rdma_ucm is not loaded");
    CHECK(t.size() == made.size());
    CHECK_FALSE(t.empty());
    CHECK(fmt::format("[{}]", t) == "[kernel module rdma_ucm is not loaded]");
    const std::string& as_string = t;
    CHECK(as_string == made);
}

TEST_CASE("an empty shared text is \"\" and holds nothing") {
    const size_t before = SharedText::held();
    const SharedText none;
    const SharedText empty("");
    CHECK(none.empty());
    CHECK(none.str() == "");
    CHECK(none == empty);
    CHECK(SharedText::held() == before);
}

TEST_CASE("equal texts made apart share one copy, held until the last goes") {
    const size_t before = SharedText::held();
    {
        std::vector<SharedText> on_devices;
        for (int i = 0; i < 1024; ++i)
            on_devices.emplace_back(fmt::format("/sys/module/{} = absent", "rdma_ucm"));
        CHECK(SharedText::held() == before + 1);
        CHECK(&on_devices.front().str() == &on_devices.back().str());
        SharedText other("/sys/module/ib_umad = absent");
        CHECK(SharedText::held() == before + 2);
        CHECK(other != on_devices.front());
    }
    CHECK(SharedText::held() == before);
}

TEST_CASE("copies, moves and assignments keep the text and its count") {
    const size_t before = SharedText::held();
    SharedText a("configfs is not mounted on /sys/kernel/config");
    SharedText b = a;
    SharedText c(std::move(b));
    CHECK(b.empty()); // NOLINT(bugprone-use-after-move): a moved-from text is ""
    CHECK(c == a);
    c = "another text";
    CHECK(c == "another text");
    CHECK(SharedText::held() == before + 2);
    a = c;
    CHECK(SharedText::held() == before + 1); // the first text's last holder let it go
    a = a;
    CHECK(a == "another text");
}

TEST_CASE("shared texts order as their strings") {
    CHECK(SharedText("error") < SharedText("info"));
    CHECK(SharedText("info") > SharedText(""));
    CHECK((SharedText("warning") <=> SharedText("warning")) == std::strong_ordering::equal);
    std::vector<SharedText> v{"b", "a"};
    std::vector<SharedText> w{"a", "b"};
    CHECK(w < v);
}
