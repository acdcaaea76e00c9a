// SPDX-License-Identifier: MIT
#include "table.hpp"

#include "terminal.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace rdmactl {

std::string sanitize(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7f) {
            out += '?';
        } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
            // UTF-8 encoding of a C1 control.
            out += '?';
            ++i;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::size_t display_width(std::string_view s) {
    return static_cast<std::size_t>(std::count_if(
        s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }));
}

namespace {

std::string pad(const std::string& s, std::size_t width, bool right) {
    const std::size_t w = display_width(s);
    if (w >= width)
        return s;
    const std::string fill(width - w, ' ');
    return right ? fill + s : s + fill;
}

std::string cell(std::string_view s) {
    return s.empty() ? std::string("-") : sanitize(s);
}

// `s` padded to `width`, the text coloured by `painter` (when given) and the fill not.
std::string pad_painted(const std::string& s, std::size_t width, bool right,
                        const Painter& painter) {
    const char* color = painter ? painter(s) : nullptr;
    if (!color)
        return pad(s, width, right);
    const std::size_t w = display_width(s);
    const std::string fill(w >= width ? 0 : width - w, ' ');
    return right ? fill + paint(color, s) : paint(color, s) + fill;
}

} // namespace

Table::Table(std::vector<std::string> header)
    : header_(std::move(header)), right_(header_.size(), false), painters_(header_.size()) {}

void Table::paint_column(std::size_t column, Painter painter) {
    if (column < painters_.size())
        painters_[column] = std::move(painter);
}

void Table::align_right(std::size_t column) {
    if (column < right_.size())
        right_[column] = true;
}

void Table::add_row(std::vector<std::string> cells) {
    cells.resize(header_.size());
    for (auto& c : cells)
        c = cell(c);
    rows_.push_back(std::move(cells));
}

std::vector<std::size_t> Table::widths(bool header) const {
    std::vector<std::size_t> w(header_.size(), 0);
    for (std::size_t i = 0; i < header_.size(); ++i) {
        if (header)
            w[i] = display_width(header_[i]);
        for (const auto& row : rows_)
            w[i] = std::max(w[i], display_width(row[i]));
    }
    return w;
}

std::vector<std::string> Table::format_row(const std::vector<std::string>& row,
                                           const std::vector<std::size_t>& widths,
                                           bool color) const {
    static const Painter none;
    std::vector<std::string> cells;
    for (std::size_t i = 0; i < row.size(); ++i) {
        const bool last = i + 1 == row.size();
        // A left-aligned last column needs no padding.
        const std::size_t width = last && !right_[i] ? 0 : widths[i];
        cells.push_back(pad_painted(row[i], width, right_[i], color ? painters_[i] : none));
    }
    return cells;
}

std::string Table::join(const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        if (i > 0)
            line += "  ";
        line += cells[i];
    }
    return line;
}

void Table::print(std::FILE* out, bool header, bool color) const {
    const auto w = widths(header);
    if (header)
        fmt::print(out, "{}\n", join(format_row(header_, w)));
    for (const auto& row : rows_)
        fmt::print(out, "{}\n", join(format_row(row, w, color)));
}

std::vector<std::string> Table::lines() const {
    const auto w = widths(false);
    std::vector<std::string> out;
    for (const auto& row : rows_)
        out.push_back(join(format_row(row, w)));
    return out;
}

void Fields::add(std::string key, std::string value) {
    fields_.emplace_back(std::move(key), std::vector<std::string>{cell(value)});
}

void Fields::add(std::string key, std::vector<std::string> lines) {
    for (auto& l : lines)
        l = cell(l);
    if (lines.empty())
        lines.emplace_back("-");
    fields_.emplace_back(std::move(key), std::move(lines));
}

void Fields::paint_key(std::string key, Painter painter) {
    painters_.emplace_back(std::move(key), std::move(painter));
}

std::size_t Fields::key_width() const {
    std::size_t w = 0;
    for (const auto& [key, lines] : fields_)
        w = std::max(w, display_width(key));
    return w;
}

void Fields::print(std::FILE* out, std::size_t key_width, bool color) const {
    key_width = std::max(key_width, this->key_width());
    for (const auto& [key, lines] : fields_) {
        const Painter* painter = nullptr;
        for (const auto& [k, p] : painters_)
            if (color && k == key)
                painter = &p;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const std::string label =
                i == 0 ? pad(key + ":", key_width + 1, true) : std::string(key_width + 1, ' ');
            const char* c = painter && *painter ? (*painter)(lines[i]) : nullptr;
            fmt::print(out, "{} {}\n", label, paint(c, lines[i]));
        }
    }
}

std::vector<std::string> HostTable::with_host_column(std::vector<std::string> header, bool with) {
    if (with)
        header.insert(header.begin(), "HOST");
    return header;
}

HostTable::HostTable(std::vector<std::string> header, bool with_host)
    : shift_(with_host ? 1 : 0), table_(with_host_column(std::move(header), with_host)) {}

void HostTable::add_row(const std::string& host, std::vector<std::string> cells) {
    if (shift_ > 0)
        cells.insert(cells.begin(), host);
    table_.add_row(std::move(cells));
}

} // namespace rdmactl
