// Recordings::recordSnapshot: Session.RecordSnapshot on the main loop.
// The consumer writes it; the main loop goes on meanwhile (the reply comes
// back as a callback). A local snapshot goes into a folder the daemon makes
// as the owner; a network snapshot session's goes to its relay, through a
// relay session opened on an executor for that snapshot alone.
//
// Which process copies the buffers: the session's own consumer, not a
// short-lived transient unit per snapshot. The buffers are ring buffers the
// session's consumer created (lttng_ust_ctl_create_channel over its own
// shm); liblttng-ust-ctl has no public call that lets a second process attach
// to an existing channel (create_channel initializes the shm it is given,
// which would wipe the very content to copy), so a snapshot unit could only
// ask the session's consumer for the data anyway. And it would cost more
// than the work: measured on the 2-core test machine
// (snapshot_test.cpp, CostOfASnapshotAgainstStartingAConsumerUnit), a Start
// without apps, which is mostly starting the consumer unit and its Hello,
// took 33-80 ms, while a whole RecordSnapshot of 1.8 MB of events (metadata
// included, folder made as the owner) took 11-28 ms on the running consumer.
#include "common/error.hpp"
#include "common/log.hpp"
#include "recording/output_folder.hpp"
#include "recording/recordings.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <unistd.h>

namespace tracectl {

namespace cp = consumer_protocol;

namespace {

/// LTTng's default snapshot output name, the date and the snapshot's number.
std::string snapshotFolderName(std::time_t when, uint64_t n) {
    std::tm tm{};
    localtime_r(&when, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    return "snapshot-1-" + std::string(stamp) + "-" + std::to_string(n);
}

} // namespace

void Recordings::recordSnapshot(std::string idHex, uint64_t maxSize, PathDone done) {
    done = posted(std::move(done));
    Recording* found = find(idHex);
    if (found == nullptr)
        return done(Error(ErrorCode::WrongState,
                          "the session was never started: its buffers do not exist yet"),
                    "");
    Recording& t = *found;
    if (!t.snapshot.snapshotMode)
        return done(
            Error(ErrorCode::WrongState,
                  "session '" + t.snapshot.name + "' is not a snapshot session (mode 'snapshot')"),
            "");
    if (t.failed || !t.consumer)
        return done(
            Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session"),
            "");

    // Sub-buffers per stream within maxSize: the largest n such that n
    // sub-buffers of every data stream of every domain (not more than a
    // stream has) fit.
    uint64_t packetsPerStream = 0;
    if (maxSize != 0) {
        std::vector<const ChannelUse*> all;
        for (const auto& [key, c] : t.channels)
            if (!c.closed && !c.use.channel.empty())
                all.push_back(&c.use);
        uint64_t used = 0;
        for (;;) {
            uint64_t more = 0;
            for (const ChannelUse* s : all)
                if (packetsPerStream < s->subbufCount)
                    more += s->subbufSize * s->streams;
            if (more == 0 || used + more > maxSize)
                break;
            used += more;
            ++packetsPerStream;
        }
        if (packetsPerStream == 0 && !all.empty()) {
            uint64_t one = 0;
            for (const ChannelUse* s : all)
                one += s->subbufSize * s->streams;
            return done(Error(ErrorCode::InvalidArgument,
                              "max-size " + std::to_string(maxSize) +
                                  " bytes cannot hold one sub-buffer of every stream (" +
                                  std::to_string(one) + " bytes)"),
                        "");
        }
    }

    const std::string name = snapshotFolderName(std::time(nullptr), t.snapshotsTaken);
    if (t.snapshot.relay)
        return snapshotToRelay(t, name, packetsPerStream, std::move(done));
    const std::string path = t.snapshot.outputPath + "/" + name;
    // As the owner, like the output folder at start (which is made again if
    // it was deleted meanwhile), off the loop; the consumer writes through
    // our fd, so it reaches the folder even when its own view
    // (ReadWritePaths=) still holds a deleted one.
    makeFolder(path, t.snapshot.owner, t.snapshot.ownerGid, true,
               [this, ref = refOf(t), path, packetsPerStream,
                done = std::move(done)](MadeFolder folder) mutable {
                   Recording* live = find(ref);
                   if (live == nullptr)
                       return done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"),
                                   "");
                   if (folder.error)
                       return done(folder.error, "");
                   if (live->failed || !live->consumer)
                       return done(Error(ErrorCode::WrongState,
                                         "the session's consumer is gone; destroy the session"),
                                   "");
                   sendSnapshot(*live, path, packetsPerStream,
                                SnapshotTarget{std::move(folder.fd), {}, {}}, std::move(done));
               });
}

void Recordings::snapshotToRelay(Recording& t, const std::string& name, uint64_t packetsPerStream,
                                 PathDone done) {
    // As lttng-sessiond's snapshot_record (lttng-tools 2.13 cmd.c,
    // set_relayd_for_snapshot): a relay session of its own for each
    // snapshot (the same name, host and creation time, so the same folder
    // on the relay), its connections made off the loop, as openRelay().
    RelaySessionParams params = relayParams(t);
    params.snapshot = true;
    openRelayOffLoop(params, [this, ref = refOf(t), name, packetsPerStream,
                              done = std::move(done)](RelayOutcome outcome) mutable {
        Recording* live = find(ref);
        if (live == nullptr)
            return done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"), "");
        if (outcome.error)
            return done(*outcome.error, ""); // it names the relay; the session is as it was
        if (live->failed || !live->consumer)
            return done(
                Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session"),
                "");
        // Where the relay writes it, relative to its output folder: the
        // chunk's path is its name, below the session's folder
        // (lttng-relayd 2.13 main.c relay_close_trace_chunk gives a
        // snapshot session's closed chunk as <output_path>/<chunk name>).
        const std::string path = outcome.opened->outputPath + "/" + name;
        sendSnapshot(*live, path, packetsPerStream,
                     SnapshotTarget{UniqueFd{}, std::move(*outcome.opened), name}, std::move(done));
    });
}

namespace {

/// The packets-lost figures of every channel of `r`: in a snapshot session,
/// the sub-buffers its snapshots could not copy (the consumer sends them
/// before it answers RecordSnapshot).
uint64_t packetsLost(const Recording& r) {
    uint64_t total = 0;
    for (const auto& [key, f] : r.figures)
        total += f.packetsLost;
    return total;
}

} // namespace

void Recordings::sendSnapshot(Recording& t, const std::string& path, uint64_t packetsPerStream,
                              SnapshotTarget target, PathDone done) {
    const uint64_t id = ++t.snapshotsTaken;
    const uint64_t lostBefore = packetsLost(t);
    const std::string where =
        t.snapshot.relay ? path + " on the relay at " + t.snapshot.relay->url() : path;
    // A local snapshot that wrote nothing leaves no folder behind (a
    // refusal comes before the consumer writes a file: out of fds, ...).
    const auto incomplete = [this, path = where, returned = path, local = !t.snapshot.relay,
                             uid = t.snapshot.owner, gid = t.snapshot.ownerGid,
                             done](const Error& e) {
        if (!local)
            return done(
                Error(ErrorCode::Failed, "the snapshot in " + path + " is incomplete: " + e.what()),
                returned);
        folderMakers_.submit([poster = poster_, path, uid, gid, e, done] {
            const bool removed = removeEmptyFolder(path, uid, gid);
            poster->post([removed, path, e, done] {
                if (removed)
                    done(Error(ErrorCode::Failed, std::string("the snapshot failed: ") + e.what() +
                                                      " (nothing was written; " + path +
                                                      " is removed)"),
                         "");
                else
                    done(Error(ErrorCode::Failed,
                               "the snapshot in " + path + " is incomplete: " + e.what()),
                         path);
            });
        });
    };
    auto written = t.lifetime.guard(
        [this, &t, id, name = t.snapshot.name, path = where, returned = path, done, incomplete,
         lostBefore](std::optional<Error> e) {
            if (e && !t.failed && !t.ending && !ConsumerConnection::isRefusal(*e)) {
                // Not answered in time, or the connection broke: as for a
                // rotation, the consumer's state is unknown (it may still be
                // writing): the session fails, saying why, rather than make
                // every later call wait as long.
                failRecording(t, "the consumer " + t.spec.unitName + " failed a snapshot (" +
                                     e->what() + "); it was stopped");
                return done(Error(ErrorCode::Failed, "the snapshot in " + path +
                                                         " is incomplete: " + e->what() +
                                                         "; the session is now in state error"),
                            returned);
            }
            if (e)
                return incomplete(*e);
            // Destroyed meanwhile: the domains closed their channels, the
            // metadata ones too; what was copied cannot be read.
            if (t.closing)
                return incomplete(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
            // The data is copied: the metadata of every class registered
            // until now goes behind it (SnapshotMetadata), then into the folder.
            afterBoundary(t);
            const uint64_t lostNow = packetsLost(t);
            const uint64_t lost = lostNow > lostBefore ? lostNow - lostBefore : 0;
            t.consumer->snapshotMetadata(
                id, [name, path, returned, done, incomplete, lost](std::optional<Error> m) {
                    if (m)
                        return incomplete(*m);
                    if (lost != 0)
                        log::warning("session '" + name + "': snapshot recorded in " + path +
                                     " lacks " + std::to_string(lost) +
                                     " sub-buffer(s) the tracer overwrote before they could be "
                                     "copied (counted in packets-lost)");
                    else
                        log::info("session '" + name + "': snapshot recorded in " + path);
                    done(std::nullopt, returned);
                });
        },
        [incomplete](std::optional<Error> e) {
            incomplete(e.value_or(Error(ErrorCode::Failed, "the session was destroyed meanwhile")));
        });
    // Every domain describes what its buffers hold first (an app being set
    // up may not have registered its channels yet), then the consumer copies.
    auto held = std::make_shared<SnapshotTarget>(std::move(target));
    auto send = [&t, id, packetsPerStream, held, written, incomplete](std::optional<Error> e) {
        if (!e && (t.failed || t.ending))
            e = Error(ErrorCode::WrongState, "the session's consumer is gone");
        if (e)
            return incomplete(*e);
        if (!held->relay) {
            cp::RecordSnapshot request;
            request.id = id;
            request.packetsPerStream = packetsPerStream;
            t.consumer->recordSnapshot(request, std::move(held->dir), written);
            return;
        }
        OpenedRelaySession& relay = *held->relay;
        cp::RecordSnapshotToRelay request;
        request.id = id;
        request.packetsPerStream = packetsPerStream;
        request.relaySessionId = relay.relaySessionId;
        request.relayMinor = relay.minor;
        request.chunkId = id - 1; // a fresh relay session: any id; LTTng counts them up too
        request.chunkCreationTime = static_cast<uint64_t>(std::time(nullptr));
        request.chunkName = held->chunkName;
        t.consumer->recordSnapshotToRelay(request, std::move(relay.control), std::move(relay.data),
                                          written);
    };
    askDomains(t, 0, true, t.lifetime.guard(std::move(send), [incomplete](std::optional<Error>) {
        incomplete(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
    }));
}

} // namespace tracectl
