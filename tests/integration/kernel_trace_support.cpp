#include "kernel_trace_support.hpp"

#include "sandbox.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/mount.h>

namespace fs = std::filesystem;

namespace tracectl::test {

std::string tracefsRoot() {
    std::ifstream mounts("/proc/self/mounts");
    std::string dev, dir, type, rest;
    while (mounts >> dev >> dir >> type && std::getline(mounts, rest))
        if (type == "tracefs")
            return dir;
    ::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr);
    return "/sys/kernel/tracing";
}

std::set<std::string> sessionInstances() {
    std::set<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(tracefsRoot() + "/instances", ec))
        if (e.path().filename().string().rfind("tracectl-", 0) == 0 &&
            e.path().filename().string().rfind("tracectl-unittest", 0) != 0)
            names.insert(e.path().filename().string());
    return names;
}

std::string hexId(SessionClient& s) {
    std::string hex;
    for (char c : s.Id())
        if (c != '-')
            hex += c;
    return hex;
}

std::vector<nlohmann::json>
traceEvents(const std::string& dir, const std::vector<std::string>& names, nlohmann::json* totals) {
    const char* root = std::getenv("TRACECTL_SOURCE_ROOT");
    std::vector<std::string> argv{
        "/usr/bin/python3",
        std::string(root != nullptr ? root : ".") + "/tests/integration/trace_events.py", dir};
    for (const auto& n : names) {
        argv.push_back("--event");
        argv.push_back(n);
    }
    RunOptions options;
    options.timeout = std::chrono::minutes(2);
    const RunResult r = run(argv, options);
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    std::vector<nlohmann::json> out;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line))
        if (!line.empty())
            out.push_back(nlohmann::json::parse(line));
    if (!out.empty()) {
        if (totals != nullptr)
            *totals = out.back();
        out.pop_back();
    }
    return out;
}

} // namespace tracectl::test
