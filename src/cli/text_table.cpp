#include "text_table.hpp"

#include <algorithm>

namespace tracectl::cli {

std::size_t displayWidth(std::string_view text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
    }));
}

std::string clipToWidth(std::string_view text, std::size_t width) {
    std::size_t seen = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0U) != 0x80U) {
            if (seen == width) {
                return std::string{text.substr(0, i)};
            }
            ++seen;
        }
    }
    return std::string{text};
}

std::vector<std::string> formatTable(const std::vector<TableRow>& rows,
                                     const std::vector<std::size_t>& rightAligned) {
    std::vector<std::size_t> widths;
    for (const TableRow& row : rows) {
        widths.resize(std::max(widths.size(), row.size()), 0);
        for (std::size_t column = 0; column < row.size(); ++column) {
            widths[column] = std::max(widths[column], displayWidth(row[column]));
        }
    }
    const auto right = [&](std::size_t column) {
        return std::find(rightAligned.begin(), rightAligned.end(), column) != rightAligned.end();
    };
    std::vector<std::string> lines;
    lines.reserve(rows.size());
    for (const TableRow& row : rows) {
        std::string line;
        for (std::size_t column = 0; column < widths.size(); ++column) {
            const std::string cell = column < row.size() ? row[column] : std::string{};
            const std::size_t pad = widths[column] - displayWidth(cell);
            const bool last = column + 1 == widths.size();
            if (column > 0) {
                line += "  ";
            }
            if (right(column)) {
                line.append(pad, ' ');
                line += cell;
            } else {
                line += cell;
                if (!last) {
                    line.append(pad, ' ');
                }
            }
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

} // namespace tracectl::cli
