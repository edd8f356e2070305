// The daemon's side of the daemon<->consumer protocol
// (src/common/consumer_protocol.hpp): one request, one reply, on a blocking
// socket with a receive timeout. Not thread-safe: callers serialize.
#pragma once

#include "common/consumer_protocol.hpp"
#include "common/unique_fd.hpp"
#include "ust_object.hpp"

#include <string>
#include <vector>

namespace tracectl {

/// A data or metadata channel as the consumer created it: the objects an
/// app accepts (after lttng_ust_ctl_duplicate_ust_object_data).
struct ConsumerChannel {
    uint64_t key = 0;
    UstObject channel;
    std::vector<UstObject> streams;
};

class ConsumerClient {
public:
    /// Takes the daemon's end of the consumer's socket; sets it blocking
    /// with a 10 s receive/send timeout.
    explicit ConsumerClient(UniqueFd socket);

    /// Hello round trip. Throws Error(Failed) on a version mismatch or a dead consumer.
    void hello(const std::string& daemonVersion);
    /// CreateChannel, then receives the channel and stream objects.
    ConsumerChannel createChannel(const consumer_protocol::CreateChannel& request);
    void pushMetadata(uint64_t key, uint64_t offset, const std::string& bytes);
    void flushChannel(uint64_t key);
    void destroyChannel(uint64_t key);
    void shutdown();
    /// Rotate; Ok means under way: RotationCompleted follows, unsolicited.
    void rotate(const consumer_protocol::Rotate& request);
    /// RecordSnapshot with `dirFd` (the snapshot folder, passed on one
    /// byte after the frame); returns once the consumer has written it all.
    /// Throws Error(Failed) with the consumer's reason.
    void recordSnapshot(const consumer_protocol::RecordSnapshot& request, int dirFd);
    /// Reads the frames the consumer sent on its own that are waiting on the
    /// socket now (never blocks at a frame boundary). Returns false at EOF:
    /// the consumer is gone. Throws Error(Failed) for anything but
    /// RotationCompleted.
    bool readUnsolicited();
    /// The RotationCompleted messages read so far (by any call), oldest first.
    std::vector<consumer_protocol::RotationCompleted> takeCompleted();
    /// Readable (EPOLLIN) while takeCompleted() has something: a call made on
    /// another thread may have read a RotationCompleted meanwhile.
    int completedFd() const noexcept { return wake_.get(); }
    /// The daemon's end of the socket, to watch for the consumer hanging up.
    int fd() const noexcept { return socket_.get(); }

private:
    /// Sends `request`, reads one reply; throws Error(Failed) for ErrorReply,
    /// EOF, timeout or a malformed frame.
    /// `passFd` >= 0 follows the frame on one byte (SCM_RIGHTS).
    consumer_protocol::Message call(const consumer_protocol::Message& request, int passFd = -1);

    /// Keeps a RotationCompleted read while waiting for a reply.
    void keep(consumer_protocol::RotationCompleted done);

    UniqueFd socket_;
    UniqueFd wake_; // eventfd: completed_ is not empty
    std::vector<consumer_protocol::RotationCompleted> completed_;
};

} // namespace tracectl
