#include "consumer_connection.hpp"

#include "apps/ust_error.hpp"
#include "common/fd_passing.hpp"
#include "common/join.hpp"
#include "common/log.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <lttng/ust-error.h>
#include <random>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>

namespace tracectl {

namespace cp = consumer_protocol;

namespace {

/// How every refusal's message begins (isRefusal()).
constexpr std::string_view kRefused = "the consumer refused ";

/// Expired request ids remembered, to tell a late reply from a bogus one.
constexpr std::size_t kMaxExpired = 4096;
/// Bound on reading objects already queued (each receive, SO_RCVTIMEO).
constexpr std::chrono::milliseconds kObjectsTimeout{2000};

std::string seconds(std::chrono::milliseconds d) {
    const auto ms = d.count();
    if (ms % 1000 == 0)
        return std::to_string(ms / 1000) + " s";
    return std::to_string(ms) + " ms";
}

/// What an Executor job read from an objects socket.
struct ChannelObjects {
    ConsumerChannel channel;
    std::string error; ///< empty: complete
};

/// Blocking, on an executor: the channel object, then streams until the
/// terminating NULL stream (-LTTNG_UST_ERR_NOENT). `fd` times out receives
/// after `timeout` (SO_RCVTIMEO).
ChannelObjects receiveObjects(int fd, std::chrono::milliseconds timeout) {
    ChannelObjects out;
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    lttng_ust_abi_object_data* obj = nullptr;
    int r = lttng_ust_ctl_recv_channel_from_consumer(fd, &obj);
    if (r < 0) {
        out.error = "receiving the channel from the consumer: " + ustErrorString(r);
        return out;
    }
    out.channel.channel.reset(obj);
    for (;;) {
        obj = nullptr;
        r = lttng_ust_ctl_recv_stream_from_consumer(fd, &obj);
        if (r == -LTTNG_UST_ERR_NOENT)
            return out;
        if (r < 0) {
            out.error = "receiving a stream from the consumer: " + ustErrorString(r);
            return out;
        }
        out.channel.streams.emplace_back(obj);
    }
}

} // namespace

struct ConsumerConnection::Pending {
    ConsumerConnection* owner = nullptr;
    uint32_t id = 0;
    std::chrono::steady_clock::time_point sent;
    cp::MessageType type{};
    int timeoutFactor = 1; ///< its deadline: replyTimeout_ times this
    int extensions = 0;    ///< deadlines moved on while the consumer was busy
    Reply reply;
    EventSourcePtr timer;
    // CreateChannel only: its reply and its objects, in either order.
    ChannelDone channelDone;
    uint64_t key = 0;
    std::shared_ptr<UniqueFd> objectsSocket;
    std::optional<cp::Message> replied;
    bool reading = false; ///< an executor job reads the objects
    std::optional<ChannelObjects> objects;
};

ConsumerConnection::ConsumerConnection(EventLoop& loop, Executor& executor, UniqueFd socket,
                                       Handlers handlers, std::chrono::milliseconds replyTimeout)
    : loop_(loop), executor_(executor), socket_(std::move(socket)), handlers_(std::move(handlers)),
      replyTimeout_(replyTimeout), self_(std::make_shared<ConsumerConnection*>(this)) {
    const int flags = fcntl(socket_.get(), F_GETFL);
    if (flags < 0 || fcntl(socket_.get(), F_SETFL, flags | O_NONBLOCK) < 0)
        throw std::system_error(errno, std::generic_category(), "fcntl(consumer socket)");
    sd_event_source* s = nullptr;
    const int r = sd_event_add_io(loop_.get(), &s, socket_.get(), EPOLLIN | EPOLLRDHUP,
                                  &ConsumerConnection::onIo, this);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "sd_event_add_io(consumer socket)");
    io_.reset(s);
    inboxWake_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!inboxWake_)
        throw std::system_error(errno, std::generic_category(), "eventfd");
    s = nullptr;
    const int w = sd_event_add_io(
        loop_.get(), &s, inboxWake_.get(), EPOLLIN,
        [](sd_event_source*, int fd, uint32_t, void* userdata) {
            uint64_t n = 0;
            (void)!read(fd, &n, sizeof n);
            static_cast<ConsumerConnection*>(userdata)->drainInbox();
            return 0;
        },
        this);
    if (w < 0)
        throw std::system_error(-w, std::generic_category(), "sd_event_add_io(eventfd)");
    inboxSource_.reset(s);
}

void ConsumerConnection::enqueueMetadata(uint64_t key, uint64_t offset, std::string bytes) {
    {
        std::lock_guard lock(inboxMutex_);
        for (std::size_t at = 0; at < bytes.size(); at += cp::kMaxMetadataChunk)
            inbox_.push_back(
                cp::PushMetadata{key, offset + at, bytes.substr(at, cp::kMaxMetadataChunk)});
    }
    const uint64_t one = 1;
    (void)!write(inboxWake_.get(), &one, sizeof one);
}

void ConsumerConnection::enqueueLayouts(cp::DeclareLayouts request) {
    {
        std::lock_guard lock(inboxMutex_);
        inbox_.emplace_back(std::move(request));
    }
    const uint64_t one = 1;
    (void)!write(inboxWake_.get(), &one, sizeof one);
}

void ConsumerConnection::drainInbox() {
    std::vector<cp::Message> queued;
    {
        std::lock_guard lock(inboxMutex_);
        queued.swap(inbox_);
    }
    draining_ = true;
    for (auto& m : queued) {
        if (const auto* layouts = std::get_if<cp::DeclareLayouts>(&m)) {
            // Only the statistics need them: a refusal costs the count of
            // the channel's records, not the session.
            send(m, [key = layouts->key](std::optional<Error> e, cp::Message) {
                if (e)
                    log::warning("the consumer refused the record layouts of channel " +
                                 std::to_string(key) +
                                 " (its events recorded go uncounted): " + e->what());
            });
            continue;
        }
        queuePush(std::get<cp::PushMetadata>(std::move(m)),
                  [this](std::optional<Error> e, cp::Message) {
                      if (e && handlers_.metadataFailed)
                          handlers_.metadataFailed(*e);
                  });
    }
    draining_ = false;
}

ConsumerConnection::~ConsumerConnection() {
    self_.reset(); // executor jobs finishing later post nothing
    for (auto& [id, p] : pending_)
        if (p->objectsSocket)
            ::shutdown(p->objectsSocket->get(), SHUT_RDWR); // unblocks its job
}

uint32_t ConsumerConnection::send(const cp::Message& request, Reply reply, UniqueFd passFd,
                                  int timeoutFactor) {
    std::vector<UniqueFd> fds;
    if (passFd)
        fds.push_back(std::move(passFd));
    return sendPassing(request, std::move(reply), std::move(fds), timeoutFactor);
}

void ConsumerConnection::createKernelChannel(const cp::CreateKernelChannel& request,
                                             std::vector<UniqueFd> fds, Done done) {
    sendPassing(request, expectOk(std::move(done)), std::move(fds), 1);
}

void ConsumerConnection::declareKernelEvents(const cp::DeclareKernelEvents& request, Done done) {
    sendPassing(request, expectOk(std::move(done)), {}, 1);
}

void ConsumerConnection::attachIpProbes(const cp::AttachIpProbes& request, UniqueFd ring,
                                        UniqueFd counters, Done done) {
    std::vector<UniqueFd> fds;
    fds.push_back(std::move(ring));
    fds.push_back(std::move(counters));
    sendPassing(request, expectOk(std::move(done)), std::move(fds), 1);
}

void ConsumerConnection::attachSyscallStrings(const cp::AttachSyscallStrings& request,
                                              UniqueFd ring, UniqueFd counters, Done done) {
    std::vector<UniqueFd> fds;
    fds.push_back(std::move(ring));
    fds.push_back(std::move(counters));
    sendPassing(request, expectOk(std::move(done)), std::move(fds), 1);
}

void ConsumerConnection::attachRelayd(const cp::AttachRelayd& request, UniqueFd control,
                                      UniqueFd data, Done done) {
    std::vector<UniqueFd> fds;
    fds.push_back(std::move(control));
    fds.push_back(std::move(data));
    sendPassing(request, expectOk(std::move(done)), std::move(fds), 1);
}

uint32_t ConsumerConnection::sendPassing(const cp::Message& request, Reply reply,
                                         std::vector<UniqueFd> passFds, int timeoutFactor) {
    // What other threads queued before this call goes first, and so does
    // the metadata held behind a push in flight (a Rotate, FlushChannel or
    // RecordSnapshot must find all of it in the consumer); DeclareLayouts
    // are not ordered against metadata.
    if (!draining_)
        drainInbox();
    if (!std::holds_alternative<cp::PushMetadata>(request) &&
        !std::holds_alternative<cp::DeclareLayouts>(request))
        sendHeldMetadata();
    const uint32_t id = nextId_++;
    if (nextId_ == 0)
        nextId_ = 1; // 0 is for unsolicited messages
    if (lostWhy_) {
        // Answered from the loop, never from inside the caller.
        std::weak_ptr<ConsumerConnection*> alive = self_;
        loop_.post([alive, reply = std::move(reply), why = *lostWhy_, request] {
            if (!alive.expired() && reply)
                reply(Error(ErrorCode::Failed,
                            "the consumer connection is lost (" + why + "); " +
                                std::string(cp::messageName(cp::typeOf(request))) + " not sent"),
                      cp::Ok{});
        });
        return id;
    }
    Outgoing frame;
    frame.bytes = cp::encode(request, id);
    outgoing_.push_back(std::move(frame));
    for (std::size_t i = 0; i < passFds.size(); i += kMaxPassedFds) {
        Outgoing marker;
        marker.bytes.assign(1, std::byte{0});
        for (std::size_t j = i; j < std::min(passFds.size(), i + kMaxPassedFds); ++j)
            marker.fds.push_back(std::move(passFds[j]));
        outgoing_.push_back(std::move(marker));
    }
    auto p = std::make_unique<Pending>();
    p->owner = this;
    p->id = id;
    p->sent = std::chrono::steady_clock::now();
    p->type = cp::typeOf(request);
    p->timeoutFactor = timeoutFactor;
    p->reply = std::move(reply);
    sd_event_source* t = nullptr;
    const uint64_t usec =
        static_cast<uint64_t>(replyTimeout_.count()) * 1000 * static_cast<uint64_t>(timeoutFactor);
    const int r = sd_event_add_time_relative(
        loop_.get(), &t, CLOCK_MONOTONIC, usec, 0,
        [](sd_event_source*, uint64_t, void* userdata) {
            auto* pending = static_cast<Pending*>(userdata);
            pending->owner->expire(pending->id);
            return 0;
        },
        p.get());
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "sd_event_add_time_relative");
    p->timer.reset(t);
    pending_.emplace(id, std::move(p));
    // Written once the loop sees the socket writable, never from inside the
    // caller: no callback runs before the request call returns.
    updateIoEvents();
    return id;
}

ConsumerConnection::Reply ConsumerConnection::expectOk(Done done) {
    // deliver() has checked that the reply is Ok.
    return [done = std::move(done)](std::optional<Error> e, cp::Message) { done(std::move(e)); };
}

bool ConsumerConnection::isRefusal(const Error& e) noexcept {
    return std::string_view(e.what()).substr(0, kRefused.size()) == kRefused;
}

void ConsumerConnection::readNow() {
    if (usable())
        readIncoming();
}

std::chrono::steady_clock::duration ConsumerConnection::silentFor() const noexcept {
    if (pending_.empty())
        return {};
    auto oldest = pending_.begin()->second->sent;
    for (const auto& [id, p] : pending_)
        oldest = std::min(oldest, p->sent);
    // Silent since the later of: the last frame heard, the oldest request.
    return std::chrono::steady_clock::now() - std::max(oldest, lastHeard_);
}

void ConsumerConnection::hello(const std::string& daemonVersion, Done done) {
    cp::Hello h;
    h.version = daemonVersion;
    send(h, [this, done = std::move(done)](std::optional<Error> e, cp::Message m) {
        const auto* reply = std::get_if<cp::HelloReply>(&m);
        if (!e && reply == nullptr)
            e = Error(ErrorCode::Failed, "the consumer answered Hello with " +
                                             std::string(cp::messageName(cp::typeOf(m))));
        if (!e)
            peerPid_ = static_cast<pid_t>(reply->pid);
        done(std::move(e));
    });
}

bool ConsumerConnection::peerStopped() const noexcept {
    if (peerPid_ <= 0)
        return false;
    // /proc/PID/stat: "pid (comm) S ...", comm may hold ')' and spaces.
    const std::string path = "/proc/" + std::to_string(peerPid_) + "/stat";
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return false;
    char text[512];
    const ssize_t n = ::read(fd.get(), text, sizeof text - 1);
    if (n <= 0)
        return false;
    const std::string_view stat(text, static_cast<std::size_t>(n));
    const std::size_t close = stat.rfind(')');
    if (close == std::string_view::npos || close + 2 >= stat.size())
        return false;
    const char state = stat[close + 2];
    return state == 'T' || state == 't';
}

void ConsumerConnection::adopt(const std::string& daemonVersion, AdoptDone done) {
    // The previous daemon numbered its requests from 1: ours start far
    // from there (and never at 0, the unsolicited id).
    std::random_device random;
    nextId_ = (random() | 0x80000000u) & ~0xffu;
    adopting_ = true;
    cp::Adopt a;
    a.version = daemonVersion;
    send(
        a,
        [this, done = std::move(done)](std::optional<Error> e, cp::Message m) {
            adopting_ = false;
            auto* reply = std::get_if<cp::AdoptReply>(&m);
            if (!e && reply == nullptr)
                e = Error(ErrorCode::Failed, "the consumer answered Adopt with " +
                                                 std::string(cp::messageName(cp::typeOf(m))));
            if (!e)
                peerPid_ = static_cast<pid_t>(reply->pid);
            done(std::move(e), reply != nullptr ? std::move(*reply) : cp::AdoptReply{});
        },
        {}, kLongRequestFactor);
}

void ConsumerConnection::createChannel(const cp::CreateChannel& request, ChannelDone done) {
    int sv[2];
    if (lostWhy_ || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        const Error e(ErrorCode::Failed, lostWhy_
                                             ? "the consumer connection is lost (" + *lostWhy_ +
                                                   "); CreateChannel not sent"
                                             : std::string("socketpair: ") + std::strerror(errno));
        std::weak_ptr<ConsumerConnection*> alive = self_;
        loop_.post([alive, done = std::move(done), e] {
            if (!alive.expired())
                done(e, ConsumerChannel{});
        });
        return;
    }
    auto ours = std::make_shared<UniqueFd>(sv[0]);
    UniqueFd theirs(sv[1]);
    // The consumer queues every object before it replies: room for many
    // CPUs' streams (beyond net.core.wmem_max where the daemon may).
    const int room = 4 << 20;
    if (setsockopt(theirs.get(), SOL_SOCKET, SO_SNDBUFFORCE, &room, sizeof room) < 0)
        setsockopt(theirs.get(), SOL_SOCKET, SO_SNDBUF, &room, sizeof room);
    const uint32_t id = send(request, Reply{}, std::move(theirs));
    const auto it = pending_.find(id);
    if (it == pending_.end())
        return; // cannot happen: send() registered it, and nothing ran since
    Pending& p = *it->second;
    p.channelDone = std::move(done);
    p.key = request.key;
    p.objectsSocket = ours;
}

void ConsumerConnection::readObjects(Pending& p) {
    // Only once ChannelCreated came: the consumer has queued every object
    // then, so the job reads without waiting, and a stopped consumer never
    // holds an executor thread that another session needs.
    p.reading = true;
    std::weak_ptr<ConsumerConnection*> alive = self_;
    executor_.submit([alive, id = p.id, ours = p.objectsSocket, timeout = kObjectsTimeout,
                      poster = loop_.poster()] {
        auto objects = std::make_shared<ChannelObjects>(receiveObjects(ours->get(), timeout));
        poster->post([alive, id, objects] {
            const auto self = alive.lock();
            if (!self)
                return;
            ConsumerConnection& c = **self;
            const auto found = c.pending_.find(id);
            if (found == c.pending_.end())
                return; // expired or failed meanwhile: the objects go
            found->second->objects = std::move(*objects);
            c.completeChannel(id);
        });
    });
}

void ConsumerConnection::completeChannel(uint32_t id) {
    const auto it = pending_.find(id);
    if (it == pending_.end())
        return;
    Pending& p = *it->second;
    std::optional<Error> error;
    if (p.replied) {
        if (const auto* err = std::get_if<cp::ErrorReply>(&*p.replied)) {
            // Resources (out of fds): LimitExceeded, which refuses only the
            // app(s) the channel was for (UstTracer::join()).
            error = Error(cp::toErrorCode(err->code) == ErrorCode::LimitExceeded
                              ? ErrorCode::LimitExceeded
                              : ErrorCode::Failed,
                          std::string(kRefused) + "CreateChannel: " + err->message);
        } else if (const auto* created = std::get_if<cp::ChannelCreated>(&*p.replied);
                   created == nullptr || created->key != p.key) {
            error =
                Error(ErrorCode::Failed, "the consumer answered CreateChannel with " +
                                             std::string(cp::messageName(cp::typeOf(*p.replied))));
        } else if (!p.objects) {
            if (!p.reading)
                readObjects(p); // all of them are queued on the objects socket by now
            return;
        } else if (!p.objects->error.empty()) {
            error = Error(ErrorCode::Failed, p.objects->error);
        } else if (p.objects->channel.streams.size() != created->streamCount) {
            error =
                Error(ErrorCode::Failed,
                      "the consumer announced " + std::to_string(created->streamCount) +
                          " streams and sent " + std::to_string(p.objects->channel.streams.size()));
        }
    } else {
        return; // the objects came first: wait for the reply
    }
    std::unique_ptr<Pending> done = std::move(it->second);
    pending_.erase(it);
    ConsumerChannel channel;
    if (!error) {
        channel = std::move(done->objects->channel);
        channel.key = done->key;
    }
    done->channelDone(std::move(error), std::move(channel));
}

void ConsumerConnection::pushMetadata(uint64_t key, uint64_t offset, const std::string& bytes,
                                      Done done) {
    if (bytes.empty()) {
        std::weak_ptr<ConsumerConnection*> alive = self_;
        loop_.post([alive, done = std::move(done)] {
            if (!alive.expired())
                done(std::nullopt);
        });
        return;
    }
    if (!draining_)
        drainInbox(); // what other threads queued goes first
    queuePush(cp::PushMetadata{key, offset, bytes}, expectOk(std::move(done)));
}

void ConsumerConnection::sendQueuedMetadata() {
    if (lostWhy_)
        return;
    if (!draining_)
        drainInbox();
    sendHeldMetadata();
    flushOutgoing();
}

void ConsumerConnection::queuePush(cp::PushMetadata push, Reply reply) {
    const auto held = held_.find(push.key);
    if (held != held_.end() && held->second.offset + held->second.bytes.size() != push.offset) {
        // Not contiguous (a trace's metadata made anew): what is held goes first.
        sendHeld(held);
    } else if (held != held_.end() || pushesInFlight_[push.key] != 0) {
        auto& h = held_[push.key];
        if (h.bytes.empty())
            h.offset = push.offset;
        h.bytes += push.bytes;
        h.replies.push_back(std::move(reply));
        return;
    }
    HeldMetadata one;
    one.offset = push.offset;
    one.bytes = std::move(push.bytes);
    one.replies.push_back(std::move(reply));
    sendPushes(push.key, std::move(one));
}

void ConsumerConnection::sendHeld(std::map<uint64_t, HeldMetadata>::iterator it) {
    const uint64_t key = it->first;
    HeldMetadata h = std::move(it->second);
    held_.erase(it);
    sendPushes(key, std::move(h));
}

void ConsumerConnection::sendHeldMetadata() {
    while (!held_.empty())
        sendHeld(held_.begin());
}

void ConsumerConnection::sendPushes(uint64_t key, HeldMetadata h) {
    // Every reply of what was merged gets the outcome of all its frames.
    struct Outcome {
        std::vector<Reply> replies;
        std::optional<Error> first;
        std::size_t frames = 0;
    };
    auto outcome = std::make_shared<Outcome>();
    outcome->replies = std::move(h.replies);
    outcome->frames = (h.bytes.size() + cp::kMaxMetadataChunk - 1) / cp::kMaxMetadataChunk;
    for (std::size_t at = 0; at < h.bytes.size(); at += cp::kMaxMetadataChunk) {
        ++pushesInFlight_[key];
        cp::PushMetadata m{key, h.offset + at, h.bytes.substr(at, cp::kMaxMetadataChunk)};
        sendPassing(
            m,
            [this, key, outcome](std::optional<Error> e, cp::Message reply) {
                if (e && !outcome->first)
                    outcome->first = std::move(e);
                if (--outcome->frames == 0) {
                    std::weak_ptr<ConsumerConnection*> alive = self_;
                    for (auto& r : outcome->replies) {
                        r(outcome->first, reply);
                        if (alive.expired())
                            return;
                    }
                }
                if (const auto n = pushesInFlight_.find(key);
                    n != pushesInFlight_.end() && --n->second == 0) {
                    pushesInFlight_.erase(n);
                    if (const auto held = held_.find(key); held != held_.end() && usable())
                        sendHeld(held);
                }
            },
            {}, 1);
    }
}

void ConsumerConnection::declareLayouts(const cp::DeclareLayouts& request, Done done) {
    send(request, expectOk(std::move(done)));
}

void ConsumerConnection::flushChannel(uint64_t key, Done done) {
    // A network session's consumer answers once the relay holds what it
    // sent (the data-pending exchange, bounded at 10 s in the consumer):
    // its own answer, even a timeout, must come before ours.
    send(cp::FlushChannel{key}, expectOk(std::move(done)), {}, kLongRequestFactor);
}

void ConsumerConnection::producerGone(uint64_t key, uint32_t pid, Done done) {
    send(cp::ProducerGone{key, pid}, expectOk(std::move(done)));
}

void ConsumerConnection::watchChunkSize(uint64_t bytes, Done done) {
    send(cp::WatchChunkSize{bytes}, expectOk(std::move(done)));
}

void ConsumerConnection::destroyChannel(uint64_t key, Done done) {
    send(cp::DestroyChannel{key}, expectOk(std::move(done)), {}, kLongRequestFactor);
}

void ConsumerConnection::shutdown(bool deleteChunk, Done done) {
    send(cp::Shutdown{deleteChunk}, expectOk(std::move(done)), {}, kLongRequestFactor);
}

void ConsumerConnection::rotate(const cp::Rotate& request, Done done) {
    send(request, expectOk(std::move(done)));
}

void ConsumerConnection::clearBuffers(Done done) {
    send(cp::ClearBuffers{}, expectOk(std::move(done)), {}, kLongRequestFactor);
}

void ConsumerConnection::rotateMetadata(uint64_t id, Done done) {
    send(cp::RotateMetadata{id}, expectOk(std::move(done)));
}

void ConsumerConnection::snapshotMetadata(uint64_t id, Done done) {
    send(cp::SnapshotMetadata{id}, expectOk(std::move(done)), {}, kLongRequestFactor);
}

void ConsumerConnection::recordSnapshot(const cp::RecordSnapshot& request, UniqueFd dirFd,
                                        Done done) {
    send(request, expectOk(std::move(done)), std::move(dirFd), kLongRequestFactor);
}

void ConsumerConnection::recordSnapshotToRelay(const cp::RecordSnapshotToRelay& request,
                                               UniqueFd control, UniqueFd data, Done done) {
    std::vector<UniqueFd> fds;
    fds.push_back(std::move(control));
    fds.push_back(std::move(data));
    sendPassing(request, expectOk(std::move(done)), std::move(fds), kLongRequestFactor);
}

void ConsumerConnection::flushOutgoing() {
    try {
        while (!outgoing_.empty()) {
            Outgoing& o = outgoing_.front();
            std::vector<int> fds;
            for (const UniqueFd& fd : o.fds)
                fds.push_back(fd.get());
            const std::size_t n = sendSomeWithFds(
                socket_.get(), std::span<const std::byte>(o.bytes).subspan(o.sent), fds);
            if (n == 0)
                break;     // full: EPOLLOUT brings us back
            o.fds.clear(); // went with the first byte
            o.sent += n;
            if (o.sent == o.bytes.size())
                outgoing_.pop_front();
        }
    } catch (const std::exception& e) {
        lose(std::string("cannot write to it: ") + e.what());
        return;
    }
    updateIoEvents();
}

void ConsumerConnection::updateIoEvents() {
    if (io_)
        sd_event_source_set_io_events(io_.get(),
                                      EPOLLIN | EPOLLRDHUP | (outgoing_.empty() ? 0u : EPOLLOUT));
}

int ConsumerConnection::onIo(sd_event_source*, int, uint32_t revents, void* userdata) {
    auto* self = static_cast<ConsumerConnection*>(userdata);
    std::weak_ptr<ConsumerConnection*> alive = self->self_;
    if ((revents & EPOLLOUT) != 0)
        self->flushOutgoing();
    if (!alive.expired() && self->usable() && (revents & ~static_cast<uint32_t>(EPOLLOUT)) != 0)
        self->readIncoming();
    return 0;
}

void ConsumerConnection::readIncoming() {
    std::weak_ptr<ConsumerConnection*> alive = self_;
    for (;;) {
        cp::MessageReader::Status status;
        try {
            status = reader_.readFrom(socket_.get());
        } catch (const cp::TruncatedFrame&) {
            lose("the consumer closed its connection in the middle of a message");
            return;
        } catch (const cp::ProtocolError& e) {
            lose(std::string("the consumer broke the protocol: ") + e.what());
            return;
        } catch (const std::exception& e) {
            lose(std::string("reading from the consumer: ") + e.what());
            return;
        }
        if (status == cp::MessageReader::Status::WouldBlock)
            return;
        if (status == cp::MessageReader::Status::Eof) {
            lose("the consumer closed its connection");
            return;
        }
        deliver(reader_.takeFrame());
        if (alive.expired() || !usable())
            return;
    }
}

void ConsumerConnection::deliver(cp::Frame frame) {
    lastHeard_ = std::chrono::steady_clock::now();
    if (adopting_ && (frame.request == 0 || pending_.count(frame.request) == 0)) {
        ++lateReplies_;
        log::debug("dropped " + std::string(cp::messageName(cp::typeOf(frame.message))) +
                   " meant for the previous daemon");
        return;
    }
    if (frame.request == 0) {
        if (auto* figures = std::get_if<cp::Statistics>(&frame.message)) {
            if (handlers_.statistics)
                handlers_.statistics(std::move(*figures));
            return;
        }
        if (auto* failed = std::get_if<cp::OutputFailed>(&frame.message)) {
            if (handlers_.outputFailed)
                handlers_.outputFailed(failed->message);
            return;
        }
        auto* done = std::get_if<cp::RotationCompleted>(&frame.message);
        if (done == nullptr) {
            lose("the consumer sent " + std::string(cp::messageName(cp::typeOf(frame.message))) +
                 " unasked");
            return;
        }
        if (handlers_.rotationCompleted)
            handlers_.rotationCompleted(std::move(*done));
        return;
    }
    const auto it = pending_.find(frame.request);
    if (it == pending_.end()) {
        if (expired_.erase(frame.request) != 0) {
            ++lateReplies_;
            log::debug("the consumer's reply to request " + std::to_string(frame.request) +
                       " came after its deadline; dropped");
            return;
        }
        lose("the consumer answered request " + std::to_string(frame.request) +
             ", which is not in flight");
        return;
    }
    if (it->second->channelDone) {
        it->second->replied = std::move(frame.message);
        completeChannel(frame.request);
        return;
    }
    std::unique_ptr<Pending> p = std::move(it->second);
    pending_.erase(it);
    std::optional<Error> error;
    if (const auto* err = std::get_if<cp::ErrorReply>(&frame.message))
        error =
            Error(ErrorCode::Failed, std::string(kRefused) + std::string(cp::messageName(p->type)) +
                                         ": " + err->message);
    else if (p->type != cp::MessageType::Hello && p->type != cp::MessageType::CreateChannel &&
             p->type != cp::MessageType::Adopt && !std::holds_alternative<cp::Ok>(frame.message))
        error = Error(ErrorCode::Failed,
                      "the consumer answered " + std::string(cp::messageName(p->type)) + " with " +
                          std::string(cp::messageName(cp::typeOf(frame.message))));
    p->reply(std::move(error), std::move(frame.message));
}

void ConsumerConnection::expire(uint32_t id) {
    const auto it = pending_.find(id);
    if (it == pending_.end())
        return;
    // Busy, not stopped: the consumer answered something since this request
    // went and within the last period (it answers one request at a time, so
    // a stopped one answers nothing). A request pipelined behind a burst
    // (hundreds of apps' buffers at a Start) waits its turn, for up to
    // kMaxDeadlineExtensions more periods.
    const auto now = std::chrono::steady_clock::now();
    Pending& waiting = *it->second;
    if (lastHeard_ > waiting.sent && now - lastHeard_ < replyTimeout_ &&
        waiting.extensions < kMaxDeadlineExtensions) {
        ++waiting.extensions;
        const uint64_t usec = static_cast<uint64_t>(replyTimeout_.count()) * 1000 *
                              static_cast<uint64_t>(waiting.timeoutFactor);
        uint64_t at = 0;
        if (sd_event_now(loop_.get(), CLOCK_MONOTONIC, &at) >= 0 &&
            sd_event_source_set_time(waiting.timer.get(), at + usec) >= 0 &&
            sd_event_source_set_enabled(waiting.timer.get(), SD_EVENT_ONESHOT) >= 0)
            return;
    }
    std::unique_ptr<Pending> p = std::move(it->second);
    pending_.erase(it);
    expired_.insert(id);
    expiredOrder_.push_back(id);
    if (expiredOrder_.size() > kMaxExpired) {
        expired_.erase(expiredOrder_.front());
        expiredOrder_.pop_front();
    }
    if (p->objectsSocket)
        ::shutdown(p->objectsSocket->get(), SHUT_RDWR);
    const int factor = p->timeoutFactor * (1 + p->extensions);
    const Error e(ErrorCode::Failed,
                  "the consumer did not answer " + std::string(cp::messageName(p->type)) +
                      " within " + seconds(replyTimeout_ * factor) +
                      (p->extensions == 0 ? " (stopped or overloaded?)"
                                          : " (it was busy with the requests ahead of it)"));
    if (p->channelDone)
        p->channelDone(e, ConsumerChannel{});
    else
        p->reply(e, cp::Ok{});
}

void ConsumerConnection::lose(const std::string& why) {
    if (lostWhy_)
        return;
    lostWhy_ = why;
    io_.reset();
    outgoing_.clear();
    std::weak_ptr<ConsumerConnection*> alive = self_;
    auto pending = std::exchange(pending_, {});
    auto held = std::exchange(held_, {});
    pushesInFlight_.clear();
    const Error e(ErrorCode::Failed, "the consumer connection is lost: " + why);
    for (auto& [key, h] : held)
        for (auto& r : h.replies) {
            r(e, cp::Ok{});
            if (alive.expired())
                return;
        }
    for (auto& [id, p] : pending) {
        if (p->objectsSocket)
            ::shutdown(p->objectsSocket->get(), SHUT_RDWR);
        if (p->channelDone)
            p->channelDone(e, ConsumerChannel{});
        else if (p->reply)
            p->reply(e, cp::Ok{});
        if (alive.expired())
            return;
    }
    if (handlers_.lost)
        handlers_.lost(why);
}

} // namespace tracectl
