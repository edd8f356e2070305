#include "quantities.hpp"

#include <charconv>
#include <cmath>
#include <iomanip>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>

namespace tracectl::cli {

namespace {

/// The number at the start of `text` and the suffix after it.
std::optional<std::pair<std::uint64_t, std::string_view>> split(std::string_view text) {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc{} || ptr == text.data())
        return std::nullopt;
    return std::pair{value, std::string_view(ptr, static_cast<std::size_t>(end - ptr))};
}

std::optional<std::uint64_t> times(std::uint64_t value, std::uint64_t factor) {
    if (value > std::numeric_limits<std::uint64_t>::max() / factor)
        return std::nullopt;
    return value * factor;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

} // namespace

std::optional<std::uint64_t> parseDurationUs(std::string_view text) {
    const auto parts = split(text);
    if (!parts)
        return std::nullopt;
    const std::string unit = lower(parts->second);
    if (unit.empty() || unit == "us")
        return parts->first;
    if (unit == "ms")
        return times(parts->first, 1'000);
    if (unit == "s")
        return times(parts->first, 1'000'000);
    if (unit == "m" || unit == "min")
        return times(parts->first, 60'000'000);
    if (unit == "h")
        return times(parts->first, 3'600'000'000);
    return std::nullopt;
}

SizeParse parseSize(std::string_view text) {
    // Every unit the switch below takes, for a text whose unit is none of them.
    const auto unknownUnit = [](std::string_view unit) {
        return "unknown unit '" + std::string(unit) +
               "' (K, M or G in either case, alone or followed by B or iB, as in 8M, 8MiB or "
               "8mb; or B alone)";
    };
    const auto fail = [&](const std::string& why) {
        return SizeParse{std::nullopt, "'" + std::string(text) + "' is not a size: " + why};
    };
    if (text.empty()) {
        return fail("it is empty");
    }
    if (text.find('-') != std::string_view::npos) {
        return fail("sizes are never negative");
    }
    // The number, as strtoull(3) reads it with base 0 (lttng's grammar).
    int base = 10;
    std::string_view digits = text;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        base = 16;
        digits.remove_prefix(2);
    } else if (text.size() > 1 && text[0] == '0' && text[1] >= '0' && text[1] <= '9') {
        base = 8;
        digits.remove_prefix(1);
    }
    std::uint64_t value = 0;
    const char* end = digits.data() + digits.size();
    const auto [ptr, ec] = std::from_chars(digits.data(), end, value, base);
    if (ptr == digits.data()) {
        return fail("it does not start with a number");
    }
    if (ec == std::errc::result_out_of_range) {
        return fail("more than 18446744073709551615 bytes");
    }
    std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
    unsigned shift = 0;
    if (!unit.empty()) {
        switch (unit.front()) {
        case 'k':
        case 'K':
            shift = 10;
            break;
        case 'm':
        case 'M':
            shift = 20;
            break;
        case 'g':
        case 'G':
            shift = 30;
            break;
        case 'b':
        case 'B':
            break;
        default:
            return fail(unknownUnit(unit));
        }
        const std::string rest = lower(shift == 0 ? unit : unit.substr(1));
        if (shift == 0 ? rest != "b" : !rest.empty() && rest != "b" && rest != "ib") {
            return fail(unknownUnit(unit));
        }
    }
    const auto bytes = times(value, std::uint64_t{1} << shift);
    if (!bytes) {
        return fail("more than 18446744073709551615 bytes");
    }
    return SizeParse{bytes, {}};
}

std::optional<std::uint64_t> parseSizeBytes(std::string_view text) {
    return parseSize(text).bytes;
}

std::string formatSize(std::uint64_t bytes) {
    static constexpr std::string_view kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " B";
    std::size_t unit = 0;
    // Tenths of the unit, computed in integers so that nothing rounds up past the size.
    std::uint64_t whole = bytes / 1024;
    std::uint64_t rest = bytes % 1024;
    while (whole >= 1024 && unit + 1 < std::size(kUnits)) {
        rest = whole % 1024;
        whole /= 1024;
        ++unit;
    }
    const std::uint64_t tenths = rest * 10 / 1024;
    return std::to_string(whole) + "." + std::to_string(tenths) + " " + std::string(kUnits[unit]);
}

std::optional<std::string> aggregateSecondsError(std::string_view text) {
    double value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ptr != end || std::isnan(value) ||
        (ec != std::errc() && ec != std::errc::result_out_of_range)) {
        return "not a number of seconds: " + std::string(text);
    }
    if (ec == std::errc::result_out_of_range) {
        // Too close to 0 or too large for a double: say which.
        value = text.front() != '-' && text.find_first_of("eE") != std::string_view::npos &&
                        text.find("e-") == std::string_view::npos &&
                        text.find("E-") == std::string_view::npos
                    ? HUGE_VAL
                    : 0;
    }
    if (!(value > 0)) {
        return std::string("must be more than 0 seconds");
    }
    if (!(value <= kMaxAggregateSeconds)) {
        return "must be at most " + formatSeconds(kMaxAggregateSeconds) + " seconds (31 days)";
    }
    return std::nullopt;
}

std::string formatSeconds(double seconds) {
    std::ostringstream out;
    out << std::setprecision(15) << seconds;
    return out.str();
}

} // namespace tracectl::cli
