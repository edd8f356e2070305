#include "syscall_string_ring.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <span>
#include <sys/mman.h>
#include <system_error>
#include <unistd.h>

namespace tracectl::consumer::kernel {

struct SyscallStringRing::State {
    UniqueFd ring;
    UniqueFd counters;
    ring_buffer* rb = nullptr;
    const tracectl_syscall_string_counters* counterMap = nullptr;
    std::size_t counterMapBytes = 0;
    std::size_t ringBytes = 0;
    UserStringTable* table = nullptr; ///< during drainInto()
    std::size_t delivered = 0;

    ~State() {
        if (rb)
            ring_buffer__free(rb);
        if (counterMap)
            ::munmap(const_cast<tracectl_syscall_string_counters*>(counterMap), counterMapBytes);
    }

    static int onSample(void* ctx, void* data, std::size_t size) {
        auto* s = static_cast<State*>(ctx);
        s->table->addSample(std::span<const std::byte>(static_cast<const std::byte*>(data), size));
        ++s->delivered;
        return 0;
    }
};

SyscallStringRing::SyscallStringRing(UniqueFd ring, UniqueFd counters)
    : state_(std::make_unique<State>()) {
    state_->ring = std::move(ring);
    state_->counters = std::move(counters);
    errno = 0;
    state_->rb = ring_buffer__new(state_->ring.get(), &State::onSample, state_.get(), nullptr);
    if (!state_->rb)
        throw std::system_error(errno ? errno : EINVAL, std::generic_category(),
                                "system-call strings: ring_buffer__new on the strings map");
    bpf_map_info info{};
    __u32 infoSize = sizeof info;
    if (const int err = bpf_obj_get_info_by_fd(state_->ring.get(), &info, &infoSize); err != 0)
        throw std::system_error(-err, std::generic_category(),
                                "system-call strings: the strings map's size");
    state_->ringBytes = info.max_entries;
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    void* m = ::mmap(nullptr, page, PROT_READ, MAP_SHARED, state_->counters.get(), 0);
    if (m == MAP_FAILED)
        throw std::system_error(errno, std::generic_category(),
                                "system-call strings: mmap of the counters map");
    state_->counterMapBytes = page;
    state_->counterMap = static_cast<const tracectl_syscall_string_counters*>(m);
}

SyscallStringRing::~SyscallStringRing() = default;
SyscallStringRing::SyscallStringRing(SyscallStringRing&&) noexcept = default;
SyscallStringRing& SyscallStringRing::operator=(SyscallStringRing&&) noexcept = default;

std::size_t SyscallStringRing::ringBytes() const noexcept {
    return state_ ? state_->ringBytes : 0;
}

int SyscallStringRing::pollFd() const noexcept {
    return state_ && state_->rb ? ring_buffer__epoll_fd(state_->rb) : -1;
}

std::size_t SyscallStringRing::drainInto(UserStringTable& table) {
    if (!state_)
        return 0;
    State& s = *state_;
    s.table = &table;
    s.delivered = 0;
    const int rc = ring_buffer__consume(s.rb);
    s.table = nullptr;
    if (rc < 0)
        throw std::system_error(-rc, std::generic_category(),
                                "system-call strings: ring_buffer__consume");
    return s.delivered;
}

std::uint64_t SyscallStringRing::dropped() const noexcept {
    if (!state_ || !state_->counterMap)
        return 0;
    return __atomic_load_n(&state_->counterMap->dropped, __ATOMIC_ACQUIRE);
}

} // namespace tracectl::consumer::kernel
