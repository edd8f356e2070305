#include "ip_ring_reader.hpp"

#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <exception>
#include <sys/mman.h>
#include <system_error>
#include <unistd.h>

namespace tracectl::consumer::kernel {

namespace {
// Returned by the sample callback to stop ring_buffer__consume after the
// record that reached the limit (libbpf has already advanced past it).
constexpr int kStop = -1000000;
} // namespace

struct IpRingReader::State {
    UniqueFd ring;
    UniqueFd counters;
    ring_buffer* rb = nullptr;
    const volatile tracectl_ip_counters* counterMap = nullptr;
    std::size_t counterMapBytes = 0;
    // Per consume() call:
    const std::function<void(const tracectl_ip_record&)>* sink = nullptr;
    std::size_t limit = 0;
    std::size_t delivered = 0;
    std::exception_ptr error;
    std::uint64_t malformed = 0;

    ~State() {
        if (rb)
            ring_buffer__free(rb);
        if (counterMap)
            ::munmap(const_cast<tracectl_ip_counters*>(counterMap), counterMapBytes);
    }

    static int onSample(void* ctx, void* data, std::size_t size) {
        auto* s = static_cast<State*>(ctx);
        if (size < sizeof(tracectl_ip_record)) {
            ++s->malformed;
            return 0;
        }
        tracectl_ip_record record;
        std::memcpy(&record, data, sizeof record);
        try {
            (*s->sink)(record);
        } catch (...) {
            s->error = std::current_exception();
            return kStop;
        }
        if (++s->delivered >= s->limit)
            return kStop;
        return 0;
    }
};

IpRingReader::IpRingReader(UniqueFd ring, UniqueFd counters) : state_(std::make_unique<State>()) {
    state_->ring = std::move(ring);
    state_->counters = std::move(counters);
    errno = 0;
    state_->rb = ring_buffer__new(state_->ring.get(), &State::onSample, state_.get(), nullptr);
    if (!state_->rb) {
        const int err = errno ? errno : EINVAL;
        throw std::system_error(err, std::generic_category(),
                                "ip ring reader: ring_buffer__new on the events map");
    }
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    state_->counterMapBytes = page;
    void* m = ::mmap(nullptr, page, PROT_READ, MAP_SHARED, state_->counters.get(), 0);
    if (m == MAP_FAILED)
        throw std::system_error(errno, std::generic_category(),
                                "ip ring reader: mmap of the counters map");
    state_->counterMap = static_cast<const volatile tracectl_ip_counters*>(m);
}

IpRingReader::~IpRingReader() = default;
IpRingReader::IpRingReader(IpRingReader&&) noexcept = default;
IpRingReader& IpRingReader::operator=(IpRingReader&&) noexcept = default;

int IpRingReader::pollFd() const noexcept {
    return state_ && state_->rb ? ring_buffer__epoll_fd(state_->rb) : -1;
}

std::size_t IpRingReader::consume(const std::function<void(const tracectl_ip_record&)>& sink,
                                  std::size_t limit) {
    if (!state_ || limit == 0)
        return 0;
    State& s = *state_;
    s.sink = &sink;
    s.limit = limit;
    s.delivered = 0;
    s.error = nullptr;
    const int rc = ring_buffer__consume(s.rb);
    s.sink = nullptr;
    if (s.error)
        std::rethrow_exception(std::exchange(s.error, nullptr));
    if (rc < 0 && rc != kStop)
        throw std::system_error(-rc, std::generic_category(),
                                "ip ring reader: ring_buffer__consume");
    return s.delivered;
}

std::uint64_t IpRingReader::dropped() const noexcept {
    if (!state_ || !state_->counterMap)
        return 0;
    return __atomic_load_n(&const_cast<const tracectl_ip_counters*>(state_->counterMap)->dropped,
                           __ATOMIC_ACQUIRE);
}

std::uint64_t IpRingReader::malformed() const noexcept {
    return state_ ? state_->malformed : 0;
}

} // namespace tracectl::consumer::kernel
