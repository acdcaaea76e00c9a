// SPDX-License-Identifier: MIT
//
// The RDMA network namespace mode (`[daemon] rdma_netns_mode`): ib_core's `netns_mode` module
// parameter as the kernel prints and reads it (drivers/infiniband/core/device.c: a bool,
// 0444, default 1 = shared; kernel/params.c param_get_bool() prints "Y"/"N"; kstrtobool()
// reads it), rdmad's own modprobe.d file, and the plan: write the file only when it does not
// say the mode asked, pending while the kernel runs another mode.
#include "actuators/modprobe.hpp"
#include "reconcile/plan.hpp"
#include "sources/rdma_netns_reader.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace rdmad;

TEST_CASE("netns_mode: the kernel's Y and N, and what kstrtobool takes") {
    CHECK(parse_module_bool("Y\n") == true);
    CHECK(parse_module_bool("N\n") == false);
    CHECK(parse_module_bool("1") == true);
    CHECK(parse_module_bool("0") == false);
    CHECK(parse_module_bool("on") == true);
    CHECK(parse_module_bool("off") == false);
    CHECK_FALSE(parse_module_bool(""));
    CHECK_FALSE(parse_module_bool("2"));
    CHECK_FALSE(parse_module_bool("o"));
}

TEST_CASE("netns_mode: the file rdmad writes reads back as the mode it was written for, and "
          "an option of another module or in a comment is not ib_core's") {
    test::TempDir dir;
    write_ib_core_modprobe(dir.path.string(), false);
    CHECK(read_ib_core_modprobe(dir.path.string()) == "exclusive");
    write_ib_core_modprobe(dir.path.string(), true);
    CHECK(read_ib_core_modprobe(dir.path.string()) == "shared");
    CHECK(ib_core_modprobe_text(false).find("options ib_core netns_mode=0\n") != std::string::npos);

    CHECK(modprobe_option("# options ib_core netns_mode=0\n", "ib_core", "netns_mode") ==
          std::nullopt);
    CHECK(modprobe_option("options ib_uverbs netns_mode=0\n", "ib_core", "netns_mode") ==
          std::nullopt);
    CHECK(modprobe_option("options ib-core \\\n  netns_mode=0 netns_mode=1\n", "ib_core",
                          "netns_mode") == "1");
    // The mlx4_en reading goes through the same parser.
    CHECK(parse_mlx4_modprobe_text("options mlx4_en\tpfctx=0x08 pfcrx=0x08\n") == 0x08);
}

namespace {

Plan plan_with(RdmaNetnsState n) {
    HostState inv;
    inv.rdma_netns = std::move(n);
    return make_plan(inv, {}, {}, {});
}

} // namespace

TEST_CASE("netns plan: no file yet: one write of the mode asked; nothing asked: nothing") {
    Plan p = plan_with({"shared", "", "exclusive"});
    REQUIRE(p.actions.size() == 1);
    CHECK(p.actions[0].kind == Action::Kind::ib_core_modprobe);
    CHECK(p.actions[0].value == "exclusive");
    CHECK(plan_with({"shared", "", ""}).actions.empty());
    CHECK(plan_with({"shared", "shared", ""}).actions.empty());
}

TEST_CASE("netns plan: the file already says it, the kernel runs the other mode: no write, "
          "rdma-netns-pending on the Manager") {
    RdmaNetnsState n{"shared", "exclusive", "exclusive"};
    CHECK(n.pending() == "exclusive");
    Plan p = plan_with(n);
    CHECK(p.actions.empty());
    REQUIRE(p.problems.count(""));
    REQUIRE(p.problems.at("").size() == 1);
    CHECK(p.problems.at("")[0].code == "rdma-netns-pending");
    CHECK(p.problems.at("")[0].remedy.str().find("rdma system set netns exclusive") !=
          std::string::npos);
}

TEST_CASE("netns plan: the kernel runs the mode asked and the file says it: nothing to do") {
    RdmaNetnsState n{"exclusive", "exclusive", "exclusive"};
    CHECK(n.pending().empty());
    Plan p = plan_with(n);
    CHECK(p.actions.empty());
    CHECK_FALSE(p.problems.count(""));
    // ib_core not loaded: nothing pending, the next load takes the file.
    CHECK(RdmaNetnsState{"", "exclusive", "exclusive"}.pending().empty());
}
