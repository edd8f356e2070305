#include "aggregate/format.hpp"

#include <algorithm>
#include <string_view>

namespace tracectl::aggregate {

Format parseFormat(const std::string& text, Position at, bool printa) {
    Format format;
    Conversion current;
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] != '%') {
            current.literal += text[i++];
            continue;
        }
        const std::size_t start = i++;
        const auto shown = [&] { return "'" + text.substr(start, i - start) + "'"; };
        if (i < text.size() && text[i] == '%') {
            current.literal += '%';
            ++i;
            continue;
        }
        if (printa && i < text.size() && text[i] == '@') {
            current.aggregation = true;
            ++i;
        }
        while (i < text.size() && std::string_view("-+ #0").find(text[i]) != std::string::npos) {
            current.flags += text[i++];
        }
        if (i < text.size() && text[i] == '*') {
            ++i;
            throw ProgramError(at,
                               "format conversion " + shown() + ": '*' widths are not supported");
        }
        const auto number = [&](int& into) {
            if (i >= text.size() || text[i] < '0' || text[i] > '9') {
                return false;
            }
            into = 0;
            while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
                if (into > 100000) {
                    throw ProgramError(at, "format conversion " + shown() +
                                               ": width or "
                                               "precision too large");
                }
                into = into * 10 + (text[i++] - '0');
            }
            return true;
        };
        number(current.width);
        if (i < text.size() && text[i] == '.') {
            ++i;
            current.precision = 0;
            number(current.precision);
        }
        if (printa && !current.aggregation && i < text.size() && text[i] == '@') {
            current.aggregation = true; // "%-10@d" is accepted as "%@-10d" is
            ++i;
        }
        while (i < text.size() && std::string_view("hlLjzt").find(text[i]) != std::string::npos) {
            ++i;
        }
        if (i >= text.size()) {
            throw ProgramError(at, "format conversion " + shown() + " is incomplete");
        }
        const char c = text[i++];
        const std::string_view integers = "diuxXoc";
        if (current.aggregation) {
            if (integers.find(c) == std::string::npos || c == 'c') {
                throw ProgramError(at, "format conversion " + shown() +
                                           ": an aggregation's value takes d i u x X or o");
            }
        } else if (integers.find(c) == std::string::npos && c != 's' && c != 'S' && c != 'p') {
            const std::string why = std::string_view("eEfFgGaA").find(c) != std::string::npos
                                        ? ": floating point and symbols are not supported"
                                    : c == 'Y' ? ": %Y (dates) is not supported"
                                               : ": unknown conversion";
            throw ProgramError(at, "format conversion " + shown() + why);
        }
        current.conversion = c;
        format.pieces.push_back(std::move(current));
        current = Conversion{};
    }
    if (!current.literal.empty() || format.pieces.empty()) {
        format.pieces.push_back(std::move(current));
    }
    return format;
}

namespace {

bool hasFlag(const Conversion& c, char flag) {
    return c.flags.find(flag) != std::string::npos;
}

/// Pads `body` (after `prefix`: a sign or 0x) to the conversion's width, as C's printf.
void pad(std::string& out, const Conversion& c, const std::string& prefix, std::string body,
         bool numeric) {
    const std::size_t width = c.width > 0 ? static_cast<std::size_t>(c.width) : 0;
    const std::size_t size = prefix.size() + body.size();
    if (size >= width) {
        out += prefix;
        out += body;
        return;
    }
    const std::size_t fill = width - size;
    if (hasFlag(c, '-')) {
        out += prefix;
        out += body;
        out.append(fill, ' ');
    } else if (numeric && hasFlag(c, '0') && c.precision < 0) {
        out += prefix;
        out.append(fill, '0');
        out += body;
    } else {
        out.append(fill, ' ');
        out += prefix;
        out += body;
    }
}

std::string digits(std::uint64_t value, unsigned base, bool upper) {
    if (value == 0) {
        return "0";
    }
    const char* symbols = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    std::string text;
    while (value != 0) {
        text += symbols[value % base];
        value /= base;
    }
    return {text.rbegin(), text.rend()};
}

} // namespace

void appendInteger(std::string& out, const Conversion& c, std::int64_t value) {
    if (c.conversion == 'c') {
        pad(out, c, "", std::string(1, static_cast<char>(value)), false);
        return;
    }
    if (c.conversion == 'p') {
        Conversion hex = c;
        hex.flags.erase(std::remove(hex.flags.begin(), hex.flags.end(), '#'), hex.flags.end());
        pad(out, hex, "0x", digits(static_cast<std::uint64_t>(value), 16, false), true);
        return;
    }
    std::string prefix;
    std::string body;
    const auto u = static_cast<std::uint64_t>(value);
    switch (c.conversion) {
    case 'd':
    case 'i':
        body = digits(value < 0 ? 0 - u : u, 10, false);
        prefix = value < 0 ? "-" : hasFlag(c, '+') ? "+" : hasFlag(c, ' ') ? " " : "";
        break;
    case 'x':
    case 'X':
        body = digits(u, 16, c.conversion == 'X');
        if (hasFlag(c, '#') && u != 0) {
            prefix = c.conversion == 'X' ? "0X" : "0x";
        }
        break;
    case 'o':
        body = digits(u, 8, false);
        if (hasFlag(c, '#') && body.front() != '0') {
            body.insert(body.begin(), '0');
        }
        break;
    default: // u
        body = digits(u, 10, false);
    }
    if (c.precision >= 0) {
        if (c.precision == 0 && u == 0) {
            body.clear();
        } else if (body.size() < static_cast<std::size_t>(c.precision)) {
            body.insert(0, static_cast<std::size_t>(c.precision) - body.size(), '0');
        }
    }
    pad(out, c, prefix, std::move(body), true);
}

void appendString(std::string& out, const Conversion& c, std::string_view value) {
    if (c.precision >= 0 && value.size() > static_cast<std::size_t>(c.precision)) {
        value = value.substr(0, static_cast<std::size_t>(c.precision));
    }
    pad(out, c, "", std::string(value), false);
}

} // namespace tracectl::aggregate
