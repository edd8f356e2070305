// Durations and sizes as people type them on tracectl's command line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tracectl::cli {

/// "10s", "500ms", "2m", "1h", "250us", or a bare number of microseconds,
/// in microseconds; nullopt for anything else or an overflow.
std::optional<std::uint64_t> parseDurationUs(std::string_view text);

/// What parse_size() read: `bytes`, or (nullopt) `error`, a sentence saying
/// why the text is no size.
struct SizeParse {
    std::optional<std::uint64_t> bytes;
    std::string error;
};

/// A size in bytes as lttng(1) takes one (lttng-tools' utils_parse_size_suffix,
/// for --subbuf-size, --tracefile-size, snapshot --max-size, rotation --size):
/// an unsigned integer in decimal ("4096"), hexadecimal ("0x1000") or octal
/// ("0300" is 192), then at most one unit: k or K (x 1024), M (x 1024^2),
/// G (x 1024^3). tracectl also takes m and g, and a B or iB
/// after the unit or the number ("4KiB", "1gb", "512B"). Errors (bytes
/// nullopt): empty text, a '-' anywhere ("negative"), no number first, an
/// unknown unit (the sentence lists every unit taken), text after the unit, more
/// than 2^64 - 1 bytes ("too big").
SizeParse parseSize(std::string_view text);

/// parse_size(text).bytes.
std::optional<std::uint64_t> parseSizeBytes(std::string_view text);

/// A size for people, in the units parse_size_bytes() reads (powers of 1024): "0 B", "512 B",
/// "1.0 KiB", "12.5 MiB", "3.2 GiB", "1.0 TiB" (one decimal from KiB on, rounded down).
std::string formatSize(std::uint64_t bytes);

/// The longest `aggregate --duration`: 31 days.
inline constexpr double kMaxAggregateSeconds = 31.0 * 24 * 3600;

/// What is wrong with `text` as `aggregate --duration SECONDS` (a finite decimal number of
/// seconds, more than 0, at most max_aggregate_seconds), or nullopt if nothing is:
/// "not a number of seconds: abc", "must be more than 0 seconds", "must be at most 2678400
/// seconds (31 days)".
std::optional<std::string> aggregateSecondsError(std::string_view text);

/// Seconds for people: "6", "0.5", "2678400" (no trailing zeros).
std::string formatSeconds(double seconds);

} // namespace tracectl::cli
