// SPDX-License-Identifier: MIT
#include "actuators/modprobe.hpp"

#include "config/file_read.hpp"
#include "inventory/attributes.hpp"
#include "util/atomic_file.hpp"
#include "util/sysfs.hpp"
#include "util/unique_fd.hpp"

#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <fmt/format.h>
#include <string_view>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace rdmad {

std::optional<uint8_t> parse_pfc_mask(std::string_view v) {
    v = trim_attribute(v);
    int base = 10;
    if (v.size() > 1 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
        v.remove_prefix(2);
        base = 16;
    } else if (v.size() > 1 && v[0] == '0') {
        v.remove_prefix(1);
        base = 8;
    }
    // from_chars takes no sign and no second prefix, as kstrtouint after its own prefix.
    if (v.empty() || v[0] == '+' || v[0] == '-')
        return std::nullopt;
    unsigned value = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), value, base);
    if (ec != std::errc() || p != v.data() + v.size() || value > 0xff)
        return std::nullopt;
    return static_cast<uint8_t>(value);
}

std::optional<uint8_t> parse_mlx4_modprobe_text(std::string_view text) {
    // modprobe.d(5): one command per line, '#' lines are comments, a '\' at the end of a line
    // joins the next; `options <module> <option>...`, whitespace-separated, and modprobe treats
    // '-' and '_' in a module name alike (kmod libkmod-config.c).
    auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    std::optional<std::string> value; // the last pfctx= of an mlx4_en options line
    size_t pos = 0;
    while (pos < text.size()) {
        std::string line;
        for (;;) { // one logical line, continuations joined
            const size_t end = std::min(text.find('\n', pos), text.size());
            std::string_view part = text.substr(pos, end - pos);
            pos = end + 1;
            if (!part.empty() && part.back() == '\\' && pos < text.size()) {
                part.remove_suffix(1); // joined as is, as kmod's getline_wrapped() does
                line.append(part);
                continue;
            }
            line.append(part);
            break;
        }
        std::vector<std::string_view> words;
        const std::string_view l(line);
        for (size_t i = 0; i < l.size();) {
            while (i < l.size() && is_blank(l[i]))
                ++i;
            const size_t start = i;
            while (i < l.size() && !is_blank(l[i]))
                ++i;
            if (i > start)
                words.push_back(l.substr(start, i - start));
        }
        if (words.size() < 3 || words[0] != "options" ||
            (words[1] != "mlx4_en" && words[1] != "mlx4-en"))
            continue; // a comment ('#' first) lands here too
        for (size_t i = 2; i < words.size(); ++i)
            if (words[i].substr(0, 6) == "pfctx=")
                value = std::string(words[i].substr(6)); // later options override earlier ones
    }
    if (!value)
        return std::nullopt;
    return parse_pfc_mask(*value);
}

std::string mlx4_modprobe_path(const std::string& modprobe_dir) {
    return modprobe_dir + "/rdmad-mlx4.conf";
}

std::string mlx4_modprobe_text(uint8_t mask) {
    return fmt::format("# Written by rdmad from its desired state (rdmad.conf(5)); do not edit.\n"
                       "# PFC no-drop priorities for mlx4_en, applied when the module loads.\n"
                       "options mlx4_en pfctx={:#04x} pfcrx={:#04x}\n",
                       mask, mask);
}

void write_mlx4_modprobe(const std::string& modprobe_dir, uint8_t mask) {
    write_file_atomically(mlx4_modprobe_path(modprobe_dir), mlx4_modprobe_text(mask), 0644);
}

void remove_mlx4_modprobe(const std::string& modprobe_dir) {
    remove_file_durably(mlx4_modprobe_path(modprobe_dir));
}

} // namespace rdmad
