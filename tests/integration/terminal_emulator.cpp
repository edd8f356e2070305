#include "terminal_emulator.hpp"

#include <algorithm>
#include <cstdlib>

namespace tracectl::test {

namespace {

struct Screen {
    int rows;
    int columns;
    std::vector<std::vector<std::string>> cells; // one string a cell (a UTF-8 sequence)
    int row = 0;
    int column = 0;
    std::string last; // the last character written, for REP

    Screen(int r, int c) : rows(r), columns(c) { clear(); }

    std::vector<std::string> blankLine() const { return std::vector<std::string>(columns, " "); }
    void clear() { cells.assign(rows, blankLine()); }
    void clamp() {
        row = std::clamp(row, 0, rows - 1);
        column = std::clamp(column, 0, columns - 1);
    }
    void lineFeed() {
        if (++row >= rows) {
            cells.erase(cells.begin());
            cells.push_back(blankLine());
            row = rows - 1;
        }
    }
    void put(const std::string& character) {
        if (column >= columns) {
            column = 0;
            lineFeed();
        }
        cells[row][column++] = character;
        last = character;
    }
};

int param(const std::vector<int>& params, std::size_t i, int fallback) {
    return i < params.size() && params[i] > 0 ? params[i] : fallback;
}

void csi(Screen& s, char final, const std::vector<int>& p, bool isPrivate) {
    if (isPrivate) {
        // ?1049h / ?1049l / ?47h ...: the alternate screen starts (or is left) cleared.
        if ((final == 'h' || final == 'l') && !p.empty() && (p[0] == 1049 || p[0] == 47)) {
            s.clear();
            s.row = s.column = 0;
        }
        return;
    }
    auto& line = s.cells[s.row];
    const int n = param(p, 0, 1);
    switch (final) {
    case 'H':
    case 'f':
        s.row = param(p, 0, 1) - 1;
        s.column = param(p, 1, 1) - 1;
        break;
    case 'A':
        s.row -= n;
        break;
    case 'B':
        s.row += n;
        break;
    case 'C':
        s.column += n;
        break;
    case 'D':
        s.column -= n;
        break;
    case 'G':
        s.column = n - 1;
        break;
    case 'd':
        s.row = n - 1;
        break;
    case 'K': {
        const int mode = p.empty() ? 0 : p[0];
        const int from = mode == 0 ? s.column : 0;
        const int to = mode == 1 ? s.column + 1 : s.columns;
        for (int c = from; c < to && c < s.columns; ++c)
            line[c] = " ";
        break;
    }
    case 'J': {
        const int mode = p.empty() ? 0 : p[0];
        if (mode == 2 || mode == 3) {
            s.clear();
        } else if (mode == 0) {
            for (int c = s.column; c < s.columns; ++c)
                line[c] = " ";
            for (int r = s.row + 1; r < s.rows; ++r)
                s.cells[r] = s.blankLine();
        }
        break;
    }
    case 'X':
        for (int c = s.column; c < s.column + n && c < s.columns; ++c)
            line[c] = " ";
        break;
    case '@':
        for (int i = 0; i < n; ++i) {
            line.insert(line.begin() + s.column, " ");
            line.pop_back();
        }
        break;
    case 'P':
        for (int i = 0; i < n && s.column < s.columns; ++i) {
            line.erase(line.begin() + s.column);
            line.push_back(" ");
        }
        break;
    case 'L':
        for (int i = 0; i < n; ++i) {
            s.cells.insert(s.cells.begin() + s.row, s.blankLine());
            s.cells.pop_back();
        }
        break;
    case 'M':
        for (int i = 0; i < n; ++i) {
            s.cells.erase(s.cells.begin() + s.row);
            s.cells.push_back(s.blankLine());
        }
        break;
    case 'b':
        for (int i = 0; i < n && !s.last.empty(); ++i)
            s.put(s.last);
        break;
    default: // m (colours), r (scroll region), t (window ops), ...: no effect on the text
        break;
    }
    s.clamp();
}

} // namespace

std::vector<std::string> renderScreen(std::string_view out, int rows, int columns) {
    Screen s(rows, columns);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto byte = static_cast<unsigned char>(out[i]);
        if (byte == 0x1b) {
            if (i + 1 >= out.size())
                break;
            const char kind = out[i + 1];
            if (kind == '[') {
                std::size_t j = i + 2;
                const bool isPrivate = j < out.size() && (out[j] == '?' || out[j] == '>');
                if (isPrivate)
                    ++j;
                std::vector<int> params{0};
                bool any = false;
                for (; j < out.size() && ((out[j] >= '0' && out[j] <= '9') || out[j] == ';'); ++j) {
                    if (out[j] == ';') {
                        params.push_back(0);
                    } else {
                        params.back() = params.back() * 10 + (out[j] - '0');
                        any = true;
                    }
                }
                if (!any && params.size() == 1)
                    params.clear();
                if (j >= out.size())
                    break;
                csi(s, out[j], params, isPrivate);
                i = j;
            } else if (kind == ']') { // OSC: up to BEL or ST
                std::size_t j = i + 2;
                while (j < out.size() && out[j] != '\a' &&
                       !(out[j] == 0x1b && j + 1 < out.size() && out[j + 1] == '\\'))
                    ++j;
                i = j < out.size() && out[j] == 0x1b ? j + 1 : j;
            } else if (kind == '(' || kind == ')' || kind == '#') {
                i += 2; // charset designation: one more byte
            } else if (kind == 'M') {
                if (--s.row < 0) {
                    s.cells.insert(s.cells.begin(), s.blankLine());
                    s.cells.pop_back();
                    s.row = 0;
                }
                i += 1;
            } else {
                i += 1; // ESC 7, ESC 8, ESC =, ESC >, ...
            }
        } else if (byte == '\r') {
            s.column = 0;
        } else if (byte == '\n') {
            s.lineFeed();
        } else if (byte == '\b') {
            s.column = std::max(0, s.column - 1);
        } else if (byte == '\t') {
            s.column = std::min(s.columns - 1, (s.column / 8 + 1) * 8);
        } else if (byte >= 0x80 && byte < 0xC0) {
            if (s.column > 0)
                s.cells[s.row][s.column - 1] += out[i]; // continues the last character
        } else if (byte >= 0x20 && byte != 0x7f) {
            s.put(std::string(1, out[i]));
        }
    }
    std::vector<std::string> lines;
    for (const auto& row : s.cells) {
        std::string line;
        for (const auto& cell : row)
            line += cell;
        line.erase(line.find_last_not_of(' ') + 1);
        lines.push_back(std::move(line));
    }
    return lines;
}

} // namespace tracectl::test
