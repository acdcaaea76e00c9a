// SPDX-License-Identifier: MIT
#include "sources/memlock_reader.hpp"

#include "util/sysfs.hpp"

#include <algorithm>
#include <charconv>
#include <sys/stat.h>

namespace rdmad {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() &&
           (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

std::optional<uint64_t> limit_value(std::string_view token) {
    if (token == "unlimited")
        return MemlockLimit::kUnlimited;
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec != std::errc() || end != token.data() + token.size())
        return std::nullopt;
    return v;
}

/// The next whitespace-separated token of `s`, removed from it.
std::string_view next_token(std::string_view& s) {
    s = trim(s);
    const size_t end = std::min(s.find(' '), s.size());
    const std::string_view token = s.substr(0, end);
    s.remove_prefix(end);
    return token;
}

bool all_digits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

} // namespace

std::optional<MemlockLimit> parse_memlock_limit(std::string_view text) {
    constexpr std::string_view kName = "Max locked memory";
    while (!text.empty()) {
        const size_t nl = std::min(text.find('\n'), text.size());
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(std::min(nl + 1, text.size()));
        if (line.substr(0, kName.size()) != kName)
            continue;
        line.remove_prefix(kName.size());
        const auto soft = limit_value(next_token(line));
        const auto hard = limit_value(next_token(line));
        if (!soft || !hard)
            return std::nullopt;
        return MemlockLimit{*soft, *hard};
    }
    return std::nullopt;
}

std::optional<std::string> parse_default_limit_memlock(std::string_view text) {
    constexpr std::string_view kKey = "DefaultLimitMEMLOCK";
    std::optional<std::string> out;
    bool manager = false;
    while (!text.empty()) {
        const size_t nl = std::min(text.find('\n'), text.size());
        const std::string_view line = trim(text.substr(0, nl));
        text.remove_prefix(std::min(nl + 1, text.size()));
        if (line.empty() || line.front() == '#' || line.front() == ';')
            continue;
        if (line.front() == '[') {
            manager = line == "[Manager]";
            continue;
        }
        if (!manager || line.substr(0, kKey.size()) != kKey)
            continue;
        std::string_view rest = trim(line.substr(kKey.size()));
        if (rest.empty() || rest.front() != '=')
            continue;
        rest = trim(rest.substr(1));
        out = std::string(rest.substr(0, 64));
    }
    return out;
}

std::optional<uint64_t> parse_systemd_memlock(std::string_view value) {
    value = trim(value.substr(0, value.find(':'))); // "soft:hard": the soft part
    if (value == "infinity")
        return MemlockLimit::kUnlimited;
    // systemd's parse_size() with base 1024 (src/basic/parse-util.c): K, M, G, T, P, E.
    uint64_t factor = 1;
    if (!value.empty()) {
        constexpr std::string_view kSuffixes = "KMGTPE";
        if (const size_t i = kSuffixes.find(value.back()); i != std::string_view::npos) {
            factor = uint64_t{1} << (10 * (i + 1));
            value.remove_suffix(1);
        } else if (value.back() == 'B') {
            value.remove_suffix(1);
        }
    }
    if (!all_digits(value))
        return std::nullopt;
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    // A number never reaches kUnlimited: only "infinity" is unlimited.
    if (ec != std::errc() || end != value.data() + value.size() || v > (UINT64_MAX - 1) / factor)
        return std::nullopt;
    return v * factor;
}

MemlockFacts read_memlock(const std::vector<std::string>& launchers, const MemlockPaths& paths) {
    MemlockFacts facts;
    facts.read = true;
    for (const auto& name : sysfs::list_dir(paths.proc, "")) {
        if (!all_digits(name) || name.size() > 9)
            continue;
        const std::string dir = paths.proc + "/" + name;
        const auto comm = sysfs::read_attribute(dir, "comm", 64);
        if (!comm.ok())
            continue;
        const std::string c(trim(comm.text));
        const bool launcher = std::find(launchers.begin(), launchers.end(), c) != launchers.end();
        if (name != "1" && !launcher)
            continue; // most processes: one read, no stat
        // Launchers run as root; any user can name a process "slurmd" (comm is the
        // executable's name, or what prctl(PR_SET_NAME) sets), so only root's count.
        struct stat st {};
        if (::stat(dir.c_str(), &st) < 0 || st.st_uid != 0)
            continue;
        if (name == "1") {
            // Services get systemd's own limit when DefaultLimitMEMLOCK= is unset.
            if (c == "systemd")
                if (auto r = sysfs::read_attribute(dir, "limits"); r.ok())
                    facts.manager = parse_memlock_limit(r.text);
            continue;
        }
        const auto limits = sysfs::read_attribute(dir, "limits");
        if (!limits.ok())
            continue;
        if (auto l = parse_memlock_limit(limits.text)) {
            facts.processes.push_back({c, std::stoi(name), *l});
            if (facts.processes.size() >= 256)
                break;
        }
    }
    std::sort(facts.processes.begin(), facts.processes.end(),
              [](const auto& a, const auto& b) { return a.pid < b.pid; });
    std::vector<std::string> files{paths.systemd + "/system.conf"};
    for (const auto& f : sysfs::list_dir(paths.systemd, "system.conf.d"))
        if (f.size() > 5 && f.compare(f.size() - 5, 5, ".conf") == 0)
            files.push_back(paths.systemd + "/system.conf.d/" + f);
    for (const auto& f : files)
        if (auto r = sysfs::read_attribute(f, "", 1u << 20); r.ok())
            if (auto v = parse_default_limit_memlock(r.text)) {
                facts.default_limit = *v;
                facts.default_limit_file = f;
                facts.default_soft = parse_systemd_memlock(*v);
            }
    return facts;
}

} // namespace rdmad
