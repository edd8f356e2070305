#include "aggregate/options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>

namespace tracectl::aggregate {

namespace {

bool valid_number_with_suffix(const std::string& value,
                              std::initializer_list<const char*> suffixes) {
    std::size_t digits = 0;
    while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits])) != 0) {
        ++digits;
    }
    if (digits == 0 || digits > 18) {
        return false;
    }
    const std::string suffix = value.substr(digits);
    if (suffix.empty()) {
        return true;
    }
    for (const char* s : suffixes) {
        std::string lower;
        for (const char c : suffix) {
            lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        if (lower == s) {
            return true;
        }
    }
    return false;
}

/// N[k m g t] as a number of bytes; nullopt if malformed or above `most`.
std::optional<std::size_t> size_value(const std::string& value, std::size_t most) {
    if (!valid_number_with_suffix(value, {"k", "m", "g", "t"})) {
        return std::nullopt;
    }
    std::size_t digits = 0;
    std::uint64_t n = 0;
    while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits])) != 0) {
        n = n * 10 + static_cast<std::uint64_t>(value[digits] - '0');
        ++digits;
    }
    if (digits < value.size()) {
        const char unit =
            static_cast<char>(std::tolower(static_cast<unsigned char>(value[digits])));
        const int shift = unit == 'k' ? 10 : unit == 'm' ? 20 : unit == 'g' ? 30 : 40;
        if (n > (std::uint64_t{most} >> shift)) {
            return std::nullopt;
        }
        n <<= shift;
    }
    if (n > most) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(n);
}

} // namespace

void apply_options(const std::vector<OptionSetting>& settings, RunOptions& options) {
    for (const OptionSetting& s : settings) {
        const auto flag = [&](bool& into) {
            if (!s.value.empty()) {
                throw ProgramError(s.at, "option " + s.name + " takes no value");
            }
            into = true;
        };
        const auto rate = [&](std::string& into) {
            if (!valid_number_with_suffix(s.value,
                                          {"ns", "nsec", "us", "usec", "ms", "msec", "s", "sec",
                                           "m", "min", "h", "hour", "d", "day", "hz"})) {
                throw ProgramError(s.at, "option " + s.name +
                                             " needs a rate or a time, as "
                                             "in 10hz or 100ms, not '" +
                                             s.value + "'");
            }
            into = s.value;
        };
        if (s.name == "quiet") {
            flag(options.quiet);
        } else if (s.name == "aggsortkey") {
            flag(options.aggsortkey);
        } else if (s.name == "aggsortrev") {
            flag(options.aggsortrev);
        } else if (s.name == "defaultargs") {
            flag(options.defaultargs);
        } else if (s.name == "switchrate") {
            rate(options.switchrate);
        } else if (s.name == "aggrate") {
            rate(options.aggrate);
        } else if (s.name == "bufsize") {
            if (!valid_number_with_suffix(s.value, {"k", "m", "g", "t"})) {
                throw ProgramError(s.at,
                                   "option bufsize needs a size, as in 4m, not '" + s.value + "'");
            }
            options.bufsize = s.value;
        } else if (s.name == "strsize") {
            const auto size = size_value(s.value, largest_strsize);
            if (!size || *size == 0) {
                throw ProgramError(s.at, "option strsize needs a size from 1 to 1m (bytes, with "
                                         "the terminating NUL), as in 512 or 4k, not '" +
                                             s.value + "'");
            }
            options.strsize = *size;
        } else if (s.name == "destructive") {
            throw ProgramError(s.at, "option destructive is refused: destructive actions are "
                                     "not available (tracectl dtrace never acts on the "
                                     "traced system)");
        } else {
            throw ProgramError(s.at, "unknown option '" + s.name +
                                         "' (quiet, switchrate, aggrate, bufsize, strsize, "
                                         "defaultargs, aggsortkey, aggsortrev)");
        }
    }
}

std::int64_t switch_period_ns(const RunOptions& options) {
    constexpr std::int64_t second = 1000000000;
    constexpr std::int64_t shortest = 10000000; // 10 ms
    constexpr std::int64_t longest = 86400 * second;
    const std::string& text = options.switchrate;
    if (text.empty()) {
        return second;
    }
    std::size_t digits = 0;
    std::int64_t n = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) {
        n = n * 10 + (text[digits] - '0'); // at most 18 digits (apply_options)
        ++digits;
    }
    std::string unit;
    for (const char c : text.substr(digits)) {
        unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (n == 0) {
        return shortest;
    }
    std::int64_t period = 0;
    if (unit.empty() || unit == "hz") {
        period = second / n;
    } else {
        const std::int64_t scale = unit == "ns" || unit == "nsec"   ? 1
                                   : unit == "us" || unit == "usec" ? 1000
                                   : unit == "ms" || unit == "msec" ? 1000000
                                   : unit == "s" || unit == "sec"   ? second
                                   : unit == "m" || unit == "min"   ? 60 * second
                                   : unit == "h" || unit == "hour"  ? 3600 * second
                                                                    : 86400 * second;
        period = n > longest / scale ? longest : n * scale;
    }
    return std::clamp(period, shortest, longest);
}

OptionSetting option_from_text(const std::string& text) {
    const std::size_t eq = text.find('=');
    return {text.substr(0, eq), eq == std::string::npos ? std::string() : text.substr(eq + 1),
            Position{0, 0}};
}

} // namespace tracectl::aggregate
