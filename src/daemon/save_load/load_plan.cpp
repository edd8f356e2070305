#include "save_load/load_plan.hpp"

#include "common/error.hpp"
#include "filter/event_filter.hpp"
#include "session/context_type.hpp"
#include "session/session_name.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace tracectl {

namespace {

namespace sf = session_file;

/// lttng-tools 2.13's default monitor timer (DEFAULT_CHANNEL_MONITOR_TIMER,
/// 1 s): every `lttng save` writes it, so it is no change worth a warning.
constexpr uint64_t kLttngDefaultMonitorTimerUs = 1'000'000;

class Planner {
public:
    Planner(const sf::SessionDescription& s, std::vector<std::string>& warnings)
        : s_(s), warnings_(warnings), prefix_("session " + quoteForMessage(s.name) + ": ") {}

    LoadPlan plan() {
        LoadPlan p;
        p.request.name = s_.name;
        p.start = s_.started;
        if (s_.sharedMemoryPath)
            warn("shared_memory_path " + quoteForMessage(*s_.sharedMemoryPath) +
                 " left out: the consumer keeps the ring buffers in its own memory");
        planMode(p);
        planOutput(p);
        planSchedule(p);
        for (const sf::Domain& d : s_.domains)
            planDomain(p, d);
        return p;
    }

private:
    void warn(const std::string& what) { warnings_.push_back(prefix_ + what); }
    [[noreturn]] void refuse(const std::string& what) const {
        throw Error(ErrorCode::InvalidArgument, prefix_ + what);
    }

    void planMode(LoadPlan& p) {
        if (s_.snapshotMode && s_.liveTimerUs != 0)
            refuse("a snapshot session cannot also be live");
        if (s_.snapshotMode) {
            p.request.mode = "snapshot";
        } else if (s_.liveTimerUs != 0) {
            p.request.mode = "live";
            p.request.liveTimerUs = s_.liveTimerUs;
            if (s_.liveTimerUs < kMinTimerUs) {
                warn("live timer of " + std::to_string(s_.liveTimerUs) + " µs raised to " +
                     std::to_string(kMinTimerUs) + " µs, tracectl's shortest");
                p.request.liveTimerUs = kMinTimerUs;
            }
        }
    }

    /// LTTng writes relay URIs as tcp4://HOST:PORT/ (save.c, from uri.c's
    /// uri_to_str_url); tracectl reads tcp://HOST:PORT.
    std::string relayUri(const std::string& uri) {
        std::string u = uri;
        for (const auto& [from, to] :
             {std::pair<std::string, std::string>{"tcp4://", "tcp://"}, {"net4://", "net://"}})
            if (u.rfind(from, 0) == 0)
                u = to + u.substr(from.size());
        const auto scheme = u.find("://");
        const auto slash =
            scheme == std::string::npos ? std::string::npos : u.find('/', scheme + 3);
        if (slash != std::string::npos) {
            if (slash + 1 != u.size())
                warn("the trace path in " + quoteForMessage(uri) +
                     " left out: the relay decides where the trace goes (lttng-relayd -o)");
            u.erase(slash);
        }
        return u;
    }

    void useOutput(LoadPlan& p, const sf::ConsumerOutput& o) {
        if (!o.enabled)
            warn("a disabled output is loaded as enabled: a tracectl session always has one");
        if (o.path) {
            p.request.outputPath = *o.path;
        } else if (o.controlUri && o.dataUri) {
            p.request.controlUrl = relayUri(*o.controlUri);
            p.request.dataUrl = relayUri(*o.dataUri);
        }
    }

    void planOutput(LoadPlan& p) {
        if (!s_.snapshotOutputs.empty()) {
            if (!s_.snapshotMode)
                warn("snapshot outputs of a session not in snapshot mode left out");
            else
                useOutput(p, s_.snapshotOutputs.front().output);
            if (s_.snapshotOutputs.front().maxSize != 0)
                warn("the snapshot output's max_size (" +
                     std::to_string(s_.snapshotOutputs.front().maxSize) +
                     " bytes) left out: give it to each RecordSnapshot (tracectl snapshot "
                     "record --max-size)");
            if (s_.snapshotOutputs.size() > 1)
                warn(std::to_string(s_.snapshotOutputs.size() - 1) +
                     " snapshot outputs after the first left out: a tracectl session has one");
        }
        if (s_.output && s_.snapshotOutputs.empty())
            useOutput(p, *s_.output);
        if (!s_.output && s_.snapshotOutputs.empty() && !p.request.liveTimerUs)
            warn("no output in the file: the default one (~/lttng-traces/NAME-DATE) is used");
    }

    void planSchedule(LoadPlan& p) {
        if (!s_.periodicRotationsUs.empty())
            p.schedule.timerUs = s_.periodicRotationsUs.front();
        if (!s_.sizeRotationsBytes.empty())
            p.schedule.sizeBytes = s_.sizeRotationsBytes.front();
        if (s_.periodicRotationsUs.size() > 1 || s_.sizeRotationsBytes.size() > 1)
            warn("only the first periodic and the first size rotation schedule are kept");
    }

    void planDomain(LoadPlan& p, const sf::Domain& d) {
        if (d.type != sf::DomainType::Ust && d.type != sf::DomainType::Kernel) {
            if (!d.channels.empty())
                warn(std::string("the ") + sf::toString(d.type) +
                     " domain left out: tracectl has no Java or Python agent domain");
            return;
        }
        const TracingDomain domain =
            d.type == sf::DomainType::Ust ? TracingDomain::Ust : TracingDomain::Kernel;
        if (domain == TracingDomain::Ust) {
            if (d.bufferType == sf::BufferType::PerPid)
                p.request.bufferOwnership = "per-pid";
            else if (d.bufferType == sf::BufferType::Global)
                warn("UST buffer type GLOBAL read as PER_UID");
        } else if (!d.channels.empty()) {
            p.usesKernel = true;
        }
        for (const sf::Channel& c : d.channels)
            planChannel(p, domain, c);
        for (const sf::ProcessAttrTracker& t : d.trackers)
            planTracker(p, domain, t);
        // As LTTng 2.12+ loads it: the VPID tracker of a UST domain, the PID
        // tracker of a kernel one (left out below, as every kernel tracker).
        if (d.legacyPidTargets) {
            sf::ProcessAttrTracker legacy{domain == TracingDomain::Ust ? "vpid" : "pid", {}};
            for (const int64_t pid : *d.legacyPidTargets)
                legacy.values.push_back(sf::TrackerValue{pid, std::nullopt});
            planTracker(p, domain, legacy);
        }
    }

    void planChannel(LoadPlan& p, TracingDomain domain, const sf::Channel& c) {
        const std::string where = "channel " + quoteForMessage(c.name) + ": ";
        ChannelConfig cfg;
        if (domain == TracingDomain::Kernel)
            cfg = defaultKernelChannel(c.name);
        else
            cfg.name = c.name;
        const std::vector<std::string> implicitContexts = cfg.contexts;
        cfg.contexts.clear();
        cfg.enabled = c.enabled;
        cfg.overwrite = c.overwrite;
        if (c.subbufSize)
            cfg.subbufSize = *c.subbufSize;
        cfg.subbufCount = c.subbufCount;
        cfg.switchTimerUs = c.switchTimerUs;
        cfg.readTimerUs = c.readTimerUs;
        for (uint32_t* us : {&cfg.switchTimerUs, &cfg.readTimerUs})
            if (*us != 0 && *us < kMinTimerUs) {
                warn(where + (us == &cfg.switchTimerUs ? "switch" : "read") + " timer of " +
                     std::to_string(*us) + " µs raised to " + std::to_string(kMinTimerUs) +
                     " µs, tracectl's shortest");
                *us = kMinTimerUs;
            }
        if (c.blockingTimeoutUs != 0)
            warn(where + "blocking_timeout left out: apps never block on a full buffer");
        if (c.tracefileSize != 0 || c.tracefileCount != 0)
            warn(where + "tracefile_size/tracefile_count left out: one stream file per stream");
        if (c.monitorTimerUs != 0 && c.monitorTimerUs != kLttngDefaultMonitorTimerUs)
            warn(where + "monitor_timer_interval left out: statistics come with each packet");
        if (c.liveTimerUs != 0 && c.liveTimerUs != s_.liveTimerUs)
            warn(where + "its own live_timer_interval left out: the session's applies");
        p.channels.emplace_back(domain, cfg);
        for (const sf::Context& ctx : c.contexts)
            planContext(p, domain, c.name, ctx, implicitContexts);
        for (const sf::Event& e : c.events)
            planEvent(p, domain, c.name, e);
    }

    void planContext(LoadPlan& p, TracingDomain domain, const std::string& channel,
                     const sf::Context& ctx, const std::vector<std::string>& implicit) {
        const std::string where = "channel " + quoteForMessage(channel) + ": ";
        if (ctx.perf) {
            warn(where + "perf counter context " + quoteForMessage(ctx.perf->name) +
                 " left out: tracectl records no perf counters");
            return;
        }
        if (ctx.app) {
            warn(where + "application context $app." + ctx.app->providerName + ":" +
                 ctx.app->contextName + " left out: not supported");
            return;
        }
        if (!ctx.type)
            return;
        std::string type = *ctx.type;
        std::transform(type.begin(), type.end(), type.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        if (type.rfind("callstack_", 0) == 0) // CALLSTACK_KERNEL: callstack-kernel
            std::replace(type.begin(), type.end(), '_', '-');
        const bool known = domain == TracingDomain::Ust ? ustContextType(type).has_value()
                                                        : kernelContextBit(type) != 0;
        if (!known) {
            warn(where + "context " + *ctx.type + " left out: tracectl's " +
                 std::string(toString(domain)) + " domain does not record it");
            return;
        }
        // A kernel channel records tid already (defaultKernelChannel()).
        if (std::find(implicit.begin(), implicit.end(), type) != implicit.end())
            return;
        p.contexts.push_back({domain, channel, type});
    }

    void planEvent(LoadPlan& p, TracingDomain domain, const std::string& channel,
                   const sf::Event& e) {
        const std::string where =
            "event " + quoteForMessage(e.name) + " of channel " + quoteForMessage(channel) + ": ";
        if (e.hasProbeAttributes || (e.type != "TRACEPOINT" && e.type != "SYSCALL" &&
                                     !(e.type == "ALL" && domain == TracingDomain::Kernel))) {
            warn(where + "left out: tracectl does not record " + e.type + " events");
            return;
        }
        if (e.name.empty()) {
            warn("an event without a name in channel " + quoteForMessage(channel) + " left out");
            return;
        }
        EventRule r;
        r.domain = domain;
        r.channel = channel;
        r.enabled = e.enabled;
        r.exclusions = e.exclusions;
        if (domain == TracingDomain::Ust) {
            r.pattern = e.name;
            if (e.loglevelType != sf::LoglevelType::All) {
                r.loglevelMatch = e.loglevelType == sf::LoglevelType::Range
                                      ? LoglevelMatch::AtLeastAsSevere
                                      : LoglevelMatch::Exactly;
                r.loglevel = e.loglevel;
            }
        } else {
            if (e.loglevelType != sf::LoglevelType::All)
                warn(where + "a log level on a kernel event left out");
            if (!e.exclusions.empty()) {
                warn(where + "exclusions on a kernel event left out");
                r.exclusions.clear();
            }
            r.syscall = e.type == "SYSCALL";
            // lttng-modules names an event without its system; tracefs
            // patterns are "system:event".
            r.pattern = r.syscall || e.name == "*" || e.name.find(':') != std::string::npos
                            ? e.name
                            : "*:" + e.name;
        }
        try {
            if (e.filter)
                setEventFilter(r, *e.filter);
            checkEventRule(r);
        } catch (const Error& err) {
            refuse(where + err.what());
        }
        // lttng-sessiond loads such a rule (the refusal is lttng-enable-event(1)'s)
        // and it records nothing; tracectl refuses it to clients, so it is
        // left out, which records the same.
        for (const std::string& x : r.exclusions)
            if (excludesWholePattern(r.pattern, x)) {
                warn(where + "left out: its exclusion " + quoteForMessage(x) +
                     " excludes every event it matches, so it records nothing");
                return;
            }
        if (e.type == "ALL") {
            // lttng enable-event -k -a: every tracepoint and every system call.
            EventRule syscalls = r;
            syscalls.syscall = true;
            syscalls.pattern = "*";
            r.pattern = "*";
            p.rules.push_back(std::move(r));
            p.rules.push_back(std::move(syscalls));
            return;
        }
        p.rules.push_back(std::move(r));
    }

    void planTracker(LoadPlan& p, TracingDomain domain, const sf::ProcessAttrTracker& t) {
        const auto attribute = processAttributeFromName(t.attribute);
        if (!attribute)
            return;
        if (domain == TracingDomain::Kernel) {
            // Said with what it changes: the file meant some processes, or
            // none (an empty set), and every one is recorded.
            warn("the kernel domain's " + t.attribute + " tracker (" +
                 (t.values.empty() ? std::string("tracking no process")
                                   : "tracking " + std::to_string(t.values.size()) + " value" +
                                         (t.values.size() == 1 ? "" : "s")) +
                 ") left out: tracectl's kernel domain records every process");
            return;
        }
        if (domainOf(*attribute) != domain) {
            warn("the " + t.attribute +
                 " tracker left out: tracectl tracks UST apps by vpid, "
                 "vuid and vgid only");
            return;
        }
        PlannedTracker planned{*attribute, {}, {}};
        for (const sf::TrackerValue& v : t.values) {
            if (v.id) {
                if (*v.id < 0 || *v.id > std::numeric_limits<uint32_t>::max())
                    refuse("the " + t.attribute + " tracker's value " + std::to_string(*v.id) +
                           " is out of range");
                planned.ids.push_back(static_cast<uint32_t>(*v.id));
            } else if (v.name) {
                if (*attribute == ProcessAttribute::Vpid)
                    refuse("the vpid tracker takes numbers, not " + quoteForMessage(*v.name));
                planned.names.push_back(*v.name);
            }
        }
        p.trackers.push_back(std::move(planned));
    }

    const sf::SessionDescription& s_;
    std::vector<std::string>& warnings_;
    std::string prefix_;
};

} // namespace

std::vector<std::string> boundedWarnings(std::vector<std::string> lines) {
    const std::size_t more = lines.size() > kMaxWarningLines ? lines.size() - kMaxWarningLines : 0;
    lines.resize(std::min(lines.size(), kMaxWarningLines));
    for (std::string& line : lines) {
        if (line.size() <= kMaxWarningLineBytes)
            continue;
        std::size_t cut = kMaxWarningLineBytes;
        while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80)
            --cut; // not inside a UTF-8 sequence
        line.resize(cut);
        line += "...";
    }
    if (more > 0)
        lines.push_back("and " + std::to_string(more) + " more warnings");
    return lines;
}

LoadPlan planLoad(const session_file::SessionDescription& session,
                  std::vector<std::string>& warnings) {
    return Planner(session, warnings).plan();
}

} // namespace tracectl
