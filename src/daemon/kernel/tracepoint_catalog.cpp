#include "tracepoint_catalog.hpp"

#include "lttng_kernel_names.hpp"
#include "tracefs.hpp"

#include <algorithm>
#include <set>

namespace tracectl::kernel {

namespace fs = std::filesystem;

bool globMatch(std::string_view pattern, std::string_view text) noexcept {
    // Iterative matcher with one backtrack point (the last '*').
    std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = t;
        } else if (p < pattern.size() && pattern[p] == text[t]) {
            ++p;
            ++t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

TracepointCatalog::TracepointCatalog(fs::path eventsDir) : dir_(std::move(eventsDir)) {
    std::error_code ec;
    fs::directory_iterator systems(dir_, ec);
    if (ec)
        throw TracefsError(ec.value(), dir_, "cannot list " + dir_.string() + ": " + ec.message());
    for (const fs::directory_entry& sys : systems) {
        std::error_code e2;
        if (!sys.is_directory(e2) || isUserspaceProbeSystem(sys.path().filename().string()))
            continue;
        for (const fs::directory_entry& ev : fs::directory_iterator(sys.path(), e2)) {
            std::error_code e3;
            // ftrace's own record types (events/ftrace/*) have a format but
            // no enable file: they are not tracepoints (nor in available_events).
            if (ev.is_directory(e3) && fs::exists(ev.path() / "format", e3) &&
                fs::exists(ev.path() / "enable", e3))
                events_.push_back({sys.path().filename().string(), ev.path().filename().string()});
        }
    }
    std::sort(events_.begin(), events_.end());
    lttngNames_.reserve(events_.size());
    for (const TracepointId& id : events_)
        lttngNames_.push_back(lttngNaming(id.system, id.event).eventName);
}

TracepointCatalog TracepointCatalog::fromTracefs(const Tracefs& tracefs) {
    return TracepointCatalog(tracefs.root() / "events");
}

bool TracepointCatalog::contains(std::string_view system, std::string_view event) const {
    const TracepointId key{std::string(system), std::string(event)};
    return std::binary_search(events_.begin(), events_.end(), key);
}

const EventFormat& TracepointCatalog::format(std::string_view system, std::string_view event) {
    TracepointId key{std::string(system), std::string(event)};
    if (const auto it = formats_.find(key); it != formats_.end())
        return it->second;
    if (!contains(system, event))
        throw NoSuchTracepoint("no kernel tracepoint '" + key.full() + "'");
    EventFormat parsed = parseFormat(readTracefsFile(dir_ / key.system / key.event / "format"));
    return formats_.emplace(std::move(key), std::move(parsed)).first->second;
}

std::vector<TracepointId> TracepointCatalog::match(std::string_view pattern) const {
    std::vector<TracepointId> out;
    const bool full = pattern.find(':') != std::string_view::npos;
    for (std::size_t i = 0; i < events_.size(); ++i) {
        const TracepointId& id = events_[i];
        if (isUserspaceProbeSystem(id.system))
            continue;
        if (full ? globMatch(pattern, id.full())
                 : globMatch(pattern, id.event) || globMatch(pattern, lttngNames_[i]))
            out.push_back(id);
    }
    return out;
}

void TracepointCatalog::addUserspaceProbe(const TracepointId& id) {
    const auto at = std::lower_bound(events_.begin(), events_.end(), id);
    if (at != events_.end() && *at == id)
        return;
    const auto index = at - events_.begin();
    events_.insert(at, id);
    lttngNames_.insert(lttngNames_.begin() + index, lttngNaming(id.system, id.event).eventName);
    formats_.erase(id); // a probe defined again has a new format (its id)
}

void TracepointCatalog::forgetUserspaceProbe(const TracepointId& id) {
    const auto at = std::lower_bound(events_.begin(), events_.end(), id);
    if (at == events_.end() || !(*at == id))
        return;
    lttngNames_.erase(lttngNames_.begin() + (at - events_.begin()));
    events_.erase(at);
    formats_.erase(id);
}

bool TracepointCatalog::hasSyscallTracepoints() const {
    return std::any_of(events_.begin(), events_.end(),
                       [](const TracepointId& id) { return id.system == "syscalls"; });
}

std::vector<TracepointId> TracepointCatalog::syscalls(const std::vector<std::string>& names) const {
    if (!hasSyscallTracepoints()) {
        if (contains("raw_syscalls", "sys_enter") && contains("raw_syscalls", "sys_exit"))
            return {{"raw_syscalls", "sys_enter"}, {"raw_syscalls", "sys_exit"}};
        throw NoSuchTracepoint("this kernel has no system call tracepoints");
    }
    std::set<TracepointId> out;
    for (const std::string& name : names) {
        if (name == "*") {
            for (const TracepointId& id : events_)
                if (id.system == "syscalls" &&
                    (id.event.rfind("sys_enter_", 0) == 0 || id.event.rfind("sys_exit_", 0) == 0))
                    out.insert(id);
            continue;
        }
        bool found = false;
        for (const char* prefix : {"sys_enter_", "sys_exit_"}) {
            TracepointId id{"syscalls", prefix + name};
            if (contains(id.system, id.event)) {
                out.insert(std::move(id));
                found = true;
            }
        }
        if (!found)
            throw NoSuchTracepoint("no system call '" + name + "'");
    }
    return {out.begin(), out.end()};
}

} // namespace tracectl::kernel
