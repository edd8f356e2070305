#include "save_load/session_description_of.hpp"

#include "kernel/lttng_kernel_names.hpp"
#include "session/session_name.hpp"

#include <algorithm>
#include <cctype>

namespace tracectl {

namespace {

namespace sf = session_file;

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

/// The session file's `event_context_type_type` of a context type:
/// upper case, `callstack-kernel` as CALLSTACK_KERNEL (LTTng's name).
std::string contextTypeOf(const std::string& type) {
    std::string out = upper(type);
    std::replace(out.begin(), out.end(), '-', '_');
    return out;
}

/// LTTng's form of a relay endpoint (save.c through uri_to_str_url):
/// tcp4://HOST:PORT/, or tcp6://[ADDRESS]:PORT/.
std::string lttngUri(const RelayEndpoint& e) {
    return std::string(e.ipv6 ? "tcp6://" : "tcp4://") + e.text() + "/";
}

class Describer {
public:
    Describer(const Session& s, std::vector<std::string>& warnings)
        : s_(s), warnings_(warnings),
          prefix_("session " + quoteForMessage(s.config().name) + ": ") {}

    sf::SessionDescription describe() {
        const SessionConfig& c = s_.config();
        sf::SessionDescription d;
        d.name = c.name;
        d.started = s_.state() == SessionState::Active;
        d.snapshotMode = c.mode == SessionMode::Snapshot;
        if (c.mode == SessionMode::Live)
            d.liveTimerUs = static_cast<uint32_t>(c.liveTimerUs);
        if (const RotationSchedule& r = s_.rotationSchedule(); r.any()) {
            if (r.timerUs != 0)
                d.periodicRotationsUs.push_back(r.timerUs);
            if (r.sizeBytes != 0)
                d.sizeRotationsBytes.push_back(r.sizeBytes);
        }
        sf::ConsumerOutput out;
        if (c.relay) {
            out.controlUri = lttngUri(c.relay->control);
            out.dataUri = lttngUri(c.relay->data);
        } else {
            out.path = c.outputPath;
        }
        if (d.snapshotMode)
            d.snapshotOutputs.push_back({"snapshot-1", 0, out});
        else
            d.output = out;
        if (c.countEvents)
            warn("count-events left out: LTTng's sessions have no such option");
        if (s_.tracesAllUsers() && c.owner != 0)
            warn("tracing every user's apps is not saved: polkit decides it again at load");

        sf::Domain ust;
        ust.type = sf::DomainType::Ust;
        ust.bufferType = c.bufferOwnership == BufferOwnership::PerPid ? sf::BufferType::PerPid
                                                                      : sf::BufferType::PerUid;
        for (const ChannelConfig& ch : s_.channels())
            ust.channels.push_back(channel(ch, s_.eventRules(), TracingDomain::Ust));
        for (const ProcessTracker& t : s_.processTrackers().all()) {
            if (t.all || domainOf(t.attribute) != TracingDomain::Ust)
                continue;
            sf::ProcessAttrTracker tracker{std::string(toString(t.attribute)), {}};
            for (const uint32_t v : t.values)
                tracker.values.push_back({static_cast<int64_t>(v), std::nullopt});
            ust.trackers.push_back(std::move(tracker));
        }
        d.domains.push_back(std::move(ust));
        if (!s_.kernelChannels().empty()) {
            sf::Domain kernel;
            kernel.type = sf::DomainType::Kernel;
            kernel.bufferType = sf::BufferType::Global;
            for (const ChannelConfig& ch : s_.kernelChannels())
                kernel.channels.push_back(
                    channel(ch, s_.kernelEventRules(), TracingDomain::Kernel));
            d.domains.insert(d.domains.begin(), std::move(kernel));
        }
        return d;
    }

private:
    void warn(const std::string& what) { warnings_.push_back(prefix_ + what); }

    sf::Channel channel(const ChannelConfig& c, const std::vector<EventRule>& rules,
                        TracingDomain domain) {
        sf::Channel out;
        out.name = c.name;
        out.enabled = c.enabled;
        out.overwrite = c.overwrite;
        out.subbufSize = c.subbufSize;
        out.subbufCount = c.subbufCount;
        out.switchTimerUs = c.switchTimerUs;
        out.readTimerUs = c.readTimerUs;
        out.outputType = domain == TracingDomain::Kernel ? "SPLICE" : "MMAP";
        out.monitorTimerUs = 1'000'000; // LTTng's default: what lttng load expects
        if (s_.config().mode == SessionMode::Live)
            out.liveTimerUs = static_cast<uint32_t>(s_.config().liveTimerUs);
        for (const std::string& type : c.contexts)
            out.contexts.push_back({contextTypeOf(type), std::nullopt, std::nullopt});
        for (const EventRule& r : rules) {
            if (r.channel != c.name)
                continue;
            if (r.userspaceProbe) {
                // LTTng's file has an <attributes><userspace_probe_...> form
                // for it; not written yet.
                warn("userspace probe '" + r.pattern + "' (" +
                     formatUserspaceProbeLocation(*r.userspaceProbe) +
                     ") is left out: session files do not hold userspace probes yet");
                continue;
            }
            out.events.push_back(event(r));
        }
        return out;
    }

    sf::Event event(const EventRule& r) {
        sf::Event e;
        e.enabled = r.enabled;
        e.exclusions = r.exclusions;
        if (!r.filter.empty())
            e.filter = r.filter;
        if (r.domain == TracingDomain::Ust) {
            e.name = r.pattern;
            e.loglevelType = r.loglevelMatch == LoglevelMatch::All ? sf::LoglevelType::All
                             : r.loglevelMatch == LoglevelMatch::AtLeastAsSevere
                                 ? sf::LoglevelType::Range
                                 : sf::LoglevelType::Single;
            e.loglevel = r.loglevelMatch == LoglevelMatch::All ? -1 : r.loglevel;
            return e;
        }
        e.type = r.syscall ? "SYSCALL" : "TRACEPOINT";
        e.name = r.syscall ? r.pattern : kernelName(r.pattern);
        return e;
    }

    /// lttng-modules names a kernel event without its system
    /// (kernel/lttng_kernel_names.hpp); "system:*" has no exact LTTng form.
    std::string kernelName(const std::string& pattern) {
        const auto colon = pattern.find(':');
        if (colon == std::string::npos)
            return pattern;
        const std::string system = pattern.substr(0, colon);
        const std::string event = pattern.substr(colon + 1);
        if (event.find('*') == std::string::npos && system.find('*') == std::string::npos)
            return kernel::lttngNaming(system, event).eventName;
        if (event.find('*') == std::string::npos)
            return event;
        if (event == "*" && system != "*") {
            warn("kernel pattern " + quoteForMessage(pattern) + " saved as " +
                 quoteForMessage(system + "_*") +
                 ": LTTng names kernel events without their "
                 "system");
            return system + "_*";
        }
        warn("kernel pattern " + quoteForMessage(pattern) + " saved as " + quoteForMessage(event) +
             ": LTTng names kernel events without their system");
        return event;
    }

    const Session& s_;
    std::vector<std::string>& warnings_;
    std::string prefix_;
};

} // namespace

session_file::SessionDescription describeSession(const Session& session,
                                                 std::vector<std::string>& warnings) {
    return Describer(session, warnings).describe();
}

} // namespace tracectl
