// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Counting what a recorded trace holds, the way every integration suite
// checks its results: tracectl_demo:tick records as babeltrace2 prints them,
// and tests/integration/count_events.py (python3-bt2) for the per-event
// counts, sequence numbers and discarded-event totals.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tracectl::test {

/// tracectl_demo:tick records babeltrace2 reads in `dir` (one trace, or a
/// folder of traces, merged); -1, and a test failure naming babeltrace2's
/// output, if it cannot read them.
long countTicks(const std::string& dir);

/// As countTicks(), with babeltrace2 --stream-intersection: only the records
/// within the time range every stream of a trace covers. Equal to
/// countTicks() when every stream covers the whole recording (a stream
/// that begins late, or ends early, cuts the others' records); -1, and a
/// test failure, if babeltrace2 refuses (an empty or inverted range).
long countTicksInIntersection(const std::string& dir);

/// As countTicks(), but 0 for a `dir` that holds no trace at all (no
/// "metadata" file below it, or no such folder): a chunk in which nothing
/// was traced, a user whose apps were not recorded.
long countTicksIfAny(const std::string& dir);

/// For polling a trace a consumer may still be writing (eventually()): the
/// count of countTicksIfAny(), or -1 without a test failure while
/// babeltrace2 cannot read it yet (a metadata packet half written). Check
/// the final state with countTicksIfAny(), which names babeltrace2's error.
long countTicksOnceReadable(const std::string& dir);

/// The command running tests/integration/count_events.py on `dir` with
/// Debian's python3 (where python3-bt2 lives), or $TRACECTL_PYTHON;
/// the script is found under $TRACECTL_SOURCE_ROOT (default ".").
std::vector<std::string> countEventsCommand(const std::string& dir);

/// count_events.py's JSON for `dir` (every trace below it, chunks merged),
/// with the script's `options` (e.g. "--per-vpid"); an empty object, and a
/// test failure, if the script fails. Bounded by two minutes.
nlohmann::json countEvents(const std::string& dir, const std::vector<std::string>& options = {});

/// tests/integration/seq_gaps.py's JSON for `dir`: per process, its
/// tracectl_demo:tick seq values and the gaps among them, with times; an
/// empty object, and a test failure, if the script fails.
nlohmann::json seqGaps(const std::string& dir);

} // namespace tracectl::test
