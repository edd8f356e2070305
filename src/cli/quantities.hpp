// Durations and sizes as people type them on tracectl's command line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tracectl::cli {

/// "10s", "500ms", "2m", "1h", "250us", or a bare number of microseconds,
/// in microseconds; nullopt for anything else or an overflow.
std::optional<std::uint64_t> parse_duration_us(std::string_view text);

/// "100M", "4K", "1G" (powers of 1024; "KiB"-style and lower case too), or
/// a bare number of bytes; nullopt for anything else or an overflow.
std::optional<std::uint64_t> parse_size_bytes(std::string_view text);

/// A size for people, in the units parse_size_bytes() reads (powers of 1024): "0 B", "512 B",
/// "1.0 KiB", "12.5 MiB", "3.2 GiB", "1.0 TiB" (one decimal from KiB on, rounded down).
std::string format_size(std::uint64_t bytes);

} // namespace tracectl::cli
