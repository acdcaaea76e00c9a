// SPDX-License-Identifier: MIT
#include "dispatch/script_dir.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fmt/format.h>
#include <map>

namespace rdmad::dispatch {

std::optional<std::string> refusal(const struct stat& st) {
    if (!S_ISREG(st.st_mode))
        return "not a regular file";
    if (st.st_uid != 0)
        return fmt::format("owned by uid {}, not root", st.st_uid);
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return "writable by group or others";
    if (st.st_mode & (S_ISUID | S_ISGID))
        return "setuid or setgid";
    if (!(st.st_mode & S_IXUSR))
        return "not executable";
    return std::nullopt;
}

bool ignored_name(const std::string& name) {
    if (name.empty() || name.front() == '.' || name.back() == '~')
        return true;
    // Leftovers of dpkg (dpkg(1) conffiles), rpm and ucf: never scripts of the admin's.
    for (const char* suffix :
         {".dpkg-old", ".dpkg-new", ".dpkg-dist", ".dpkg-tmp", ".dpkg-bak", ".rpmsave", ".rpmnew",
          ".rpmorig", ".ucf-old", ".ucf-new", ".ucf-dist", ".swp"}) {
        const size_t n = std::strlen(suffix);
        if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0)
            return true;
    }
    return false;
}

Listing list_scripts(const std::vector<std::string>& directories) {
    Listing out;
    std::map<std::string, std::string> first; // name -> the directory it is taken from
    for (const auto& dir : directories) {
        // A directory others may write to lets them swap a checked script for their own
        // between the check and the run: its scripts are not run at all.
        struct stat dst {};
        if (stat(dir.c_str(), &dst) == 0 && S_ISDIR(dst.st_mode) &&
            (dst.st_uid != 0 || (dst.st_mode & (S_IWGRP | S_IWOTH)))) {
            out.errors.push_back(
                fmt::format("{}: {}: its scripts are not run", dir,
                            dst.st_uid != 0 ? fmt::format("owned by uid {}, not root", dst.st_uid)
                                            : std::string("writable by group or others")));
            continue;
        }
        DIR* d = opendir(dir.c_str());
        if (!d) {
            if (errno != ENOENT && errno != ENOTDIR)
                out.errors.push_back(fmt::format("{}: {}", dir, std::strerror(errno)));
            continue;
        }
        while (const dirent* e = readdir(d)) {
            const std::string name = e->d_name;
            if (!ignored_name(name))
                first.try_emplace(name, dir);
        }
        closedir(d);
    }
    for (const auto& [name, dir] : first) {
        Script s{name, dir + "/" + name};
        struct stat st {};
        if (stat(s.path.c_str(), &st) != 0) {
            out.refused.push_back({s, fmt::format("cannot be read: {}", std::strerror(errno)), ""});
            continue;
        }
        // A link to /dev/null masks the name (as systemd's units and NetworkManager's scripts).
        struct stat null {};
        if (S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 && st.st_rdev == null.st_rdev)
            continue;
        if (auto why = refusal(st)) {
            out.refused.push_back({s, *why,
                                   fmt::format("{}:{}:{}.{}", st.st_dev, st.st_ino,
                                               st.st_ctim.tv_sec, st.st_ctim.tv_nsec)});
            continue;
        }
        out.run.push_back(std::move(s));
    }
    return out;
}

} // namespace rdmad::dispatch
