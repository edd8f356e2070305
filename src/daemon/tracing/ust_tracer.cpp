#include "ust_tracer.hpp"

#include "apps/ust_app_thread.hpp"
#include "apps/ust_error.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "context_type.hpp"
#include "metadata/clock_source.hpp"
#include "trace_paths.hpp"
#include "tracing/output_folder.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <grp.h>
#include <lttng/ust-ctl.h>
#include <lttng/ust-error.h>
#include <poll.h>
#include <pwd.h>
#include <random>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

namespace tracectl {

namespace cp = consumer_protocol;

namespace {

void checkUst(int r, const std::string& what) {
    if (r < 0)
        throw Error(ErrorCode::Failed, what + ": " + ustErrorString(r));
}

metadata::Uuid randomUuid() {
    std::random_device rd;
    metadata::Uuid u{};
    for (auto& b : u)
        b = static_cast<uint8_t>(rd());
    u[6] = static_cast<uint8_t>((u[6] & 0x0F) | 0x40);
    u[8] = static_cast<uint8_t>((u[8] & 0x3F) | 0x80);
    return u;
}

metadata::Abi abiOf(const UstApp& app) {
    metadata::Abi abi;
    abi.bitsPerLong = app.info.bitness;
    abi.uint8Alignment = app.info.uint8Alignment;
    abi.uint16Alignment = app.info.uint16Alignment;
    abi.uint32Alignment = app.info.uint32Alignment;
    abi.uint64Alignment = app.info.uint64Alignment;
    abi.longAlignment = app.info.longAlignment;
    if (auto order = metadata::byteOrderFromRegistration(app.info.byteOrder))
        abi.byteOrder = *order;
    return abi;
}

bool sameAbi(const metadata::Abi& a, const metadata::Abi& b) {
    return a.bitsPerLong == b.bitsPerLong && a.uint8Alignment == b.uint8Alignment &&
           a.uint16Alignment == b.uint16Alignment && a.uint32Alignment == b.uint32Alignment &&
           a.uint64Alignment == b.uint64Alignment && a.longAlignment == b.longAlignment &&
           a.byteOrder == b.byteOrder;
}

std::string hostName() {
    char buf[256] = {};
    gethostname(buf, sizeof buf - 1);
    return buf;
}

} // namespace

UstTracer::UstTracer(TracerConfig config) : config_(std::move(config)) {}

UstTracer::~UstTracer() {
    while (!sessions_.empty())
        destroy(sessions_.begin()->first);
}

bool UstTracer::mayTrace(const Traced& t, const UstApp& app) const {
    // A session traces its owner's apps; root's sessions, and those whose
    // owner held trace-all-users, trace every app.
    return t.snapshot.owner == 0 || t.snapshot.tracesAllUsers || app.info.uid == t.snapshot.owner;
}

void UstTracer::startConsumer(Traced& t) {
    if (access(config_.consumerBinary.c_str(), X_OK) < 0)
        throw Error(ErrorCode::Failed, "the consumer " + config_.consumerBinary +
                                           " cannot be run: " + std::strerror(errno));
    makeOutputFolder(t.snapshot.outputPath, t.snapshot.owner, t.snapshot.ownerGid,
                     !t.snapshot.snapshotMode);
    struct stat made {};
    if (stat(t.snapshot.outputPath.c_str(), &made) == 0)
        t.outputFolder = {made.st_dev, made.st_ino};
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        throw Error(ErrorCode::Failed, std::string("socketpair: ") + std::strerror(errno));
    UniqueFd ours(sv[0]);
    UniqueFd theirs(sv[1]);
    t.spec.unitName = "tracectl-consumer-" + t.snapshot.idHex + ".service";
    t.spec.binary = config_.consumerBinary;
    t.spec.args = {"--output", t.snapshot.outputPath};
    if (t.snapshot.snapshotMode)
        t.spec.args.push_back("--snapshot");
    t.spec.uid = t.snapshot.owner;
    t.spec.gid = t.snapshot.ownerGid;
    t.spec.outputDir = t.snapshot.outputPath;
    t.launcher =
        config_.useSystemd ? makeSystemdLauncher(config_.systemdAddress) : makeDirectLauncher();
    t.launcher->start(t.spec, std::move(theirs));
    t.consumer = std::make_unique<ConsumerClient>(std::move(ours));
    t.consumer->hello(config_.daemonVersion);
    t.chunkBegin = t.lastStamp = std::time(nullptr);
    if (hangUpWatcher_) {
        const std::string id = t.snapshot.idHex;
        t.consumerWatch = hangUpWatcher_(
            t.consumer->fd(), [this, id] { serviceConsumer(id); }, EPOLLIN | EPOLLRDHUP);
        t.completedWatch = hangUpWatcher_(
            t.consumer->completedFd(), [this, id] { serviceConsumer(id); }, EPOLLIN);
    }
    log::info("session '" + t.snapshot.name + "': consumer " + t.spec.unitName + " started (" +
              t.launcher->kind() + ")");
}

UstTracer::Trace& UstTracer::traceFor(Traced& t, const UstApp& app) {
    const bool perPid = t.snapshot.perPid;
    const std::pair<uint32_t, uint32_t> key{
        perPid ? static_cast<uint32_t>(app.info.pid) : app.info.uid, app.info.bitness};
    if (const auto found = t.traces.find(key); found != t.traces.end()) {
        // The metadata describes one type layout: an app with another one
        // would write events no reader could decode.
        if (!sameAbi(found->second->abi, abiOf(app)))
            throw Error(ErrorCode::Failed,
                        "its type alignments or byte order differ from those of the first app "
                        "of the uid " +
                            std::to_string(app.info.uid) + " " + std::to_string(app.info.bitness) +
                            "-bit trace");
        return *found->second;
    }
    // Built completely before it enters the map: a consumer that fails
    // half-way leaves no half-made trace behind for stop() to trip on.
    auto trace = std::make_unique<Trace>();
    trace->uid = app.info.uid;
    trace->bitness = app.info.bitness;
    const auto registered = std::chrono::system_clock::to_time_t(app.info.registeredAt);
    trace->dir = perPid ? perPidTraceDir(app.info.name, app.info.pid, registered)
                        : "ust/uid/" + std::to_string(app.info.uid) + "/" +
                              std::to_string(app.info.bitness) + "-bit";
    metadata::TraceInfo info;
    info.uuid = randomUuid();
    info.abi = abiOf(app);
    trace->abi = info.abi;
    info.tracer = {app.info.tracerMajor, app.info.tracerMinor, app.info.tracerPatchlevel};
    info.hostname = hostName();
    info.traceName = t.snapshot.name;
    info.creationTime = t.snapshot.creationTime;
    if (perPid) {
        info.buffering = metadata::BufferingScheme::PerPid;
        info.bufferingId = static_cast<uint32_t>(app.info.pid);
        info.app = metadata::AppInfo{app.info.pid, app.info.name, registered};
    } else {
        info.buffering = metadata::BufferingScheme::PerUid;
        info.bufferingId = app.info.uid;
    }
    info.clock = metadata::defaultClock();
    trace->registry = std::make_unique<metadata::TraceRegistry>(info);

    cp::CreateChannel meta;
    meta.key = t.nextKey++;
    meta.kind = cp::ChannelKind::Metadata;
    meta.outputDir = trace->dir;
    meta.name = "metadata";
    meta.subbufSize = 4096;
    meta.subbufCount = 2;
    std::copy(info.uuid.begin(), info.uuid.end(), meta.traceUuid.begin());
    trace->metadata = t.consumer->createChannel(meta);

    for (const auto& c : t.snapshot.channels) {
        Channel ch;
        ch.name = c.name;
        ch.contexts = c.contexts;
        ch.chanId = trace->registry->createChannel();
        cp::CreateChannel req;
        req.key = t.nextKey++;
        req.kind = cp::ChannelKind::Data;
        req.outputDir = trace->dir;
        req.name = c.name;
        req.subbufSize = c.subbufSize;
        req.subbufCount = c.subbufCount;
        req.overwrite = c.overwrite;
        req.switchTimerUsec = c.switchTimerUs;
        req.readTimerUsec = c.readTimerUs;
        req.chanId = ch.chanId;
        std::copy(info.uuid.begin(), info.uuid.end(), req.traceUuid.begin());
        ch.objects = t.consumer->createChannel(req);
        trace->channels.push_back(std::move(ch));
    }
    Trace& made = *t.traces.emplace(key, std::move(trace)).first->second;
    pushMetadata(t, made);
    return made;
}

void UstTracer::closeInConsumer(Traced& t, Trace& trace) {
    // Final: no app registers a channel of this trace any more, and the
    // consumer writes each stream's last (maybe empty) packet now.
    declareUnregisteredChannels(t, trace);
    for (auto& ch : trace.channels) {
        ch.objects = ConsumerChannel{ch.objects.key, nullptr, {}};
        t.consumer->destroyChannel(ch.objects.key);
    }
    trace.metadata.channel.reset();
    trace.metadata.streams.clear();
    t.consumer->destroyChannel(trace.metadata.key);
}

void UstTracer::declareUnregisteredChannels(Traced& t, Trace& trace) {
    if (const std::size_t n = trace.registry->declareUnregisteredChannels(); n != 0) {
        log::info("session '" + t.snapshot.name + "': " + std::to_string(n) + " channel(s) of " +
                  trace.dir +
                  " were never registered by an app (it left before); declared without "
                  "context, so the trace stays readable");
        pushMetadata(t, trace);
    }
}

void UstTracer::pushMetadata(Traced& t, Trace& trace) {
    const std::string& text = trace.registry->text();
    if (text.size() == trace.pushed)
        return;
    t.consumer->pushMetadata(trace.metadata.key, trace.pushed, text.substr(trace.pushed));
    trace.pushed = text.size();
}

void UstTracer::setUpApp(Traced& t, const std::shared_ptr<UstApp>& app) {
    if (t.apps.count(app->info.pid) != 0)
        return;
    const int cmd = app->command.get();
    const pid_t pid = app->info.pid;
    Trace* trace = nullptr;
    {
        std::lock_guard lock(shared_);
        trace = &traceFor(t, *app);
    }
    AppInSession a;
    a.app = app;
    a.sessionHandle = lttng_ust_ctl_create_session(cmd);
    checkUst(a.sessionHandle, "create_session in app " + std::to_string(pid));
    // Routes made so far go again if the set-up fails half-way: a route
    // must never outlive its session (handle_routes.hpp).
    struct UndoRoutes {
        HandleRoutes& routes;
        pid_t pid;
        std::vector<int> handles;
        bool keep = false;
        ~UndoRoutes() {
            if (!keep)
                for (const int h : handles)
                    routes.erase(pid, h);
        }
    } undo{routes_, pid, {}};
    routes_.set(pid, a.sessionHandle, Route{&t, trace, false, 0});
    undo.handles.push_back(a.sessionHandle);
    for (auto& ch : trace->channels) {
        lttng_ust_abi_object_data* raw = nullptr;
        checkUst(lttng_ust_ctl_duplicate_ust_object_data(&raw, ch.objects.channel.get()),
                 "duplicating a channel");
        UstObject chan(raw);
        checkUst(lttng_ust_ctl_send_channel_to_ust(cmd, a.sessionHandle, chan.get()),
                 "sending channel '" + ch.name + "' to app " + std::to_string(pid));
        routes_.set(pid, chan->handle, Route{&t, trace, true, ch.chanId});
        undo.handles.push_back(chan->handle);
        for (auto& stream : ch.objects.streams) {
            raw = nullptr;
            checkUst(lttng_ust_ctl_duplicate_ust_object_data(&raw, stream.get()),
                     "duplicating a stream");
            UstObject s(raw); // our copy goes once the app has its own
            checkUst(lttng_ust_ctl_send_stream_to_ust(cmd, chan.get(), s.get()),
                     "sending a stream to app " + std::to_string(pid));
        }
        // Contexts before events, as lttng-sessiond does: the app registers
        // the channel (with its context fields) on its first event.
        for (const auto& type : ch.contexts) {
            lttng_ust_context_attr attr{};
            attr.ctx = static_cast<lttng_ust_abi_context_type>(ustContextType(type).value_or(-1));
            lttng_ust_abi_object_data* ctxRaw = nullptr;
            checkUst(lttng_ust_ctl_add_context(cmd, &attr, chan.get(), &ctxRaw),
                     "adding context '" + type + "' in app " + std::to_string(pid));
            a.objects.emplace_back(ctxRaw);
        }
        for (const auto& rule : t.snapshot.rules)
            if (rule.channel == ch.name)
                createEvent(a, chan.get(), rule);
        // lttng-ust creates channels enabled (its ABI answers an enable of
        // an enabled channel with an error): nothing more to do.
        a.channels[ch.name] = std::move(chan);
    }
    t.apps[pid] = std::move(a);
    undo.keep = true;
}

void UstTracer::createEvent(AppInSession& a, lttng_ust_abi_object_data* chan,
                            const EventRule& rule) {
    const int cmd = a.app->command.get();
    const std::string pid = std::to_string(a.app->info.pid);
    lttng_ust_abi_event ev{};
    ev.instrumentation = LTTNG_UST_ABI_TRACEPOINT;
    std::strncpy(ev.name, rule.pattern.c_str(), LTTNG_UST_ABI_SYM_NAME_LEN - 1);
    ev.loglevel_type = rule.loglevelMatch == LoglevelMatch::All ? LTTNG_UST_ABI_LOGLEVEL_ALL
                       : rule.loglevelMatch == LoglevelMatch::AtLeastAsSevere
                           ? LTTNG_UST_ABI_LOGLEVEL_RANGE
                           : LTTNG_UST_ABI_LOGLEVEL_SINGLE;
    ev.loglevel = rule.loglevelMatch == LoglevelMatch::All ? -1 : rule.loglevel;
    lttng_ust_abi_object_data* evRaw = nullptr;
    checkUst(lttng_ust_ctl_create_event(cmd, &ev, chan, &evRaw),
             "creating event '" + rule.pattern + "' in app " + pid);
    UstObject event(evRaw);
    if (!rule.exclusions.empty()) {
        const std::size_t size = sizeof(lttng_ust_abi_event_exclusion) +
                                 rule.exclusions.size() * LTTNG_UST_ABI_SYM_NAME_LEN;
        std::vector<char> buf(size, '\0');
        auto* excl = reinterpret_cast<lttng_ust_abi_event_exclusion*>(buf.data());
        excl->count = static_cast<uint32_t>(rule.exclusions.size());
        char* names = buf.data() + sizeof(lttng_ust_abi_event_exclusion);
        for (std::size_t i = 0; i < rule.exclusions.size(); ++i)
            std::strncpy(names + i * LTTNG_UST_ABI_SYM_NAME_LEN, rule.exclusions[i].c_str(),
                         LTTNG_UST_ABI_SYM_NAME_LEN - 1);
        checkUst(lttng_ust_ctl_set_exclusion(cmd, excl, event.get()), "setting exclusions");
    }
    checkUst(lttng_ust_ctl_enable(cmd, event.get()), "enabling an event");
    a.objects.push_back(std::move(event));
}

void UstTracer::enableEvents(const std::string& idHex, const EventRule& rule) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end() || it->second->failed)
        return;
    Traced& t = *it->second;
    t.snapshot.rules.push_back(rule);
    for (auto& [pid, a] : t.apps) {
        const auto chan = a.channels.find(rule.channel);
        if (chan == a.channels.end())
            continue;
        const auto budget = budgetFor(*a.app);
        try {
            createEvent(a, chan->second.get(), rule);
        } catch (const Error& e) {
            log::warning("session '" + t.snapshot.name + "': app " + std::to_string(pid) +
                         " did not take the rule '" + rule.pattern + "': " + e.what());
        }
    }
}

void UstTracer::checkOutputFolderKept(const Traced& t) const {
    // The consumer holds its files open and, in its unit, sees the folder
    // it was started with: a folder removed (or replaced) since would take
    // every later event with it, silently. A snapshot session's folder is
    // made again by each snapshot instead.
    if (t.snapshot.snapshotMode)
        return;
    struct stat now {};
    if (stat(t.snapshot.outputPath.c_str(), &now) == 0 && now.st_dev == t.outputFolder.first &&
        now.st_ino == t.outputFolder.second)
        return;
    throw Error(ErrorCode::WrongState,
                "the output folder " + t.snapshot.outputPath +
                    " was removed or replaced since the session first started, so what it "
                    "records would be lost; destroy the session and create a new one");
}

void UstTracer::start(const SessionSnapshot& s) {
    auto& slot = sessions_[s.idHex];
    if (!slot) {
        auto t = std::make_unique<Traced>();
        t->snapshot = s;
        try {
            startConsumer(*t);
        } catch (...) {
            sessions_.erase(s.idHex);
            throw;
        }
        slot = std::move(t);
    }
    Traced& t = *slot;
    if (t.failed)
        throw Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session");
    checkOutputFolderKept(t);
    for (const auto& [pid, app] : apps_) {
        if (!mayTrace(t, *app))
            continue;
        const auto budget = budgetFor(*app);
        try {
            setUpApp(t, app);
        } catch (const Error& e) {
            log::warning("session '" + t.snapshot.name + "': app " + std::to_string(pid) +
                         " not traced: " + e.what());
            abandonSetUp(t, *app);
        }
    }
    for (auto& [pid, a] : t.apps) {
        const int cmd = a.app->command.get();
        const auto budget = budgetFor(*a.app);
        int r = lttng_ust_ctl_start_session(cmd, a.sessionHandle);
        if (r < 0)
            log::warning("session '" + t.snapshot.name + "': app " + std::to_string(pid) +
                         " did not start: " + ustErrorString(r));
        lttng_ust_ctl_wait_quiescent(cmd);
    }
    {
        std::lock_guard lock(shared_);
        for (auto& [key, trace] : t.traces)
            pushMetadata(t, *trace);
    }
    t.active = true;
    armSchedule(t);
}

std::optional<SocketDeadlines::Armed> UstTracer::budgetFor(const UstApp& app) {
    if (deadlines_ == nullptr)
        return std::nullopt;
    try {
        return deadlines_->arm(app.command.get(), kAppSocketTimeout);
    } catch (const std::system_error& e) {
        log::warning("app " + std::to_string(app.info.pid) + ": " + e.what());
        return std::nullopt;
    }
}

void UstTracer::watchConsumers(HangUpWatcher watcher, FailureHandler onFailure) {
    hangUpWatcher_ = std::move(watcher);
    onFailure_ = std::move(onFailure);
}

void UstTracer::consumerGone(std::string idHex) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end() || it->second->failed)
        return;
    Traced& t = *it->second;
    const bool stopped = t.launcher->waitStopped(t.spec, std::chrono::milliseconds(1000));
    failSession(t, "the consumer " + t.spec.unitName +
                       (stopped ? " is no longer running (" + t.launcher->stopReason(t.spec) + ")"
                                : " closed its connection but still runs; it was stopped"));
}

void UstTracer::serviceConsumer(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end() || it->second->failed)
        return;
    Traced& t = *it->second;
    bool alive = true;
    std::vector<cp::RotationCompleted> done;
    {
        std::lock_guard lock(shared_);
        try {
            alive = t.consumer->readUnsolicited();
        } catch (const Error& e) {
            log::warning("session '" + t.snapshot.name + "': " + e.what());
            alive = false;
        }
        done = t.consumer->takeCompleted();
    }
    completeRotations(t, std::move(done));
    if (!alive) {
        consumerGone(idHex);
        return;
    }
    // One-shot watches: armed again for the next news.
    for (auto* w : {&t.consumerWatch, &t.completedWatch})
        if (*w)
            sd_event_source_set_enabled(w->get(), SD_EVENT_ONESHOT);
}

void UstTracer::completeRotations(Traced& t, std::vector<cp::RotationCompleted> done) {
    for (auto& d : done) {
        if (!t.rotating || t.rotating->id != d.id) {
            log::warning("session '" + t.snapshot.name + "': the consumer completed rotation " +
                         std::to_string(d.id) + ", which is not under way");
            continue;
        }
        auto r = std::move(*t.rotating);
        t.rotating.reset();
        if (d.ok) {
            log::info("session '" + t.snapshot.name + "': rotation archived in " + r.path);
            r.done(std::nullopt, r.path);
        } else {
            r.done(Error(ErrorCode::Failed,
                         "the rotation to " + r.path + " is incomplete: " + d.message),
                   r.path);
        }
    }
}

void UstTracer::abandonRotation(Traced& t, const std::string& why) {
    if (!t.rotating)
        return;
    auto r = std::move(*t.rotating);
    t.rotating.reset();
    r.done(Error(ErrorCode::Failed, "the rotation to " + r.path + " did not complete: " + why),
           r.path);
}

std::string UstTracer::rotate(const std::string& idHex, RotationDone done) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        throw Error(ErrorCode::WrongState,
                    "the session was never started: it has no trace chunk to rotate");
    Traced& t = *it->second;
    if (t.failed)
        throw Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session");
    if (t.rotating)
        throw Error(ErrorCode::WrongState,
                    "a rotation is under way (to " + t.rotating->path + "); wait for it");
    // Names stay unique and ordered even if the clock steps back: the stamps
    // never decrease and the index always grows.
    const std::time_t now = std::max(std::time(nullptr), t.lastStamp);
    cp::Rotate request;
    request.id = t.nextRotationId++;
    request.oldChunk = t.chunkDir;
    request.newChunk = chunkDir(now, t.chunkIndex + 1);
    request.archive = archiveDir(t.chunkBegin, now, t.chunkIndex);
    try {
        std::lock_guard lock(shared_);
        for (auto& [key, trace] : t.traces)
            pushMetadata(t, *trace); // the old chunk's metadata is whole
        t.consumer->rotate(request);
    } catch (const Error& e) {
        throw Error(ErrorCode::Failed, std::string("rotating: ") + e.what());
    }
    t.chunkDir = request.newChunk;
    t.chunkBegin = t.lastStamp = now;
    ++t.chunkIndex;
    t.rotating = Traced::Rotation{request.id, t.snapshot.outputPath + "/" + request.archive,
                                  std::move(done)};
    log::info("session '" + t.snapshot.name + "': rotating into " + request.newChunk);
    return t.rotating->path;
}

void UstTracer::setRotationSchedule(const std::string& idHex, RotationSchedule schedule,
                                    RotationDone started, RotationDone done) {
    if (schedule.any())
        schedules_[idHex] = Scheduled{schedule, std::move(started), std::move(done)};
    else
        schedules_.erase(idHex);
    if (const auto it = sessions_.find(idHex); it != sessions_.end())
        armSchedule(*it->second);
}

void UstTracer::armSchedule(Traced& t) {
    const auto it = schedules_.find(t.snapshot.idHex);
    if (it == schedules_.end() || t.failed || !hangUpWatcher_) {
        t.scheduleWatch.reset();
        t.scheduleTimer.reset();
        return;
    }
    const RotationSchedule& s = it->second.schedule;
    constexpr uint64_t kSizeCheckUs = 100'000;
    uint64_t tickUs = s.timerUs != 0 ? s.timerUs : kSizeCheckUs;
    if (s.sizeBytes != 0)
        tickUs = std::min(tickUs, kSizeCheckUs);
    t.nextTimedRotation = std::chrono::steady_clock::now() + std::chrono::microseconds(s.timerUs);
    t.scheduleWatch.reset();
    t.scheduleTimer.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    if (!t.scheduleTimer) {
        log::warning("session '" + t.snapshot.name +
                     "': no rotation schedule: timerfd_create: " + std::strerror(errno));
        return;
    }
    itimerspec spec{};
    spec.it_interval.tv_sec = static_cast<time_t>(tickUs / 1'000'000);
    spec.it_interval.tv_nsec = static_cast<long>(tickUs % 1'000'000 * 1000);
    spec.it_value = spec.it_interval;
    timerfd_settime(t.scheduleTimer.get(), 0, &spec, nullptr);
    const std::string id = t.snapshot.idHex;
    t.scheduleWatch = hangUpWatcher_(
        t.scheduleTimer.get(), [this, id] { scheduleTick(id); }, EPOLLIN);
}

namespace {

/// Bytes of the files below `dir` (0 if it cannot be read).
uint64_t bytesBelow(const std::string& dir) {
    std::error_code ec;
    uint64_t total = 0;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        std::error_code sizeError;
        if (it->is_regular_file(sizeError))
            total += it->file_size(sizeError);
    }
    return total;
}

} // namespace

void UstTracer::scheduleTick(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    const auto sched = schedules_.find(idHex);
    if (it == sessions_.end() || sched == schedules_.end())
        return;
    Traced& t = *it->second;
    uint64_t expirations = 0;
    (void)!read(t.scheduleTimer.get(), &expirations, sizeof expirations);
    if (t.scheduleWatch)
        sd_event_source_set_enabled(t.scheduleWatch.get(), SD_EVENT_ONESHOT);
    // Only an active session rotates on its own; one rotation at a time.
    if (!t.active || t.failed || t.rotating)
        return;
    const RotationSchedule& s = sched->second.schedule;
    const auto now = std::chrono::steady_clock::now();
    const bool timeDue = s.timerUs != 0 && now >= t.nextTimedRotation;
    const bool sizeDue =
        s.sizeBytes != 0 && bytesBelow(t.snapshot.outputPath + "/" +
                                       (t.chunkDir.empty() ? "ust" : t.chunkDir)) >= s.sizeBytes;
    if (!timeDue && !sizeDue)
        return;
    t.nextTimedRotation = now + std::chrono::microseconds(s.timerUs);
    try {
        const std::string path = rotate(idHex, sched->second.done);
        sched->second.started(std::nullopt, path);
    } catch (const Error& e) {
        log::warning("session '" + t.snapshot.name + "': scheduled rotation: " + e.what());
    }
}

void UstTracer::failSession(Traced& t, const std::string& why) {
    t.failed = true;
    t.active = false;
    abandonRotation(t, why);
    t.consumerWatch.reset();
    t.completedWatch.reset();
    t.scheduleWatch.reset();
    if (t.launcher->running(t.spec))
        t.launcher->stop(t.spec);
    if (onFailure_)
        onFailure_(t.snapshot.idHex, why);
}

void UstTracer::stop(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    if (it != sessions_.end() && it->second->failed)
        throw Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session");
    if (it == sessions_.end() || !it->second->active)
        return;
    Traced& t = *it->second;
    for (auto& [pid, a] : t.apps) {
        const int cmd = a.app->command.get();
        const auto budget = budgetFor(*a.app);
        lttng_ust_ctl_stop_session(cmd, a.sessionHandle);
        lttng_ust_ctl_wait_quiescent(cmd);
    }
    t.active = false; // the apps no longer write, whatever comes next
    try {
        std::lock_guard lock(shared_);
        for (auto& [key, trace] : t.traces) {
            pushMetadata(t, *trace);
            for (auto& ch : trace->channels)
                t.consumer->flushChannel(ch.objects.key);
            t.consumer->flushChannel(trace->metadata.key);
        }
    } catch (const Error& e) {
        // A consumer that cannot flush is no use any more: say so in the
        // session's state rather than leave it "active" with stopped apps.
        failSession(t, std::string("the consumer ") + t.spec.unitName + " failed while flushing (" +
                           e.what() + "); it was stopped");
        throw Error(ErrorCode::Failed,
                    std::string(e.what()) + "; the session is now in state error");
    }
}

void UstTracer::destroy(const std::string& idHex) noexcept {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end()) {
        schedules_.erase(idHex);
        return;
    }
    Traced& t = *it->second;
    if (t.failed) {
        abandonRotation(t, "the session's consumer is gone");
        for (auto& [pid, a] : t.apps)
            eraseRoutes(pid, a);
        t.apps.clear();
        t.launcher->stop(t.spec);
        HandleRoutes::synchronize(); // no notify handler uses `t` any more
        sessions_.erase(it);
        schedules_.erase(idHex);
        return;
    }
    try {
        stop(idHex);
    } catch (const std::exception& e) {
        log::warning("session '" + t.snapshot.name + "': stopping before destroy: " + e.what());
    }
    for (auto& [pid, a] : t.apps)
        eraseRoutes(pid, a);
    t.apps.clear(); // our copies of the app-side objects
    try {
        std::lock_guard lock(shared_);
        for (auto& [key, trace] : t.traces)
            closeInConsumer(t, *trace);
        t.consumer->shutdown();
    } catch (const std::exception& e) {
        log::warning("session '" + t.snapshot.name + "': closing the consumer: " + e.what());
        t.launcher->stop(t.spec);
    }
    // Closing every stream completed a rotation under way (its news came
    // with the Shutdown), or nothing ever will.
    {
        std::lock_guard lock(shared_);
        completeRotations(t, t.consumer->takeCompleted());
    }
    abandonRotation(t, "the session was destroyed");
    t.consumerWatch.reset();
    t.completedWatch.reset();
    HandleRoutes::synchronize(); // no notify handler uses `t` any more
    sessions_.erase(it);
    schedules_.erase(idHex);
}

void UstTracer::eraseRoutes(pid_t pid, const AppInSession& a) {
    routes_.erase(pid, a.sessionHandle);
    for (const auto& [name, chan] : a.channels)
        routes_.erase(pid, chan->handle);
}

void UstTracer::joinRunning(Traced& t, const std::shared_ptr<UstApp>& app) {
    try {
        setUpApp(t, app);
        auto& a = t.apps[app->info.pid];
        checkUst(lttng_ust_ctl_start_session(app->command.get(), a.sessionHandle),
                 "starting the session in the app");
        std::lock_guard lock(shared_);
        for (auto& [key, trace] : t.traces)
            pushMetadata(t, *trace);
    } catch (const Error& e) {
        log::warning("session '" + t.snapshot.name + "': app " + std::to_string(app->info.pid) +
                     " not traced: " + e.what());
        abandonSetUp(t, *app);
    }
}

void UstTracer::abandonSetUp(Traced& t, const UstApp& app) {
    // A per-PID trace made for this app alone will never get its channels
    // registered: closed now, complete (its streams declared), rather than
    // left for Stop to flush into files no reader can decode.
    if (t.snapshot.perPid && t.apps.count(app.info.pid) == 0)
        retirePerPidTrace(t, {static_cast<uint32_t>(app.info.pid), app.info.bitness});
}

void UstTracer::onAppRegistered(const std::shared_ptr<UstApp>& app) {
    apps_[app->info.pid] = app;
    // Its sockets are connected, so the pid is still this app's.
    if (const long fd = syscall(SYS_pidfd_open, app->info.pid, 0); fd >= 0)
        pidfds_[app->info.pid] = UniqueFd(static_cast<int>(fd));
    else
        pidfds_.erase(app->info.pid);
    for (auto& [id, t] : sessions_) {
        if (!t->active || t->failed || !mayTrace(*t, *app))
            continue;
        joinRunning(*t, app);
    }
}

void UstTracer::traceAllUsers(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return; // not started yet: its snapshot carries the flag
    Traced& t = *it->second;
    if (t.snapshot.tracesAllUsers)
        return;
    t.snapshot.tracesAllUsers = true;
    if (!t.active || t.failed)
        return; // the next Start sets up every app
    for (const auto& [pid, app] : apps_) {
        if (t.apps.count(pid) != 0 || !mayTrace(t, *app))
            continue;
        const auto budget = budgetFor(*app);
        joinRunning(t, app);
    }
}

void UstTracer::onAppGone(pid_t pid) {
    const auto gone = apps_.find(pid);
    if (gone == apps_.end())
        return;
    const uint32_t bitness = gone->second->info.bitness;
    apps_.erase(gone);
    std::vector<std::string> perPid; // sessions holding a trace of this app's own
    for (auto& [id, t] : sessions_) {
        const auto it = t->apps.find(pid);
        if (it == t->apps.end())
            continue;
        eraseRoutes(pid, it->second);
        t->apps.erase(it); // our copies of its channel objects go with it
        if (t->snapshot.perPid && !t->failed)
            perPid.push_back(id);
    }
    retireWhenExited(pid, bitness, std::move(perPid));
}

void UstTracer::retireWhenExited(pid_t pid, uint32_t bitness, std::vector<std::string> ids) {
    UniqueFd pidfd;
    if (const auto it = pidfds_.find(pid); it != pidfds_.end()) {
        pidfd = std::move(it->second);
        pidfds_.erase(it);
    }
    if (ids.empty())
        return;
    auto retire = [this, pid, bitness, ids] {
        HandleRoutes::synchronize(); // no notify handler uses the app's traces any more
        for (const auto& id : ids)
            if (const auto t = sessions_.find(id); t != sessions_.end() && !t->second->failed)
                retirePerPidTrace(*t->second, {static_cast<uint32_t>(pid), bitness});
    };
    pollfd p{pidfd.get(), POLLIN, 0};
    if (!pidfd.valid() || !hangUpWatcher_ || poll(&p, 1, 0) != 0) {
        retire(); // exited already (or cannot be watched: its sockets are closed)
        return;
    }
    const int fd = pidfd.get();
    EventSourcePtr watch = hangUpWatcher_(
        fd,
        [this, pid, retire] {
            retire();
            exitWatches_.erase(pid); // frees this very source: the last thing done
        },
        EPOLLIN);
    exitWatches_[pid] = {std::move(pidfd), std::move(watch)};
}

void UstTracer::retirePerPidTrace(Traced& t, std::pair<uint32_t, uint32_t> key) {
    const auto it = t.traces.find(key);
    if (it == t.traces.end())
        return;
    std::unique_ptr<Trace> trace = std::move(it->second);
    t.traces.erase(it);
    try {
        // The app is gone: it registers nothing more.
        std::lock_guard lock(shared_);
        declareUnregisteredChannels(t, *trace);
    } catch (const std::exception& e) {
        log::warning("session '" + t.snapshot.name + "': metadata of the exited app's trace " +
                     trace->dir + ": " + e.what());
    }
    if (t.snapshot.snapshotMode) {
        // A flight recorder keeps an exited app's last events: snapshots
        // taken after its exit (a crash, say) still hold them.
        try {
            std::lock_guard lock(shared_);
            pushMetadata(t, *trace);
        } catch (const Error& e) {
            log::warning("session '" + t.snapshot.name + "': metadata of the exited app's trace " +
                         trace->dir + ": " + e.what());
        }
        t.exited.push_back(std::move(trace));
        return;
    }
    // The app is gone, so nothing more is written into its buffers: the
    // consumer flushes each stream, reads it to the end and only then closes
    // it (DestroyChannel), so every event the app wrote is on disk. The
    // metadata goes last, complete.
    try {
        std::lock_guard lock(shared_);
        pushMetadata(t, *trace);
        closeInConsumer(t, *trace);
        log::debug("session '" + t.snapshot.name + "': trace " + trace->dir + " complete");
    } catch (const Error& e) {
        log::warning("session '" + t.snapshot.name + "': closing the trace " + trace->dir +
                     " of an exited app: " + e.what());
    }
}

std::pair<UstTracer::Traced&, UstTracer::Trace&> UstTracer::routeOf(pid_t pid,
                                                                    int sessionHandle) const {
    const auto route = routes_.find(pid, sessionHandle);
    if (!route || route->isChannel)
        throw std::out_of_range("unknown session handle " + std::to_string(sessionHandle));
    return {*static_cast<Traced*>(route->session), *static_cast<Trace*>(route->trace)};
}

uint32_t UstTracer::channelIdOf(pid_t pid, int channelHandle) const {
    const auto route = routes_.find(pid, channelHandle);
    if (!route || !route->isChannel)
        throw std::out_of_range("unknown channel handle " + std::to_string(channelHandle));
    return route->chanId;
}

bool UstTracer::handleNotify(UstApp& app) {
    const int fd = app.notify.get();
    const pid_t pid = app.info.pid;
    lttng_ust_ctl_notify_cmd cmd{};
    if (lttng_ust_ctl_recv_notify(fd, &cmd) < 0)
        return false;
    switch (cmd) {
    case LTTNG_UST_CTL_NOTIFY_CMD_CHANNEL: {
        int sobjd = 0, cobjd = 0;
        size_t nr = 0;
        lttng_ust_ctl_field* fields = nullptr;
        if (lttng_ust_ctl_recv_register_channel(fd, &sobjd, &cobjd, &nr, &fields) < 0)
            return false;
        std::unique_ptr<lttng_ust_ctl_field, decltype(&std::free)> owned(fields, &std::free);
        uint32_t chanId = 0;
        auto header = LTTNG_UST_CTL_CHANNEL_HEADER_LARGE;
        int ret = 0;
        try {
            RcuReadSection read;
            const auto [session, trace] = routeOf(pid, sobjd);
            chanId = channelIdOf(pid, cobjd);
            std::lock_guard lock(shared_);
            const auto reply = trace.registry->registerChannel(
                chanId, std::span<const lttng_ust_ctl_field>(fields, nr));
            chanId = reply.chanId;
            header = reply.headerType;
            pushMetadata(session, trace);
        } catch (const std::exception& e) {
            log::warning("app " + std::to_string(pid) +
                         ": channel registration refused: " + e.what());
            ret = -EINVAL;
        }
        return lttng_ust_ctl_reply_register_channel(fd, chanId, header, ret) >= 0;
    }
    case LTTNG_UST_CTL_NOTIFY_CMD_EVENT: {
        int sobjd = 0, cobjd = 0, loglevel = 0;
        char name[LTTNG_UST_ABI_SYM_NAME_LEN] = {};
        char* signature = nullptr;
        size_t nr = 0;
        lttng_ust_ctl_field* fields = nullptr;
        char* emf = nullptr;
        if (lttng_ust_ctl_recv_register_event(fd, &sobjd, &cobjd, name, &loglevel, &signature, &nr,
                                              &fields, &emf) < 0)
            return false;
        std::unique_ptr<char, decltype(&std::free)> ownedSig(signature, &std::free);
        std::unique_ptr<lttng_ust_ctl_field, decltype(&std::free)> ownedFields(fields, &std::free);
        std::unique_ptr<char, decltype(&std::free)> ownedEmf(emf, &std::free);
        name[LTTNG_UST_ABI_SYM_NAME_LEN - 1] = '\0';
        uint32_t id = 0;
        int ret = 0;
        try {
            RcuReadSection read;
            const auto [session, trace] = routeOf(pid, sobjd);
            const uint32_t chanId = channelIdOf(pid, cobjd);
            std::lock_guard lock(shared_);
            id = trace.registry->registerEvent(
                chanId, name, loglevel, signature != nullptr ? signature : "",
                std::span<const lttng_ust_ctl_field>(fields, nr), emf != nullptr ? emf : "");
            pushMetadata(session, trace);
        } catch (const std::exception& e) {
            log::warning("app " + std::to_string(pid) + ": event '" + name +
                         "' registration refused: " + e.what());
            ret = -EINVAL;
        }
        return lttng_ust_ctl_reply_register_event(fd, id, ret) >= 0;
    }
    case LTTNG_UST_CTL_NOTIFY_CMD_ENUM: {
        int sobjd = 0;
        char name[LTTNG_UST_ABI_SYM_NAME_LEN] = {};
        lttng_ust_ctl_enum_entry* entries = nullptr;
        size_t nr = 0;
        if (lttng_ust_ctl_recv_register_enum(fd, &sobjd, name, &entries, &nr) < 0)
            return false;
        std::unique_ptr<lttng_ust_ctl_enum_entry, decltype(&std::free)> owned(entries, &std::free);
        name[LTTNG_UST_ABI_SYM_NAME_LEN - 1] = '\0';
        uint64_t id = 0;
        int ret = 0;
        try {
            RcuReadSection read;
            const auto [session, trace] = routeOf(pid, sobjd);
            std::lock_guard lock(shared_);
            id = trace.registry->registerEnum(
                name, std::span<const lttng_ust_ctl_enum_entry>(entries, nr));
            pushMetadata(session, trace);
        } catch (const std::exception& e) {
            log::warning("app " + std::to_string(pid) + ": enum registration refused: " + e.what());
            ret = -EINVAL;
        }
        return lttng_ust_ctl_reply_register_enum(fd, id, ret) >= 0;
    }
    default:
        log::warning("app " + std::to_string(pid) + ": unknown notify command");
        return false;
    }
}

} // namespace tracectl
