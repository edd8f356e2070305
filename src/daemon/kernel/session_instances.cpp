#include "kernel/session_instances.hpp"

#include "common/error.hpp"
#include "common/log.hpp"
#include "filter/filter_error.hpp"
#include "filter/filter_parser.hpp"
#include "filter/ftrace_filter.hpp"
#include "ip/ip_filter.hpp"
#include "ip_event_fields.hpp"
#include "kernel/kernel_host.hpp"
#include "kernel/lttng_kernel_names.hpp"
#include "kernel/statedump_events.hpp"
#include "kernel/syscall_string_args.hpp"
#include "kernel/userspace_probe_target.hpp"
#include "session/context_type.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
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

/// The ip provider's probe bit (ip_probe_abi.h) of ip:send / ip:receive.
std::uint32_t probeBit(const TracepointId& id) {
    return id.event == "send" ? (1u << TRACECTL_IP_SEND) : (1u << TRACECTL_IP_RECEIVE);
}

/// True if every payload field `node` names is one of the ip probes'.
bool namesOnlyIpFields(const filter::Node* root) {
    // Without recursion: a chain of operators is as tall as it is long.
    std::vector<const filter::Node*> pending{root};
    while (!pending.empty()) {
        const filter::Node* node = pending.back();
        pending.pop_back();
        if (node == nullptr)
            continue;
        if (node->kind == filter::NodeKind::Field && node->root == filter::FieldRoot::Payload) {
            const auto& fields = ::tracectl::ip::ipEventFields();
            const std::string& name = node->path.front().name;
            if (std::none_of(fields.begin(), fields.end(),
                             [&](const auto& f) { return f.name == std::string_view(name); }))
                return false;
        }
        pending.push_back(node->left.get());
        pending.push_back(node->right.get());
    }
    return true;
}

UniqueFd dupFd(int fd, const char* what) {
    UniqueFd out(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
    if (!out)
        throw Error(ErrorCode::Failed, std::string(what) + " map: " + std::strerror(errno));
    return out;
}

/// buffer_percent for channel `c`: one sub-buffer of its ring buffer (at
/// least 1 %, at most ftrace's default of 50 %).
unsigned bufferPercentOf(const ChannelConfig& c) {
    const uint64_t count = std::max<uint64_t>(c.subbufCount, 1);
    return static_cast<unsigned>(std::clamp<uint64_t>(100 / count, 1, 50));
}

/// True if `rule` names lttng-modules statedump events (statedump_events.hpp).
bool namesStatedump(const EventRule& rule) {
    return !rule.syscall && !matchStatedumpEvents(rule.pattern).empty();
}

} // namespace

std::set<std::string> SessionInstances::statedumpChannels(const SessionSnapshot& s) {
    std::set<std::string> out;
    for (const EventRule& rule : s.kernelRules)
        if (rule.enabled && namesStatedump(rule))
            out.insert(rule.channel);
    if (out.empty() && !s.kernelChannels.empty())
        out.insert(s.kernelChannels.front().name);
    return out;
}

namespace {

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
    // Once per instance: one attempt, quiet, then one line for what is
    // left, let go so that its TracefsInstance neither waits nor warns again.
    giveUp(remove(true), "could not be removed");
}

void SessionInstances::giveUp(const std::vector<std::string>& left,
                              const std::string& why) noexcept {
    if (left.empty())
        return;
    for (const std::string& name : left)
        log::warning("tracefs instance " + name + " " + why +
                     " (a file of it is still open); left in place until the next start of "
                     "tracectld");
    leaveInPlace();
}

bool SessionInstances::isIpProbe(const TracepointId& id) noexcept {
    return id.system == "ip" && (id.event == "send" || id.event == "receive");
}

ip::IpFilterProgram SessionInstances::ipProgram(const Channel& c) {
    std::vector<ip::IpRuleFilter> rules;
    for (const auto& [id, filters] : c.filters) {
        if (!isIpProbe(id))
            continue;
        for (const std::string& f : filters)
            rules.push_back(ip::IpRuleFilter{probeBit(id), f});
    }
    try {
        return ip::compileIpFilter(rules);
    } catch (const filter::FilterError& e) {
        throw Error(ErrorCode::InvalidArgument,
                    "the ip provider's filters of channel '" + c.config.name + "': " + e.what());
    }
}

void SessionInstances::ensureIp(Channel& c) {
    if (!c.description.ipProbes || c.ip)
        return;
    try {
        auto probes = std::make_unique<ip::IpProbes>(c.config.subbufSize * c.config.subbufCount);
        if (tracing_ && c.config.enabled)
            probes->setEnabled(true);
        c.ip = std::move(probes);
        log::info("kernel channel '" + c.config.name + "': the ip provider's program is loaded (" +
                  std::to_string(c.ip->ringBytes()) + "-byte ring buffer)");
    } catch (const ip::IpProbeError& e) {
        throw Error(ErrorCode::Failed,
                    "kernel channel '" + c.config.name + "': the ip provider: " + e.what());
    }
}

IpAttachment SessionInstances::ipAttachment(const Channel& c) {
    IpAttachment a;
    a.ids = *c.description.ipProbes;
    a.ring = dupFd(c.ip->ringFd(), "the ip provider's ring buffer");
    a.counters = dupFd(c.ip->countersFd(), "the ip provider's counters");
    return a;
}

std::uint64_t SessionInstances::stringMask(TracepointCatalog& catalog, const TracepointId& id) {
    if (id.system != "syscalls" || id.event.rfind("sys_enter_", 0) != 0)
        return 0;
    try {
        return userStringArgumentMask(catalog.format(id.system, id.event));
    } catch (const std::exception& e) {
        throw Error(ErrorCode::Failed, "reading the format of " + id.full() + ": " + e.what());
    }
}

bool SessionInstances::ensureStrings(Channel& c) noexcept {
    if (c.strings)
        return true;
    if (c.stringsRefused)
        return false;
    try {
        auto probes =
            std::make_unique<SyscallStringProbes>(c.config.subbufSize * c.config.subbufCount);
        probes->setEnabled(tracing_ && c.config.enabled);
        c.strings = std::move(probes);
        log::info("kernel channel '" + c.config.name +
                  "': the system-call string program is loaded (" +
                  std::to_string(c.strings->ringBytes()) + "-byte ring buffer)");
        return true;
    } catch (const std::exception& e) {
        // The system calls are recorded all the same, their strings empty.
        c.stringsRefused = true;
        log::warning("kernel channel '" + c.config.name + "': " + e.what() +
                     "; system call string arguments are recorded as \"\" (said once)");
        return false;
    }
}

StringsAttachment SessionInstances::stringsAttachment(const Channel& c) {
    StringsAttachment a;
    a.ring = dupFd(c.strings->ringFd(), "system-call strings' ring buffer");
    a.counters = dupFd(c.strings->countersFd(), "system-call strings' counters");
    return a;
}

void SessionInstances::attachStrings(TracepointCatalog& catalog, Channel& c,
                                     const TracepointId& id) {
    const std::uint64_t mask = stringMask(catalog, id);
    if (mask == 0 || !ensureStrings(c))
        return;
    try {
        // Before ftrace's event: the copy of a call is in the ring before
        // its record can be read.
        c.strings->attach(id.event, mask);
    } catch (const SyscallStringProbeError& e) {
        log::warning("kernel channel '" + c.config.name + "': " + e.what() + "; " + id.full() +
                     "'s string arguments are recorded as \"\"");
    }
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
        // The ip provider's probes, for patterns that name a provider.
        if (rule.pattern.find(':') != std::string::npos) {
            for (const char* probe : {"receive", "send"}) {
                TracepointId id{"ip", probe};
                if (globMatch(rule.pattern, id.full()))
                    ids.push_back(std::move(id));
            }
            std::sort(ids.begin(), ids.end());
        }
        if (ids.empty() && !namesStatedump(rule))
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
    if (isIpProbe(id)) {
        // Evaluated by the provider's program; kept in LTTng's syntax.
        try {
            if (!namesOnlyIpFields(filter::parseFilter(expression).get()))
                return std::nullopt; // a field the probes lack: never recorded
            ip::compileIpFilter({ip::IpRuleFilter{probeBit(id), expression}});
        } catch (const filter::FilterError& err) {
            throw Error(ErrorCode::InvalidArgument,
                        "ip provider (" + id.full() + "): " + err.what());
        }
        return expression;
    }
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
                    if (f.name == ftraceName && !f.isCommon() && !naming.isDropped(f.name)) {
                        const bool text =
                            (f.elementType == "char" && (f.isArray || f.isDataLoc || f.isRelLoc)) ||
                            f.type == "char *" || f.type == "const char *";
                        return filter::FtraceField{ftraceName, text, !text && !f.isSigned};
                    }
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
    const std::vector<TracepointId> named = resolve(catalog, rule);
    if (named.empty()) {
        // Only statedump events (resolve() refuses a rule naming nothing):
        // written whole by the consumer at the first start, never filtered.
        if (!rule.filter.empty())
            throw Error(ErrorCode::InvalidArgument,
                        "'" + rule.pattern + "' names only statedump events, which are " +
                            "written whole: a filter does not apply to them");
        return {};
    }
    std::vector<TracepointId> ids;
    for (const TracepointId& id : named) {
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
    if (rule.userspaceProbe)
        return;
    namedBy(catalog, rule, nullptr);
}

std::vector<TracepointId> SessionInstances::ruleEvents(TracepointCatalog& catalog,
                                                       const EventRule& rule,
                                                       std::vector<std::string>* filters) const {
    if (!rule.userspaceProbe)
        return namedBy(catalog, rule, filters);
    if (filters != nullptr)
        filters->emplace_back();
    return {TracepointId{uprobeGroup(), rule.pattern}};
}

bool SessionInstances::defineUserspaceProbe(TracepointCatalog& catalog, const EventRule& rule) {
    const TracepointId id{uprobeGroup(), rule.pattern};
    if (const auto it = uprobes_.find(rule.pattern); it != uprobes_.end()) {
        if (it->second != *rule.userspaceProbe)
            throw Error(ErrorCode::InvalidArgument,
                        "the session has another userspace probe named '" + rule.pattern + "' (" +
                            formatUserspaceProbeLocation(it->second) + ")");
        return false;
    }
    if (!tracefs_)
        throw Error(ErrorCode::Failed, "userspace probe '" + rule.pattern + "': no tracefs");
    const std::filesystem::path format =
        tracefs_->root() / "events" / id.system / id.event / "format";
    if (!rule.probeTarget) {
        // Read back from a state document: the probe an earlier daemon
        // defined goes on if it is there (its session taken over).
        if (!std::filesystem::exists(format))
            throw Error(ErrorCode::Failed,
                        "userspace probe '" + rule.pattern +
                            "' cannot be defined again: tracectld restarted and no longer has "
                            "its file open; enable it anew");
        uprobes_.emplace(rule.pattern, *rule.userspaceProbe);
        catalog.addUserspaceProbe(id);
        return false;
    }
    try {
        tracefs_->defineUprobe(rule.probeTarget->definition(id.system, id.event));
    } catch (const TracefsError& e) {
        throw Error(e.error() == EINVAL || e.error() == ENOENT ? ErrorCode::InvalidArgument
                                                               : ErrorCode::Failed,
                    "userspace probe '" + rule.pattern + "' (" +
                        formatUserspaceProbeLocation(*rule.userspaceProbe) +
                        "): " + oneLine(e.what()));
    }
    uprobes_.emplace(rule.pattern, *rule.userspaceProbe);
    catalog.addUserspaceProbe(id);
    log::info("userspace probe " + id.system + "/" + id.event + " defined at " +
              formatUserspaceProbeLocation(*rule.userspaceProbe));
    return true;
}

void SessionInstances::undefineUserspaceProbe(TracepointCatalog& catalog,
                                              const std::string& name) noexcept {
    const TracepointId id{uprobeGroup(), name};
    for (Channel& c : channels_) {
        c.filters.erase(id);
        try {
            if (c.instance && c.instance->valid())
                c.instance->disableEvent(id.system, id.event);
        } catch (const std::exception&) {
        }
    }
    try {
        tracefs_->removeUprobe(id.system, id.event);
    } catch (const std::exception& e) {
        log::warning("userspace probe " + id.system + "/" + name + ": " + e.what());
    }
    uprobes_.erase(name);
    catalog.forgetUserspaceProbe(id);
}

std::vector<TracepointId> SessionInstances::addToDescription(TracepointCatalog& catalog, Channel& c,
                                                             const EventRule& rule) {
    std::vector<std::string> filters;
    if (rule.userspaceProbe)
        defineUserspaceProbe(catalog, rule);
    const std::vector<TracepointId> ids = ruleEvents(catalog, rule, &filters);
    std::vector<TracepointId> added;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const TracepointId& id = ids[i];
        if (isIpProbe(id)) {
            if (!c.description.ipProbes) {
                IpProbeIds probes;
                probes.sendId = nextCtfId_++;
                probes.receiveId = nextCtfId_++;
                c.description.ipProbes = probes;
                c.described.insert(TracepointId{"ip", "send"});
                c.described.insert(TracepointId{"ip", "receive"});
            }
            auto& all = c.filters[id];
            all.push_back(filters[i]);
            try {
                ipProgram(c); // every rule's filter together, within the program's bounds
            } catch (...) {
                all.pop_back();
                if (all.empty())
                    c.filters.erase(id);
                throw;
            }
            continue;
        }
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

void SessionInstances::applyEvents(TracepointCatalog& catalog, Channel& c,
                                   const std::vector<TracepointId>& ids) {
    bool ip = false;
    for (const TracepointId& id : ids) {
        if (isIpProbe(id)) {
            ip = true;
            continue;
        }
        attachStrings(catalog, c, id);
        try {
            c.instance->setFilter(id.system, id.event, joinFilters(c.filters.at(id)));
            c.instance->enableEvent(id.system, id.event);
        } catch (const TracefsError& e) {
            throw Error(e.error() == EINVAL ? ErrorCode::InvalidArgument : ErrorCode::Failed,
                        "kernel event " + id.full() + ": " + oneLine(e.what()));
        }
    }
    if (ip)
        applyIpFilter(c);
}

void SessionInstances::applyIpFilter(Channel& c) {
    ensureIp(c);
    const ip::IpFilterProgram program = ipProgram(c);
    try {
        c.ip->setFilter(program);
    } catch (const ip::IpProbeError& e) {
        throw Error(ErrorCode::Failed, "kernel channel '" + c.config.name +
                                           "': the ip provider's filter: " + e.what());
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
                                        const SessionSnapshot& s, bool takeOver) {
    PreparedTrace out;
    tracefs_ = tracefs;
    try {
        uint32_t streamId = 0;
        const std::set<std::string> statedumpIn = statedumpChannels(s);
        for (const ChannelConfig& config : s.kernelChannels) {
            Channel c;
            c.config = config;
            const std::string id =
                channels_.empty() ? idHex_ : idHex_ + "-" + std::to_string(channels_.size());
            try {
                if (takeOver && TracefsInstance::exists(tracefs, id)) {
                    // What its ring buffers hold is read by the consumer's
                    // new channels: a clock or size written again would
                    // empty them. Tracing goes on as it was (the consumer
                    // reads from its DeclareKernelEvents on).
                    c.instance.emplace(TracefsInstance::open(tracefs, id));
                } else {
                    c.instance.emplace(TracefsInstance::create(tracefs, id));
                    c.instance->setClock("mono");
                    c.instance->setOverwrite(config.overwrite);
                    const uint64_t kb = config.subbufSize * config.subbufCount / 1024;
                    c.instance->setBufferSizeKb(
                        static_cast<uint32_t>(std::min<uint64_t>(kb, UINT32_MAX)));
                    // The consumer is woken once a sub-buffer's worth waits,
                    // as lttng-modules wakes lttng-consumerd at each
                    // sub-buffer switch, not at ftrace's default of half the
                    // buffer: what it has written (a chunk's size, a live
                    // viewer's view) lags the tracer by one sub-buffer per
                    // CPU at most.
                    c.instance->setBufferPercent(bufferPercentOf(config));
                    const std::uint32_t mask = contextMaskOf(config);
                    if ((mask & kernel_records::kCallstackContexts) != 0)
                        c.instance->setStackTraces(
                            (mask & kernel_records::ContextCallstackKernel) != 0,
                            (mask & kernel_records::ContextCallstackUser) != 0);
                }
            } catch (const TracefsError& e) {
                throw Error(ErrorCode::Failed,
                            "kernel channel '" + config.name + "': tracefs instance: " + e.what());
            }
            c.description.name = config.name;
            c.description.streamId = streamId++;
            c.description.contextMask = contextMaskOf(config);
            c.description.withStatedump = statedumpIn.count(config.name) != 0;
            channels_.push_back(std::move(c));
        }
        for (const EventRule& rule : s.kernelRules)
            addToDescription(catalog, channelNamed(rule.channel), rule);
        rules_ = s.kernelRules;
        // Disabled rules are described (the metadata never changes what it
        // said: they may come back on) but enable nothing.
        if (std::any_of(rules_.begin(), rules_.end(),
                        [](const EventRule& r) { return !r.enabled; }))
            for (Channel& c : channels_) {
                c.filters = wantedFilters(catalog, c);
                // The ip provider's program is loaded even if its rules
                // are all disabled (it passes nothing then), so that the
                // consumer reads its ring buffer from the start.
                if (c.description.ipProbes)
                    applyIpFilter(c);
            }
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
            p.bufferBytes = c.config.subbufSize * c.config.subbufCount;
            p.readTimerUs = c.config.readTimerUs;
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
                if ((p.contextMask & kernel_records::ContextCallstackKernel) != 0) {
                    p.kernelStackType = tracefs.stackEntryType(false);
                    UniqueFd kallsyms(::open("/proc/kallsyms", O_RDONLY | O_CLOEXEC));
                    if (!kallsyms)
                        throw TracefsError(errno, "/proc/kallsyms", "open");
                    p.fds.push_back(std::move(kallsyms));
                }
                if ((p.contextMask & kernel_records::ContextCallstackUser) != 0)
                    p.userStackType = tracefs.stackEntryType(true);
            } catch (const std::exception& e) {
                throw Error(ErrorCode::Failed,
                            "kernel channel '" + c.config.name + "': tracefs: " + e.what());
            }
            if (p.packetSize < p.page.pageSize)
                p.packetSize = p.page.pageSize;
            if (c.strings)
                p.strings = stringsAttachment(c);
            p.conversions = kernel_records::encode(m.channels[i].conversions());
            if (c.ip)
                p.ip = ipAttachment(c);
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
    const auto savedIp = c.description.ipProbes;
    const bool hadStrings = c.strings != nullptr;
    const bool newProbe = rule.userspaceProbe && uprobes_.count(rule.pattern) == 0;
    AddedEvents out;
    try {
        const auto added = addToDescription(catalog, c, rule);
        const KernelMetadata m = metadata();
        out.tsdl = m.tsdl;
        if (c.description.ipProbes && !c.ip) {
            // Loaded now (nothing passes its filter until enableAdded()),
            // so that the consumer reads its ring buffer first.
            ensureIp(c);
            out.ipAttached.emplace_back(static_cast<std::size_t>(&c - channels_.data()),
                                        ipAttachment(c));
        }
        if (!hadStrings && std::any_of(added.begin(), added.end(), [&](const TracepointId& id) {
                return stringMask(catalog, id) != 0;
            })) {
            // Loaded now (attached to nothing until enableAdded()), so that
            // the consumer reads its ring buffer first.
            if (ensureStrings(c))
                out.stringsAttached.emplace_back(static_cast<std::size_t>(&c - channels_.data()),
                                                 stringsAttachment(c));
        }
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
        if (!savedIp) {
            c.description.ipProbes.reset();
            c.ip.reset();
        }
        if (!hadStrings)
            c.strings.reset();
        if (newProbe && uprobes_.count(rule.pattern) != 0)
            undefineUserspaceProbe(catalog, rule.pattern); // nothing left defined
        throw;
    }
    return out;
}

void SessionInstances::enableAdded(TracepointCatalog& catalog, const EventRule& rule) {
    Channel& c = channelNamed(rule.channel);
    const std::vector<TracepointId> ids = ruleEvents(catalog, rule, nullptr);
    try {
        applyEvents(catalog, c, ids);
        rules_.push_back(rule);
    } catch (...) {
        // The rule is refused: its filters leave the events it named (which
        // go on with the filters they had; new ones stay disabled).
        bool ip = false;
        for (const TracepointId& id : ids) {
            auto it = c.filters.find(id);
            if (it == c.filters.end() || it->second.empty())
                continue;
            it->second.pop_back();
            if (isIpProbe(id)) {
                ip = true;
                if (it->second.empty())
                    c.filters.erase(it);
                continue;
            }
            try {
                if (it->second.empty()) {
                    c.instance->disableEvent(id.system, id.event);
                    if (c.strings && id.system == "syscalls")
                        c.strings->detach(id.event);
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
        if (ip && c.ip) {
            try {
                c.ip->setFilter(ipProgram(c));
            } catch (const std::exception& e) {
                log::warning("kernel channel '" + c.config.name +
                             "': the ip provider: " + e.what());
            }
        }
        // A userspace probe no rule of the session holds is not left defined.
        if (rule.userspaceProbe &&
            std::none_of(rules_.begin(), rules_.end(), [&](const EventRule& r) {
                return r.userspaceProbe && r.pattern == rule.pattern;
            }))
            undefineUserspaceProbe(catalog, rule.pattern);
        throw;
    }
}

void SessionInstances::setTracing(bool on) {
    tracing_ = on;
    for (Channel& c : channels_) {
        try {
            c.instance->setTracingOn(on && c.config.enabled);
            if (c.ip)
                c.ip->setEnabled(on && c.config.enabled);
            if (c.strings)
                c.strings->setEnabled(on && c.config.enabled);
        } catch (const std::exception& e) {
            throw Error(ErrorCode::Failed, "kernel channel '" + c.config.name + "': " + e.what());
        }
    }
}

std::map<TracepointId, std::vector<std::string>>
SessionInstances::wantedFilters(TracepointCatalog& catalog, const Channel& c) const {
    std::map<TracepointId, std::vector<std::string>> wanted;
    for (const EventRule& r : rules_) {
        if (r.channel != c.config.name || !r.enabled)
            continue;
        std::vector<std::string> filters;
        const std::vector<TracepointId> ids = ruleEvents(catalog, r, &filters);
        for (std::size_t i = 0; i < ids.size(); ++i)
            wanted[ids[i]].push_back(filters[i]);
    }
    return wanted;
}

void SessionInstances::refilter(TracepointCatalog& catalog, Channel& c) {
    auto wanted = wantedFilters(catalog, c);
    const auto old = std::exchange(c.filters, wanted);
    bool ip = false;
    try {
        for (const auto& [id, filters] : old) {
            if (isIpProbe(id)) {
                ip = true;
                continue;
            }
            if (wanted.count(id) == 0) {
                c.instance->disableEvent(id.system, id.event);
                if (c.strings && id.system == "syscalls")
                    c.strings->detach(id.event);
            }
        }
        for (const auto& [id, filters] : wanted) {
            if (isIpProbe(id)) {
                ip = true;
                continue;
            }
            const auto before = old.find(id);
            if (before != old.end() && before->second == filters)
                continue; // enabled already, with these filters
            attachStrings(catalog, c, id);
            c.instance->setFilter(id.system, id.event, joinFilters(filters));
            c.instance->enableEvent(id.system, id.event);
        }
    } catch (const TracefsError& e) {
        throw Error(ErrorCode::Failed,
                    "kernel channel '" + c.config.name + "': " + oneLine(e.what()));
    }
    if (ip && c.description.ipProbes)
        applyIpFilter(c);
}

void SessionInstances::setRulesEnabled(TracepointCatalog& catalog,
                                       const std::vector<EventRule>& rules, bool enabled) {
    std::set<std::string> touched;
    for (EventRule& held : rules_)
        for (const EventRule& r : rules)
            if (sameEventRule(held, r) && held.enabled != enabled) {
                held.enabled = enabled;
                touched.insert(held.channel);
            }
    for (Channel& c : channels_)
        if (touched.count(c.config.name) != 0)
            refilter(catalog, c);
}

void SessionInstances::setChannelEnabled(const std::string& name, bool enabled) {
    Channel& c = channelNamed(name);
    c.config.enabled = enabled;
    try {
        c.instance->setTracingOn(tracing_ && enabled);
        if (c.ip)
            c.ip->setEnabled(tracing_ && enabled);
        if (c.strings)
            c.strings->setEnabled(tracing_ && enabled);
    } catch (const std::exception& e) {
        throw Error(ErrorCode::Failed, "kernel channel '" + c.config.name + "': " + e.what());
    }
}

std::vector<std::string> SessionInstances::remove(bool quiet) noexcept {
    std::vector<std::string> left;
    if (tracefs_ && !uprobes_.empty()) {
        // Disabled in every instance first: a probe enabled somewhere
        // cannot be removed (EBUSY).
        for (Channel& c : channels_)
            for (const auto& [name, location] : uprobes_)
                try {
                    if (c.instance && c.instance->valid())
                        c.instance->disableEvent(uprobeGroup(), name);
                } catch (const std::exception&) {
                }
        if (tracefs_->removeUprobeGroup(uprobeGroup(), quiet))
            uprobes_.clear();
        else
            left.push_back(uprobeGroup());
    }
    for (Channel& c : channels_) {
        if (c.strings) {
            c.strings.reset(); // detached: nothing more reaches the ring buffer
            log::info("kernel channel '" + c.config.name +
                      "': the system-call string program is unloaded");
        }
        if (c.ip) {
            c.ip.reset(); // detached: nothing more reaches the ring buffer
            log::info("kernel channel '" + c.config.name +
                      "': the ip provider's program is unloaded");
        }
        if (!c.instance || !c.instance->valid())
            continue;
        const std::string name = c.instance->name();
        try {
            c.instance->remove();
            log::info("tracefs instance " + name + " removed");
        } catch (const std::exception& e) {
            if (quiet)
                log::debug("tracefs instance " + name + ": " + e.what());
            else
                log::warning("tracefs instance " + name + ": " + e.what() +
                             "; tried again every second");
            left.push_back(name);
        }
    }
    std::erase_if(channels_, [](const Channel& c) { return !c.instance || !c.instance->valid(); });
    return left;
}

void SessionInstances::leaveInPlace() noexcept {
    for (Channel& c : channels_) {
        c.ip.reset();
        c.strings.reset();
        if (c.instance)
            c.instance->release();
    }
    channels_.clear();
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
