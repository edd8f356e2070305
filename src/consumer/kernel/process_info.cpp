#include "process_info.hpp"

#include "proc_stat.hpp"

#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace tracectl::consumer::kernel {

ProcfsProcessInfo::ProcfsProcessInfo(std::filesystem::path procRoot, std::size_t capacity)
    : root_(procRoot.string()), capacity_(capacity == 0 ? 1 : capacity) {
    cache_.reserve(std::min<std::size_t>(capacity_, 4096));
}

ProcessDetails ProcfsProcessInfo::lookup(std::int32_t tid) {
    if (const auto it = cache_.find(tid); it != cache_.end())
        return it->second;
    if (cache_.size() >= capacity_)
        cache_.clear();
    const ProcessDetails d = read(tid);
    cache_.emplace(tid, d);
    return d;
}

void ProcfsProcessInfo::renamed(std::int32_t tid, const std::array<char, 16>& procname) {
    lookup(tid);
    if (const auto it = cache_.find(tid); it != cache_.end())
        it->second.procname = procname;
}

ProcessDetails ProcfsProcessInfo::read(std::int32_t tid) {
    ProcessDetails d;
    if (tid == 0) {
        std::memcpy(d.procname.data(), "swapper", 7);
        d.prio = 20;
        return d;
    }
    ++reads_;
    d.pid = tid;
    char path[4096];
    char text[4096];
    std::snprintf(path, sizeof path, "%s/%d/stat", root_.c_str(), tid);
    const auto stat = readSmallFile(path, text);
    const auto parsed = stat ? parseProcStat(*stat) : std::nullopt;
    if (!parsed) {
        ++vanished_;
        return d;
    }
    d.procname = parsed->comm;
    d.prio = parsed->priority;
    std::snprintf(path, sizeof path, "%s/%d/status", root_.c_str(), tid);
    const auto status = readSmallFile(path, text);
    if (const auto tgid = status ? parseTgid(*status) : std::nullopt)
        d.pid = *tgid;
    if (status)
        d.nsLevels = static_cast<std::uint8_t>(parseNsPids(*status, d.nsTids));
    std::snprintf(path, sizeof path, "%s/%d/ns/pid", root_.c_str(), tid);
    if (struct stat st; ::stat(path, &st) == 0)
        d.pidNsInum = static_cast<std::uint32_t>(st.st_ino);
    return d;
}

} // namespace tracectl::consumer::kernel
