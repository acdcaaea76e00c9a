// SPDX-License-Identifier: MIT
//
// Unit tests for the dispatcher scripts' directories (daemon/dispatch/script_dir.hpp), on real
// files: NetworkManager-dispatcher(8)'s rules (regular file, owned by root, not writable by
// group or others, not setuid, executable), name order across directories, the first
// directory hiding a name, /dev/null masking it. The tests run as root (the suite needs it for
// umockdev and the bus), so files are root's unless chowned.
#include "dispatch/script_dir.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

using namespace rdmad::dispatch;
namespace fs = std::filesystem;

namespace {

std::string script(const rdmad::test::TempDir& dir, const std::string& name, mode_t mode) {
    const std::string p = dir.write(name, "#!/bin/sh\nexit 0\n");
    REQUIRE(chmod(p.c_str(), mode) == 0);
    return p;
}

std::vector<std::string> run_names(const Listing& l) {
    std::vector<std::string> out;
    for (const auto& s : l.run)
        out.push_back(s.path);
    return out;
}

std::string reason_for(const Listing& l, const std::string& path) {
    for (const auto& r : l.refused)
        if (r.script.path == path)
            return r.reason;
    return "(not refused)";
}

} // namespace

TEST_CASE("dispatch scripts: the permission rules, one reason each") {
    struct stat st {};
    st.st_mode = S_IFREG | 0755;
    st.st_uid = 0;
    CHECK(!refusal(st));
    st.st_mode = S_IFREG | 0700;
    CHECK(!refusal(st));
    st.st_mode = S_IFDIR | 0755;
    CHECK(refusal(st) == "not a regular file");
    st.st_mode = S_IFREG | 0755;
    st.st_uid = 65534;
    CHECK(refusal(st) == "owned by uid 65534, not root");
    st.st_uid = 0;
    st.st_mode = S_IFREG | 0775;
    CHECK(refusal(st) == "writable by group or others");
    st.st_mode = S_IFREG | 0757;
    CHECK(refusal(st) == "writable by group or others");
    st.st_mode = S_IFREG | S_ISUID | 0755;
    CHECK(refusal(st) == "setuid or setgid");
    st.st_mode = S_IFREG | S_ISGID | 0755;
    CHECK(refusal(st) == "setuid or setgid");
    st.st_mode = S_IFREG | 0644;
    CHECK(refusal(st) == "not executable");
}

TEST_CASE("dispatch scripts: names that are no scripts") {
    for (const char* n : {".hidden", "10-x~", "10-x.dpkg-old", "10-x.dpkg-dist", "10-x.rpmsave",
                          "10-x.rpmnew", "10-x.ucf-old", "", ".10-x.swp"})
        CHECK(ignored_name(n));
    for (const char* n : {"10-trust", "dpkg-old", "20-irq.sh", "a"})
        CHECK(!ignored_name(n));
}

TEST_CASE("dispatch scripts: listed in name order across directories, the first directory "
          "wins a name, refusals named, /dev/null masks") {
    REQUIRE(geteuid() == 0);
    rdmad::test::TempDir etc("rdmad-etc"), lib("rdmad-lib");
    const auto e20 = script(etc, "20-b", 0755);
    const auto l10 = script(lib, "10-a", 0755);
    script(lib, "20-b", 0755); // hidden by /etc's 20-b
    const auto l30 = script(lib, "30-c", 0700);
    const auto e40 = script(etc, "40-d", 0775);  // group-writable
    const auto e50 = script(etc, "50-e", 0644);  // not executable
    const auto e60 = script(etc, "60-f", 04755); // setuid
    const auto e70 = script(etc, "70-g", 0755);
    REQUIRE(chown(e70.c_str(), 65534, 65534) == 0); // nobody's
    fs::create_directory(etc.path / "80-dir");
    script(etc, "10-a.dpkg-old", 0755); // ignored silently
    script(lib, "90-masked", 0755);
    fs::create_symlink("/dev/null", etc.path / "90-masked");
    const auto target = script(lib, "target", 0755);
    fs::create_symlink(target, etc.path / "95-link"); // a link to a good file runs

    const Listing l = list_scripts({etc.path.string(), lib.path.string(), "/nonexistent/dir"});
    CHECK(run_names(l) ==
          std::vector<std::string>{l10, e20, l30, (etc.path / "95-link").string(), target});
    CHECK(reason_for(l, e40) == "writable by group or others");
    CHECK(reason_for(l, e50) == "not executable");
    CHECK(reason_for(l, e60) == "setuid or setgid");
    CHECK(reason_for(l, e70) == "owned by uid 65534, not root");
    CHECK(reason_for(l, (etc.path / "80-dir").string()) == "not a regular file");
    CHECK(l.refused.size() == 5);
    CHECK(l.errors.empty());

    // A refusal's version changes when the file does (chmod changes the ctime).
    const std::string before = l.refused.front().version;
    CHECK(!before.empty());
    usleep(10'000);
    REQUIRE(chmod(e40.c_str(), 0777) == 0);
    const Listing again = list_scripts({etc.path.string()});
    CHECK(reason_for(again, e40) == "writable by group or others");
    CHECK(again.refused.front().script.path == e40);
    CHECK(again.refused.front().version != before);
}

TEST_CASE("dispatch scripts: a directory others may write to, or not root's, runs none") {
    rdmad::test::TempDir dir("rdmad-dispatch");
    const std::string s = script(dir, "d/10-ok", 0755);
    const std::string d = (dir.path / "d").string();
    REQUIRE(chmod(d.c_str(), 0755) == 0);
    CHECK(run_names(list_scripts({d})) == std::vector<std::string>{s});
    REQUIRE(chmod(d.c_str(), 0775) == 0); // group-writable: a group member could swap 10-ok
    Listing l = list_scripts({d});
    CHECK(l.run.empty());
    CHECK(l.errors == std::vector<std::string>{d + ": writable by group or others: its scripts "
                                                   "are not run"});
    REQUIRE(chmod(d.c_str(), 0755) == 0);
    REQUIRE(chown(d.c_str(), 65534, 65534) == 0);
    l = list_scripts({d});
    CHECK(l.run.empty());
    CHECK(l.errors ==
          std::vector<std::string>{d + ": owned by uid 65534, not root: its scripts are not run"});
}
