#include "ust_channel.hpp"

#include "common/log.hpp"
#include "ring_buffer_guard.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <lttng/ust-ctl.h>
#include <sys/mman.h>
#include <system_error>
#include <utility>

namespace tracectl::consumer {

namespace {

std::string describe(const std::string& call, int code, int systemErrno) {
    if (code == kSpoiledBuffer)
        return call + " failed: the application spoiled its ring buffer (the library faulted or "
                      "aborted reading it)";
    std::string what = code == 0 ? call + " failed" : call + " failed: " + std::to_string(code);
    // Out of fds is the one errno worth telling whatever the call: it is
    // why the daemon refuses an app rather than the session.
    if (systemErrno == EMFILE || systemErrno == ENFILE)
        what += std::string(" (") + std::strerror(systemErrno) + ")";
    return what;
}

} // namespace

UstError::UstError(const std::string& call, int code) : UstError(call, code, errno) {}

UstError::UstError(const std::string& call, int code, int systemErrno)
    : std::runtime_error(describe(call, code, systemErrno)), code_(code), errno_(systemErrno) {}

UstStream::UstStream(UstStream&& o) noexcept
    : stream_(std::exchange(o.stream_, nullptr)), cpu_(std::exchange(o.cpu_, -1)) {}

UstStream& UstStream::operator=(UstStream&& o) noexcept {
    if (this != &o) {
        reset();
        stream_ = std::exchange(o.stream_, nullptr);
        cpu_ = std::exchange(o.cpu_, -1);
    }
    return *this;
}

void UstStream::reset() noexcept {
    // It reads the buffer (its reader count), which the app may have spoiled.
    if (stream_ != nullptr &&
        !guardedVoid(lttng_ust_ctl_destroy_stream, std::exchange(stream_, nullptr)))
        log::warning("stream " + std::to_string(cpu_) +
                     ": destroying it failed on its spoiled ring buffer; its fds are left");
}

int UstStream::waitFd() const {
    const int fd = lttng_ust_ctl_stream_get_wait_fd(stream_);
    if (fd < 0)
        throw UstError("lttng_ust_ctl_stream_get_wait_fd", fd);
    return fd;
}

void UstStream::closeWakeupFd() noexcept {
    if (stream_ != nullptr && lttng_ust_ctl_stream_get_wakeup_fd(stream_) >= 0)
        (void)lttng_ust_ctl_stream_close_wakeup_fd(stream_);
}

UstChannel::UstChannel(const Attributes& a) : metadata_(a.metadata) {
    // The metadata channel has exactly one stream (lttng-consumerd does the same).
    const int nr = a.metadata ? 1 : lttng_ust_ctl_get_nr_stream_per_channel();
    if (nr <= 0)
        throw UstError("lttng_ust_ctl_get_nr_stream_per_channel", nr);
    std::vector<int> raw;
    for (int i = 0; i < nr; ++i) {
        // lttng-consumerd uses shm_open + shm_unlink; a memfd is the same
        // anonymous shared memory without a name in /dev/shm, and can be sealed.
        UniqueFd fd(::memfd_create("tracectl-ust-stream", MFD_CLOEXEC | MFD_ALLOW_SEALING));
        if (!fd)
            throw std::system_error(errno, std::generic_category(), "memfd_create");
        raw.push_back(fd.get());
        shmFds_.push_back(std::move(fd));
    }

    lttng_ust_ctl_consumer_channel_attr attr{};
    attr.type = a.metadata ? LTTNG_UST_ABI_CHAN_METADATA : LTTNG_UST_ABI_CHAN_PER_CPU;
    attr.subbuf_size = a.subbufSize;
    attr.num_subbuf = a.subbufCount;
    attr.overwrite = a.overwrite ? 1 : 0;
    attr.switch_timer_interval = a.switchTimerUsec;
    attr.read_timer_interval = a.readTimerUsec;
    attr.output = LTTNG_UST_ABI_MMAP;
    attr.chan_id = a.chanId;
    for (std::size_t i = 0; i < a.uuid.size(); ++i)
        attr.uuid[i] = a.uuid[i];
    attr.blocking_timeout = a.blockingTimeoutUsec;

    errno = 0;
    channel_ = lttng_ust_ctl_create_channel(&attr, raw.data(), nr);
    if (channel_ == nullptr) {
        const int err = errno;
        throw UstError("lttng_ust_ctl_create_channel", 0, err);
    }

    // ust-ctl sized (ftruncate) and zeroed every shm; from now on nobody may
    // shrink one, or readers of the mapping would fault.
    for (const auto& fd : shmFds_) {
        if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
            const int err = errno;
            lttng_ust_ctl_destroy_channel(std::exchange(channel_, nullptr));
            throw std::system_error(err, std::generic_category(), "F_ADD_SEALS");
        }
    }
}

UstChannel::~UstChannel() {
    // It reads every stream's buffer (to log their errors): one an app
    // spoiled leaves the channel's mappings behind rather than the process.
    if (channel_ != nullptr && !guardedVoid(lttng_ust_ctl_destroy_channel, channel_))
        log::warning("destroying a channel failed on a spoiled ring buffer; its mappings are left");
    // shmFds_ close after the channel unmapped them.
}

std::vector<UstStream> UstChannel::createStreams() {
    std::vector<UstStream> streams;
    // NULL past the last stream, and on a failure (its wakeup pipe: EMFILE):
    // a channel short of a stream would silently lose that CPU's events.
    const int expected = metadata_ ? 1 : lttng_ust_ctl_get_nr_stream_per_channel();
    for (int cpu = 0; cpu < expected; ++cpu) {
        errno = 0;
        lttng_ust_ctl_consumer_stream* s = guarded(lttng_ust_ctl_create_stream, channel_, cpu);
        if (s == nullptr) {
            const int err = errno;
            throw UstError("lttng_ust_ctl_create_stream (stream " + std::to_string(cpu) + " of " +
                               std::to_string(expected) + ")",
                           0, err);
        }
        streams.emplace_back(s, cpu);
    }
    if (streams.empty())
        throw UstError("lttng_ust_ctl_create_stream", 0);
    return streams;
}

int UstChannel::waitFd() const {
    const int fd = lttng_ust_ctl_channel_get_wait_fd(channel_);
    if (fd < 0)
        throw UstError("lttng_ust_ctl_channel_get_wait_fd", fd);
    return fd;
}

void UstChannel::closeWakeupFd() {
    const int r = lttng_ust_ctl_channel_close_wakeup_fd(channel_);
    if (r < 0)
        throw UstError("lttng_ust_ctl_channel_close_wakeup_fd", r);
}

void UstChannel::sendToDaemon(int sock) const {
    const int r = lttng_ust_ctl_send_channel_to_sessiond(sock, channel_);
    if (r < 0)
        throw UstError("lttng_ust_ctl_send_channel_to_sessiond", r);
}

void UstChannel::sendStreamToDaemon(int sock, const UstStream* stream) {
    const int r = lttng_ust_ctl_send_stream_to_sessiond(sock, stream ? stream->get() : nullptr);
    if (r < 0)
        throw UstError("lttng_ust_ctl_send_stream_to_sessiond", r);
}

} // namespace tracectl::consumer
