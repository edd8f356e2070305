// UstTracer: a restarted daemon takes over the consumers a previous one
// left running (adopt()).
#include "common/log.hpp"
#include "metadata/clock_source.hpp"
#include "restart/consumer_fd_store.hpp"
#include "session/trace_paths.hpp"
#include "ust_tracer.hpp"

#include <algorithm>
#include <ctime>

namespace tracectl {

void UstTracer::adopt(const SessionSnapshot& s, bool active, Done done) {
    UniqueFd connection = config_.fdStore != nullptr ? config_.fdStore->take(s.idHex) : UniqueFd{};
    if (!connection)
        return done(Error(ErrorCode::Failed, "no connection to its consumer was kept in "
                                             "systemd's fd store"));
    if (sessions_.count(s.idHex) != 0) {
        config_.fdStore->forget(s.idHex);
        return done(Error(ErrorCode::Failed, "the session is known already"));
    }
    auto t = std::make_unique<Traced>();
    t->serial = nextSerial_++;
    t->snapshot = s;
    t->clockOffset = metadata::measureClockOffset();
    describeConsumer(*t);
    t->launched = true; // its unit runs: stopped if the session fails or ends
    t->storedFd = true;
    t->adopting = true; // other domains wait for the new chunk (whenConsumerReady())
    const SessionRef ref = refOf(*t);
    sessions_[s.idHex] = std::move(t);
    const auto giveUp = [this, ref, done](const std::string& why) {
        Traced* live = find(ref);
        if (live == nullptr)
            return done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
        // The session learns why from `done` (its reason says that a
        // restart did this).
        failSession(*live, why, false);
        done(Error(ErrorCode::Failed, why));
    };
    auto shared = std::make_shared<UniqueFd>(std::move(connection));
    auto takeOver = [this, ref, shared, active, done, giveUp](MadeFolder folder) {
        Traced* live = find(ref);
        if (live == nullptr)
            return done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
        if (folder.error)
            return giveUp(folder.error->what());
        Traced& taken = *live;
        taken.outputFolder = folder.id;
        makeConnection(taken, std::move(*shared));
        taken.consumer->adopt(
            config_.daemonVersion,
            taken.lifetime.guard(
                [this, &taken, active, done, giveUp](std::optional<Error> e,
                                                     consumer_protocol::AdoptReply reply) {
                    if (e)
                        return giveUp("its consumer " + taken.spec.unitName +
                                      " could not be taken over: " + e->what());
                    adopted(taken, reply, active, done);
                },
                [done] { done(Error(ErrorCode::Failed, "the session was destroyed meanwhile")); }));
    };
    // A network session's consumer goes on streaming to its relay.
    if (s.relay)
        return takeOver(MadeFolder{});
    // The folder as the owner sees it, as at a first start: the consumer
    // goes on writing there.
    makeFolder(s.outputPath, s.owner, s.ownerGid, false, std::move(takeOver));
}

void UstTracer::adopted(Traced& t, const consumer_protocol::AdoptReply& reply, bool active,
                        Done done) {
    t.nextKey = std::max<uint64_t>(t.nextKey, reply.nextKey);
    t.chunkIndex = reply.chunkIndex;
    t.chunkDir = reply.chunk;
    t.chunkBegin = static_cast<std::time_t>(reply.chunkBegin);
    t.lastStamp = std::max(std::time(nullptr), t.chunkBegin);
    // A network session's archives go below its folder on the relay.
    t.relayOutputPath = reply.relayOutputPath;
    if (t.snapshot.relay && !t.snapshot.snapshotMode && t.relayOutputPath.empty()) {
        const std::string why =
            "its consumer " + t.spec.unitName + " does not say where the relay writes the session";
        failSession(t, why, false);
        return done(Error(ErrorCode::Failed, why));
    }
    t.greeted = true;
    watchChunkSize(t);
    if (t.snapshot.liveTimerUs != 0) {
        // A live session streams on into the same relay chunk: its viewers
        // would see a chunk switch as lost packets. The next daemon's traces
        // go beside the previous one's (restartSuffix()).
        t.traceDirSuffix = restartSuffix(std::time(nullptr));
        log::notice("session '" + t.snapshot.name + "': live consumer " + t.spec.unitName +
                    " (pid " + std::to_string(reply.pid) + ") taken over; its next traces go to " +
                    "folders ending in " + t.traceDirSuffix);
        return resumeAfterTakeover(t, active, done);
    }
    if (t.snapshot.snapshotMode) {
        // No chunk: the buffers are the content. The consumer kept the
        // previous daemon's user-space ones (their trace in a folder of its
        // own in the next snapshots) and closed its kernel ones.
        log::notice("session '" + t.snapshot.name + "': snapshot consumer " + t.spec.unitName +
                    " (pid " + std::to_string(reply.pid) +
                    ") taken over with the previous daemon's buffers");
        return resumeAfterTakeover(t, active, done);
    }
    log::notice("session '" + t.snapshot.name + "': consumer " + t.spec.unitName + " (pid " +
                std::to_string(reply.pid) + ") taken over; it drained and closed the " +
                std::to_string(reply.channelsClosed) + " channel(s) of the previous daemon");
    // What the previous daemon recorded is described by its metadata only:
    // its chunk is closed and archived before any new buffer is made, as a
    // rotation does, and the apps' next events go to a new chunk.
    auto fail = t.lifetime.guard([this, &t](const std::string& why) {
        if (!t.failed)
            failSession(t, why, false);
    });
    beginRotation(
        t,
        [fail, done](std::optional<Error> e, const std::string&) {
            if (!e)
                return;
            const std::string why =
                std::string("archiving what the previous daemon recorded: ") + e->what();
            fail(why);
            done(Error(ErrorCode::Failed, why));
        },
        t.lifetime.guard(
            [this, &t, active, done](std::optional<Error> e, const std::string& path) {
                if (e)
                    log::warning("session '" + t.snapshot.name + "': " + e->what());
                else
                    log::notice("session '" + t.snapshot.name +
                                "': what it recorded before the restart is in " + path);
                resumeAfterTakeover(t, active, done);
            },
            [done] { done(Error(ErrorCode::Failed, "the session was destroyed meanwhile")); }));
}

void UstTracer::resumeAfterTakeover(Traced& t, bool active, Done done) {
    // The other domains (the kernel's) make their channels now, in the new
    // chunk, as the apps do.
    t.adopting = false;
    if (!t.failed)
        for (auto& w : std::exchange(t.whenGreeted, {}))
            w(std::nullopt);
    if (!active || t.failed)
        return done(t.failed ? std::optional<Error>(Error(ErrorCode::Failed, t.failure))
                             : std::nullopt);
    startApps(t, done);
}

} // namespace tracectl
