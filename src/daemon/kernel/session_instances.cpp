#include "kernel/session_instances.hpp"

#include "common/error.hpp"
#include "common/log.hpp"
#include "filter/filter_error.hpp"
#include "filter/ftrace_filter.hpp"
#include "kernel/kernel_host.hpp"
#include "kernel/lttng_kernel_names.hpp"
#include "session/context_type.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>

namespace tracectl::kernel {

namespace {

/// ftrace filters of several rules naming one event: the event records if
/// any rule would; a rule without a filter takes everything.
std::string joinFilters(const std::vector<std::string>& filters) {
    if (filters.size() == 1)
        return filters.front();
    std::string joined;
    for (const std::string& f : filters) {
        if (f.empty())
            return {};
        joined += (joined.empty() ? "(" : " || (") + f + ")";
    }
    return joined;
}

/// The kernel's multi-line explanations (the filter file, error_log) as
/// one line: D-Bus messages and log lines are read a line each.
std::string oneLine(std::string text) {
    std::string out;
    bool space = false;
    for (const char ch : text) {
        const bool blank = ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ';
        if (blank) {
            space = !out.empty();
            continue;
        }
        if (space)
            out += ' ';
        space = false;
        out += ch;
    }
    return out;
}

uint32_t contextMaskOf(const ChannelConfig& c) {
    uint32_t mask = 0;
    for (const std::string& type : c.contexts)
        mask |= kernelContextBit(type);
    return mask;
}

} // namespace

SessionInstances::SessionInstances(std::string idHex, const metadata::Uuid& uuid,
                                   std::string sessionName, std::int64_t creationTime,
                                   std::int64_t clockOffset)
    : idHex_(std::move(idHex)), trace_(describeHost(uuid, std::move(sessionName), creationTime)) {
    trace_.clock.offset = clockOffset;
}

SessionInstances::~SessionInstances() {
    for (const std::string& left : remove())
        log::warning("tracefs instance " + left + " could not be removed");
}

SessionInstances::Channel& SessionInstances::channelNamed(const std::string& name) {
    for (Channel& c : channels_)
        if (c.config.name == name)
            return c;
    throw Error(ErrorCode::InvalidArgument,
                "the session has no kernel channel named '" + name + "'");
}

std::vector<TracepointId> SessionInstances::resolve(TracepointCatalog& catalog,
                                                    const EventRule& rule) {
    try {
        if (rule.syscall)
            return catalog.syscalls({rule.pattern});
        std::vector<TracepointId> ids = catalog.match(rule.pattern);
        if (ids.empty())
            throw Error(ErrorCode::InvalidArgument,
                        "no kernel tracepoint matches '" + rule.pattern +
                            "' (tracectl list-tracepoints -k lists them)");
        return ids;
    } catch (const NoSuchTracepoint& e) {
        throw Error(ErrorCode::InvalidArgument, e.what());
    }
}

std::optional<std::string> SessionInstances::translateFilter(TracepointCatalog& catalog,
                                                             const TracepointId& id,
                                                             const std::string& expression) {
    if (expression.empty())
        return std::string();
    const LttngNaming naming = lttngNaming(id.system, id.event);
    const EventFormat& format = catalog.format(id.system, id.event);
    std::string ftrace;
    try {
        // The rule names fields as the trace does (prev_tid); ftrace knows
        // them by its own names (prev_pid).
        ftrace = filter::toFtraceFilter(
            expression, [&](const std::string& name) -> std::optional<filter::FtraceField> {
                std::string ftraceName = name;
                for (const auto& [from, to] : naming.fieldRenames)
                    if (to == name)
                        ftraceName = from;
                for (const FormatField& f : format.fields)
                    if (f.name == ftraceName && !f.isCommon() && !naming.isDropped(f.name))
                        return filter::FtraceField{ftraceName,
                                                   f.elementType == "char" &&
                                                       (f.isArray || f.isDataLoc || f.isRelLoc)};
                return std::nullopt;
            });
    } catch (const filter::NoSuchField&) {
        return std::nullopt; // the filter cannot apply: the rule never records this event
    } catch (const filter::FilterError& err) {
        throw Error(ErrorCode::InvalidArgument,
                    "kernel event " + id.full() + " (" + naming.eventName + "): " + err.what());
    }
    if (ftrace.size() > kMaxFilterBytes)
        throw Error(ErrorCode::InvalidArgument,
                    "the filter is " + std::to_string(ftrace.size()) +
                        " bytes in ftrace's syntax; tracefs takes at most " +
                        std::to_string(kMaxFilterBytes));
    return ftrace;
}

std::vector<TracepointId> SessionInstances::namedBy(TracepointCatalog& catalog,
                                                    const EventRule& rule,
                                                    std::vector<std::string>* filters) {
    std::vector<TracepointId> ids;
    for (const TracepointId& id : resolve(catalog, rule)) {
        const std::optional<std::string> f = translateFilter(catalog, id, rule.filter);
        if (!f)
            continue;
        ids.push_back(id);
        if (filters != nullptr)
            filters->push_back(*f);
    }
    if (ids.empty())
        throw Error(ErrorCode::InvalidArgument,
                    "no event that '" + rule.pattern + "' names has every field the filter " +
                        "names, so the rule would never record anything");
    return ids;
}

void SessionInstances::checkRule(TracepointCatalog& catalog, const EventRule& rule) {
    namedBy(catalog, rule, nullptr);
}

std::vector<TracepointId> SessionInstances::addToDescription(TracepointCatalog& catalog, Channel& c,
                                                             const EventRule& rule) {
    std::vector<std::string> filters;
    const std::vector<TracepointId> ids = namedBy(catalog, rule, &filters);
    std::vector<TracepointId> added;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const TracepointId& id = ids[i];
        if (c.described.insert(id).second) {
            KernelEventDescription e;
            e.system = id.system;
            e.ctfId = nextCtfId_++;
            try {
                e.format = catalog.format(id.system, id.event);
            } catch (const std::exception& err) {
                throw Error(ErrorCode::Failed,
                            "reading the format of " + id.full() + ": " + err.what());
            }
            c.description.events.push_back(std::move(e));
            added.push_back(id);
        }
        auto& all = c.filters[id];
        all.push_back(filters[i]);
        const std::string joined = joinFilters(all);
        if (joined.size() > kMaxFilterBytes) {
            all.pop_back();
            throw Error(ErrorCode::InvalidArgument,
                        "kernel event " + id.full() + ": the filters of its rules together (" +
                            std::to_string(joined.size()) + " bytes in ftrace's syntax, joined " +
                            "with ||) are more than tracefs takes (" +
                            std::to_string(kMaxFilterBytes) + ")");
        }
    }
    return added;
}

void SessionInstances::applyEvents(TracepointCatalog&, Channel& c,
                                   const std::vector<TracepointId>& ids) {
    for (const TracepointId& id : ids) {
        try {
            c.instance->setFilter(id.system, id.event, joinFilters(c.filters.at(id)));
            c.instance->enableEvent(id.system, id.event);
        } catch (const TracefsError& e) {
            throw Error(e.error() == EINVAL ? ErrorCode::InvalidArgument : ErrorCode::Failed,
                        "kernel event " + id.full() + ": " + oneLine(e.what()));
        }
    }
}

KernelMetadata SessionInstances::metadata() const {
    KernelTraceDescription d = trace_;
    for (const Channel& c : channels_)
        d.channels.push_back(c.description);
    try {
        return generateKernelMetadata(d);
    } catch (const std::exception& e) {
        throw Error(ErrorCode::Failed, std::string("the kernel trace's metadata: ") + e.what());
    }
}

PreparedTrace SessionInstances::prepare(const Tracefs& tracefs, TracepointCatalog& catalog,
                                        const SessionSnapshot& s) {
    PreparedTrace out;
    try {
        uint32_t streamId = 0;
        for (const ChannelConfig& config : s.kernelChannels) {
            Channel c;
            c.config = config;
            const std::string id =
                channels_.empty() ? idHex_ : idHex_ + "-" + std::to_string(channels_.size());
            try {
                c.instance.emplace(TracefsInstance::create(tracefs, id));
                c.instance->setClock("mono");
                c.instance->setOverwrite(config.overwrite);
                const uint64_t kb = config.subbufSize * config.subbufCount / 1024;
                c.instance->setBufferSizeKb(
                    static_cast<uint32_t>(std::min<uint64_t>(kb, UINT32_MAX)));
            } catch (const TracefsError& e) {
                throw Error(ErrorCode::Failed,
                            "kernel channel '" + config.name + "': tracefs instance: " + e.what());
            }
            c.description.name = config.name;
            c.description.streamId = streamId++;
            c.description.contextMask = contextMaskOf(config);
            c.description.withStatedump = channels_.empty();
            channels_.push_back(std::move(c));
        }
        for (const EventRule& rule : s.kernelRules)
            addToDescription(catalog, channelNamed(rule.channel), rule);
        // Events named by several rules get the filters of them all.
        for (std::size_t i = 0; i < channels_.size(); ++i) {
            std::vector<TracepointId> all;
            for (const auto& [id, filters] : channels_[i].filters)
                all.push_back(id);
            applyEvents(catalog, channels_[i], all);
        }
        const KernelMetadata m = metadata();
        out.tsdl = m.tsdl;
        for (std::size_t i = 0; i < channels_.size(); ++i) {
            Channel& c = channels_[i];
            PreparedChannel p;
            p.name = c.config.name;
            p.streamId = c.description.streamId;
            p.contextMask = c.description.contextMask;
            p.statedump = c.description.withStatedump;
            p.packetSize = c.config.subbufSize;
            try {
                p.page = c.instance->headerPage();
                for (const unsigned cpu : c.instance->cpus()) {
                    p.cpus.push_back(cpu);
                    p.fds.push_back(c.instance->openRaw(cpu));
                }
                // Then the stats files, for the events dropped with a full
                // buffer (the pages do not tell those).
                for (const unsigned cpu : p.cpus) {
                    const auto path =
                        c.instance->path() / "per_cpu" / ("cpu" + std::to_string(cpu)) / "stats";
                    UniqueFd stats(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
                    if (!stats)
                        throw TracefsError(errno, path, "open");
                    p.fds.push_back(std::move(stats));
                }
            } catch (const std::exception& e) {
                throw Error(ErrorCode::Failed,
                            "kernel channel '" + c.config.name + "': tracefs: " + e.what());
            }
            if (p.packetSize < p.page.pageSize)
                p.packetSize = p.page.pageSize;
            p.conversions = kernel_records::encode(m.channels[i].conversions());
            out.channels.push_back(std::move(p));
        }
    } catch (...) {
        remove();
        throw;
    }
    return out;
}

AddedEvents SessionInstances::describe(TracepointCatalog& catalog, const EventRule& rule) {
    Channel& c = channelNamed(rule.channel);
    // Nothing changes unless the whole rule resolves and translates.
    const auto savedFilters = c.filters;
    const auto savedDescribed = c.described;
    const auto savedEvents = c.description.events.size();
    const auto savedNext = nextCtfId_;
    AddedEvents out;
    try {
        const auto added = addToDescription(catalog, c, rule);
        const KernelMetadata m = metadata();
        out.tsdl = m.tsdl;
        if (!added.empty()) {
            const auto index = static_cast<std::size_t>(&c - channels_.data());
            std::vector<kernel_records::EventConversion> fresh;
            for (const KernelEventInfo& e : m.channels[index].events)
                if (e.conversion.ctfId >= savedNext)
                    fresh.push_back(e.conversion);
            out.conversions.emplace_back(index, kernel_records::encode(fresh));
        }
    } catch (...) {
        c.filters = savedFilters;
        c.described = savedDescribed;
        c.description.events.resize(savedEvents);
        nextCtfId_ = savedNext;
        throw;
    }
    return out;
}

void SessionInstances::enableAdded(TracepointCatalog& catalog, const EventRule& rule) {
    Channel& c = channelNamed(rule.channel);
    const std::vector<TracepointId> ids = namedBy(catalog, rule, nullptr);
    try {
        applyEvents(catalog, c, ids);
    } catch (...) {
        // The rule is refused: its filters leave the events it named (which
        // go on with the filters they had; new ones stay disabled).
        for (const TracepointId& id : ids) {
            auto it = c.filters.find(id);
            if (it == c.filters.end() || it->second.empty())
                continue;
            it->second.pop_back();
            try {
                if (it->second.empty()) {
                    c.instance->disableEvent(id.system, id.event);
                } else {
                    c.instance->setFilter(id.system, id.event, joinFilters(it->second));
                    c.instance->enableEvent(id.system, id.event);
                }
            } catch (const std::exception& e) {
                log::warning("kernel event " + id.full() + ": " + e.what());
            }
            if (it->second.empty())
                c.filters.erase(it);
        }
        throw;
    }
}

void SessionInstances::setTracing(bool on) {
    for (Channel& c : channels_) {
        try {
            c.instance->setTracingOn(on);
        } catch (const TracefsError& e) {
            throw Error(ErrorCode::Failed, "kernel channel '" + c.config.name + "': " + e.what());
        }
    }
}

std::vector<std::string> SessionInstances::remove() noexcept {
    std::vector<std::string> left;
    for (Channel& c : channels_) {
        if (!c.instance || !c.instance->valid())
            continue;
        const std::string name = c.instance->name();
        try {
            c.instance->remove();
            log::info("tracefs instance " + name + " removed");
        } catch (const std::exception& e) {
            log::warning("tracefs instance " + name + ": " + e.what());
            left.push_back(name);
        }
    }
    std::erase_if(channels_, [](const Channel& c) { return !c.instance || !c.instance->valid(); });
    return left;
}

std::vector<std::uint64_t> SessionInstances::lostEvents() const {
    std::vector<std::uint64_t> out;
    for (const Channel& c : channels_) {
        std::uint64_t lost = 0;
        try {
            for (const unsigned cpu : c.instance->cpus()) {
                const CpuStats st = c.instance->stats(cpu);
                lost += st.overrun + st.droppedEvents;
            }
        } catch (const std::exception&) {
        }
        out.push_back(lost);
    }
    return out;
}

} // namespace tracectl::kernel
