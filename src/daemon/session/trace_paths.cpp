#include "session/trace_paths.hpp"

#include <cstdio>

namespace tracectl {

namespace {

constexpr std::size_t kMaxProcName = 64;

/// YYYYmmdd-HHMMSS in local time, as lttng-sessiond's per-PID folders.
std::string localStamp(std::time_t t) {
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32] = {};
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
    return buf;
}

} // namespace

std::string safeProcName(std::string_view procname) {
    std::string out(procname.substr(0, kMaxProcName));
    for (char& c : out) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '/' || u < 0x20 || u == 0x7f)
            c = '_';
    }
    if (!out.empty() && out.front() == '.')
        out.front() = '_';
    return out.empty() ? "app" : out;
}

std::string perPidTraceDir(std::string_view procname, pid_t pid, std::time_t registered) {
    return "ust/pid/" + safeProcName(procname) + "-" + std::to_string(pid) + "-" +
           localStamp(registered);
}

std::string chunkStamp(std::time_t t) {
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[40] = {};
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%S%z", &tm);
    return buf;
}

std::string archiveDir(std::time_t begin, std::time_t end, std::uint64_t index) {
    return "archives/" + chunkStamp(begin) + "-" + chunkStamp(end) + "-" + std::to_string(index);
}

std::string chunkDir(std::time_t begin, std::uint64_t index) {
    return chunkStamp(begin) + "-" + std::to_string(index);
}

std::string restartSuffix(std::time_t takeover) {
    return "-restart-" + chunkStamp(takeover);
}

} // namespace tracectl
