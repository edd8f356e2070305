#include "objects/channel_options.hpp"

#include "common/error.hpp"
#include "filter/event_filter.hpp"
#include "session/session_name.hpp"

#include <limits>

namespace tracectl {

namespace {

Error wrongType(const std::string& key, const sdbus::Variant& v, const char* wanted) {
    return Error(ErrorCode::InvalidArgument,
                 "option '" + key + "' must be " + wanted + ", not '" + v.peekValueType() + "'");
}

/// Any unsigned D-Bus integer (y q u t), or a non-negative signed one (n i x).
uint64_t unsignedOption(const std::string& key, const sdbus::Variant& v) {
    if (v.containsValueOfType<uint64_t>())
        return v.get<uint64_t>();
    if (v.containsValueOfType<uint32_t>())
        return v.get<uint32_t>();
    if (v.containsValueOfType<uint16_t>())
        return v.get<uint16_t>();
    if (v.containsValueOfType<uint8_t>())
        return v.get<uint8_t>();
    int64_t s = -1;
    if (v.containsValueOfType<int64_t>())
        s = v.get<int64_t>();
    else if (v.containsValueOfType<int32_t>())
        s = v.get<int32_t>();
    else if (v.containsValueOfType<int16_t>())
        s = v.get<int16_t>();
    else
        throw wrongType(key, v, "an unsigned integer");
    if (s < 0)
        throw Error(ErrorCode::InvalidArgument, "option '" + key + "' must not be negative");
    return static_cast<uint64_t>(s);
}

uint32_t timerOption(const std::string& key, const sdbus::Variant& v) {
    const uint64_t us = unsignedOption(key, v);
    if (us > std::numeric_limits<uint32_t>::max())
        throw Error(ErrorCode::InvalidArgument, "option '" + key + "' is too large");
    return static_cast<uint32_t>(us);
}

int32_t loglevelOption(const std::string& key, const sdbus::Variant& v) {
    if (v.containsValueOfType<std::string>()) {
        const std::string name = v.get<std::string>();
        if (auto level = loglevelFromName(name))
            return *level;
        throw Error(ErrorCode::InvalidArgument, "unknown log level " + quoteForMessage(name) +
                                                    " (TRACE_EMERG ... TRACE_DEBUG)");
    }
    if (v.containsValueOfType<int32_t>())
        return v.get<int32_t>();
    throw wrongType(key, v, "a log level name (s) or number (i)");
}

} // namespace

TracingDomain checkDomain(const std::string& domain) {
    const auto d = domainFromName(domain);
    if (!d)
        throw Error(ErrorCode::InvalidArgument,
                    "domain " + quoteForMessage(domain) + " is not supported ('ust' or 'kernel')");
    return *d;
}

ChannelConfig readChannelOptions(const std::string& name, const VariantMap& options,
                                 ChannelConfig c) {
    c.name = name;
    for (const auto& [key, v] : options) {
        if (key == "subbuf-size")
            c.subbufSize = unsignedOption(key, v);
        else if (key == "subbuf-count")
            c.subbufCount = unsignedOption(key, v);
        else if (key == "overwrite") {
            if (!v.containsValueOfType<bool>())
                throw wrongType(key, v, "a boolean (b)");
            c.overwrite = v.get<bool>();
        } else if (key == "switch-timer")
            c.switchTimerUs = timerOption(key, v);
        else if (key == "read-timer")
            c.readTimerUs = timerOption(key, v);
        else
            throw Error(
                ErrorCode::InvalidArgument,
                "unknown option " + quoteForMessage(key) +
                    " (known: subbuf-size, subbuf-count, overwrite, switch-timer, read-timer)");
    }
    return c;
}

EventRule readEventOptions(TracingDomain domain, const std::string& channel,
                           const std::string& pattern, const VariantMap& options) {
    // No LTTng-UST event (provider:event, C identifiers) or tracefs event
    // has a ',' in its name: "a,b" would match nothing and be recorded as a
    // rule of that name (lttng enable-event makes one rule per name).
    if (pattern.find(',') != std::string::npos)
        throw Error(ErrorCode::InvalidArgument,
                    "event pattern " + quoteForMessage(pattern) +
                        " has a ',': no event name has one; give one pattern per call "
                        "('tracectl enable-event' splits a comma-separated list)");
    EventRule r;
    r.domain = domain;
    r.channel = channel;
    r.pattern = pattern;
    for (const auto& [key, v] : options) {
        if (key == "loglevel" || key == "loglevel-only") {
            if (r.loglevelMatch != LoglevelMatch::All)
                throw Error(ErrorCode::InvalidArgument,
                            "give either 'loglevel' or 'loglevel-only', not both");
            r.loglevel = loglevelOption(key, v);
            r.loglevelMatch =
                key == "loglevel" ? LoglevelMatch::AtLeastAsSevere : LoglevelMatch::Exactly;
        } else if (key == "exclusions") {
            if (!v.containsValueOfType<std::vector<std::string>>())
                throw wrongType(key, v, "a list of strings (as)");
            r.exclusions = v.get<std::vector<std::string>>();
        } else if (key == "filter") {
            if (!v.containsValueOfType<std::string>())
                throw wrongType(key, v, "a string (s)");
            setEventFilter(r, v.get<std::string>());
        } else if (key == "userspace-probe" && domain == TracingDomain::Kernel) {
            if (!v.containsValueOfType<std::string>())
                throw wrongType(key, v, "a string (s)");
            std::string why;
            r.userspaceProbe = parseUserspaceProbeLocation(v.get<std::string>(), why);
            if (!r.userspaceProbe)
                throw Error(ErrorCode::InvalidArgument, "userspace-probe " +
                                                            quoteForMessage(v.get<std::string>()) +
                                                            ": " + why);
        } else if (key == "syscall" && domain == TracingDomain::Kernel) {
            if (!v.containsValueOfType<bool>())
                throw wrongType(key, v, "a boolean (b)");
            r.syscall = v.get<bool>();
        } else {
            throw Error(ErrorCode::InvalidArgument,
                        "unknown option " + quoteForMessage(key) +
                            (domain == TracingDomain::Kernel
                                 ? " (known for kernel events: filter, syscall, userspace-probe, "
                                   "interactive)"
                                 : " (known: loglevel, loglevel-only, exclusions, filter, "
                                   "interactive)"));
        }
    }
    return r;
}

} // namespace tracectl
