#include "statedump.hpp"

#include "kernel_records.hpp"
#include "proc_stat.hpp"
#include "statedump_fields.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace tracectl::consumer::kernel {

namespace kr = kernel_records;
namespace fs = std::filesystem;

namespace {

// lttng-modules' enum lttng_process_status.
enum Status : std::int32_t {
    Unnamed = 0,
    WaitCpu = 2,
    Exit = 3,
    Zombie = 4,
    Wait = 5,
    Dead = 7,
};
constexpr std::int32_t kModeUnknown = 5;
constexpr std::uint32_t kFmodeRead = 1, kFmodeWrite = 2;

std::int32_t statusOf(char state) noexcept {
    switch (state) {
    case 'R':
        return WaitCpu;
    case 'S':
    case 'D':
    case 'I':
        return Wait;
    case 'Z':
        return Zombie;
    case 'X':
        return Dead;
    default:
        return Unnamed;
    }
}

// The numeric entries of `dir`, ascending; none if it cannot be read.
std::vector<std::int32_t> numericEntries(const fs::path& dir) {
    std::vector<std::int32_t> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        std::int32_t n = 0;
        const auto [p, err] = std::from_chars(name.data(), name.data() + name.size(), n);
        if (err == std::errc{} && p == name.data() + name.size() && n >= 0)
            out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
}

// fdinfo's `flags:` (octal), or 0.
std::uint32_t fdFlags(const fs::path& fdinfo) {
    char text[4096];
    const auto body = readSmallFile(fdinfo.c_str(), text);
    if (!body)
        return 0;
    std::string_view s = *body;
    const std::size_t at = s.find("flags:");
    if (at == std::string_view::npos)
        return 0;
    s = s.substr(at + 6);
    s = s.substr(std::min(s.find_first_not_of(" \t"), s.size()));
    std::uint32_t flags = 0;
    std::from_chars(s.data(), s.data() + s.size(), flags, 8);
    return flags;
}

} // namespace

std::uint64_t monotonicNowNs() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

Statedump::Statedump(StatedumpSources sources, Clock clock)
    : sources_(std::move(sources)), root_(sources_.proc), clock_(std::move(clock)) {}

void Statedump::event(std::uint16_t ctfId, std::span<const std::byte> fields,
                      const StatedumpSink& sink, StatedumpCounts& counts) {
    const std::uint64_t ts = std::max(clock_(), last_);
    last_ = ts;
    if (!sink(ctfId, ts, fields))
        ++counts.dropped;
}

void Statedump::dumpProcess(std::int32_t pid, const StatedumpSink& sink, StatedumpCounts& counts) {
    const fs::path dir = root_ / std::to_string(pid);
    StatedumpFields f;
    char text[4096];
    for (const std::int32_t tid : numericEntries(dir / "task")) {
        const fs::path statPath = dir / "task" / std::to_string(tid) / "stat";
        const auto body = readSmallFile(statPath.c_str(), text);
        const auto stat = body ? parseProcStat(*body) : std::nullopt;
        if (!stat)
            continue; // the thread exited meanwhile
        f.clear();
        f.le<std::int32_t>(tid);        // tid
        f.le<std::int32_t>(tid);        // vtid
        f.le<std::int32_t>(pid);        // pid
        f.le<std::int32_t>(pid);        // vpid
        f.le<std::int32_t>(stat->ppid); // ppid
        f.le<std::int32_t>(stat->ppid); // vppid
        f.raw(stat->comm.data(), stat->comm.size());
        f.le<std::int32_t>((stat->flags & kPfKthread) ? 1 : 0);
        f.le<std::int32_t>(kModeUnknown);
        f.le<std::int32_t>(0); // submode: none
        f.le<std::int32_t>(statusOf(stat->state));
        f.le<std::int32_t>(stat->processor);
        event(kr::kStatedumpProcessStateId, f.view(), sink, counts);
        ++counts.threads;
    }
}

void Statedump::dumpFiles(std::int32_t pid, const StatedumpSink& sink, StatedumpCounts& counts) {
    const fs::path dir = root_ / std::to_string(pid);
    StatedumpFields f;
    std::vector<char> target(4096);
    for (const std::int32_t fd : numericEntries(dir / "fd")) {
        const fs::path link = dir / "fd" / std::to_string(fd);
        const ssize_t n = ::readlink(link.c_str(), target.data(), target.size());
        if (n < 0)
            continue; // EACCES, or closed meanwhile
        const std::size_t len = std::min(static_cast<std::size_t>(n), target.size() - 1);
        const std::uint32_t flags = fdFlags(dir / "fdinfo" / std::to_string(fd));
        const std::uint32_t access = flags & O_ACCMODE;
        const std::uint32_t fmode = (access == O_RDONLY || access == O_RDWR ? kFmodeRead : 0) |
                                    (access == O_WRONLY || access == O_RDWR ? kFmodeWrite : 0);
        // A CTF string ends at its first NUL.
        const std::size_t textLen = static_cast<std::size_t>(
            std::find(target.begin(), target.begin() + len, '\0') - target.begin());
        f.clear();
        f.le<std::int32_t>(pid);
        f.le<std::int32_t>(fd);
        f.le<std::uint32_t>(flags);
        f.le<std::uint32_t>(fmode);
        f.raw(target.data(), textLen);
        f.le<std::uint8_t>(0);
        event(kr::kStatedumpFileDescriptorId, f.view(), sink, counts);
        ++counts.files;
    }
}

StatedumpCounts Statedump::run(const StatedumpSink& sink) {
    StatedumpCounts counts;
    event(kr::kStatedumpStartId, {}, sink, counts);
    char text[4096];
    for (const std::int32_t pid : numericEntries(root_)) {
        if (pid == 0)
            continue;
        // /proc/<tid> of a non-leader thread resolves but is not listed; a
        // tree that lists one anyway must not dump its group twice.
        const fs::path status = root_ / std::to_string(pid) / "status";
        const auto body = readSmallFile(status.c_str(), text);
        if (const auto tgid = body ? parseTgid(*body) : std::nullopt; tgid && *tgid != pid)
            continue;
        ++counts.processes;
        dumpProcess(pid, sink, counts);
        dumpFiles(pid, sink, counts);
    }
    dumpBlockDevices(sink, counts);
    dumpInterrupts(sink, counts);
    if (sources_.networkInterfaces)
        dumpNetworkInterfaces(sink, counts);
    dumpCpuTopology(sink, counts);
    event(kr::kStatedumpEndId, {}, sink, counts);
    return counts;
}

} // namespace tracectl::consumer::kernel
