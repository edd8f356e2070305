// The daemon's side of the daemon<->consumer protocol
// (common/consumer_protocol.hpp), asynchronous: requests are queued and
// written without blocking, several may be in flight at once (pipelined),
// and each reply is matched to its request by id and handed to that
// request's callback on the owning loop. Each request has its own deadline:
// past it, its callback gets an error, and a reply that comes later is
// recognised by its id and dropped. Nothing here ever waits for the
// consumer, so a stopped or slow consumer holds up its own session only.
//
// CreateChannel's ring-buffer objects come on a socketpair of their own
// (the protocol's objects socket), read by liblttng-ust-ctl's blocking
// calls on an Executor job that owns nothing but that socket, once the
// reply says they are all there.
//
// Threads: every method but enqueueMetadata(), and every callback, runs on
// the thread of `loop` (its owner's). Not copyable or movable (its event
// sources point at it).
#pragma once

#include "apps/ust_object.hpp"
#include "common/consumer_protocol.hpp"
#include "common/error.hpp"
#include "common/event_loop.hpp"
#include "common/executor.hpp"
#include "common/unique_fd.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <sys/types.h>
#include <vector>

namespace tracectl {

/// A data or metadata channel as the consumer created it: the objects an
/// app accepts (after lttng_ust_ctl_duplicate_ust_object_data).
struct ConsumerChannel {
    uint64_t key = 0;
    UstObject channel;
    std::vector<UstObject> streams;
};

/// How long the consumer may take to answer one request, by default.
/// Requests that drain buffers, wait for a relay or write a snapshot
/// (FlushChannel, DestroyChannel, Shutdown, RecordSnapshot) get
/// kLongRequestFactor times as long.
inline constexpr std::chrono::milliseconds kConsumerReplyTimeout{10'000};
/// (20 s: below D-Bus's default method call timeout of 25 s, so a client
/// gets the daemon's answer, not its own timeout.)
inline constexpr int kLongRequestFactor = 2;
/// How many more deadlines a request gets while the consumer is busy
/// answering the requests ahead of it (ConsumerConnection::expire): with
/// the default timeout, a request fails after 60 s of waiting behind
/// others, after 10 s of a consumer that answers nothing.
inline constexpr int kMaxDeadlineExtensions = 5;

class ConsumerConnection {
public:
    /// Outcome of a request: nullopt, or why it failed (Error(Failed): the
    /// consumer refused, did not answer in time, or is gone).
    using Done = std::function<void(std::optional<Error>)>;
    using ChannelDone = std::function<void(std::optional<Error>, ConsumerChannel)>;
    struct Handlers {
        /// RotationCompleted, sent by the consumer on its own.
        std::function<void(consumer_protocol::RotationCompleted)> rotationCompleted;
        /// Statistics, sent by the consumer on its own.
        std::function<void(consumer_protocol::Statistics)> statistics;
        /// Once: the connection is unusable (EOF, hang-up, a socket error, a
        /// frame that breaks the protocol), with why. Every request still in
        /// flight has failed just before, and later ones fail at once.
        std::function<void(const std::string& why)> lost;
        /// A request made with enqueueMetadata() failed (refused, or no
        /// answer in time), with why.
        std::function<void(const Error& why)> metadataFailed;
        /// OutputFailed, sent by the consumer on its own, at most once: the
        /// session's output (a network session's relay) failed for good,
        /// with why.
        std::function<void(const std::string& why)> outputFailed;
    };

    /// Takes the daemon's end of the consumer's socket (made non-blocking)
    /// and watches it on `loop`. `executor` reads CreateChannel's objects.
    /// `replyTimeout` is the default deadline of a request. Throws
    /// std::system_error.
    ConsumerConnection(EventLoop& loop, Executor& executor, UniqueFd socket, Handlers handlers,
                       std::chrono::milliseconds replyTimeout = kConsumerReplyTimeout);
    /// Drops every request in flight without calling its callback.
    ~ConsumerConnection();
    ConsumerConnection(const ConsumerConnection&) = delete;
    ConsumerConnection& operator=(const ConsumerConnection&) = delete;

    /// Hello; fails on a protocol version mismatch.
    void hello(const std::string& daemonVersion, Done done);
    /// Adopt, instead of hello(), on a connection a restarted daemon took
    /// from systemd's fd store: `done` gets the AdoptReply (every channel
    /// the previous daemon made is drained and closed), or why not. Until
    /// it comes, what the consumer still had to say to the previous daemon
    /// (replies to its requests, Statistics, RotationCompleted) is dropped:
    /// this connection's request ids start at a random value, so that no
    /// such reply is taken for one of its own.
    using AdoptDone = std::function<void(std::optional<Error>, consumer_protocol::AdoptReply)>;
    void adopt(const std::string& daemonVersion, AdoptDone done);
    /// CreateChannel; `done` gets the channel's objects.
    void createChannel(const consumer_protocol::CreateChannel& request, ChannelDone done);
    /// PushMetadata of `bytes` at `offset`, split into frames of at most
    /// kMaxMetadataChunk bytes; `done` once every frame was answered, with
    /// the first failure (if any).
    void pushMetadata(uint64_t key, uint64_t offset, const std::string& bytes, Done done);
    /// PushMetadata from any thread (the notify thread's registrations):
    /// queued at once, and written before any request made after this
    /// returns, on any thread, so the consumer sees it ahead of a later
    /// Rotate, FlushChannel or RecordSnapshot. A failure goes to
    /// Handlers::metadataFailed. Thread-safe; the mutex it takes is held
    /// for the queue operation only.
    void enqueueMetadata(uint64_t key, uint64_t offset, std::string bytes);
    /// DeclareLayouts (main loop). `done` gets the outcome.
    void declareLayouts(const consumer_protocol::DeclareLayouts& request, Done done);
    /// CreateKernelChannel, with the data channel's per-CPU fds (`fds`, in
    /// request.cpus order; none for a metadata channel); `done` after Ok.
    void createKernelChannel(const consumer_protocol::CreateKernelChannel& request,
                             std::vector<UniqueFd> fds, Done done);
    /// DeclareKernelEvents; `done` after Ok.
    void declareKernelEvents(const consumer_protocol::DeclareKernelEvents& request, Done done);
    /// AttachIpProbes with its two fds (`ring`, `counters`: the ip
    /// provider's maps); `done` after Ok.
    void attachIpProbes(const consumer_protocol::AttachIpProbes& request, UniqueFd ring,
                        UniqueFd counters, Done done);
    /// AttachSyscallStrings with its two fds (`ring`, `counters`: the
    /// system-call string program's maps); `done` after Ok.
    void attachSyscallStrings(const consumer_protocol::AttachSyscallStrings& request, UniqueFd ring,
                              UniqueFd counters, Done done);
    /// AttachRelayd with the relay's two connected sockets (`control`,
    /// `data`), before any channel; `done` after Ok (the consumer created
    /// the first trace chunk on the relay then).
    void attachRelayd(const consumer_protocol::AttachRelayd& request, UniqueFd control,
                      UniqueFd data, Done done);
    /// DeclareLayouts from any thread, queued and ordered like
    /// enqueueMetadata() (a failure goes to Handlers::metadataFailed).
    /// Thread-safe.
    void enqueueLayouts(consumer_protocol::DeclareLayouts request);
    void flushChannel(uint64_t key, Done done);
    /// ProducerGone{key, pid}: an app that wrote into channel `key` (per-UID
    /// buffers) exited; `done` after Ok.
    void producerGone(uint64_t key, uint32_t pid, Done done);
    /// WatchChunkSize{bytes} (a size-based rotation schedule; 0: none);
    /// `done` after Ok.
    void watchChunkSize(uint64_t bytes, Done done);
    void destroyChannel(uint64_t key, Done done);
    /// Shutdown{deleteChunk}; `done` after Ok.
    void shutdown(bool deleteChunk, Done done);
    /// Rotate; done(nullopt) means under way: RotationCompleted follows.
    void rotate(const consumer_protocol::Rotate& request, Done done);
    /// ClearBuffers (snapshot consumers); `done` after Ok.
    void clearBuffers(Done done);
    /// RotateMetadata, after Rotate{id}'s Ok (consumer_protocol.hpp).
    void rotateMetadata(uint64_t id, Done done);
    /// SnapshotMetadata, after RecordSnapshot{id}'s Ok.
    void snapshotMetadata(uint64_t id, Done done);
    /// RecordSnapshot with `dirFd` (the snapshot folder) passed after the
    /// frame; done once the consumer has written its data streams.
    void recordSnapshot(const consumer_protocol::RecordSnapshot& request, UniqueFd dirFd,
                        Done done);
    /// RecordSnapshotToRelay with the relay's two connected sockets
    /// (`control`, `data`) passed after the frame; done once the consumer
    /// has sent its data streams there.
    void recordSnapshotToRelay(const consumer_protocol::RecordSnapshotToRelay& request,
                               UniqueFd control, UniqueFd data, Done done);

    /// True when `e` (from one of this class's callbacks) says the consumer
    /// answered with a refusal (an Error reply): the request had no effect.
    /// False for no answer in time, or a broken connection: the consumer
    /// may have carried the request out.
    static bool isRefusal(const Error& e) noexcept;
    /// Closes the connection as if it were lost (`why`): every request in
    /// flight fails now, with that reason, and `lost` is told. For an owner
    /// about to free this connection whose callbacks must still be answered.
    void abandon(const std::string& why) { lose(why); }
    /// Sends, without waiting, every metadata push queued or held (before
    /// the consumer is stopped: it writes what reached its socket first).
    void sendQueuedMetadata();
    /// True until the connection is lost.
    bool usable() const noexcept { return !lostWhy_; }
    /// Requests sent or queued whose reply has not come (nor their deadline).
    std::size_t inFlight() const noexcept { return pending_.size(); }
    /// Reads what the consumer has sent and not been read yet (its
    /// callbacks run now): for an owner whose thread was busy meanwhile,
    /// before it judges silentFor().
    void readNow();
    /// How long the consumer has gone without answering anything while a
    /// request was waiting (0 if none waits): a busy consumer answers
    /// something every little while, a stopped one nothing.
    std::chrono::steady_clock::duration silentFor() const noexcept;
    /// Whether the consumer's process (the pid its HelloReply gave) is
    /// stopped now: by a signal (SIGSTOP, SIGTSTP) or a debugger
    /// (/proc/PID/stat state T or t). False if that is not known (no
    /// HelloReply or AdoptReply yet, /proc unreadable).
    bool peerStopped() const noexcept;
    /// Replies that came after their request's deadline, and were dropped.
    uint64_t lateReplies() const noexcept { return lateReplies_; }

private:
    using Reply = std::function<void(std::optional<Error>, consumer_protocol::Message)>;
    struct Pending;
    struct Outgoing {
        std::vector<std::byte> bytes;
        std::size_t sent = 0;
        std::vector<UniqueFd> fds; ///< passed with the first byte (then closed here)
    };

    /// Queues `request` (and `passFd` on one byte after it); `reply` is
    /// called with the reply, or with the error.
    uint32_t send(const consumer_protocol::Message& request, Reply reply, UniqueFd passFd = {},
                  int timeoutFactor = 1);
    /// send() with `passFds` after the frame, on one byte per group of at
    /// most kMaxPassedFds.
    uint32_t sendPassing(const consumer_protocol::Message& request, Reply reply,
                         std::vector<UniqueFd> passFds, int timeoutFactor);
    static Reply expectOk(Done done);
    void flushOutgoing();
    void readIncoming();
    void deliver(consumer_protocol::Frame frame);
    void expire(uint32_t id);
    void lose(const std::string& why);
    void updateIoEvents();
    /// Sends what enqueueMetadata() queued, in order (loop thread).
    void drainInbox();
    /// Metadata bytes of one channel held while a push of it is in flight,
    /// and the replies owed for them.
    struct HeldMetadata {
        uint64_t offset = 0;
        std::string bytes;
        std::vector<Reply> replies;
    };
    /// Sends `push`, or holds it while a push of its channel is in flight:
    /// the bytes held meanwhile go as one push (frames of at most
    /// kMaxMetadataChunk) when it is answered, or before any other request
    /// (DeclareLayouts aside). So a registration burst (thousands of event
    /// classes per app, one push each) costs the consumer a few requests
    /// per channel, and a request queued behind it (another app's
    /// CreateChannel) waits for those only.
    void queuePush(consumer_protocol::PushMetadata push, Reply reply);
    void sendPushes(uint64_t key, HeldMetadata h);
    void sendHeld(std::map<uint64_t, HeldMetadata>::iterator it);
    /// Sends every channel's held metadata (before a request that must
    /// find it in the consumer).
    void sendHeldMetadata();
    void completeChannel(uint32_t id);
    /// CreateChannel `p` was answered: an executor job reads its objects.
    void readObjects(Pending& p);
    static int onIo(sd_event_source* s, int fd, uint32_t revents, void* userdata);

    EventLoop& loop_;
    Executor& executor_;
    UniqueFd socket_;
    Handlers handlers_;
    std::chrono::milliseconds replyTimeout_;
    EventSourcePtr io_;
    consumer_protocol::MessageReader reader_;
    std::deque<Outgoing> outgoing_;
    std::map<uint32_t, std::unique_ptr<Pending>> pending_;
    std::set<uint32_t> expired_; ///< ids past their deadline (the newest kMaxExpired)
    std::deque<uint32_t> expiredOrder_;
    uint32_t nextId_ = 1;
    uint64_t lateReplies_ = 0;
    /// adopt() waits for its reply: frames meant for the previous daemon
    /// are dropped.
    bool adopting_ = false;
    /// When the consumer last sent a frame (or the connection was made).
    std::chrono::steady_clock::time_point lastHeard_ = std::chrono::steady_clock::now();
    pid_t peerPid_ = 0; ///< from HelloReply; 0: not known
    std::optional<std::string> lostWhy_;
    // enqueueMetadata()'s queue (any thread), and the eventfd that wakes
    // the loop for it.
    std::mutex inboxMutex_;
    /// PushMetadata and DeclareLayouts; guarded by inboxMutex_.
    std::vector<consumer_protocol::Message> inbox_;
    UniqueFd inboxWake_;
    EventSourcePtr inboxSource_;
    bool draining_ = false;
    std::map<uint64_t, HeldMetadata> held_;          ///< by metadata channel key
    std::map<uint64_t, std::size_t> pushesInFlight_; ///< by metadata channel key
    /// Executor jobs check it before posting back: gone with the connection.
    std::shared_ptr<ConsumerConnection*> self_;
};

} // namespace tracectl
