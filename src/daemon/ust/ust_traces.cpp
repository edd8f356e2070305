// UstTracer: the traces of a session (one per uid and bitness, or per pid
// and bitness): made on first use by the consumer, their metadata pushed as
// it grows, closed once no app writes to them any more.
#include "common/error.hpp"
#include "common/join.hpp"
#include "common/log.hpp"
#include "metadata/clock_source.hpp"
#include "metadata/record_layout_compiler.hpp"
#include "session/trace_paths.hpp"
#include "ust_tracer.hpp"

#include <algorithm>
#include <lttng/ust-ctl.h>
#include <random>
#include <set>
#include <unistd.h>

namespace tracectl {

namespace cp = consumer_protocol;

namespace {

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

void UstTracer::reportSize(const Traced& t) {
    if (onSize_)
        onSize_(t.snapshot.idHex, bytesPerTrace(t) * (t.traces.size() + t.exited.size()));
}

void UstTracer::withTrace(Traced& t, const UstApp& app, TraceReady ready) {
    const TraceKey key{t.snapshot.perPid ? static_cast<uint32_t>(app.info.pid) : app.info.uid,
                       app.info.bitness};
    // The metadata describes one type layout: an app with another one
    // would write events no reader could decode.
    auto checked = [abi = abiOf(app), uid = app.info.uid, bitness = app.info.bitness,
                    ready = std::move(ready)](Trace* trace, std::optional<Error> e) {
        if (trace != nullptr && !sameAbi(trace->abi, abi))
            return ready(nullptr,
                         Error(ErrorCode::Failed, "its type alignments or byte order differ from "
                                                  "those of the first app of the uid " +
                                                      std::to_string(uid) + " " +
                                                      std::to_string(bitness) + "-bit trace"));
        ready(trace, std::move(e));
    };
    if (const auto found = t.traces.find(key); found != t.traces.end())
        return checked(found->second.get(), std::nullopt);
    auto& waiting = t.creating[key];
    const bool first = waiting.empty();
    waiting.push_back(std::move(checked));
    if (first)
        createTrace(t, app, key);
}

void UstTracer::createTrace(Traced& t, const UstApp& app, TraceKey key) {
    const bool perPid = t.snapshot.perPid;
    // Built completely before it enters `traces`: a consumer that fails
    // half-way leaves no half-made trace behind for stop() to trip on.
    auto building = std::make_shared<std::unique_ptr<Trace>>(std::make_unique<Trace>());
    Trace& trace = **building;
    trace.key = key;
    trace.uid = app.info.uid;
    trace.bitness = app.info.bitness;
    const auto registered = std::chrono::system_clock::to_time_t(app.info.registeredAt);
    trace.dir = (perPid ? perPidTraceDir(app.info.name, app.info.pid, registered)
                        : "ust/uid/" + std::to_string(app.info.uid) + "/" +
                              std::to_string(app.info.bitness) + "-bit") +
                recordings_.traceDirSuffixOf(t.snapshot.idHex);
    metadata::TraceInfo info;
    info.uuid = randomUuid();
    info.abi = abiOf(app);
    trace.abi = info.abi;
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
    // One offset for every trace of the session, the kernel's too: the
    // domains' events then convert to the same real time and merge exactly.
    info.clock.offset = recordings_.clockOffsetOf(t.snapshot.idHex).value_or(0);
    trace.registry = std::make_unique<metadata::TraceRegistry>(info);

    // lttng-ust makes one stream per possible CPU (ust-ctl.h
    // lttng_ust_ctl_get_nr_stream_per_channel); the metadata channel has one.
    const auto streams = static_cast<uint64_t>(lttng_ust_ctl_get_nr_stream_per_channel());
    cp::CreateChannel meta;
    meta.kind = cp::ChannelKind::Metadata;
    meta.outputDir = trace.dir;
    meta.name = "metadata";
    meta.subbufSize = 4096;
    meta.subbufCount = 2;
    std::copy(info.uuid.begin(), info.uuid.end(), meta.traceUuid.begin());
    meta.key = recordings_.newChannelKey(t.snapshot.idHex,
                                         {"ust", "", meta.subbufSize, meta.subbufCount, 1});
    std::vector<cp::CreateChannel> requests;
    for (const auto& c : t.snapshot.channels) {
        Channel ch;
        ch.name = c.name;
        ch.contexts = c.contexts;
        ch.chanId = trace.registry->createChannel();
        cp::CreateChannel req;
        req.key = recordings_.newChannelKey(t.snapshot.idHex,
                                            {"ust", c.name, c.subbufSize, c.subbufCount, streams});
        req.kind = cp::ChannelKind::Data;
        req.outputDir = trace.dir;
        req.name = c.name;
        req.subbufSize = c.subbufSize;
        req.subbufCount = c.subbufCount;
        req.overwrite = c.overwrite;
        req.switchTimerUsec = c.switchTimerUs;
        req.readTimerUsec = c.readTimerUs;
        req.chanId = ch.chanId;
        std::copy(info.uuid.begin(), info.uuid.end(), req.traceUuid.begin());
        trace.channels.push_back(std::move(ch));
        requests.push_back(std::move(req));
    }

    trace.metadata.key = meta.key;
    // Nothing once the session is gone: its waiters went with it (forget()).
    Join created(t.lifetime.guard([this, &t, key, building](std::optional<Error> e) {
        auto waiters = std::move(t.creating[key]);
        t.creating.erase(key);
        // The waiters may end the session: the rest only while it lives.
        auto over = t.lifetime.guard([this, &t] {
            if (!making(t))
                creationsOver(t);
        });
        Trace& made = **building;
        if (!e && (t.failed || t.destroying))
            e = Error(ErrorCode::Failed, "the session ended meanwhile");
        if (e) {
            // What the consumer did make goes again.
            if (!t.failed) {
                std::vector<uint64_t> keys;
                for (const auto& ch : made.channels)
                    if (ch.objects.channel)
                        keys.push_back(ch.objects.key);
                if (made.metadata.channel)
                    keys.push_back(made.metadata.key);
                for (const uint64_t k : keys)
                    consumer(t).destroyChannel(k, [](std::optional<Error>) {});
            }
            // LimitExceeded (the consumer is out of fds) stays so: it
            // refuses the waiting apps, not the session (join()).
            const Error why(e->code() == ErrorCode::LimitExceeded ? ErrorCode::LimitExceeded
                                                                  : ErrorCode::Failed,
                            "the consumer " + recordings_.unitOf(t.snapshot.idHex) +
                                " could not make the buffers of " + made.dir + ": " + e->what());
            for (auto& w : waiters)
                w(nullptr, why);
            return over();
        }
        Trace& ready = *t.traces.emplace(key, std::move(*building)).first->second;
        pushMetadata(t, ready);
        reportSize(t);
        for (auto& w : waiters)
            w(&ready, std::nullopt);
        over();
    }));
    consumer(t).createChannel(
        meta, [building, step = created.add()](std::optional<Error> e, ConsumerChannel ch) {
            if (!e)
                (*building)->metadata = std::move(ch);
            step(std::move(e));
        });
    for (std::size_t i = 0; i < requests.size(); ++i)
        consumer(t).createChannel(requests[i], [building, i, step = created.add()](
                                                   std::optional<Error> e, ConsumerChannel ch) {
            if (!e)
                (*building)->channels[i].objects = std::move(ch);
            step(std::move(e));
        });
    // The trace's metadata so far goes right behind its channels, ahead of
    // any later request (a Rotate): no chunk holds its folder without it.
    pushMetadata(t, trace, created.add());
    created.seal();
}

std::vector<cp::DeclareLayouts> UstTracer::takeLayoutsLocked(const Traced& t, Trace& trace) {
    std::vector<cp::DeclareLayouts> out;
    if (!trace.registry)
        return out;
    if (t.snapshot.snapshotMode || !t.snapshot.countEvents) {
        // A consumer that counts nothing (count-events off; a flight
        // recorder's, which reads nothing until a snapshot) gets no layouts.
        (void)trace.registry->takeNewLayouts();
        return out;
    }
    const cp::LayoutAbi abi = metadata::layoutAbi(trace.abi);
    for (auto& [chanId, layouts] : trace.registry->takeNewLayouts()) {
        const auto ch = std::find_if(trace.channels.begin(), trace.channels.end(),
                                     [id = chanId](const Channel& c) { return c.chanId == id; });
        if (ch == trace.channels.end())
            continue;
        for (std::string& bytes : record_layout::encodeChunks(layouts, cp::kMaxLayouts))
            out.push_back(cp::DeclareLayouts{ch->objects.key, abi, std::move(bytes)});
    }
    return out;
}

void UstTracer::pushMetadata(Traced& t, Trace& trace, Done done) {
    // Under the registry's lock, so that the offsets go out in the order
    // the notify thread's queued pushes and ours take them.
    std::lock_guard lock(trace.registryMutex);
    // The layouts of what the registry learned go first (they are what the
    // consumer needs to count the records of the events registered).
    for (const cp::DeclareLayouts& m : takeLayoutsLocked(t, trace))
        consumer(t).declareLayouts(m, [name = t.snapshot.name,
                                       dir = trace.dir](std::optional<Error> e) {
            // Only the statistics need them: the session goes on.
            if (e)
                log::warning("session '" + name + "': the consumer refused the record layouts of " +
                             dir + " (its events recorded go uncounted): " + e->what());
        });
    const std::string& text = trace.registry->text();
    if (text.size() == trace.pushed)
        return done(std::nullopt);
    const std::size_t offset = trace.pushed;
    trace.pushed = text.size();
    consumer(t).pushMetadata(trace.metadata.key, offset, text.substr(offset), std::move(done));
}

void UstTracer::pushMetadata(Traced& t, Trace& trace) {
    pushMetadata(t, trace, failOnError(t, "to take the metadata of " + trace.dir));
}

void UstTracer::queueMetadataLocked(Traced& t, Trace& trace) {
    for (cp::DeclareLayouts& m : takeLayoutsLocked(t, trace))
        consumer(t).enqueueLayouts(std::move(m));
    const std::string& text = trace.registry->text();
    if (text.size() == trace.pushed)
        return;
    const std::size_t offset = trace.pushed;
    trace.pushed = text.size();
    consumer(t).enqueueMetadata(trace.metadata.key, offset, text.substr(offset));
}

void UstTracer::declareOrphanChannels(Traced& t) {
    const auto keyOf = [&t](const UstApp& app) {
        return TraceKey{t.snapshot.perPid ? static_cast<uint32_t>(app.info.pid) : app.info.uid,
                        app.info.bitness};
    };
    std::set<TraceKey> held;
    for (const auto& [pid, a] : t.apps)
        held.insert(keyOf(*a.app));
    for (const auto& [pid, s] : t.settingUp)
        held.insert(keyOf(*s.app));
    for (auto& [key, trace] : t.traces) {
        if (held.count(key) != 0)
            continue;
        std::size_t n = 0;
        {
            std::lock_guard lock(trace->registryMutex);
            for (const auto& ch : trace->channels)
                if (ch.contexts.empty() && !trace->registry->isChannelRegistered(ch.chanId)) {
                    try {
                        trace->registry->registerChannel(ch.chanId, {});
                        ++n;
                    } catch (const std::exception& e) {
                        log::warning("session '" + t.snapshot.name + "': declaring a channel of " +
                                     trace->dir + ": " + e.what());
                    }
                }
        }
        if (n != 0)
            log::info("session '" + t.snapshot.name + "': " + std::to_string(n) +
                      " channel(s) of " + trace->dir +
                      " were never registered (its apps left first); declared so that the "
                      "chunk stays readable");
    }
}

void UstTracer::declareUnregisteredChannels(Traced& t, Trace& trace) {
    std::size_t n = 0;
    {
        std::lock_guard lock(trace.registryMutex);
        n = trace.registry->declareUnregisteredChannels();
    }
    if (n != 0)
        log::info("session '" + t.snapshot.name + "': " + std::to_string(n) + " channel(s) of " +
                  trace.dir +
                  " were never registered by an app (it left before); declared without "
                  "context, so the trace stays readable");
}

void UstTracer::closeInConsumer(Traced& t, Trace& trace, Done done) {
    // Final: no app registers a channel of this trace any more, and the
    // consumer writes each stream's last (maybe empty) packet now.
    declareUnregisteredChannels(t, trace);
    Join closed(std::move(done));
    pushMetadata(t, trace, closed.add());
    for (auto& ch : trace.channels) {
        const uint64_t key = ch.objects.key;
        ch.objects = ConsumerChannel{key, nullptr, {}};
        recordings_.channelClosed(t.snapshot.idHex, key);
        consumer(t).destroyChannel(key, closed.add());
    }
    trace.metadata.channel.reset();
    trace.metadata.streams.clear();
    recordings_.channelClosed(t.snapshot.idHex, trace.metadata.key);
    consumer(t).destroyChannel(trace.metadata.key, closed.add());
    closed.seal();
}

void UstTracer::abandonSetUp(Traced& t, const UstApp& app) {
    // A per-PID trace made for this app alone will never get its channels
    // registered: closed now, complete (its streams declared), rather than
    // left for Stop to flush into files no reader can decode.
    if (t.snapshot.perPid && t.apps.count(app.info.pid) == 0)
        retirePerPidTrace(t, {static_cast<uint32_t>(app.info.pid), app.info.bitness});
}

void UstTracer::retirePerPidTrace(Traced& t, TraceKey key) {
    const auto it = t.traces.find(key);
    if (it == t.traces.end())
        return;
    std::unique_ptr<Trace> trace = std::move(it->second);
    t.traces.erase(it);
    if (!t.snapshot.snapshotMode) // a flight recorder keeps its buffers (exited)
        reportSize(t);
    // The app is gone: it registers nothing more.
    declareUnregisteredChannels(t, *trace);
    if (t.snapshot.snapshotMode) {
        // A flight recorder keeps an exited app's last events: snapshots
        // taken after its exit (a crash, say) still hold them.
        pushMetadata(t, *trace);
        t.exited.push_back(std::move(trace));
        return;
    }
    // The app is gone, so nothing more is written into its buffers: the
    // consumer flushes each stream, reads it to the end and only then closes
    // it (DestroyChannel), so every event the app wrote is on disk. The
    // metadata goes last, complete.
    closeInConsumer(t, *trace, [name = t.snapshot.name, dir = trace->dir](std::optional<Error> e) {
        if (e)
            log::warning("session '" + name + "': closing the trace " + dir +
                         " of an exited app: " + e->what());
        else
            log::debug("session '" + name + "': trace " + dir + " complete");
    });
}

} // namespace tracectl
