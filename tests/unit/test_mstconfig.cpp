// SPDX-License-Identifier: MIT
//
// The ConnectX-4+ firmware port type: the mstconfig query parser (daemon/sources/
// mstconfig.hpp) on recorded output (tests/unit/data/mstconfig/README says where each comes
// from), the bounded run of an outside tool (daemon/util/run_tool.hpp), and the plan of the
// port_type setting for a firmware reading (daemon/reconcile/settings/port_type.cpp): compare
// next boot first, one write for a difference, pending without a write, and the named
// problems of a missing or refusing tool.
#include "actuators/mstconfig.hpp"
#include "reconcile/plan.hpp"
#include "sources/mstconfig.hpp"
#include "util/run_tool.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rdmad;

namespace {

std::string data(const std::string& name) {
    // __FILE__ is relative to the build directory under meson; the data is next to this file.
    std::filesystem::path here = std::filesystem::path(__FILE__).parent_path();
    std::ifstream in(here / "data" / "mstconfig" / name);
    REQUIRE(in);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("mstconfig: the recorded ConnectX4 query gives each row's Default, Current and Next "
          "Boot, '*' or not") {
    const auto rows = parse_mstconfig_query(data("cx4-query-recorded.txt"));
    REQUIRE(rows);
    REQUIRE(rows->size() == 4);
    CHECK((*rows)[0] == MstconfigRow{"KEEP_IB_LINK_UP_P2", "False(0)", "True(1)", "True(1)"});
    CHECK((*rows)[1] ==
          MstconfigRow{"KEEP_LINK_UP_ON_BOOT_P2", "False(0)", "False(0)", "False(0)"});
    CHECK((*rows)[2].name == "ESWITCH_HAIRPIN_DESCRIPTORS");
    CHECK((*rows)[2].next_boot == "Array[0..7]");
    CHECK((*rows)[3] == MstconfigRow{"MEMIC_SIZE_LIMIT", "_256KB(1)", "_256KB(1)", "DISABLED(0)"});
    // No LINK_TYPE row: not a VPI adapter, said as such.
    const FirmwarePortType fw = firmware_port_type_from(data("cx4-query-recorded.txt"), 1);
    CHECK(fw.status == FirmwarePortType::Status::failed);
    CHECK(contains(fw.message, "no LINK_TYPE_P1"));
}

TEST_CASE("mstconfig: LINK_TYPE_P1 IB(1) now and ETH(2) at next boot reads current ib, next eth") {
    const FirmwarePortType fw = firmware_port_type_from(data("cx4-query-link-type.txt"), 1);
    CHECK(fw.status == FirmwarePortType::Status::ok);
    CHECK(fw.card_port == 1);
    CHECK(fw.current == "ib");
    CHECK(fw.next_boot == "eth");
}

TEST_CASE("mstconfig: without -e only Next Boot is known; the current value is then unknown") {
    const auto rows = parse_mstconfig_query(data("cx6-query-next-boot-only.txt"));
    REQUIRE(rows);
    REQUIRE(rows->size() == 2);
    CHECK((*rows)[1] == MstconfigRow{"LINK_TYPE_P2", "", "", "ETH(2)"});
    // rdmad always asks -e: a table without Current is no reading it can compare.
    const FirmwarePortType fw = firmware_port_type_from(data("cx6-query-next-boot-only.txt"), 2);
    CHECK(fw.status == FirmwarePortType::Status::failed);
}

TEST_CASE("mstconfig: a set's \"Next Boot  New\" table and an error text are no query table") {
    CHECK_FALSE(parse_mstconfig_query(data("cx4-set.txt")));
    CHECK_FALSE(parse_mstconfig_query("-E- Failed to open device: 0000:04:00.0\n"));
    CHECK_FALSE(parse_mstconfig_query(""));
    CHECK(firmware_port_type_from("-E- Failed to open device\n", 1).status ==
          FirmwarePortType::Status::failed);
}

TEST_CASE("mstconfig: LINK_TYPE values and card ports") {
    CHECK(link_type_name("IB(1)") == "ib");
    CHECK(link_type_name("ETH(2)") == "eth");
    CHECK(link_type_name("VPI(3)") == "auto");
    CHECK(link_type_name("2") == "eth");
    CHECK_FALSE(link_type_name("ETH"));
    CHECK_FALSE(link_type_name("IB(2)"));
    CHECK(link_type_number("ib") == 1);
    CHECK(link_type_number("eth") == 2);
    CHECK(link_type_number("auto") == 3);
    CHECK(card_port_of("0000:3b:00.0") == 1);
    CHECK(card_port_of("0000:3b:00.1") == 2);
    CHECK(card_port_of("0000:3b:00.4") == 1);
}

TEST_CASE("run_tool: stdout, stderr and the exit status; a missing tool is ENOENT; a tool that "
          "hangs is killed at the limit") {
    ToolRun ok =
        run_tool({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(5));
    CHECK(ok.spawn_error == 0);
    CHECK(ok.exit_status == 3);
    CHECK(ok.out == "out\n");
    CHECK(ok.err == "err\n");
    CHECK_FALSE(ok.ok());

    ToolRun missing =
        run_tool({"/nonexistent/mstconfig", "-d", "x", "query"}, std::chrono::seconds(5));
    CHECK(missing.spawn_error == ENOENT);

    const auto start = std::chrono::steady_clock::now();
    // The child keeps stdout open in a grandchild too: the whole group is killed.
    ToolRun hung =
        run_tool({"/bin/sh", "-c", "sleep 30 & sleep 30"}, std::chrono::milliseconds(300));
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(hung.timed_out);
    CHECK(hung.exit_status == -1);
    CHECK(took < std::chrono::seconds(5));

    // The tool answers and exits 0, but leaves a process behind that holds its stdout (in its
    // group, or in a session of its own): its answer is taken when it exits, not at the limit.
    for (const char* script : {"echo 'LINK_TYPE_P1 ETH(2)'; (sleep 30 &); exit 0",
                               "echo 'LINK_TYPE_P1 ETH(2)'; setsid sleep 3 & exit 0"}) {
        const auto begin = std::chrono::steady_clock::now();
        ToolRun left = run_tool({"/bin/sh", "-c", script}, std::chrono::seconds(20));
        CHECK(std::chrono::steady_clock::now() - begin < std::chrono::seconds(2));
        CHECK_FALSE(left.timed_out);
        CHECK(left.exit_status == 0);
        CHECK(left.out == "LINK_TYPE_P1 ETH(2)\n");
    }

    // A tool that closes its streams and keeps running has not answered: killed at the limit.
    ToolRun closed = run_tool({"/bin/sh", "-c", "echo x; exec >&- 2>&-; sleep 30"},
                              std::chrono::milliseconds(300));
    CHECK(closed.timed_out);
    CHECK(closed.exit_status == -1);

    ToolRun chatty =
        run_tool({"/bin/sh", "-c", "head -c 300000 /dev/zero"}, std::chrono::seconds(5), 1000);
    CHECK(chatty.exit_status == 0);
    CHECK(chatty.out.size() == 1000);
}

TEST_CASE("mstconfig: the tool's absence is missing, its refusal failed with its -E- line") {
    const FirmwarePortType missing =
        query_firmware_port_type("/nonexistent/mstconfig", "0000:3b:00.0", 1);
    CHECK(missing.status == FirmwarePortType::Status::missing);
    // A tool that says what the real one says of a function it cannot open, among other
    // lines, and exits 1.
    test::TempDir dir;
    const std::string tool = dir.write("mstconfig", "#!/bin/sh\necho '-I- probing' >&2\n"
                                                    "echo \"-E- Failed to open device: $3\" >&2\n"
                                                    "exit 1\n");
    std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
    const FirmwarePortType refused = query_firmware_port_type(tool, "0000:3b:00.0", 1);
    CHECK(refused.status == FirmwarePortType::Status::failed);
    CHECK(contains(refused.message, "exited with 1: -E- Failed to open device: 0000:3b:00.0"));
    CHECK_FALSE(contains(refused.message, "probing"));
}

// ---- the plan for a ConnectX-4+ function whose firmware the Inventory has read ----

namespace {

const std::string kPath = "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/mlx5_0";

HostState cx4_host(FirmwarePortType fw, const std::string& link_layer = "InfiniBand") {
    DeviceState d;
    d.name = "mlx5_0";
    d.syspath = kPath;
    d.pci_address = "0000:3b:00.0";
    d.kernel_driver = "mlx5_core";
    PortState p;
    p.number = 1;
    p.link_layer = link_layer;
    d.ports.push_back(p);
    HostState inv;
    inv.devices[kPath] = d;
    inv.firmware_port_types["0000:3b:00.0"] = std::move(fw);
    return inv;
}

FirmwarePortType reading(const std::string& current, const std::string& next) {
    FirmwarePortType fw;
    fw.status = FirmwarePortType::Status::ok;
    fw.current = current;
    fw.next_boot = next;
    return fw;
}

Plan plan_eth(const HostState& inv) {
    DeviceDesired want;
    want.port_type = {"eth"};
    return make_plan(inv, {{kPath, want}}, {}, {});
}

std::vector<std::string> codes(const Plan& plan) {
    std::vector<std::string> out;
    if (auto it = plan.problems.find(kPath); it != plan.problems.end())
        for (const auto& p : it->second)
            out.push_back(p.code);
    return out;
}

} // namespace

TEST_CASE("firmware plan: next boot ib, eth asked: one mstconfig write of LINK_TYPE_P1=eth") {
    const Plan plan = plan_eth(cx4_host(reading("ib", "ib")));
    REQUIRE(plan.actions.size() == 1);
    const Action& a = plan.actions[0];
    CHECK(a.kind == Action::Kind::firmware_port_type);
    CHECK(a.pci_address == "0000:3b:00.0");
    CHECK(a.value == "eth");
    CHECK(a.number == 1);
    const PortPlan& pp = plan.ports.at(kPath).at(1);
    CHECK_FALSE(pp.in_sync);
    CHECK(pp.firmware_port_type == "ib");
    CHECK(pp.next_boot_port_type == "ib");
    CHECK(pp.pending_port_type.empty());
    CHECK(codes(plan).empty());
}

TEST_CASE("firmware plan: next boot already eth: no write, eth pending, reset-pending with "
          "mstfwreset") {
    const Plan plan = plan_eth(cx4_host(reading("ib", "eth")));
    CHECK(plan.actions.empty());
    const PortPlan& pp = plan.ports.at(kPath).at(1);
    CHECK_FALSE(pp.in_sync);
    CHECK(pp.pending_port_type == "eth");
    CHECK(pp.next_boot_port_type == "eth");
    REQUIRE(codes(plan) == std::vector<std::string>{"reset-pending"});
    const Problem& p = plan.problems.at(kPath)[0];
    CHECK(p.remedy == "mstfwreset -d 0000:3b:00.0 reset, or reboot");
    CHECK(contains(p.text, "firmware reset or reboot"));
    CHECK(p.port == 1);
}

TEST_CASE("firmware plan: eth now and at next boot is in sync, no write, no problem") {
    const Plan plan = plan_eth(cx4_host(reading("eth", "eth"), "Ethernet"));
    CHECK(plan.actions.empty());
    CHECK(plan.ports.at(kPath).at(1).in_sync);
    CHECK(plan.ports.at(kPath).at(1).firmware_port_type == "eth");
    CHECK(codes(plan).empty());
}

TEST_CASE("firmware plan: VPI(3) now is shown as auto with the link layer") {
    DeviceDesired want;
    want.port_type = {"auto"};
    const Plan plan =
        make_plan(cx4_host(reading("auto", "auto"), "Ethernet"), {{kPath, want}}, {}, {});
    CHECK(plan.actions.empty());
    CHECK(plan.ports.at(kPath).at(1).firmware_port_type == "auto (eth)");
    CHECK(plan.ports.at(kPath).at(1).in_sync);
}

TEST_CASE("firmware plan: no mstconfig is mstconfig-missing naming mstflint, never a write") {
    FirmwarePortType fw;
    fw.status = FirmwarePortType::Status::missing;
    fw.message = "mstconfig: No such file or directory";
    const Plan plan = plan_eth(cx4_host(fw));
    CHECK(plan.actions.empty());
    REQUIRE(codes(plan) == std::vector<std::string>{"mstconfig-missing"});
    CHECK(contains(plan.problems.at(kPath)[0].remedy, "mstflint"));
    CHECK_FALSE(plan.ports.at(kPath).at(1).in_sync); // InfiniBand now, eth asked
}

TEST_CASE("firmware plan: a refused query is mstconfig-failed with the tool's words") {
    FirmwarePortType fw;
    fw.message = "mstconfig -e -d 0000:3b:00.0 query LINK_TYPE_P1 exited with 1: -E- Failed to "
                 "open device";
    const Plan plan = plan_eth(cx4_host(fw, "Ethernet"));
    CHECK(plan.actions.empty());
    REQUIRE(codes(plan) == std::vector<std::string>{"mstconfig-failed"});
    CHECK(contains(plan.problems.at(kPath)[0].text, "-E- Failed to open device"));
    CHECK(contains(plan.problems.at(kPath)[0].text,
                   "mstconfig -e -d 0000:3b:00.0 query LINK_TYPE_P1 exited with 1"));
    CHECK(contains(plan.problems.at(kPath)[0].remedy,
                   "run the mstconfig command above as root to see the tool's error"));
    CHECK(contains(plan.problems.at(kPath)[0].remedy, "CAP_SYS_ADMIN"));
    CHECK(plan.ports.at(kPath).at(1).in_sync); // the link layer is what is asked
}

TEST_CASE("mstconfig: a set killed by a signal says so, not \"exited with -1\"") {
    // A tool that dies of a signal (SIGSEGV on a wedged device, the OOM killer's SIGKILL) has
    // no exit status: ToolRun::exit_status is -1 then.
    test::TempDir dir;
    const std::string tool = dir.write("mstconfig", "#!/bin/sh\necho 'partial' >&2\n"
                                                    "kill -KILL $$\n");
    std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
    const WriteResult w = set_firmware_port_type(tool, "0000:3b:00.0", 1, "eth");
    CHECK(w.error == EIO);
    CHECK(w.message ==
          tool + " -y -d 0000:3b:00.0 set LINK_TYPE_P1=2 was killed by a signal: partial");
}
