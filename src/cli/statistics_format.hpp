// The statistics section of `tracectl show`: session totals and a per-channel table.
#pragma once

#include "session_statistics.hpp"

#include <string>

namespace tracectl::cli {

/// The section, each line ending with a newline:
///
///     Statistics:
///       Events recorded:   12345
///       Events discarded:  120
///       Packets lost:      3
///       Bytes written:     12.5 MiB
///       Current chunk:     1.2 MiB
///       DOMAIN  CHANNEL   RECORDED  DISCARDED  LOST  WRITTEN
///       ust     channel0     12345        120     3  12.5 MiB
///
/// "Statistics (not sampled yet):" when sampled-at is 0; no table when there is no channel.
std::string formatStatisticsSection(const SessionStatistics& statistics);

} // namespace tracectl::cli
