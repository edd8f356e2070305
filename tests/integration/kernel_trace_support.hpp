// What the kernel-domain suites (kernel_test.cpp, ip_test.cpp) share: where
// tracefs is, the sessions' tracefs instances, a session's id as its names
// use it, and a trace's events as babeltrace2 reads them
// (tests/integration/trace_events.py, python3-bt2).
#pragma once

#include "tracectl_clients.hpp"

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace tracectl::test {

/// Where tracefs is mounted for this process (mounted at
/// /sys/kernel/tracing if it is not): the tests look at the instances the
/// daemon makes, which are kernel-wide.
std::string tracefsRoot();

/// The tracefs instances of sessions (tracectl-*), by name.
std::set<std::string> sessionInstances();

/// The session's id without dashes, as its unit and instance names have it.
std::string hexId(SessionClient& s);

/// The records trace_events.py prints for `dir` (its last line, the
/// totals, in `totals`), only those named in `names` (all if empty).
/// Fails the test (EXPECT) if the trace cannot be read.
std::vector<nlohmann::json> traceEvents(const std::string& dir,
                                        const std::vector<std::string>& names,
                                        nlohmann::json* totals = nullptr);

} // namespace tracectl::test
