// Aligned plain-text tables (the statistics of `show`, the frames of `top`).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::cli {

/// Display width of UTF-8 text, counted in code points.
std::size_t displayWidth(std::string_view text);

/// The first `width` code points of `text` (all of it if it is shorter).
std::string clipToWidth(std::string_view text, std::size_t width);

/// One row: its cells, left to right.
using TableRow = std::vector<std::string>;

/// The rows as lines (without newline), columns separated by two spaces and aligned on the
/// widest cell; the columns whose index is in `right_aligned` are padded on the left (numbers).
/// The last column is not padded on the right when left-aligned. Rows may be shorter than
/// others (missing cells are empty).
std::vector<std::string> formatTable(const std::vector<TableRow>& rows,
                                     const std::vector<std::size_t>& rightAligned);

} // namespace tracectl::cli
