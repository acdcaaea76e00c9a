// SPDX-License-Identifier: MIT
//
// read_config_file() (daemon/config/file_read.hpp): the one way rdmad reads the desired-state
// files an admin can put anything into.
#include "config/file_read.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace rdmad;
namespace fs = std::filesystem;
using Status = FileRead::Status;

namespace {

/// A scratch directory (temp_dir.hpp) whose `dir` names it.
struct Scratch : rdmad::test::TempDir {
    const std::filesystem::path& dir = path;
    Scratch() : TempDir("rdmad-file-read") {}
};

} // namespace

TEST_CASE("a regular file is read whole, NUL bytes included") {
    Scratch s;
    const std::string text("a = 1\n\0b\n", 9);
    const auto r = read_config_file(s.write("x.conf", text));
    CHECK(r.status == Status::ok);
    CHECK(r.text == text);
}

TEST_CASE("a missing file, or one under a regular file, is missing, not an error") {
    Scratch s;
    CHECK(read_config_file((s.dir / "none.conf").string()).status == Status::missing);
    const std::string file = s.write("f", "");
    CHECK(read_config_file(file + "/x.conf").status == Status::missing); // ENOTDIR
}

TEST_CASE("a FIFO is refused at once instead of blocking in open()") {
    Scratch s;
    const std::string fifo = (s.dir / "p.conf").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    const auto start = std::chrono::steady_clock::now();
    const auto r = read_config_file(fifo);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
    CHECK(r.status == Status::failed);
    CHECK(r.error == "not a regular file");
}

TEST_CASE("a directory and a character device are not regular files") {
    Scratch s;
    CHECK(read_config_file(s.dir.string()).error == "not a regular file");
    CHECK(read_config_file("/dev/zero").error == "not a regular file");
    fs::create_symlink("/dev/zero", s.dir / "z.conf");
    CHECK(read_config_file((s.dir / "z.conf").string()).error == "not a regular file");
}

TEST_CASE("the size limit is inclusive: max_bytes reads, one more byte is refused") {
    Scratch s;
    CHECK(read_config_file(s.write("a", std::string(1024, 'x')), 1024).status == Status::ok);
    const auto r = read_config_file(s.write("b", std::string(1025, 'x')), 1024);
    CHECK(r.status == Status::failed);
    CHECK(r.error == "larger than 1 KiB");
    CHECK(read_config_file(s.write("c", std::string(kMaxConfigFileBytes + 1, 'x'))).error ==
          "larger than 1 MiB");
}

TEST_CASE("with no_follow a symbolic link is refused; without, it is followed") {
    Scratch s;
    const std::string target = s.write("target", "x = 1\n");
    fs::create_symlink(target, s.dir / "link.conf");
    const std::string link = (s.dir / "link.conf").string();
    CHECK(read_config_file(link).text == "x = 1\n");
    const auto r = read_config_file(link, kMaxConfigFileBytes, true);
    CHECK(r.status == Status::failed);
    CHECK(r.error == "is a symbolic link; rdmad does not follow links in its state directory");
}

TEST_CASE("a file that cannot be opened is an error naming the errno") {
    // A name longer than NAME_MAX (255) fails for root too (mode 000 would not: root has
    // CAP_DAC_OVERRIDE), with ENAMETOOLONG.
    const auto r = read_config_file("/tmp/" + std::string(300, 'n'));
    CHECK(r.status == Status::failed);
    CHECK(r.error == "cannot open: File name too long");
}
