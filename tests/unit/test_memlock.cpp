// SPDX-License-Identifier: MIT
//
// Locked-memory limits (sources/memlock_reader.hpp, doctor/memlock.hpp). /proc/<pid>/limits is
// laid out as fs/proc/base.c proc_pid_limits() prints it: "%-25s %-20s %-20s %-10s\n" per
// limit, "unlimited" for RLIM_INFINITY. DefaultLimitMEMLOCK= as systemd-system.conf(5) has it.
#include "config/desired.hpp"
#include "doctor/memlock.hpp"
#include "sources/memlock_reader.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

using namespace rdmad;
using Catch::Matchers::Contains;
using rdmad::test::TempDir;

namespace {

std::string limits(const std::string& soft, const std::string& hard) {
    char line[128];
    std::string out;
    std::snprintf(line, sizeof line, "%-25s %-20s %-20s %-10s\n", "Limit", "Soft Limit",
                  "Hard Limit", "Units");
    out += line;
    std::snprintf(line, sizeof line, "%-25s %-20s %-20s %-10s\n", "Max stack size", "8388608",
                  "unlimited", "bytes");
    out += line;
    std::snprintf(line, sizeof line, "%-25s %-20s %-20s %-10s\n", "Max locked memory", soft.c_str(),
                  hard.c_str(), "bytes");
    out += line;
    return out;
}

} // namespace

TEST_CASE("memlock: /proc/<pid>/limits' Max locked memory line", "[doctor]") {
    CHECK(parse_memlock_limit(limits("8388608", "8388608")) == MemlockLimit{8388608, 8388608});
    CHECK(parse_memlock_limit(limits("65536", "unlimited")) ==
          MemlockLimit{65536, MemlockLimit::kUnlimited});
    CHECK_FALSE(parse_memlock_limit(limits("lots", "8388608")));
    CHECK_FALSE(parse_memlock_limit(limits("-1", "8388608")));
    CHECK_FALSE(parse_memlock_limit("Max locked memory\n"));
    CHECK_FALSE(parse_memlock_limit(""));
}

TEST_CASE("memlock: systemd's DefaultLimitMEMLOCK= in [Manager], the last one wins", "[doctor]") {
    CHECK_FALSE(parse_default_limit_memlock("[Manager]\n#DefaultLimitMEMLOCK=8M\n"));
    CHECK(parse_default_limit_memlock("[Manager]\nDefaultLimitMEMLOCK=64K\n"
                                      "DefaultLimitMEMLOCK = infinity\n") == "infinity");
    CHECK_FALSE(parse_default_limit_memlock("[Journal]\nDefaultLimitMEMLOCK=64K\n"));
    CHECK(parse_systemd_memlock("infinity") == MemlockLimit::kUnlimited);
    CHECK(parse_systemd_memlock("8M") == 8u << 20);
    CHECK(parse_systemd_memlock("64K:128K") == 64u << 10);
    CHECK(parse_systemd_memlock("1G") == uint64_t{1} << 30);
    CHECK(parse_systemd_memlock("4096") == 4096u);
    CHECK_FALSE(parse_systemd_memlock("lots"));
    CHECK_FALSE(parse_systemd_memlock("99999999999999999999E"));
    CHECK_FALSE(parse_systemd_memlock(""));
}

TEST_CASE("memlock: launchers found in /proc by comm, systemd's default from its files",
          "[doctor]") {
    TempDir dir("rdmad-memlock");
    dir.write("proc/1/comm", "systemd\n");
    dir.write("proc/1/limits", limits("8388608", "8388608"));
    dir.write("proc/812/comm", "slurmd\n");
    dir.write("proc/812/limits", limits("65536", "65536"));
    dir.write("proc/900/comm", "bash\n");
    dir.write("proc/900/limits", limits("65536", "65536"));
    dir.write("proc/1234/comm", "kubelet\n");
    dir.write("proc/1234/limits", limits("unlimited", "unlimited"));
    dir.write("proc/self/comm", "slurmd\n"); // not a pid directory
    dir.write("systemd/system.conf", "[Manager]\n#DefaultLimitMEMLOCK=8M\n");
    dir.write("systemd/system.conf.d/50-rdma.conf", "[Manager]\nDefaultLimitMEMLOCK=64M\n");
    const MemlockFacts m =
        read_memlock(DesiredConfig{}.memlock_launchers,
                     {(dir.path / "proc").string(), (dir.path / "systemd").string()});
    CHECK(m.read);
    REQUIRE(m.processes.size() == 2);
    CHECK(m.processes[0] == MemlockProcess{"slurmd", 812, {65536, 65536}});
    CHECK(m.processes[1] ==
          MemlockProcess{"kubelet", 1234, {MemlockLimit::kUnlimited, MemlockLimit::kUnlimited}});
    CHECK(m.manager == MemlockLimit{8388608, 8388608});
    CHECK(m.default_limit == "64M");
    CHECK(m.default_limit_file == (dir.path / "systemd/system.conf.d/50-rdma.conf").string());
    CHECK(m.default_soft == 64u << 20);

    HostFacts host;
    host.memlock = m;
    const auto problems = doctor::check_memlock(&host);
    REQUIRE(problems.size() == 2);
    CHECK(problems[0].code == "memlock-low");
    CHECK(problems[0].severity == "warning");
    CHECK_THAT(problems[0].text, Contains("slurmd (pid 812) has a locked-memory limit of 64 KiB"));
    CHECK(problems[0].evidence ==
          std::vector<SharedText>{"/proc/812/limits = Max locked memory 65536 65536 bytes"});
    CHECK_THAT(problems[0].remedy, Contains("systemctl edit slurmd.service"));
    CHECK_THAT(problems[0].remedy, Contains("LimitMEMLOCK=infinity"));
    CHECK(problems[1].code == "memlock-default-low");
    CHECK(problems[1].severity == "info");
    CHECK_THAT(problems[1].text, Contains("64 MiB"));
}

TEST_CASE("memlock: nothing read, nothing said; PID 1 that is not systemd is not asked",
          "[doctor]") {
    CHECK(doctor::check_memlock(nullptr).empty());
    HostFacts host;
    CHECK(doctor::check_memlock(&host).empty()); // memlock.read false: unit tests, no /proc
    TempDir dir("rdmad-memlock");
    dir.write("proc/1/comm", "tini\n");
    dir.write("proc/1/limits", limits("65536", "65536"));
    host.memlock = read_memlock(DesiredConfig{}.memlock_launchers,
                                {(dir.path / "proc").string(), (dir.path / "none").string()});
    CHECK_FALSE(host.memlock.manager);
    CHECK(doctor::check_memlock(&host).empty());
    CHECK(doctor::memlock_text(8u << 20) == "8 MiB");
    CHECK(doctor::memlock_text(1000) == "1000 bytes");
    CHECK(doctor::memlock_text(MemlockLimit::kUnlimited) == "unlimited");
}

TEST_CASE("memlock: a process not owned by root is no launcher; many of one name are one "
          "finding",
          "[doctor]") {
    TempDir dir("rdmad-memlock");
    for (const char* pid : {"700", "701", "702", "703"}) {
        dir.write(std::string("proc/") + pid + "/comm", "slurmstepd\n");
        dir.write(std::string("proc/") + pid + "/limits",
                  limits(pid == std::string("701") ? "65536" : "8388608", "8388608"));
    }
    dir.write("proc/900/comm", "slurmd\n"); // any user may name a process so
    dir.write("proc/900/limits", limits("65536", "65536"));
    REQUIRE(chown((dir.path / "proc/900").c_str(), 65534, 65534) == 0);
    HostFacts host;
    host.memlock = read_memlock(DesiredConfig{}.memlock_launchers,
                                {(dir.path / "proc").string(), (dir.path / "none").string()});
    REQUIRE(host.memlock.processes.size() == 4); // the uid-65534 "slurmd" is not one
    const auto problems = doctor::check_memlock(&host);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].text.str().find("4 processes of slurmstepd have a locked-memory limit as low "
                                      "as 64 KiB") == 0);
    CHECK(problems[0].evidence.size() == 3);                                   // the first three
    CHECK_THAT(problems[0].remedy, Contains("systemctl edit slurmd.service")); // its unit
    CHECK_THAT(problems[0].remedy, Contains("rdmactl reload"));
}
