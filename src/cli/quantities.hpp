// Durations and sizes as people type them on tracectl's command line.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tracectl::cli {

/// "10s", "500ms", "2m", "1h", "250us", or a bare number of microseconds,
/// in microseconds; nullopt for anything else or an overflow.
std::optional<std::uint64_t> parse_duration_us(std::string_view text);

/// "100M", "4K", "1G" (powers of 1024; "KiB"-style and lower case too), or
/// a bare number of bytes; nullopt for anything else or an overflow.
std::optional<std::uint64_t> parse_size_bytes(std::string_view text);

} // namespace tracectl::cli
