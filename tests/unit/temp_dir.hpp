// SPDX-License-Identifier: MIT
//
// A scratch directory for unit tests that read and write real files, removed at the end, and
// also when a signal ends the test (meson's timeout, Ctrl-C: ../kill_cleanup.hpp).
#pragma once

#include "kill_cleanup.hpp"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace rdmad::test {

struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& prefix = "rdmad-unit") {
        std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
        if (::mkdtemp(tmpl.data()) == nullptr)
            FAIL("mkdtemp " << tmpl << ": " << std::strerror(errno));
        path = tmpl;
        kill_cleanup::remove_when_killed(path.string());
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
        kill_cleanup::forget_when_killed(path.string());
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    /// Write `text` (bytes as given) to `name` below the directory; returns the full path.
    std::string write(const std::string& name, const std::string& text) const {
        const auto p = path / name;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        return p.string();
    }
};

} // namespace rdmad::test
