// One session's recording (DESIGN.md, "Consumers"): what the session
// records into, above every domain, as lttng-sessiond's ltt_session holds
// the trace chunk above both of its domains. It owns:
// - the consumer unit and the connection to it, the relay session of a
//   network session, the clock offset of every trace of the session;
// - the trace chunks (index, folder, stamps), the rotation under way and
//   the rotation schedule; the snapshots' count;
// - the consumer channel keys of every domain, and the consumer's figures.
// recordings.hpp drives it; the domains only add channels to it.
//
// Threads: the main loop only.
#pragma once

#include "common/event_loop.hpp"
#include "common/lifetime.hpp"
#include "common/unique_fd.hpp"
#include "recording/consumer_connection.hpp"
#include "recording/consumer_launcher.hpp"
#include "relay/relay_session_opener.hpp"
#include "session/domain_backend.hpp"
#include "session/session_snapshot.hpp"

#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace tracectl {

/// What a domain says of a consumer channel it makes (Recordings::
/// newChannelKey()): whose it is, and its ring buffer's shape.
struct ChannelUse {
    std::string domain;       ///< "ust", "kernel"
    std::string channel;      ///< its channel's name; "" for a metadata channel
    uint64_t subbufSize = 0;  ///< bytes
    uint64_t subbufCount = 0; ///< sub-buffers per stream
    uint64_t streams = 0;     ///< data streams (one per CPU)
};

struct Recording {
    using PathDone = DomainBackend::PathDone;

    uint64_t serial = 0; ///< tells this recording from a later one of the same session
    SessionSnapshot snapshot;
    ConsumerSpec spec;
    /// Its unit was started (or tried): stop it, or ask how it ended.
    bool launched = false;
    std::unique_ptr<ConsumerConnection> consumer;
    bool greeted = false; ///< the consumer answered Hello (and took the relay's sockets)
    /// Being taken over (Recordings::resumeRecording()) until the previous
    /// daemon's chunk is archived: no domain makes channels meanwhile.
    bool adopting = false;
    /// A live session taken over: what its trace folders get after their
    /// name (restartSuffix()); "" otherwise.
    std::string traceDirSuffix;
    /// Its connection is in the fd store (forgotten when let go).
    bool storedFd = false;
    /// A network session's relay session, made before its consumer
    /// starts; its sockets go to the consumer with AttachRelayd.
    std::optional<OpenedRelaySession> relay;
    /// CLOCK_REALTIME - CLOCK_MONOTONIC (ns), measured once at the first
    /// start: the clock offset of every trace of the session.
    int64_t clockOffset = 0;
    /// The session records (SessionRecorder::setRecordingActive()).
    bool active = false;
    /// The current chunk was opened by a rotation or a clear while the
    /// session did not record, and it has not recorded since: the end
    /// deletes it (Shutdown.deleteChunk) rather than leave an empty trace.
    bool chunkOpenedStopped = false;
    bool failed = false;
    std::string failure; ///< why, once failed
    /// Told why once the recording fails (a domain's Start waiting for it).
    std::vector<std::function<void(const std::string&)>> whenFailed;
    /// recordingEnding(): the domains close their channels, then the end
    /// comes; a failure meanwhile is the end's to report.
    bool closing = false;
    bool ending = false; ///< endRecording() under way

    // Keys and figures.
    uint64_t nextKey = 1;
    struct Channel {
        ChannelUse use;
        bool closed = false; ///< DestroyChannel asked: its buffers are gone
    };
    /// Every consumer channel made, by key, kept once closed (its figures
    /// still count).
    std::map<uint64_t, Channel> channels;
    /// The consumer's last figures, per channel key.
    std::map<uint64_t, consumer_protocol::ChannelFigures> figures;
    uint64_t sampledAtUsec = 0; ///< of the consumer's last figures
    /// Apps refused because the consumer had no resources for their
    /// buffers (out of fds), per domain: Statistics "apps-refused".
    std::map<std::string, uint64_t> appsRefused;
    /// The WatchChunkSize bytes the consumer was given.
    uint64_t watchedBytes = 0;
    /// Keys of the channels closed since the last rotation: their chunk
    /// bytes were the old chunk's once it is archived.
    std::vector<uint64_t> closedKeys;

    /// (st_dev, st_ino) of the output folder when the consumer started.
    std::pair<dev_t, ino_t> outputFolder{};
    // Trace chunks: the current one's index, folder ("" = the output
    // folder) and start; the last stamp given (never goes back).
    uint64_t chunkIndex = 0;
    std::string chunkDir;
    std::time_t chunkBegin = 0;
    /// A network session: its folder on the relay, relative to the relay's
    /// output folder (CREATE_SESSION's reply:
    /// "<hostname>/<session>-<YYYYmmdd-HHMMSS>"); archives are named below
    /// it. Chunk `chunkIndex` is the relay's trace chunk of that id, made
    /// at `chunkBegin`, so that the relay's archive names are ours.
    std::string relayOutputPath;
    std::time_t lastStamp = 0;
    uint64_t nextRotationId = 1;
    struct Rotation {
        uint64_t id = 0;
        /// The archive folder: absolute, or for a network session relative
        /// to the relay's output folder (relayOutputPath/archives/...).
        std::string path;
        PathDone completed;
        /// `started` was told it began: only then is `completed` called.
        bool begun = false;
        bool discard = false; ///< Session.Clear: the closed chunk is deleted
    };
    std::optional<Rotation> rotating;
    /// A rotation or snapshot waits for the domains
    /// (RecordingDomain::beforeChunkCloses()): one at a time.
    bool closingChunk = false;
    uint64_t snapshotsTaken = 0; ///< RecordSnapshot: the next folder's <n>

    // The rotation schedule's ticks (timerfd), before its watch.
    UniqueFd scheduleTimer;
    EventSourcePtr scheduleWatch;
    std::chrono::steady_clock::time_point nextTimedRotation;
    bool rotationDue = false; ///< a scheduled rotation waits for the one under way

    /// Last (gone first): the continuations of this recording on the main
    /// loop (consumer replies and handlers, the launcher's answers, timers)
    /// are guarded with it and hold the Recording itself.
    Lifetime lifetime;
};

} // namespace tracectl
