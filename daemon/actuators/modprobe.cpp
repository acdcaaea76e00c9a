// SPDX-License-Identifier: MIT
#include "actuators/modprobe.hpp"

#include "config/file_read.hpp"
#include "inventory/attributes.hpp"
#include "util/atomic_file.hpp"
#include "util/sysfs.hpp"
#include "util/text.hpp"
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

std::optional<std::string> modprobe_option(std::string_view text, std::string_view module,
                                           std::string_view option) {
    // modprobe.d(5): one command per line, '#' lines are comments, a '\' at the end of a line
    // joins the next; `options <module> <option>...`, whitespace-separated, and modprobe treats
    // '-' and '_' in a module name alike (kmod libkmod-config.c).
    auto same_module = [&](std::string_view word) {
        if (word.size() != module.size())
            return false;
        for (size_t i = 0; i < word.size(); ++i) {
            const char a = word[i] == '-' ? '_' : word[i], b = module[i] == '-' ? '_' : module[i];
            if (a != b)
                return false;
        }
        return true;
    };
    const std::string prefix = std::string(option) + "=";
    std::optional<std::string> value; // the last <option>= of a <module> options line
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
        const std::vector<std::string_view> words = blank_separated(line);
        if (words.size() < 3 || words[0] != "options" || !same_module(words[1]))
            continue; // a comment ('#' first) lands here too
        for (size_t i = 2; i < words.size(); ++i)
            if (words[i].substr(0, prefix.size()) == prefix)
                value = std::string(words[i].substr(prefix.size())); // later ones override
    }
    return value;
}

std::optional<uint8_t> parse_mlx4_modprobe_text(std::string_view text) {
    const auto value = modprobe_option(text, "mlx4_en", "pfctx");
    if (!value)
        return std::nullopt;
    return parse_pfc_mask(*value);
}

std::optional<bool> parse_module_bool(std::string_view v) {
    // kernel lib/kstrtox.c kstrtobool() (param_set_bool): the first character decides, 'y',
    // 'Y', '1' true, 'n', 'N', '0' false, "on"/"off" by the second; param_get_bool() prints
    // "Y" or "N". Outer whitespace aside (sysfs adds a newline).
    v = trim_attribute(v);
    if (v.empty())
        return std::nullopt;
    switch (v[0]) {
    case 'y':
    case 'Y':
    case '1':
        return true;
    case 'n':
    case 'N':
    case '0':
        return false;
    case 'o':
    case 'O':
        if (v.size() > 1 && (v[1] == 'n' || v[1] == 'N'))
            return true;
        if (v.size() > 1 && (v[1] == 'f' || v[1] == 'F'))
            return false;
        return std::nullopt;
    default:
        return std::nullopt;
    }
}

std::string ib_core_modprobe_path(const std::string& modprobe_dir) {
    return modprobe_dir + "/rdmad-ib_core.conf";
}

std::string ib_core_modprobe_text(bool shared) {
    return fmt::format("# Written by rdmad from its desired state (rdmad.conf(5), [daemon]\n"
                       "# rdma_netns_mode); do not edit. Applied when ib_core loads.\n"
                       "options ib_core netns_mode={}\n",
                       shared ? 1 : 0);
}

void write_ib_core_modprobe(const std::string& modprobe_dir, bool shared) {
    write_file_atomically(ib_core_modprobe_path(modprobe_dir), ib_core_modprobe_text(shared), 0644);
}

void remove_ib_core_modprobe(const std::string& modprobe_dir) {
    remove_file_durably(ib_core_modprobe_path(modprobe_dir));
}

bool written_by_rdmad(std::string_view text) {
    return text.rfind("# Written by rdmad", 0) == 0;
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
