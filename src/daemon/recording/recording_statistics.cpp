// Recordings: the consumer's figures, per domain, and the chunk's size for
// size-scheduled rotations.
#include "recording/recordings.hpp"

#include <map>

namespace tracectl {

namespace cp = consumer_protocol;

uint64_t Recordings::chunkSize(const Recording& r) {
    uint64_t total = 0;
    for (const auto& [key, f] : r.figures)
        total += f.chunkBytes;
    return total;
}

void Recordings::checkChunkSize(Recording& r) {
    const auto sched = schedules_.find(r.snapshot.idHex);
    if (sched == schedules_.end() || sched->second.schedule.sizeBytes == 0)
        return;
    // Only an active session rotates on its own. While a rotation is under
    // way the figures mix two chunks: the consumer sends the next chunk's
    // at once once it is done, if that chunk holds enough already.
    if (!r.active || r.failed || r.ending || r.rotating || r.closingChunk ||
        chunkSize(r) < sched->second.schedule.sizeBytes)
        return;
    rotateOnSchedule(r);
}

void Recordings::watchChunkSize(Recording& r) {
    const auto sched = schedules_.find(r.snapshot.idHex);
    const uint64_t bytes = sched == schedules_.end() ? 0 : sched->second.schedule.sizeBytes;
    if (!r.greeted || !r.consumer || !r.consumer->usable() || r.failed || bytes == r.watchedBytes)
        return;
    r.watchedBytes = bytes;
    r.consumer->watchChunkSize(bytes,
                               failOnError(r.snapshot.idHex, "to watch the trace chunk's size"));
}

void Recordings::onConsumerStatistics(Recording& r, cp::Statistics s) {
    for (const cp::ChannelFigures& f : s.channels)
        if (r.channels.count(f.key) != 0)
            r.figures[f.key] = f;
    r.sampledAtUsec = s.sampledAtUsec;
    // The handler told below may end the session: checked only while it lives.
    auto checkSize = r.lifetime.guard([this, &r] { checkChunkSize(r); });
    publishStatistics(r);
    checkSize();
}

void Recordings::noteAppRefused(const std::string& idHex, const std::string& domain) {
    Recording* r = find(idHex);
    if (r == nullptr)
        return;
    ++r->appsRefused[domain];
    publishStatistics(*r);
}

void Recordings::publishStatistics(Recording& r) {
    if (!onStatistics_)
        return;
    // One report per domain that has channels here, each channel of the
    // session's configuration listed (zeroes for one without figures yet).
    std::map<std::string, DomainStatistics> byDomain;
    std::map<std::string, std::map<std::string, TraceFigures>> byChannel;
    for (const auto& [key, c] : r.channels) {
        DomainStatistics& out = byDomain[c.use.domain];
        const auto f = r.figures.find(key);
        if (f == r.figures.end())
            continue;
        const TraceFigures figures{f->second.eventsRecorded, f->second.eventsDiscarded,
                                   f->second.packetsLost, f->second.bytesWritten,
                                   f->second.chunkBytes, f->second.bytesProduced};
        out.total += figures;
        if (!c.use.channel.empty())
            byChannel[c.use.domain][c.use.channel] += figures;
    }
    // A domain whose every app was refused has no channel, but its count.
    for (const auto& [domain, refused] : r.appsRefused)
        byDomain[domain].appsRefused = refused;
    for (auto& [domain, out] : byDomain) {
        out.sampledAtUsec = r.sampledAtUsec;
        // Kernel records are each converted, hence counted; UST ones with
        // count-events.
        const bool kernel = domain == "kernel";
        out.eventsCounted = kernel || r.snapshot.countEvents;
        for (const ChannelConfig& c : kernel ? r.snapshot.kernelChannels : r.snapshot.channels)
            out.channels.push_back(
                ChannelStatistics{domain, c.name, byChannel[domain][c.name], out.eventsCounted});
        onStatistics_(r.snapshot.idHex, domain, out);
    }
}

} // namespace tracectl
