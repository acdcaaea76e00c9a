// SPDX-License-Identifier: MIT
//
// Column formatting for terminals: aligned tables (networkctl style) and aligned "Key: value"
// lists (for show). Every cell goes through sanitize(): strings from the bus are untrusted.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rdmactl {

/// `s` safe to print on a terminal: C0 controls (newline and tab included), DEL and the C1
/// controls (U+0080..U+009F, e.g. the 8-bit CSI) each become '?'.
std::string sanitize(std::string_view s);

/// Number of terminal columns of sanitized UTF-8 text (one per code point).
std::size_t display_width(std::string_view s);

/// The SGR colour of a cell or line from its text (terminal.hpp), nullptr for none.
using Painter = std::function<const char*(std::string_view text)>;

/// A table with a header row. Empty cells print as "-"; columns are two spaces apart; the
/// last column is not padded, so no line ends in blanks.
class Table {
  public:
    explicit Table(std::vector<std::string> header);
    /// Right-align column `column` (numbers).
    void align_right(std::size_t column);
    /// Colour the cells of `column` with `painter` when print() is asked for colour.
    void paint_column(std::size_t column, Painter painter);
    void add_row(std::vector<std::string> cells);
    std::size_t rows() const { return rows_.size(); }
    /// Prints the rows, preceded by the header when `header`; cells coloured when `color`
    /// (the padding stays outside the colour).
    void print(std::FILE* out, bool header, bool color = false) const;
    /// The rows as lines, without the header (for lists nested in a Fields value).
    std::vector<std::string> lines() const;

  private:
    std::vector<std::string> format_row(const std::vector<std::string>& row,
                                        const std::vector<std::size_t>& widths,
                                        bool color = false) const;
    std::vector<std::size_t> widths(bool header) const;
    static std::string join(const std::vector<std::string>& cells);

    std::vector<std::string> header_;
    std::vector<bool> right_;
    std::vector<Painter> painters_;
    std::vector<std::vector<std::string>> rows_;
};

/// A Table with a HOST column first when `with_host` (rdmactl -H given several times). The
/// column numbers given to align_right() and paint_column() and the cells given to add_row()
/// do not count the HOST column.
class HostTable {
  public:
    HostTable(std::vector<std::string> header, bool with_host);
    void align_right(std::size_t column) { table_.align_right(column + shift_); }
    void paint_column(std::size_t column, Painter painter) {
        table_.paint_column(column + shift_, std::move(painter));
    }
    /// Adds `cells`, after `host` when the table has the HOST column.
    void add_row(const std::string& host, std::vector<std::string> cells);
    std::size_t rows() const { return table_.rows(); }
    void print(std::FILE* out, bool header, bool color = false) const {
        table_.print(out, header, color);
    }

  private:
    static std::vector<std::string> with_host_column(std::vector<std::string> header, bool with);
    std::size_t shift_;
    Table table_;
};

/// "Key: value" lines, keys right-aligned on the colon (systemd's status style). A value of
/// several lines continues under the first; an empty value prints as "-".
class Fields {
  public:
    void add(std::string key, std::string value);
    void add(std::string key, std::vector<std::string> lines);
    /// Colour the lines of the value of `key` with `painter` when print() is asked for colour.
    void paint_key(std::string key, Painter painter);
    std::size_t key_width() const;
    /// Prints with the keys padded to `key_width` (at least this list's own key_width());
    /// values coloured when `color`.
    void print(std::FILE* out, std::size_t key_width, bool color = false) const;

  private:
    std::vector<std::pair<std::string, std::vector<std::string>>> fields_;
    std::vector<std::pair<std::string, Painter>> painters_;
};

} // namespace rdmactl
