// Recordings: a restarted daemon takes over the consumers a previous one
// left running (resumeRecording(); tracectld(8), RESTARTS).
#include "common/error.hpp"
#include "common/log.hpp"
#include "metadata/clock_source.hpp"
#include "recording/output_folder.hpp"
#include "recording/recordings.hpp"
#include "restart/consumer_fd_store.hpp"
#include "session/trace_paths.hpp"

#include <algorithm>

namespace tracectl {

void Recordings::resumeRecording(SessionSnapshot s, Done done) {
    done = posted(std::move(done));
    s.ownerGid = primaryGidOf(s.owner);
    UniqueFd connection = config_.fdStore != nullptr ? config_.fdStore->take(s.idHex) : UniqueFd{};
    if (!connection)
        return done(Error(ErrorCode::Failed, "no connection to its consumer was kept in "
                                             "systemd's fd store"));
    if (recordings_.count(s.idHex) != 0) {
        config_.fdStore->forget(s.idHex);
        return done(Error(ErrorCode::Failed, "the session is known already"));
    }
    auto made = std::make_unique<Recording>();
    made->serial = nextSerial_++;
    made->snapshot = s;
    made->clockOffset = metadata::measureClockOffset();
    describeConsumer(*made);
    made->launched = true; // its unit runs: stopped if the session fails or ends
    made->storedFd = true;
    made->adopting = true; // no domain makes channels until the old chunk is archived
    const RecordingRef ref = refOf(*made);
    recordings_[s.idHex] = std::move(made);
    const auto giveUp = [this, ref, done](const std::string& why) {
        Recording* live = find(ref);
        if (live == nullptr)
            return done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
        // The session learns why from `done` (its reason says that a
        // restart did this).
        failRecording(*live, why, false);
        done(Error(ErrorCode::Failed, why));
    };
    auto shared = std::make_shared<UniqueFd>(std::move(connection));
    auto takeOver = [this, ref, shared, done, giveUp](MadeFolder folder) {
        Recording* live = find(ref);
        if (live == nullptr)
            return done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
        if (folder.error)
            return giveUp(folder.error->what());
        Recording& taken = *live;
        taken.outputFolder = folder.id;
        makeConnection(taken, std::move(*shared));
        taken.consumer->adopt(
            config_.daemonVersion,
            taken.lifetime.guard(
                [this, &taken, done, giveUp](std::optional<Error> e,
                                             consumer_protocol::AdoptReply reply) {
                    if (e)
                        return giveUp("its consumer " + taken.spec.unitName +
                                      " could not be taken over: " + e->what());
                    adopted(taken, reply, done);
                },
                [done](std::optional<Error>, consumer_protocol::AdoptReply) {
                    done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
                }));
    };
    // A network session's consumer goes on streaming to its relay.
    if (s.relay)
        return takeOver(MadeFolder{});
    // The folder as the owner sees it, as at a first start: the consumer
    // goes on writing there.
    makeFolder(s.outputPath, s.owner, s.ownerGid, false, std::move(takeOver));
}

void Recordings::adopted(Recording& r, const consumer_protocol::AdoptReply& reply, Done done) {
    r.nextKey = std::max<uint64_t>(r.nextKey, reply.nextKey);
    r.chunkIndex = reply.chunkIndex;
    r.chunkDir = reply.chunk;
    r.chunkBegin = static_cast<std::time_t>(reply.chunkBegin);
    r.lastStamp = std::max(std::time(nullptr), r.chunkBegin);
    // A network session's archives go below its folder on the relay.
    r.relayOutputPath = reply.relayOutputPath;
    if (r.snapshot.relay && !r.snapshot.snapshotMode && r.relayOutputPath.empty()) {
        const std::string why =
            "its consumer " + r.spec.unitName + " does not say where the relay writes the session";
        failRecording(r, why, false);
        return done(Error(ErrorCode::Failed, why));
    }
    r.greeted = true;
    watchChunkSize(r);
    const auto resumed = [&r, done] {
        // The domains make their channels now, in the new chunk.
        r.adopting = false;
        done(std::nullopt);
    };
    if (r.snapshot.liveTimerUs != 0) {
        // A live session streams on into the same relay chunk: its viewers
        // would see a chunk switch as lost packets. The next daemon's traces
        // go beside the previous one's (restartSuffix()).
        r.traceDirSuffix = restartSuffix(std::time(nullptr));
        log::notice("session '" + r.snapshot.name + "': live consumer " + r.spec.unitName +
                    " (pid " + std::to_string(reply.pid) + ") taken over; its next traces go to " +
                    "folders ending in " + r.traceDirSuffix);
        return resumed();
    }
    if (r.snapshot.snapshotMode) {
        // No chunk: the buffers are the content. The consumer kept the
        // previous daemon's user-space ones (their trace in a folder of its
        // own in the next snapshots) and closed its kernel ones.
        log::notice("session '" + r.snapshot.name + "': snapshot consumer " + r.spec.unitName +
                    " (pid " + std::to_string(reply.pid) +
                    ") taken over with the previous daemon's buffers");
        return resumed();
    }
    log::notice("session '" + r.snapshot.name + "': consumer " + r.spec.unitName + " (pid " +
                std::to_string(reply.pid) + ") taken over; it drained and closed the " +
                std::to_string(reply.channelsClosed) + " channel(s) of the previous daemon");
    // What the previous daemon recorded is described by its metadata only:
    // its chunk is closed and archived before any new buffer is made, as a
    // rotation does, and the domains' next events go to a new chunk.
    auto fail = r.lifetime.guard([this, &r](const std::string& why) {
        if (!r.failed)
            failRecording(r, why, false);
    });
    beginRotation(
        r,
        [fail, done](std::optional<Error> e, const std::string&) {
            if (!e)
                return;
            const std::string why =
                std::string("archiving what the previous daemon recorded: ") + e->what();
            fail(why);
            done(Error(ErrorCode::Failed, why));
        },
        r.lifetime.guard(
            [&r, resumed, done](std::optional<Error> e, const std::string& path) {
                if (e)
                    log::warning("session '" + r.snapshot.name + "': " + e->what());
                else
                    log::notice("session '" + r.snapshot.name +
                                "': what it recorded before the restart is in " + path);
                if (r.failed)
                    return done(Error(ErrorCode::Failed, r.failure));
                resumed();
            },
            [done](std::optional<Error>, const std::string&) {
                done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
            }));
}

} // namespace tracectl
