#include "tracefs.hpp"

#include "log.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace tracectl::kernel {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDefaultMountPoint = "/sys/kernel/tracing";
constexpr auto kRmdirPause = std::chrono::milliseconds(50);
constexpr auto kStalePatience = std::chrono::milliseconds(1000);

std::string errnoText(int e) {
    return std::string(std::strerror(e));
}

[[noreturn]] void fail(int e, const fs::path& path, const std::string& what) {
    throw TracefsError(e, path, what + " " + path.string() + ": " + errnoText(e));
}

std::string decodeMountField(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' &&
            s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            out +=
                static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

// "123" or "123.456789" (seconds, 6 digits of microseconds) -> integer; the
// seconds form becomes ns.
std::optional<std::uint64_t> parseStatValue(std::string_view v) {
    v = trim(v);
    const std::size_t dot = v.find('.');
    std::uint64_t whole = 0;
    const std::string_view head = v.substr(0, dot);
    auto [p, ec] = std::from_chars(head.data(), head.data() + head.size(), whole);
    if (head.empty() || ec != std::errc() || p != head.data() + head.size())
        return std::nullopt;
    if (dot == std::string_view::npos)
        return whole;
    std::string_view frac = v.substr(dot + 1);
    if (frac.empty() || frac.size() > 9)
        return std::nullopt;
    std::uint64_t f = 0;
    auto [q, ec2] = std::from_chars(frac.data(), frac.data() + frac.size(), f);
    if (ec2 != std::errc() || q != frac.data() + frac.size())
        return std::nullopt;
    for (std::size_t i = frac.size(); i < 9; ++i)
        f *= 10;
    return whole * 1'000'000'000ull + f;
}

bool validId(std::string_view id) {
    if (id.empty() || id.size() > 200)
        return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    });
}

bool validComponent(std::string_view s) {
    return !s.empty() && s != "." && s != ".." && s.find('/') == std::string_view::npos &&
           s.find('\0') == std::string_view::npos;
}

// tracing_on 0, every event off: what is done before an instance's rmdir.
void quiesce(const fs::path& instance) {
    writeTracefsFile(instance / "tracing_on", "0");
    writeTracefsFile(instance / "events" / "enable", "0");
}

// rmdir, retried while EBUSY for `patience`. Returns 0 or the last errno.
int removeDirectory(const fs::path& dir, std::chrono::milliseconds patience) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    for (;;) {
        if (::rmdir(dir.c_str()) == 0)
            return 0;
        const int e = errno;
        if (e != EBUSY || std::chrono::steady_clock::now() >= deadline)
            return e;
        std::this_thread::sleep_for(kRmdirPause);
    }
}

} // namespace

TracefsError::TracefsError(int error, fs::path path, const std::string& message)
    : std::runtime_error(message), error_(error), path_(std::move(path)) {}

std::optional<fs::path> findTracefsMount(std::string_view mounts) {
    while (!mounts.empty()) {
        const std::size_t nl = mounts.find('\n');
        std::string_view line = mounts.substr(0, nl);
        mounts = nl == std::string_view::npos ? std::string_view{} : mounts.substr(nl + 1);
        std::string_view fields[3];
        std::size_t n = 0;
        while (n < 3 && !line.empty()) {
            const std::size_t sp = line.find(' ');
            fields[n++] = line.substr(0, sp);
            line = sp == std::string_view::npos ? std::string_view{} : line.substr(sp + 1);
        }
        if (n == 3 && fields[2] == "tracefs")
            return fs::path(decodeMountField(fields[1]));
    }
    return std::nullopt;
}

std::string readTracefsFile(const fs::path& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        fail(errno, path, "cannot open");
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fail(errno, path, "cannot read");
        }
        if (n == 0)
            break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

void writeTracefsFile(const fs::path& path, std::string_view value, bool append) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC)));
    if (!fd)
        fail(errno, path, "cannot open");
    if (value.empty())
        return;
    ssize_t n;
    do
        n = ::write(fd.get(), value.data(), value.size());
    while (n < 0 && errno == EINTR);
    if (n < 0)
        throw TracefsError(errno, path,
                           "cannot write '" + std::string(trim(value)) + "' to " + path.string() +
                               ": " + errnoText(errno));
    if (static_cast<std::size_t>(n) != value.size())
        throw TracefsError(EIO, path, "short write to " + path.string());
}

CpuStats parseCpuStats(std::string_view text) {
    CpuStats s;
    struct Key {
        std::string_view name;
        std::uint64_t CpuStats::*member;
    };
    static constexpr Key kKeys[] = {
        {"entries", &CpuStats::entries},
        {"overrun", &CpuStats::overrun},
        {"commit overrun", &CpuStats::commitOverrun},
        {"bytes", &CpuStats::bytes},
        {"oldest event ts", &CpuStats::oldestEventNs},
        {"now ts", &CpuStats::nowNs},
        {"dropped events", &CpuStats::droppedEvents},
        {"read events", &CpuStats::readEvents},
    };
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos)
            continue;
        const std::string_view key = trim(line.substr(0, colon));
        for (const Key& k : kKeys) {
            if (k.name != key)
                continue;
            const std::optional<std::uint64_t> v = parseStatValue(line.substr(colon + 1));
            if (!v)
                throw TracefsError(0, {}, "stats: '" + std::string(key) + "' is not a number");
            s.*k.member = *v;
        }
    }
    return s;
}

Tracefs::Tracefs(fs::path root) : root_(std::move(root)) {}

Tracefs Tracefs::locate() {
    std::string mounts;
    try {
        mounts = readTracefsFile("/proc/self/mounts");
    } catch (const TracefsError&) {
        // No /proc: try mounting.
    }
    if (const std::optional<fs::path> at = findTracefsMount(mounts))
        return Tracefs(*at);
    if (::mount("nodev", kDefaultMountPoint, "tracefs", 0, nullptr) != 0) {
        const int e = errno;
        std::string why = "tracefs is not mounted and mounting it at " +
                          std::string(kDefaultMountPoint) + " failed: " + errnoText(e);
        if (e == EPERM)
            why += " (mounting needs CAP_SYS_ADMIN)";
        else if (e == ENODEV)
            why += " (this kernel has no tracefs: CONFIG_TRACING off)";
        else if (e == ENOENT)
            why += " (no such directory: is sysfs mounted?)";
        throw TracefsError(e, kDefaultMountPoint, why);
    }
    log::notice("mounted tracefs at " + std::string(kDefaultMountPoint));
    return Tracefs(kDefaultMountPoint);
}

bool Tracefs::writable() const noexcept {
    return ::access((root_ / "instances").c_str(), W_OK) == 0;
}

std::string Tracefs::read(std::string_view relative) const {
    return readTracefsFile(root_ / relative);
}

PageFormat Tracefs::headerPage() const {
    return parseHeaderPage(read("events/header_page"));
}

std::uint16_t Tracefs::stackEntryType(bool user) const {
    const std::filesystem::path path =
        root_ / "events" / "ftrace" / (user ? "user_stack" : "kernel_stack") / "format";
    const std::string text = readTracefsFile(path);
    const auto at = text.find("\nID: ");
    if (at == std::string::npos)
        throw TracefsError(EINVAL, path, "no ID line");
    const unsigned long id = std::strtoul(text.c_str() + at + 5, nullptr, 10);
    if (id == 0 || id > UINT16_MAX)
        throw TracefsError(EINVAL, path, "ID out of range");
    return static_cast<std::uint16_t>(id);
}

std::vector<std::string> Tracefs::removeStaleInstances(std::string_view prefix,
                                                       bool quiet) const noexcept {
    std::vector<std::string> removed;
    if (prefix.rfind(TracefsInstance::kPrefix, 0) != 0)
        return removed;
    try {
        std::error_code ec;
        for (const fs::directory_entry& entry : fs::directory_iterator(root_ / "instances", ec)) {
            const std::string name = entry.path().filename().string();
            if (name.rfind(prefix, 0) != 0)
                continue;
            try {
                quiesce(entry.path());
            } catch (const TracefsError& e) {
                log::warning(std::string("stale tracefs instance ") + name + ": " + e.what());
            }
            const int e = removeDirectory(entry.path(), kStalePatience);
            if (e == 0) {
                log::info("removed stale tracefs instance " + name);
                removed.push_back(name);
            } else if (quiet) {
                log::debug("cannot remove stale tracefs instance " + name + ": " + errnoText(e));
            } else {
                log::warning("cannot remove stale tracefs instance " + name + ": " + errnoText(e) +
                             "; tried again every second");
            }
        }
        if (ec)
            log::warning("cannot list " + (root_ / "instances").string() + ": " + ec.message());
    } catch (const std::exception& e) {
        log::warning(std::string("removing stale tracefs instances: ") + e.what());
    }
    return removed;
}

void Tracefs::defineUprobe(std::string_view definition) const {
    try {
        writeTracefsFile(root_ / "uprobe_events", std::string(definition) + "\n", true);
    } catch (const TracefsError& e) {
        // The kernel says why in error_log (its last lines).
        std::string why;
        try {
            const std::string log = readTracefsFile(root_ / "error_log");
            const auto at = log.rfind("error: ");
            if (at != std::string::npos)
                why = std::string(trim(log.substr(at + 7, log.find('\n', at) - at - 7)));
        } catch (const std::exception&) {
        }
        throw TracefsError(e.error(), e.path(),
                           "uprobe_events refused '" + std::string(definition) + "': " +
                               errnoText(e.error()) + (why.empty() ? "" : " (" + why + ")"));
    }
}

std::vector<std::string> Tracefs::uprobeEvents(std::string_view group) const {
    std::vector<std::string> out;
    if (!fs::exists(root_ / "uprobe_events"))
        return out; // a kernel without uprobes has none of ours
    const std::string text = readTracefsFile(root_ / "uprobe_events");
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos)
            end = text.size();
        const std::string_view line(text.data() + pos, end - pos);
        pos = end + 1;
        // "p:GROUP/EVENT PATH:OFFSET ..." (r: for return probes)
        if (line.size() < 2 || line[1] != ':')
            continue;
        const auto slash = line.find('/');
        const auto space = line.find(' ');
        if (slash == std::string_view::npos || space == std::string_view::npos || slash > space)
            continue;
        if (line.substr(2, slash - 2) == group)
            out.emplace_back(line.substr(slash + 1, space - slash - 1));
    }
    return out;
}

void Tracefs::removeUprobe(std::string_view group, std::string_view event) const {
    writeTracefsFile(root_ / "uprobe_events",
                     "-:" + std::string(group) + "/" + std::string(event) + "\n", true);
}

bool Tracefs::removeUprobeGroup(std::string_view group, bool quiet) const noexcept {
    if (group.rfind("tracectl_", 0) != 0)
        return false;
    try {
        for (const std::string& event : uprobeEvents(group)) {
            try {
                removeUprobe(group, event);
                log::info("userspace probe " + std::string(group) + "/" + event + " removed");
            } catch (const std::exception& e) {
                const std::string line =
                    "userspace probe " + std::string(group) + "/" + event + ": " + e.what();
                quiet ? log::debug(line) : log::warning(line);
            }
        }
        return uprobeEvents(group).empty();
    } catch (const std::exception& e) {
        const std::string line = std::string("uprobe_events: ") + e.what();
        quiet ? log::debug(line) : log::warning(line);
        return false;
    }
}

TracefsInstance::TracefsInstance(fs::path path, std::string name)
    : path_(std::move(path)), name_(std::move(name)) {}

fs::path TracefsInstance::pathOf(const Tracefs& tracefs, std::string_view id) {
    if (!validId(id))
        throw std::invalid_argument("tracefs instance id '" + std::string(id) +
                                    "' is not [A-Za-z0-9_-]+");
    return tracefs.root() / "instances" / (std::string(kPrefix) + std::string(id));
}

bool TracefsInstance::exists(const Tracefs& tracefs, std::string_view id) {
    std::error_code ec;
    return fs::is_directory(pathOf(tracefs, id), ec);
}

TracefsInstance TracefsInstance::create(const Tracefs& tracefs, std::string_view id) {
    fs::path path = pathOf(tracefs, id);
    if (::mkdir(path.c_str(), 0700) != 0)
        fail(errno, path, "cannot create tracefs instance");
    std::string name = path.filename().string();
    TracefsInstance instance(std::move(path), std::move(name));
    // The kernel makes instances with tracing on: an event enabled before
    // the session starts would record at once.
    instance.setTracingOn(false);
    return instance;
}

TracefsInstance TracefsInstance::open(const Tracefs& tracefs, std::string_view id) {
    fs::path path = pathOf(tracefs, id);
    std::string name = path.filename().string();
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        fail(errno, path, "cannot take over tracefs instance");
    if (!S_ISDIR(st.st_mode))
        fail(ENOTDIR, path, "cannot take over tracefs instance");
    return TracefsInstance(std::move(path), std::move(name));
}

TracefsInstance::TracefsInstance(TracefsInstance&& other) noexcept
    : path_(std::exchange(other.path_, {})), name_(std::exchange(other.name_, {})) {}

TracefsInstance& TracefsInstance::operator=(TracefsInstance&& other) noexcept {
    if (this != &other) {
        try {
            remove();
        } catch (const std::exception& e) {
            log::warning(e.what());
        }
        path_ = std::exchange(other.path_, {});
        name_ = std::exchange(other.name_, {});
    }
    return *this;
}

TracefsInstance::~TracefsInstance() {
    try {
        remove();
    } catch (const std::exception& e) {
        log::warning(std::string(e.what()) + " (left for the next start's clean-up)");
    }
}

fs::path TracefsInstance::eventPath(std::string_view system, std::string_view event,
                                    std::string_view file) const {
    if (!validComponent(system) || !validComponent(event))
        throw std::invalid_argument("invalid tracepoint name '" + std::string(system) + ":" +
                                    std::string(event) + "'");
    return path_ / "events" / system / event / file;
}

void TracefsInstance::setBufferSizeKb(std::uint32_t kb) {
    writeTracefsFile(path_ / "buffer_size_kb", std::to_string(kb));
}

bool TracefsInstance::setSubbufferSizeKb(std::uint32_t kb) {
    const fs::path file = path_ / "buffer_subbuf_size_kb";
    if (::access(file.c_str(), F_OK) != 0)
        return false;
    try {
        writeTracefsFile(file, std::to_string(kb));
    } catch (const TracefsError& e) {
        if (e.error() == EPERM)
            return false;
        throw;
    }
    return true;
}

bool TracefsInstance::setBufferPercent(unsigned percent) {
    const fs::path file = path_ / "buffer_percent";
    if (::access(file.c_str(), F_OK) != 0)
        return false;
    writeTracefsFile(file, std::to_string(percent));
    return true;
}

void TracefsInstance::setClock(std::string_view clock) {
    writeTracefsFile(path_ / "trace_clock", clock);
}

std::string TracefsInstance::clock() const {
    const std::string text = read("trace_clock");
    const std::size_t open = text.find('[');
    const std::size_t close = text.find(']', open);
    if (open == std::string::npos || close == std::string::npos)
        throw TracefsError(0, path_ / "trace_clock", "no selected clock in trace_clock");
    return text.substr(open + 1, close - open - 1);
}

void TracefsInstance::setOverwrite(bool overwrite) {
    writeTracefsFile(path_ / "options" / "overwrite", overwrite ? "1" : "0");
}

void TracefsInstance::setStackTraces(bool kernel, bool user) {
    writeTracefsFile(path_ / "options" / "stacktrace", kernel ? "1" : "0");
    writeTracefsFile(path_ / "options" / "userstacktrace", user ? "1" : "0");
}

void TracefsInstance::enableEvent(std::string_view system, std::string_view event) {
    writeTracefsFile(eventPath(system, event, "enable"), "1");
}

void TracefsInstance::disableEvent(std::string_view system, std::string_view event) {
    writeTracefsFile(eventPath(system, event, "enable"), "0");
}

void TracefsInstance::setFilter(std::string_view system, std::string_view event,
                                std::string_view expression) {
    const fs::path file = eventPath(system, event, "filter");
    if (trim(expression).empty()) {
        clearFilter(system, event);
        return;
    }
    if (expression.find('\n') != std::string_view::npos)
        throw TracefsError(EINVAL, file,
                           "filter for " + std::string(system) + ":" + std::string(event) +
                               " has a newline");
    try {
        writeTracefsFile(path_ / "error_log", "");
    } catch (const TracefsError&) {
        // Older kernels have no error_log: the filter file still explains.
    }
    try {
        writeTracefsFile(file, expression);
    } catch (const TracefsError& e) {
        std::string reason;
        try {
            reason = std::string(trim(readTracefsFile(file)));
        } catch (const TracefsError&) {
        }
        std::string log;
        try {
            log = std::string(trim(readTracefsFile(path_ / "error_log")));
        } catch (const TracefsError&) {
        }
        std::string message = "the kernel refused filter '" + std::string(expression) + "' for " +
                              std::string(system) + ":" + std::string(event) + ": " +
                              errnoText(e.error());
        if (!reason.empty())
            message += "\n" + reason;
        if (!log.empty())
            message += "\nerror_log: " + log;
        throw TracefsError(e.error(), file, message);
    }
}

void TracefsInstance::clearFilter(std::string_view system, std::string_view event) {
    writeTracefsFile(eventPath(system, event, "filter"), "0");
}

void TracefsInstance::setTracingOn(bool on) {
    writeTracefsFile(path_ / "tracing_on", on ? "1" : "0");
}

std::vector<unsigned> TracefsInstance::cpus() const {
    std::vector<unsigned> out;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(path_ / "per_cpu", ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("cpu", 0) != 0 || name.size() == 3)
            continue;
        unsigned cpu = 0;
        const auto [p, err] = std::from_chars(name.data() + 3, name.data() + name.size(), cpu);
        if (err == std::errc() && p == name.data() + name.size())
            out.push_back(cpu);
    }
    if (ec)
        fail(ec.value(), path_ / "per_cpu", "cannot list");
    std::sort(out.begin(), out.end());
    return out;
}

UniqueFd TracefsInstance::openRaw(unsigned cpu) const {
    const fs::path file = path_ / "per_cpu" / ("cpu" + std::to_string(cpu)) / "trace_pipe_raw";
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd)
        fail(errno, file, "cannot open");
    return fd;
}

CpuStats TracefsInstance::stats(unsigned cpu) const {
    return parseCpuStats(read("per_cpu/cpu" + std::to_string(cpu) + "/stats"));
}

PageFormat TracefsInstance::headerPage() const {
    return parseHeaderPage(read("events/header_page"));
}

std::string TracefsInstance::read(std::string_view relative) const {
    return readTracefsFile(path_ / relative);
}

void TracefsInstance::remove(std::chrono::milliseconds patience) {
    if (path_.empty())
        return;
    try {
        quiesce(path_);
    } catch (const TracefsError& e) {
        if (e.error() == ENOENT) {
            // Already gone (removed by hand): nothing left to do.
            path_.clear();
            return;
        }
        log::warning(std::string("tracefs instance ") + name_ + ": " + e.what());
    }
    const int e = removeDirectory(path_, patience);
    if (e != 0 && e != ENOENT)
        throw TracefsError(e, path_,
                           "cannot remove tracefs instance " + path_.string() + ": " +
                               errnoText(e) +
                               (e == EBUSY ? " (a file of it is still open, e.g. the "
                                             "consumer's trace_pipe_raw)"
                                           : ""));
    path_.clear();
}

} // namespace tracectl::kernel
