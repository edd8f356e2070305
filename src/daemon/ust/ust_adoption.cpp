// UstTracer: what the session's recording asks of the tracer before and
// after a chunk closes (RecordingDomain), and the end of what was being
// made that such a question waits for.
#include "common/error.hpp"
#include "ust_tracer.hpp"

namespace tracectl {

void UstTracer::beforeChunkCloses(const std::string& idHex, Ready ready) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return ready(std::nullopt); // nothing of it here (not started, or taken over)
    Traced& t = *it->second;
    if (making(t)) {
        // Closed now, a trace being made would have packets of a stream
        // class the chunk's metadata lacks: asked again once it exists.
        t.chunkWaiters.push_back(std::move(ready));
        return;
    }
    declareOrphanChannels(t);
    for (auto& [key, trace] : t.traces)
        pushMetadata(t, *trace); // the old chunk's metadata is whole
    for (auto& trace : t.exited)
        pushMetadata(t, *trace);
    ready(std::nullopt);
}

void UstTracer::afterChunkBoundary(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return;
    Traced& t = *it->second;
    // What apps registered until now (queued already, or pushed here) goes
    // behind the boundary.
    for (auto& [key, trace] : t.traces)
        pushMetadata(t, *trace);
    for (auto& trace : t.exited)
        pushMetadata(t, *trace);
}

void UstTracer::appJobAnswered(const SessionRef& ref) {
    Traced* live = find(ref);
    if (live == nullptr || live->appJobsMaking == 0)
        return;
    if (--live->appJobsMaking == 0 && !making(*live))
        creationsOver(*live);
}

void UstTracer::creationsOver(Traced& t) {
    // What waited may free `t` (a Stop's flush that fails the session):
    // the chunk's waiters are asked again only while it lives.
    auto waiters = t.lifetime.guard([this, &t] {
        for (auto& w : std::exchange(t.chunkWaiters, {}))
            beforeChunkCloses(t.snapshot.idHex, std::move(w));
    });
    for (auto& f : std::exchange(t.afterCreations, {}))
        f();
    waiters();
}

} // namespace tracectl
