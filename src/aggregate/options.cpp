#include "aggregate/options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace tracectl::aggregate {

namespace {

constexpr std::int64_t kSecondNs = 1000000000;

/// The unsigned number that begins `text` as strtoull(3) reads it with base 0, as libdtrace
/// reads every option's value (dt_opt_rate, dt_optval_parse): "0x1f" hexadecimal, "017"
/// octal, else decimal; digits only (no blank, no sign). `rest` gets what follows it.
/// nullopt: no digit first, or more than INT64_MAX (libdtrace's "val < 0").
std::optional<std::int64_t> leadingNumber(std::string_view text, std::string_view& rest) {
    int base = 10;
    std::size_t at = 0;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') &&
        std::isxdigit(static_cast<unsigned char>(text[2])) != 0) {
        base = 16;
        at = 2;
    } else if (text.size() > 1 && text[0] == '0') {
        base = 8;
        at = 1;
    }
    std::uint64_t n = 0;
    const char* begin = text.data() + at;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(begin, end, n, base);
    if (ptr == begin) {
        if (base != 8) {
            return std::nullopt; // no digit
        }
        rest = text.substr(1); // "0" then no octal digit ("08", "0x"): strtoull reads 0
        return 0;
    }
    if (ec != std::errc{} || n > static_cast<std::uint64_t>(INT64_MAX)) {
        return std::nullopt;
    }
    rest = std::string_view(ptr, static_cast<std::size_t>(end - ptr));
    return static_cast<std::int64_t>(n);
}

std::string lowered(std::string_view text) {
    std::string out;
    for (const char c : text) {
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

/// `a` * `b` (both >= 0), INT64_MAX if that is more.
std::int64_t saturatedProduct(std::int64_t a, std::int64_t b) noexcept {
    return b != 0 && a > INT64_MAX / b ? INT64_MAX : a * b;
}

/// A rate option's value as libdtrace's dt_opt_rate reads it: N (per second), N with hz
/// (per second) or with a time unit (ns nsec us usec ms msec s sec m min h hour d day),
/// the unit in any case; N as strtoull(3) reads it (leading_number). The period in ns:
/// 0 for a rate of 0 ("as often as possible"), INT64_MAX for what is longer. nullopt if
/// malformed.
std::optional<std::int64_t> ratePeriodNs(std::string_view value) {
    std::string_view rest;
    const auto n = leadingNumber(value, rest);
    if (!n) {
        return std::nullopt;
    }
    const std::string unit = lowered(rest);
    if (unit.empty() || unit == "hz") {
        return *n == 0 ? 0 : kSecondNs / *n;
    }
    if (const auto scale = timeUnitNs(unit)) {
        return saturatedProduct(*n, *scale);
    }
    return std::nullopt;
}

/// A size option's value as libdtrace's dt_optval_parse reads it: N, or N and one of k, m,
/// g, t in either case (powers of 1024); N as strtoull(3) reads it (leading_number).
/// nullopt if malformed or above `most`.
std::optional<std::size_t> sizeValue(std::string_view value, std::uint64_t most) {
    std::string_view rest;
    const auto n = leadingNumber(value, rest);
    if (!n) {
        return std::nullopt;
    }
    int shift = 0;
    if (!rest.empty()) {
        const std::string unit = lowered(rest);
        shift = unit == "k" ? 10 : unit == "m" ? 20 : unit == "g" ? 30 : unit == "t" ? 40 : -1;
        if (shift < 0) {
            return std::nullopt;
        }
    }
    const auto bytes = static_cast<std::uint64_t>(*n);
    if (bytes > (most >> shift)) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(bytes << shift);
}

} // namespace

void applyOptions(const std::vector<OptionSetting>& settings, RunOptions& options) {
    for (const OptionSetting& s : settings) {
        const auto flag = [&](bool& into) {
            if (!s.value.empty()) {
                throw ProgramError(s.at, "option " + s.name + " takes no value");
            }
            into = true;
        };
        const auto rate = [&](std::string& into) {
            if (!ratePeriodNs(s.value)) {
                throw ProgramError(
                    s.at, "option " + s.name +
                              " needs a rate or a period, as dtrace takes it: N per second (N "
                              "or Nhz), or N with ns, us, ms, s, m, h or d (or nsec, usec, "
                              "msec, sec, min, hour, day), N decimal, 0x hexadecimal or 0 "
                              "octal, as in 10hz or 100ms; not '" +
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
            if (!sizeValue(s.value, INT64_MAX)) {
                throw ProgramError(s.at, "option bufsize needs a size: N bytes, or N with k, m, "
                                         "g or t (powers of 1024), as in 4m; not '" +
                                             s.value + "'");
            }
            options.bufsize = s.value;
        } else if (s.name == "strsize") {
            const auto size = sizeValue(s.value, kLargestStrsize);
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

std::int64_t switchPeriodNs(const RunOptions& options) {
    constexpr std::int64_t kShortest = 10000000; // 10 ms
    constexpr std::int64_t kLongest = 86400 * kSecondNs;
    if (options.switchrate.empty()) {
        return kSecondNs;
    }
    // apply_options took it: malformed text is no longer possible.
    return std::clamp(ratePeriodNs(options.switchrate).value_or(kSecondNs), kShortest, kLongest);
}

OptionSetting optionFromText(const std::string& text) {
    const std::size_t eq = text.find('=');
    return {text.substr(0, eq), eq == std::string::npos ? std::string() : text.substr(eq + 1),
            Position{0, 0}};
}

} // namespace tracectl::aggregate
