// The trace clock as lttng-sessiond describes it: lttng-ust's default clock
// (CLOCK_MONOTONIC in ns; uuid = the kernel's boot_id) and its offset from
// the real-time clock, measured when a registry is made.
#pragma once

#include "trace_info.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace tracectl::metadata {

/// CLOCK_REALTIME - CLOCK_MONOTONIC in ns: the best of 10 samples (the one
/// whose two monotonic reads were closest), like lttng-sessiond's
/// measure_clock_offset. May be negative (real-time clock set before boot
/// time). 0 if a clock cannot be read.
std::int64_t measureClockOffset() noexcept;

/// Parses a uuid in the 8-4-4-4-12 hex form (upper or lower case,
/// surrounding whitespace ignored).
std::optional<Uuid> parseUuid(std::string_view text) noexcept;

/// /proc/sys/kernel/random/boot_id, or nullopt if unreadable.
std::optional<Uuid> readBootId();

/// lttng-ust's default clock: "monotonic", "Monotonic Clock", 1 GHz,
/// uuid = readBootId(), offset = measureClockOffset().
ClockInfo defaultClock();

} // namespace tracectl::metadata
