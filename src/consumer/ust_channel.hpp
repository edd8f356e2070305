// RAII over liblttng-ust-ctl's consumer-side objects (lttng/ust-ctl.h,
// "API used by consumer"): a ring-buffer channel with one shm per stream
// that the consumer creates itself, and the streams read from it.
#pragma once

#include "common/unique_fd.hpp"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

struct lttng_ust_ctl_consumer_channel;
struct lttng_ust_ctl_consumer_stream;

namespace tracectl::consumer {

/// A liblttng-ust-ctl call failed; `code()` is its negative return value
/// (-errno or -LTTNG_UST_ERR_*), 0 when it returned NULL.
class UstError : public std::runtime_error {
public:
    /// `code`: what the call returned; errno is kept as it was then
    /// (systemErrno()), since liblttng-ust-ctl's calls that return NULL
    /// say why only there (EMFILE from a pipe(), say).
    UstError(const std::string& call, int code);
    UstError(const std::string& call, int code, int systemErrno);
    int code() const noexcept { return code_; }
    int systemErrno() const noexcept { return errno_; }

private:
    int code_;
    int errno_;
};

/// One stream (per-CPU ring buffer) of a channel: owns the
/// lttng_ust_ctl_consumer_stream (lttng_ust_ctl_destroy_stream, which also
/// closes its wait/wakeup fds and unmaps nothing: the mapping belongs to the
/// channel). Move-only; must be destroyed before its UstChannel.
class UstStream {
public:
    UstStream() noexcept = default;
    UstStream(lttng_ust_ctl_consumer_stream* stream, int cpu) noexcept
        : stream_(stream), cpu_(cpu) {}
    ~UstStream() { reset(); }
    UstStream(UstStream&& o) noexcept;
    UstStream& operator=(UstStream&& o) noexcept;
    UstStream(const UstStream&) = delete;
    UstStream& operator=(const UstStream&) = delete;

    lttng_ust_ctl_consumer_stream* get() const noexcept { return stream_; }
    /// The CPU number (index given to lttng_ust_ctl_create_stream); 0 for metadata.
    int cpu() const noexcept { return cpu_; }
    /// Destroys the stream now (idempotent).
    void reset() noexcept;

    /// The read end of the stream's wakeup pipe (still owned by ust-ctl):
    /// readable when a producer delivered a sub-buffer, HUP once every copy
    /// of the wakeup fd is closed. Throws UstError.
    int waitFd() const;
    /// Closes the consumer's own copy of the wakeup fd so that the wait fd can
    /// hang up when the producers' copies go. Idempotent.
    void closeWakeupFd() noexcept;

private:
    lttng_ust_ctl_consumer_stream* stream_ = nullptr;
    int cpu_ = -1;
};

/// A channel (lttng_ust_ctl_create_channel). Owns the ust-ctl channel and
/// the shm fds behind its streams. Not copyable or movable.
class UstChannel {
public:
    struct Attributes {
        bool metadata = false;         ///< LTTNG_UST_ABI_CHAN_METADATA, else PER_CPU
        std::uint64_t subbufSize = 0;  ///< bytes, power of two
        std::uint64_t subbufCount = 0; ///< power of two
        bool overwrite = false;
        std::uint32_t switchTimerUsec = 0; ///< run by ust-ctl's own timer thread (tracectl: 0)
        std::uint32_t readTimerUsec = 0;   ///< non-zero selects the "rt" transports
        std::int64_t blockingTimeoutUsec = 0;
        std::uint32_t chanId = 0;
        std::array<std::uint8_t, 16> uuid{};
    };

    /// Creates one anonymous shm per stream (memfd, sealed against shrinking
    /// once sized, so an application cannot truncate it under the consumer):
    /// 1 for metadata, lttng_ust_ctl_get_nr_stream_per_channel() (possible
    /// CPUs) otherwise; then the channel. Throws std::system_error (memfd) or
    /// UstError.
    explicit UstChannel(const Attributes& attributes);
    ~UstChannel();
    UstChannel(const UstChannel&) = delete;
    UstChannel& operator=(const UstChannel&) = delete;

    lttng_ust_ctl_consumer_channel* get() const noexcept { return channel_; }
    bool isMetadata() const noexcept { return metadata_; }
    /// The shm fd behind stream `cpu` (still owned here), or -1.
    int shmFd(int cpu) const noexcept {
        return cpu >= 0 && static_cast<std::size_t>(cpu) < shmFds_.size() ? shmFds_[cpu].get() : -1;
    }

    /// Creates the streams (lttng_ust_ctl_create_stream for cpu 0, 1, ...
    /// until NULL). Call once. Throws UstError if there is none.
    std::vector<UstStream> createStreams();

    /// The read end of the channel's wakeup pipe (owned by ust-ctl): hangs up
    /// once every copy of the channel's wakeup fd (the daemon's, the apps')
    /// is closed and ours is closed too (closeWakeupFd()).
    int waitFd() const;
    /// Closes our copy of the channel wakeup fd (after sending it away).
    void closeWakeupFd();

    /// lttng_ust_ctl_send_channel_to_sessiond: channel data + wakeup fd.
    /// Blocking on `sock`. Throws UstError.
    void sendToDaemon(int sock) const;
    /// lttng_ust_ctl_send_stream_to_sessiond for `stream` (shm fd + wakeup
    /// fd), or the end-of-list marker when `stream` is null. Throws UstError.
    static void sendStreamToDaemon(int sock, const UstStream* stream);

private:
    lttng_ust_ctl_consumer_channel* channel_ = nullptr;
    bool metadata_ = false;
    std::vector<UniqueFd> shmFds_; // not owned by ust-ctl (shm_fd_ownership = 0)
};

} // namespace tracectl::consumer
