// SPDX-License-Identifier: LGPL-2.1-or-later
#include "trace_counts.hpp"

#include "sandbox.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>
#include <system_error>

namespace tracectl::test {

namespace {

bool holdsMetadata(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec))
        if (it->path().filename() == "metadata")
            return true;
    return false;
}

/// The ticks of babeltrace2's output `r`, or -1 (and a test failure if
/// `failIfUnreadable`) when it could not read `dir`.
long ticksOf(const RunResult& r, const std::string& dir, bool failIfUnreadable) {
    if (r.exitCode != 0) {
        if (failIfUnreadable)
            ADD_FAILURE() << "babeltrace2 " << dir << ": " << r.describe();
        return -1;
    }
    long ticks = 0;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
        ticks += line.find("tracectl_demo:tick:") != std::string::npos ? 1 : 0;
    return ticks;
}

} // namespace

long countTicks(const std::string& dir) {
    return ticksOf(run({"babeltrace2", dir}), dir, true);
}

long countTicksInIntersection(const std::string& dir) {
    return ticksOf(run({"babeltrace2", "--stream-intersection", dir}), dir, true);
}

long countTicksIfAny(const std::string& dir) {
    return holdsMetadata(dir) ? countTicks(dir) : 0;
}

long countTicksOnceReadable(const std::string& dir) {
    return holdsMetadata(dir) ? ticksOf(run({"babeltrace2", dir}), dir, false) : 0;
}

std::vector<std::string> countEventsCommand(const std::string& dir) {
    const char* python = std::getenv("TRACECTL_PYTHON");
    const char* root = std::getenv("TRACECTL_SOURCE_ROOT");
    return {python != nullptr ? python : "/usr/bin/python3",
            std::string(root != nullptr ? root : ".") + "/tests/integration/count_events.py", dir};
}

nlohmann::json countEvents(const std::string& dir, const std::vector<std::string>& options) {
    RunOptions runOptions;
    runOptions.timeout = std::chrono::minutes(2);
    std::vector<std::string> argv = countEventsCommand(dir);
    argv.insert(argv.end(), options.begin(), options.end());
    const RunResult r = run(argv, runOptions);
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    return r.exitCode == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

nlohmann::json seqGaps(const std::string& dir) {
    RunOptions runOptions;
    runOptions.timeout = std::chrono::minutes(2);
    std::vector<std::string> argv = countEventsCommand(dir);
    argv[1].replace(argv[1].rfind("count_events.py"), std::string("count_events.py").size(),
                    "seq_gaps.py");
    const RunResult r = run(argv, runOptions);
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    return r.exitCode == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

} // namespace tracectl::test
