#include "session/channel_config.hpp"

#include "common/error.hpp"
#include "session/session_name.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <unistd.h>

namespace tracectl {

namespace {

bool isPowerOfTwo(uint64_t v) {
    return v != 0 && (v & (v - 1)) == 0;
}

/// Event names travel in LTTNG_UST_ABI_SYM_NAME_LEN (256) byte fields.
constexpr std::size_t kMaxEventNameBytes = 255;
constexpr std::size_t kMaxExclusions = 64;

} // namespace

void checkChannelName(std::string_view name) {
    const auto bad = [&](const std::string& why) {
        return Error(ErrorCode::InvalidName,
                     "invalid channel name " + quoteForMessage(name) + ": " + why);
    };
    if (name.empty() || name.size() > 200)
        throw bad("it must be 1 to 200 bytes long");
    if (name.front() == '.')
        throw bad("it must not start with '.'");
    if (name == "metadata")
        throw bad("'metadata' is the name of the trace's metadata stream");
    for (char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '/' || u < 0x21 || u > 0x7E)
            throw bad("only printable ASCII without '/' or spaces is allowed");
    }
}

void checkChannelConfig(const ChannelConfig& c) {
    checkChannelName(c.name);
    const long page = sysconf(_SC_PAGESIZE);
    const uint64_t minSize = page > 0 ? static_cast<uint64_t>(page) : 4096;
    if (!isPowerOfTwo(c.subbufSize) || c.subbufSize < minSize || c.subbufSize > (1ull << 32))
        throw Error(ErrorCode::InvalidArgument,
                    "subbuf-size must be a power of two from " + std::to_string(minSize) +
                        " to 4294967296 bytes, not " + std::to_string(c.subbufSize));
    if (!isPowerOfTwo(c.subbufCount) || c.subbufCount < 2 || c.subbufCount > (1ull << 20))
        throw Error(ErrorCode::InvalidArgument,
                    "subbuf-count must be a power of two from 2 to 1048576, not " +
                        std::to_string(c.subbufCount));
    // Ring buffers are allocated (and zeroed by lttng-ust) for every CPU of
    // every traced uid: a channel that could not even fit once is refused.
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    const long pages = sysconf(_SC_PHYS_PAGES);
    if (cpus > 0 && pages > 0 && page > 0) {
        const long double needed = static_cast<long double>(c.subbufSize) *
                                   static_cast<long double>(c.subbufCount) *
                                   static_cast<long double>(cpus);
        const long double memory = static_cast<long double>(pages) * static_cast<long double>(page);
        if (needed > memory / 2)
            throw Error(ErrorCode::InvalidArgument,
                        "channel '" + c.name + "' would need " +
                            std::to_string(static_cast<unsigned long long>(needed)) +
                            " bytes of ring buffers (subbuf-size x subbuf-count x " +
                            std::to_string(cpus) +
                            " CPUs), more than half of this machine's memory");
    }
}

std::string_view toString(TracingDomain d) noexcept {
    return d == TracingDomain::Kernel ? "kernel" : "ust";
}

std::optional<TracingDomain> domainFromName(std::string_view name) noexcept {
    if (name == "ust")
        return TracingDomain::Ust;
    if (name == "kernel")
        return TracingDomain::Kernel;
    return std::nullopt;
}

ChannelConfig defaultKernelChannel(std::string name) {
    ChannelConfig c;
    c.name = std::move(name);
    c.subbufSize = kKernelDefaultSubbufSize;
    c.subbufCount = kKernelDefaultSubbufCount;
    c.contexts = {"tid"};
    return c;
}

void checkEventRule(const EventRule& r) {
    // Kernel patterns take '*' anywhere (tracefs names: "sched:sched_*").
    const bool starAnywhere = r.domain == TracingDomain::Kernel;
    const auto checkName = [starAnywhere](std::string_view what, std::string_view p) {
        if (p.empty() || p.size() > kMaxEventNameBytes)
            throw Error(ErrorCode::InvalidArgument,
                        std::string(what) + " must be 1 to 255 bytes long");
        const auto star = p.find('*');
        if (!starAnywhere && star != std::string_view::npos && star != p.size() - 1)
            throw Error(ErrorCode::InvalidArgument, std::string(what) + " " + quoteForMessage(p) +
                                                        ": '*' is only allowed at the end");
        for (char c : p) {
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u == 0x7F)
                throw Error(ErrorCode::InvalidArgument,
                            std::string(what) + " must not contain control characters");
        }
    };
    checkName("the event pattern", r.pattern);
    if (r.exclusions.size() > kMaxExclusions)
        throw Error(ErrorCode::InvalidArgument, "at most 64 exclusions");
    for (const auto& e : r.exclusions)
        checkName("an exclusion", e);
    if (r.loglevelMatch != LoglevelMatch::All && (r.loglevel < 0 || r.loglevel > 14))
        throw Error(ErrorCode::InvalidArgument, "log level must be 0 to 14");
    if (r.domain == TracingDomain::Kernel) {
        // ftrace events have no log level and tracefs no exclusion list.
        if (r.loglevelMatch != LoglevelMatch::All)
            throw Error(ErrorCode::InvalidArgument, "kernel events have no log level");
        if (!r.exclusions.empty())
            throw Error(ErrorCode::InvalidArgument,
                        "exclusions are for UST events only (lttng-enable-event(1) --exclude)");
        if (r.syscall && r.pattern != "*" &&
            r.pattern.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") !=
                std::string::npos)
            throw Error(ErrorCode::InvalidArgument,
                        "system call name " + quoteForMessage(r.pattern) +
                            ": lower-case letters, digits and '_' only");
        if (r.userspaceProbe) {
            if (r.syscall)
                throw Error(ErrorCode::InvalidArgument,
                            "a userspace probe is not a system call: give one or the other");
            if (!isUserspaceProbeName(r.pattern))
                throw Error(ErrorCode::InvalidArgument,
                            "a userspace probe's event name (" + quoteForMessage(r.pattern) +
                                ") must be a letter or '_', then letters, digits and '_', at "
                                "most 64 bytes (it names an ftrace event)");
            if (!r.filter.empty())
                throw Error(ErrorCode::InvalidArgument,
                            "filters on userspace probes are not supported");
            if (r.userspaceProbe->path.empty() || r.userspaceProbe->path[0] != '/')
                throw Error(ErrorCode::InvalidArgument,
                            "a userspace probe's path must be absolute (tracectl makes it so)");
        }
    } else if (r.userspaceProbe) {
        throw Error(ErrorCode::InvalidArgument,
                    "userspace probes are kernel events (domain 'kernel', as in LTTng)");
    } else if (r.syscall) {
        throw Error(ErrorCode::InvalidArgument, "system calls are kernel events (domain 'kernel')");
    }
    // lttng-enable-event(1): --exclude only applies to a wildcard pattern
    // (a '*' the pattern escapes, "p:a\\*", is a name's).
    std::size_t escapes = 0; // backslashes right before the last character
    for (std::size_t i = r.pattern.size() - 1; i > 0 && r.pattern[i - 1] == '\\'; --i)
        ++escapes;
    const bool wildcard = r.pattern.back() == '*' && escapes % 2 == 0;
    if (!r.exclusions.empty() && !wildcard)
        throw Error(ErrorCode::InvalidArgument,
                    "exclusions need a pattern ending in '*', not " + quoteForMessage(r.pattern));
}

void checkNewChannel(const ChannelConfig& c) {
    checkChannelConfig(c);
    for (const auto& [what, us] :
         {std::pair{"switch-timer", c.switchTimerUs}, std::pair{"read-timer", c.readTimerUs}})
        if (us != 0 && us < kMinTimerUs)
            throw Error(ErrorCode::InvalidArgument,
                        std::string(what) + " must be 0 (off) or at least " +
                            std::to_string(kMinTimerUs) + " µs, not " + std::to_string(us) +
                            " µs: a shorter period has the consumer wake for nothing");
}

void checkNewEventRule(const EventRule& r) {
    checkEventRule(r);
    for (const std::string& e : r.exclusions)
        if (excludesWholePattern(r.pattern, e))
            throw Error(ErrorCode::InvalidArgument,
                        "exclusion " + quoteForMessage(e) + " excludes every event " +
                            quoteForMessage(r.pattern) + " matches: the rule would record nothing");
}

bool excludesWholePattern(std::string_view pattern, std::string_view exclusion) {
    // Both are read together, character by character (a backslash escapes
    // the next one), as lttng-tools 2.13's check_exclusion_subsets does: an
    // exclusion whose '*' comes while it still agrees with the pattern, no
    // later than the pattern's own, names every event the pattern does.
    std::size_t i = 0;
    for (;;) {
        const bool escaped = i < pattern.size() && pattern[i] == '\\';
        if (!escaped && i < exclusion.size() && exclusion[i] == '*')
            return true;
        if (!escaped && (i >= pattern.size() || pattern[i] == '*'))
            return false; // the pattern goes on where the exclusion names one part of it
        if (i >= exclusion.size() || exclusion[i] != pattern[i])
            return false;
        if (escaped) {
            ++i;
            if (i >= pattern.size() || i >= exclusion.size() || exclusion[i] != pattern[i])
                return false;
        }
        ++i;
    }
}

namespace {

// lttng-ust(3), "Tracepoint log levels", most severe first, without "TRACE_".
constexpr std::array<std::string_view, 15> kLoglevelNames{
    "EMERG",        "ALERT",      "CRIT",           "ERR",           "WARNING",
    "NOTICE",       "INFO",       "DEBUG_SYSTEM",   "DEBUG_PROGRAM", "DEBUG_PROCESS",
    "DEBUG_MODULE", "DEBUG_UNIT", "DEBUG_FUNCTION", "DEBUG_LINE",    "DEBUG"};

std::string loglevelName(int32_t level) {
    if (level < 0 || static_cast<std::size_t>(level) >= kLoglevelNames.size())
        return std::to_string(level);
    return "TRACE_" + std::string(kLoglevelNames[static_cast<std::size_t>(level)]);
}

} // namespace

bool sameEventRule(const EventRule& a, const EventRule& b) {
    if (a.domain != b.domain || a.syscall != b.syscall)
        return false;
    if (a.channel != b.channel || a.pattern != b.pattern || a.loglevelMatch != b.loglevelMatch)
        return false;
    if (a.loglevelMatch != LoglevelMatch::All && a.loglevel != b.loglevel)
        return false;
    // Exclusions are a set: their order, or one given twice, selects nothing else.
    auto sorted = [](std::vector<std::string> names) {
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        return names;
    };
    return sorted(a.exclusions) == sorted(b.exclusions) && a.filter == b.filter &&
           a.userspaceProbe == b.userspaceProbe;
}

bool isUserspaceProbeName(std::string_view name) noexcept {
    if (name.empty() || name.size() > 64 || (name[0] >= '0' && name[0] <= '9'))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    });
}

bool sameChannelAttributes(const ChannelConfig& a, const ChannelConfig& b) {
    return a.subbufSize == b.subbufSize && a.subbufCount == b.subbufCount &&
           a.overwrite == b.overwrite && a.switchTimerUs == b.switchTimerUs &&
           a.readTimerUs == b.readTimerUs;
}

std::string describeEventRule(const EventRule& r) {
    std::string text =
        std::string(r.syscall ? "system call " : "") +
        quoteForMessage(r.pattern, kMaxEventNameBytes) +
        (r.domain == TracingDomain::Kernel ? " in kernel channel " : " in channel ") +
        quoteForMessage(r.channel, kMaxEventNameBytes);
    if (r.loglevelMatch == LoglevelMatch::AtLeastAsSevere)
        text += ", log level " + loglevelName(r.loglevel) + " or more severe";
    else if (r.loglevelMatch == LoglevelMatch::Exactly)
        text += ", log level " + loglevelName(r.loglevel) + " only";
    if (!r.exclusions.empty()) {
        text += ", excluding ";
        for (std::size_t i = 0; i < r.exclusions.size(); ++i)
            text += (i == 0 ? "" : ", ") + quoteForMessage(r.exclusions[i], kMaxEventNameBytes);
    }
    if (!r.filter.empty())
        text += ", filter " + quoteForMessage(r.filter, 200);
    return text;
}

std::optional<int32_t> loglevelFromName(std::string_view name) {
    // A number, as lttng-enable-event(1) also takes: 0 to 14.
    if (!name.empty() && name.size() <= 2 &&
        std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        const int n = std::stoi(std::string(name));
        if (n <= 14)
            return static_cast<int32_t>(n);
        return std::nullopt;
    }
    std::string upper;
    for (char c : name)
        upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper.rfind("TRACE_", 0) == 0)
        upper.erase(0, 6);
    for (std::size_t i = 0; i < kLoglevelNames.size(); ++i)
        if (upper == kLoglevelNames[i])
            return static_cast<int32_t>(i);
    return std::nullopt;
}

bool patternMatches(std::string_view pattern, std::string_view eventName) {
    if (!pattern.empty() && pattern.back() == '*')
        return eventName.substr(0, pattern.size() - 1) == pattern.substr(0, pattern.size() - 1);
    return pattern == eventName;
}

} // namespace tracectl
